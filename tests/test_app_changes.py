"""The app on maps that grow: changes since the previous build, links to gone topics, added papers,
and reading lists of the view (AppTest: what a reader sees)."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.elements.widgets.button import ButtonMixin

from app import session
from pipeline.exports.reading_list import markdown_text, tex_escape
from pipeline.mapfolder.manifest import LineageBlock, PreviousBlock
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import (
    EXTRA,
    ROOT,
    SEED_MAP,
    SEEDS,
    FakeEncoder,
    link_in_view,
    map_names,
    open_panel,
    opened_paper,
    opened_topic,
    plain,
    select_box,
    start,
    table,
    texts,
    tiny_map,
    url,
    whole_page,
    write_merged_map,
)


def use_map(monkeypatch, folder: Path, tmp_path: Path) -> None:
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))


def change_table(at) -> pd.DataFrame:
    """The changes table, its panel opened as a reader's click does (a closed panel's body is not made)."""
    open_panel(at, "changes_panel")
    [frame] = [df.value for df in at.dataframe if "Change" in df.value.columns]
    return frame


def infos(at) -> list[str]:
    return [i.value for i in at.info]


# --------------------------------------------------------------------------- a map with a known lineage
@pytest.fixture
def rebuilt_tiny(tmp_path, monkeypatch) -> Path:
    """The tiny map as if rebuilt: 0 kept, 1 grown, 2 merged with old 7, 3 new; old 7 and 8 gone."""
    atlas = tiny_map()
    atlas.lineage = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 3, 7, 8],
            "status": ["kept", "grown", "merged", "new", "gone", "gone"],
            "previous_topic_ids": [[0], [1], [2, 7], [], [7], [8]],
            "successor_topic_ids": [[], [], [], [], [2], []],
            "previous_label": [
                "Graph neural networks",
                "Diffusion models",
                "Reinforcement learning; Bandit <b>exploration</b>",
                "",
                "Bandit <b>exploration</b>",
                "Sparse coding",
            ],
            "shared_papers": [13, 9, 12, 0, 4, 0],
        }
    )
    atlas.manifest = replace(
        atlas.manifest,
        lineage=LineageBlock(previous=PreviousBlock(name="Tiny test map", fingerprint="f"), next_topic_id=9),
    )
    folder = tmp_path / "rebuilt"
    write_map(folder, atlas)
    use_map(monkeypatch, folder, tmp_path)
    return folder


def test_changes_since_the_previous_build_lists_what_became_of_each_topic(rebuilt_tiny):
    at = start()
    assert not at.exception
    assert [e.label for e in at.expander if e.label == "Changes since the previous build"]
    rows = change_table(at)
    assert list(rows.columns) == ["Topic", "Change", "Papers", "Shared with the previous map"]
    by_topic = dict(zip(rows["Topic"], rows["Change"], strict=True))
    assert by_topic["Bandit <b>exploration</b>"] == "Merged into “Reinforcement learning” (topic 2)."
    assert by_topic["Sparse coding"].startswith("Gone:")
    assert by_topic["Multi-view clustering"] == "New topic."
    assert by_topic["Reinforcement learning"] == "“Bandit <b>exploration</b>” merged into it: 13 papers now."
    assert by_topic["Diffusion models"].startswith("Grew: 13 papers now, 9 of them")
    assert by_topic["Graph neural networks"] == "Unchanged."
    assert rows["Topic"].tolist()[:2] == ["Bandit <b>exploration</b>", "Sparse coding"]  # gone first
    # Each previous topic counted once: the terms add up to the previous map's 5 topics (0, 1, 2, 7, 8).
    assert "1 kept, 1 grown, 2 merged into 1, 1 gone (of 5 topics); 1 new." in plain(at)
    assert not at.get("html")  # names from the data stay text


def test_a_merge_names_both_topics_and_a_link_to_the_renamed_id_says_so(tmp_path, monkeypatch):
    """Issue 21: "Segmentation" (id 2) took in "Object detection" (id 5) and the merged topic is now
    called "Object detection"; "Diffusion models" shrank from 30 papers."""
    write_merged_map(tmp_path / "rebuilt")
    use_map(monkeypatch, tmp_path / "rebuilt", tmp_path)
    at = start()
    assert not at.exception
    rows = change_table(at)
    by_topic = dict(zip(zip(rows["Topic"], rows["Papers"]), rows["Change"], strict=True))
    assert (
        by_topic[("Object detection", 0)]
        == "Merged into “Object detection” (topic 2, until now “Segmentation”)."
    )
    assert by_topic[("Object detection", 13)] == (
        "Was “Segmentation” (7 papers); “Object detection” (6 papers) merged into it: 13 papers now."
    )
    assert by_topic[("Diffusion models", 13)] == "Shrank from 30 to 13 papers (11 of them in it before)."
    # Every previous topic either lives on under its id and name or is named in the panel.
    panel = " ".join(rows["Change"]) + " " + " ".join(rows["Topic"])
    for name in ("Segmentation", "Object detection", "Diffusion models", "Graph neural networks"):
        assert name in panel

    at = start({"topic": "2"})  # an old link to Segmentation
    assert not at.exception and opened_topic(at) == "Object detection"
    assert [i.replace("\\", "") for i in infos(at)] == [
        "Topic 2 from this link was “Segmentation” before the map was rebuilt; it is now “Object detection” "
        "(“Object detection” merged into it)."
    ]
    at = start({"topic": "1"})  # same name: no notice
    assert not at.info


def test_a_map_without_lineage_has_no_changes_panel(tmp_path, monkeypatch):
    write_map(tmp_path / "first", tiny_map())
    use_map(monkeypatch, tmp_path / "first", tmp_path)
    at = start()
    assert not at.exception
    assert not [e for e in at.expander if e.label == "Changes since the previous build"]
    assert not [df for df in at.dataframe if "Change" in df.value.columns]


def test_a_link_to_a_gone_topic_opens_where_its_papers_went_and_says_so(rebuilt_tiny):
    at = start({"topic": "7", "q": "study"})
    assert not at.exception
    assert infos(at) == [
        "Topic 7 \\(“Bandit \\<b\\>exploration\\</b\\>”\\) from this link is gone since the map was rebuilt\\: "
        "its papers are now in “Reinforcement learning”, shown here\\."
    ]  # plain text: every markup character escaped
    assert opened_topic(at) == "Reinforcement learning"  # the successor's topic view is open
    first = map_names(at)["topics"][0]
    assert first["text"] == "Reinforcement learning" and first["chosen"]  # named first on the map
    assert url(at) == {"q": ["study"], "topic": ["2"]}  # the address bar now links to the successor
    assert not at.warning  # nothing was ignored

    # A gone topic whose papers went nowhere in particular: the notice alone, no topic opened.
    at = start({"topic": "8"})
    assert not at.exception and infos(at) and "“Sparse coding”" in infos(at)[0]
    assert "no longer in one topic" in infos(at)[0]
    assert opened_topic(at) is None and "topic" not in url(at)  # the topic list beside the map

    # An id neither this map nor its lineage knows: ignored with a visible notice, as before.
    at = start({"topic": "42"})
    assert not at.exception and not infos(at)
    assert "Ignored topic='42': not a topic of this map." in at.warning[0].value.replace("\\", "")

    # This map's own topics open as they are, with no notice.
    at = start({"topic": "3"})
    assert not at.info and not at.warning and opened_topic(at) == "Multi-view clustering"


# --------------------------------------------------------------------------- a rebuilt map, then curated
def write_regrown_map(folder: Path) -> Path:
    """The tiny map as rebuilt: 0 kept, 1 grown from 10, 2 merged with old 7, 3 shrunk from 20; old 7 gone."""
    atlas = tiny_map()
    atlas.lineage = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 3, 7],
            "status": ["kept", "grown", "merged", "shrunk", "gone"],
            "previous_topic_ids": [[0], [1], [2, 7], [3], [7]],
            "successor_topic_ids": [[], [], [], [], [2]],
            "previous_label": [
                "Graph neural networks",
                "Diffusion models",
                "Reinforcement learning; Bandits",
                "Multi-view clustering",
                "Bandits",
            ],
            "shared_papers": [13, 9, 12, 11, 4],
            "previous_sizes": [[13], [10], [8, 4], [20], [4]],
        }
    )
    atlas.manifest = replace(
        atlas.manifest,
        lineage=LineageBlock(previous=PreviousBlock(name="Tiny test map", fingerprint="f"), next_topic_id=8),
    )
    write_map(folder, atlas)
    return folder


def curate(folder: Path, *args: str) -> None:
    from pipeline.__main__ import main

    assert main(["curate", str(folder), *args]) == 0


def test_merging_and_hiding_topics_of_a_rebuilt_map_keeps_the_page_and_says_what_the_edits_did(
    tmp_path, monkeypatch, captured_downloads
):
    """Issue 29's blocker: `curate merge` or `curate hide` on a rebuilt map whose lineage has grown or
    shrunk topics crashed the change report (and with it the papers table, downloads and About)."""
    folder = write_regrown_map(tmp_path / "rebuilt")
    curate(folder, "merge", "1", "--into", "0")  # the grown topic
    curate(folder, "hide", "3")  # the shrunk topic
    use_map(monkeypatch, folder, tmp_path)
    at = start()
    assert not at.exception
    rows = change_table(at)
    assert len(rows) == 5
    by_topic = dict(zip(zip(rows["Topic"], rows["Papers"]), rows["Change"], strict=True))
    assert by_topic[("Diffusion models", 0)] == (
        "Grew from 10 to 13 papers (9 of them in it before). "
        "Then merged into “Graph neural networks” (topic 0) by an edit."
    )
    assert by_topic[("Multi-view clustering", 0)] == (
        "Shrank from 20 to 13 papers (11 of them in it before). "
        "Then hidden by an edit: its papers are unassigned."
    )
    assert by_topic[("Graph neural networks", 26)] == (
        "Unchanged. Then “Diffusion models” (13 papers) merged into it by an edit: 26 papers now."
    )
    assert by_topic[("Reinforcement learning", 13)] == ("“Bandits” (4 papers) merged into it: 13 papers now.")
    assert by_topic[("Bandits", 0)] == "Merged into “Reinforcement learning” (topic 2)."
    # The papers column holds what the page shows: each curated topic's papers, 0 for the edited-away ones.
    atlas = read_map(folder)
    shown = dict(zip(atlas.topics["topic_id"], atlas.topics["size"], strict=True))
    assert shown == {0: 26, 2: 13}
    assert sorted(rows["Papers"]) == [0, 0, 0, 13, 26]
    # The rest of the page is there and counts the curated map.
    assert "60 papers · 2 topics · 21 unassigned" in texts(at)
    assert len(table(at)) == 50
    assert {"Download these 60 papers (CSV)", "Download the whole map · 60 (CSV)"} <= set(captured_downloads)
    whole = list(
        csv.DictReader(
            io.StringIO(captured_downloads["Download the whole map · 60 (CSV)"].decode("utf-8-sig"))
        )
    )
    assert {r["topic"] for r in whole} == {"Graph neural networks", "Reinforcement learning", "Unassigned"}
    assert sum(r["topic"] == "Unassigned" for r in whole) == 21
    assert [e.label for e in at.expander if e.label == "About this map"]
    assert "**Tiny test map** · 60 papers · 2 topics · 21 unassigned" in texts(open_panel(at, "about_panel"))


def test_a_change_row_of_a_topic_an_edit_merged_away_opens_where_its_papers_went(tmp_path, monkeypatch):
    from app.loaders import MapKey, cached_changes

    folder = write_regrown_map(tmp_path / "rebuilt")
    curate(folder, "merge", "1", "--into", "0")
    curate(folder, "hide", "3")
    rows, targets, summary = cached_changes(MapKey.of("rebuilt", folder))
    opens = dict(zip(rows["topic_id"], targets, strict=True))
    assert opens == {0: 0, 1: 0, 2: 2, 3: None, 7: 2}
    assert summary == "1 kept, 1 grown, 1 shrunk, 2 merged into 1 (of 5 topics)"


def test_a_change_report_follows_edits_that_move_topics_the_build_merged_into():
    from app.changes import TopicEdits, change_rows

    lineage = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 7],
            "status": ["kept", "kept", "merged", "gone"],
            "previous_topic_ids": [[0], [1], [2, 7], [7]],
            "successor_topic_ids": [[], [], [], [2]],
            "previous_label": ["GNN", "Diffusion", "RL; Bandits", "Bandits"],
            "shared_papers": [13, 13, 12, 4],
            "previous_sizes": [[13], [13], [8, 4], [4]],
        }
    )
    topics = pd.DataFrame({"topic_id": [0], "label": ["GNN"], "size": [39]})  # as curated
    edits = TopicEdits(
        moves=((2, "merge", 0), (1, "hide", 0)),
        built={0: ("GNN", 13), 1: ("Diffusion", 13), 2: ("RL", 13)},
    )
    rows = change_rows(lineage, topics, edits)
    assert dict(zip(rows["topic_id"], rows["Change"], strict=True)) == {
        7: "Merged into “RL” (topic 2). “RL” was then merged into “GNN” (topic 0) by an edit.",
        2: "“Bandits” (4 papers) merged into it: 13 papers now. Then merged into “GNN” (topic 0) by an edit.",
        0: "Unchanged. Then edits moved “RL” (13 papers) and “Diffusion” (13 papers) into it: 39 papers now.",
        1: "Unchanged. Then hidden by an edit: its papers are now in “GNN” (topic 0).",
    }
    assert dict(zip(rows["topic_id"], rows["Papers"], strict=True)) == {7: 0, 2: 0, 0: 39, 1: 0}
    assert edits.home(2) == edits.home(1) == 0 and edits.home(0) is None


# --------------------------------------------------------------------------- a real rebuild
@pytest.fixture(scope="module")
def grown_map(tmp_path_factory) -> Path:
    """The seeds plus four new abstracts, rebuilt with the committed seed map as the previous map."""
    from pipeline.commands.build import build_map

    out = tmp_path_factory.mktemp("grown") / "grown"
    build_map([SEEDS, EXTRA], out, previous=SEED_MAP, progress=False, log=lambda message: None)
    return out


def test_a_real_rebuild_shows_its_changes_and_old_links_still_open_a_topic(grown_map, tmp_path, monkeypatch):
    use_map(monkeypatch, grown_map, tmp_path)
    atlas = read_map(grown_map)
    at = start()
    assert not at.exception
    rows = change_table(at)
    assert len(rows) == len(atlas.lineage)
    names = dict(zip(atlas.topics["topic_id"], atlas.topics["label"], strict=True))
    assert set(names.values()) <= set(rows["Topic"])
    words = {
        "gone": ("Gone", "Merged into"),
        "kept": ("Unchanged", "Renamed"),
        "grown": ("Grew", "Renamed"),
        "shrunk": ("Shrank", "Renamed"),
        "new": ("New",),
    }
    for status in set(atlas.lineage["status"]):
        if status in words:
            assert rows["Change"].str.startswith(words[status]).any(), status
    # Every previous topic either lives on under its id and name or is named in the panel.
    before = read_map(SEED_MAP).topics
    panel = " ".join(rows["Change"]) + " " + " ".join(rows["Topic"])
    for topic, name in zip(before["topic_id"], before["label"], strict=True):
        assert names.get(topic) == name or name in panel, name
    # Every topic of the previous map, linked as before, opens a topic of this map.
    old_names = dict(zip(before["topic_id"], before["label"], strict=True))
    for topic in before["topic_id"].tolist()[:6]:
        at = start({"topic": str(topic)})
        assert not at.exception and not at.warning
        opened = int(url(at)["topic"][0])
        assert opened in names and opened_topic(at) == names[opened]
        # a notice exactly when the link's topic changed: another topic opened, or it was renamed
        unchanged = opened == topic and names[opened] == old_names[topic]
        assert unchanged != bool(infos(at)), (topic, old_names[topic], names[opened])


def test_merging_and_hiding_grown_or_shrunk_topics_of_a_real_rebuild_keeps_the_page(
    grown_map, tmp_path, monkeypatch, captured_downloads
):
    """Issue 29's blocker on a real rebuild: `curate merge` and `curate hide` of topics the lineage
    says grew or shrank (or, failing those, were kept)."""
    folder = tmp_path / "grown"
    shutil.copytree(grown_map, folder)
    atlas = read_map(folder)
    lineage = atlas.lineage.set_index("topic_id")
    order = {"grown": 0, "shrunk": 0, "kept": 1}
    candidates = sorted(
        (t for t in atlas.topics["topic_id"].astype(int) if lineage.loc[t, "status"] in order),
        key=lambda t: order[lineage.loc[t, "status"]],
    )
    assert lineage["status"].isin(["grown", "shrunk"]).any()
    merged, hidden = candidates[:2]
    into = next(int(t) for t in atlas.topics["topic_id"] if int(t) not in (merged, hidden))
    curate(folder, "merge", str(merged), "--into", str(into))
    curate(folder, "hide", str(hidden))
    use_map(monkeypatch, folder, tmp_path)
    at = start()
    assert not at.exception
    rows = change_table(at).assign(topic_id=lambda r: r.index)  # rows without ids: match by name
    curated = read_map(folder)
    names = dict(zip(atlas.topics["topic_id"].astype(int), atlas.topics["label"], strict=True))
    sizes = dict(zip(curated.topics["topic_id"].astype(int), curated.topics["size"], strict=True))
    by_name = dict(zip(rows["Topic"], zip(rows["Change"], rows["Papers"], strict=True), strict=True))
    assert by_name[names[merged]][0].endswith(f"Then merged into “{names[into]}” (topic {into}) by an edit.")
    assert by_name[names[merged]][1] == 0
    assert by_name[names[hidden]] == (
        by_name[names[hidden]][0].split(" Then ")[0] + " Then hidden by an edit: its papers are unassigned.",
        0,
    )
    assert by_name[names[into]][1] == sizes[into]
    assert f"merged into it by an edit: {sizes[into]:,} papers now." in by_name[names[into]][0]
    for topic, size in sizes.items():  # every topic on the page has its row with its papers
        assert by_name[names[topic]][1] == size
    assert len(table(at)) == min(50, len(curated.papers))
    assert f"Download the whole map · {len(curated.papers)} (CSV)" in captured_downloads
    assert [e.label for e in at.expander if e.label == "About this map"]
    assert f"{len(curated.topics)} topics" in texts(at)


# --------------------------------------------------------------------------- papers added in place
@pytest.fixture(scope="module")
def added_map(tmp_path_factory) -> Path:
    """The committed seed map with the four extra abstracts added by `python -m pipeline add`."""
    folder = tmp_path_factory.mktemp("added") / "seeds"
    shutil.copytree(SEED_MAP, folder)
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "add", str(folder), str(EXTRA), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def captured_downloads(monkeypatch) -> dict:
    """What each download button would hand the browser, by label (deferred data is called as on a click)."""
    captured: dict[str, bytes] = {}
    original = ButtonMixin.download_button

    def recording(self, label, data, *args, **kwargs):
        captured[label] = data() if callable(data) else data
        return original(self, label, data, *args, **kwargs)

    monkeypatch.setattr(ButtonMixin, "download_button", recording)
    return captured


def test_added_papers_can_be_highlighted_shared_and_are_marked_as_added(added_map, tmp_path, monkeypatch):
    use_map(monkeypatch, added_map, tmp_path)
    papers = read_map(added_map).papers
    added_rows = np.flatnonzero(papers["added"].fillna(False).to_numpy(dtype=bool))
    assert len(added_rows) == 4
    at = start()
    assert not at.exception
    [toggle] = [t for t in at.toggle if t.label.startswith("Highlight papers added since the last build")]
    assert toggle.label.endswith("(4)") and not toggle.value
    assert not [f for f in at.multiselect if f.label.lower() == "added"]  # not offered as a filter
    assert link_in_view(at).all()

    whole_page(toggle.set_value(True).run())  # the map draws them as hits: tests/test_browser_steps.py
    assert np.flatnonzero(link_in_view(at)).tolist() == added_rows.tolist()
    assert set(table(at)["Title"]) == set(pd.read_csv(EXTRA)["title"])
    assert url(at) == {"added": ["only"]}

    # The link opens the same highlight; an added paper's view says how it got there.
    doc_id = str(papers["doc_id"].iat[added_rows[0]])
    at = start({"added": "only", "paper": doc_id})
    assert not at.exception and not at.warning
    assert [t.value for t in at.toggle if t.label.startswith("Highlight papers added")] == [True]
    assert opened_paper(at)["added"] is True  # js/panel.js: "Added since the last full build (…)"
    # A paper of the full build carries no such mark.
    at = start({"paper": str(papers["doc_id"].iat[0])})
    assert opened_paper(at)["added"] is False


def test_added_only_on_a_map_without_added_papers_is_ignored_with_a_notice(tmp_path, monkeypatch):
    write_map(tmp_path / "plain", tiny_map())
    use_map(monkeypatch, tmp_path / "plain", tmp_path)
    at = start({"added": "only"})
    assert not at.exception
    assert not [t for t in at.toggle if t.label.startswith("Highlight papers added")]
    assert "this map has no papers added since its last build" in at.warning[0].value.replace("\\", "")
    assert link_in_view(at).all() and url(at) == {}


# --------------------------------------------------------------------------- reading lists
def titles_in_markdown(text: str) -> list[str]:
    return re.findall(r"^- \*\*(.+?)\*\*: ", text, flags=re.MULTILINE)


def test_reading_lists_hold_the_same_papers_as_the_csv_of_the_view(
    added_map, tmp_path, monkeypatch, captured_downloads
):
    use_map(monkeypatch, added_map, tmp_path)
    at = start({"added": "only"})
    assert not at.exception
    labels = [b.label for b in at.get("download_button")]
    assert "Reading list of these 4 (Markdown)" in labels and "These 4 as BibTeX" in labels
    view = list(
        csv.DictReader(io.StringIO(captured_downloads["Download these 4 papers (CSV)"].decode("utf-8-sig")))
    )
    extra = pd.read_csv(EXTRA)
    assert {r["title"].lstrip("'") for r in view} == set(extra["title"])

    markdown = captured_downloads["Reading list of these 4 (Markdown)"].decode("utf-8")
    assert markdown.startswith("# Reading list from ") and "(4 papers)" in markdown.splitlines()[0]
    assert sorted(titles_in_markdown(markdown)) == sorted(markdown_text(t) for t in extra["title"])
    for link in extra["url"]:
        assert f"[link]({link})" in markdown
    assert re.findall(r"^## .+ \(\d+\)$", markdown, flags=re.MULTILINE)  # grouped by topic

    bibtex = captured_downloads["These 4 as BibTeX"].decode("utf-8")
    assert bibtex.startswith("% Reading list from ")  # then how it was chosen, as comments BibTeX skips
    bibtex = bibtex[bibtex.index("\n@") + 1 :]
    assert bibtex.startswith("@inproceedings{") and bibtex.count("\n@") == 3
    for title in extra["title"]:
        assert "title = {{" + tex_escape(title) + "}}" in bibtex
    keys = re.findall(r"^@\w+\{([^,]+),$", bibtex, flags=re.MULTILINE)
    assert len(keys) == len(set(keys)) == 4


def test_reading_lists_follow_search_filters_and_map_selection(tmp_path, monkeypatch, captured_downloads):
    write_map(tmp_path / "tiny", tiny_map(titles=["<b>$x$</b> & co"] + [f"Paper {i}" for i in range(1, 60)]))
    use_map(monkeypatch, tmp_path / "tiny", tmp_path)
    at = start({"topics": "0", "unassigned": "hide"})
    csv_titles = {
        r["title"]
        for r in csv.DictReader(
            io.StringIO(captured_downloads["Download these 13 papers (CSV)"].decode("utf-8-sig"))
        )
    }
    markdown = captured_downloads["Reading list of these 13 (Markdown)"].decode("utf-8")
    assert {t.replace("\\", "") for t in titles_in_markdown(markdown)} == csv_titles
    assert "\\<b\\>\\$x\\$\\</b\\> \\& co" in markdown  # no markup or math comes out of a title
    assert "## Graph neural networks (13)" in markdown
    bibtex = captured_downloads["These 13 as BibTeX"].decode("utf-8")
    assert bibtex.count("@misc{") == 13 and "title = {{<b>\\$x\\$</b> \\& co}}" in bibtex

    # A box/lasso selection narrows all three to the selected papers.
    captured_downloads.clear()
    papers = read_map(tmp_path / "tiny").papers
    inside = select_box(at, ("doc0004", "doc0008"), papers)
    topic_0 = set(papers["doc_id"][papers["topic_id"] == 0])
    picked = [d for d in inside if d in topic_0]  # the box's papers the filter shows
    assert len(picked) >= 2
    markdown = captured_downloads[f"Reading list of these {len(picked)} (Markdown)"].decode("utf-8")
    titles = papers.set_index("doc_id").loc[picked, "title"]
    assert sorted(titles_in_markdown(markdown)) == sorted(titles)
    assert captured_downloads[f"These {len(picked)} as BibTeX"].decode("utf-8").count("@misc{") == len(picked)
    assert not at.exception


# --------------------------------------------------------------------------- placement and link keys
def test_placement_computes_the_maps_topic_profile_once(tmp_path, monkeypatch):
    import pipeline.modelling.place

    calls = []
    real = pipeline.modelling.place.topic_profile
    monkeypatch.setattr(pipeline.modelling.place, "topic_profile", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr("app.encoder.map_encoder", lambda manifest: FakeEncoder())
    write_map(tmp_path / "tiny", tiny_map())
    use_map(monkeypatch, tmp_path / "tiny", tmp_path)
    at = start(panels=(session.PLACEMENT_PANEL,))
    for text, topic in [
        ("We propose a diffusion sampler that denoises faster than before.", "Diffusion models"),
        ("A policy gradient agent explores with a learned reward model.", "Reinforcement learning"),
    ]:
        at.text_area(key=session.PASTED).input(text)
        [b for b in at.button if b.label == "Place on the map"][0].click().run()
        assert not at.exception and f"Placed in **{topic}**" in at.success[0].value
    assert len(calls) == 1  # computed with the first placement, reused by the second


def test_added_only_round_trips_through_the_link():
    from app.state import ViewState, Vocabulary, parse_view, to_params

    vocabulary = Vocabulary(topic_ids=frozenset({0}), has_added=True)
    assert to_params(ViewState(added_only=True)) == {"added": "only"}
    assert parse_view({"added": ["only"]}, vocabulary) == (ViewState(added_only=True), [])
    state, notices = parse_view({"added": ["new"]}, vocabulary)
    assert not state.added_only and notices == ["Ignored added='new': use 'only'."]
