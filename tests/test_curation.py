"""Curation: edits made from the CLI show in the map and its exports, survive rebuilds through the
stable topic ids, are flagged (never silently applied or dropped) when their topic moved, and bad
edits change nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import UserError
from pipeline.commands.build import build_map
from pipeline.mapfolder.curation import Edit, apply_edits, carry_edits, read_curation
from pipeline.mapfolder.files import CURATION
from pipeline.mapfolder.store import read_map
from tests.helpers import ROOT, SEEDS, quiet


def curate(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", "curate", str(folder), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


@pytest.fixture
def seed_map_copy(seed_map, tmp_path) -> Path:
    out = tmp_path / "map"
    shutil.copytree(seed_map, out)
    return out


def topic_with_theme_of_two(atlas) -> tuple[int, int, int]:
    """A theme holding at least two topics: (theme id, its first topic, its second topic)."""
    for theme in atlas.themes.itertuples():
        if len(theme.topic_ids) >= 2:
            return int(theme.theme_id), int(theme.topic_ids[0]), int(theme.topic_ids[1])
    raise AssertionError("the seed map has no theme of two topics")


def test_cli_edits_show_in_the_map_and_its_exports_and_survive_a_rebuild(seed_map_copy, tmp_path):
    out = seed_map_copy
    before = read_map(out)
    theme, first, second = topic_with_theme_of_two(before)
    others = [int(t) for t in before.topics["topic_id"] if int(t) not in (first, second)]
    hidden, noted = others[-1], others[0]
    size = dict(zip(before.topics["topic_id"], before.topics["size"]))
    for args in (
        ["rename", str(first), "Hand-picked name"],
        ["merge", str(second), "--into", str(first)],
        ["hide", str(hidden)],
        ["note", str(noted), "Check the workshop papers too"],
        ["rename-theme", str(theme), "Curated theme"],
    ):
        result = curate(out, *args)
        assert result.returncode == 0, result.stderr
        assert "saved in" in result.stderr

    def check(atlas) -> None:
        topics = atlas.topics.set_index("topic_id")
        assert topics.loc[first, "label"] == "Hand-picked name"
        assert second not in topics.index and hidden not in topics.index
        assert topics.loc[first, "size"] == size[first] + size[second]
        assert topics.loc[noted, "note"] == "Check the workshop papers too"
        papers = atlas.papers.set_index("doc_id")["topic_id"]
        raw = before.papers.set_index("doc_id")["topic_id"]
        assert (papers[raw == second] == first).all()
        assert (papers[raw == hidden] == -1).all()
        assert atlas.manifest.unassigned == int((atlas.papers["topic_id"] == -1).sum())
        themes = atlas.themes.set_index("theme_id")
        assert themes.loc[theme, "label"] == "Curated theme"
        assert second not in themes.loc[theme, "topic_ids"]
        assert themes["size"].sum() == int((atlas.papers["topic_id"] != -1).sum())

    check(read_map(out))
    exported = subprocess.run(
        [sys.executable, "-m", "pipeline", "export", str(out), "--out", str(tmp_path / "map.csv")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert exported.returncode == 0, exported.stderr
    table = pd.read_csv(tmp_path / "map.csv", encoding="utf-8-sig")
    assert set(table.loc[table["topic_id"] == first, "topic"]) == {"Hand-picked name"}
    assert second not in set(table["topic_id"]) and hidden not in set(table["topic_id"])
    assert set(table.loc[table["topic_id"] == noted, "topic_note"]) == {"Check the workshop papers too"}
    assert "Curated theme" in set(table["theme"])

    # The same input rebuilt in place: every topic is kept, so every edit applies again.
    rebuilt = build_map([SEEDS], out, progress=False, log=quiet)
    assert set(rebuilt.lineage["status"]) == {"kept"}
    assert rebuilt.manifest.lineage.edits == {"applied": [1, 2, 3, 4, 5], "review": []}
    assert [e.id for e in read_curation(out)] == [1, 2, 3, 4, 5]
    check(read_map(out))
    assert read_map(out, curated=False).topics["label"].tolist() == before.topics["label"].tolist()


def test_an_edit_whose_topic_is_gone_after_a_rebuild_is_kept_and_flagged_not_applied(seed_map_copy, tmp_path):
    out = seed_map_copy
    before = read_map(out)
    topics = before.topics.sort_values("size", ascending=False)["topic_id"].astype(int).tolist()
    gone, stays = topics[0], topics[1]
    assert curate(out, "rename", str(gone), "Renamed then removed").returncode == 0
    assert curate(out, "note", str(stays), "Still here").returncode == 0
    # Rebuild without the papers of the renamed topic.
    staying = before.papers.loc[before.papers["topic_id"] != gone, ["title", "abstract"]]
    inputs = [tmp_path / "fewer.csv"]
    staying.to_csv(inputs[0], index=False)
    rebuilt = build_map(inputs, out, progress=False, log=quiet)
    edits = {e.id: e for e in read_curation(out)}
    assert edits[1].review and f"topic {gone}" in edits[1].review and "gone" in edits[1].review
    review = rebuilt.manifest.lineage.edits["review"]
    assert [r["id"] for r in review if r["id"] == 1] == [1]
    atlas = read_map(out)
    assert "Renamed then removed" not in set(atlas.topics["label"])
    assert 1 in atlas.manifest.curation.review
    # The other edit is applied exactly when its topic kept its content.
    status = rebuilt.lineage.set_index("topic_id")["status"]
    if edits[2].review is None:
        assert status.get(stays) in ("kept", "grown", "shrunk")
        assert atlas.topics.set_index("topic_id").loc[stays, "note"] == "Still here"
    listing = curate(out, "list")
    assert listing.returncode == 0 and "review: topic" in listing.stdout
    # A person decides: drop the flagged edit; it is gone from the file.
    dropped = curate(out, "drop", "1")
    assert dropped.returncode == 0, dropped.stderr
    assert [e.id for e in read_curation(out)] == [2]


def test_bad_edits_get_one_error_line_exit_2_and_change_nothing(seed_map_copy):
    out = seed_map_copy
    first, second = read_map(out).topics["topic_id"].astype(int).tolist()[:2]
    assert curate(out, "rename", str(first), "A fine name").returncode == 0
    saved = (out / CURATION).read_bytes()
    taken = str(read_map(out).topics.set_index("topic_id").loc[second, "label"])
    cases = {
        ("rename", "999", "x"): "no topic 999",
        ("rename", str(first), "   "): "empty",
        ("rename", str(first), "<script>x</script>"): "markup",
        ("rename", str(first), "[click](http://x)"): "markup",
        ("rename", str(second), "A fine name"): "already called",
        ("rename", str(first), taken): "already called",
        ("merge", str(first), "--into", str(first)): "into itself",
        ("merge", str(first), "--into", "999"): "no topic 999",
        ("hide", "999"): "no topic 999",
        ("note", "999", "text"): "no topic 999",
        ("rename-theme", "999", "x"): "no theme 999",
        ("accept", "1"): "not waiting for review",
        ("drop", "7"): "no edit #7",
        ("rename", "one", "x"): "topic number",
    }
    for args, words in cases.items():
        result = curate(out, *args)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], (args, lines)
        assert (out / CURATION).read_bytes() == saved, args


def test_merging_a_topic_already_merged_names_the_edit_that_merged_it(tmp_path):
    from pipeline.mapfolder.store import write_map
    from tests.helpers import tiny_map

    out = tmp_path / "map"
    write_map(out, tiny_map(60))
    assert curate(out, "merge", "3", "--into", "0").returncode == 0
    again = curate(out, "merge", "3", "--into", "1")
    assert again.returncode == 2
    assert again.stderr.strip() == (
        f"error: {out}: no topic 3 to merge: edit #1 already merged it into topic 0 (topics are 0, 1, 2; "
        "drop edit #1 to undo it)"
    )
    into = curate(out, "merge", "1", "--into", "3")  # the merged topic as the receiving one
    assert "no topic 3 to merge into: edit #1 already merged it into topic 0" in into.stderr


@pytest.mark.parametrize(
    "content, words",
    [
        ('{"format": "abstract-atlas curation 1", "edits": [', "damaged edit file"),
        ('["not", "an", "object"]', "damaged edit file"),
        (
            '{"format": "abstract-atlas curation 1", "edits": [{"id": 1, "action": "paint"}]}',
            "action must be",
        ),
        (
            '{"format": "abstract-atlas curation 1", "edits": [{"id": 1, "action": "rename", "topic": 0, "name": "<i>"}]}',
            "markup",
        ),
        (
            '{"format": "abstract-atlas curation 1", "edits": [{"id": 1, "action": "merge", "topic": 0, "into": 0}]}',
            "into itself",
        ),
    ],
)
def test_a_hand_damaged_edit_file_is_refused_by_curate_export_and_build_and_left_as_it_is(
    seed_map_copy, tmp_path, content, words
):
    out = seed_map_copy
    (out / CURATION).write_text(content, encoding="utf-8")
    manifest = (out / "manifest.json").read_bytes()
    for command in (
        ["curate", str(out), "rename", "0", "x"],
        ["export", str(out), "--out", str(tmp_path / "x.csv")],
        ["build", str(SEEDS), "--out", str(out), "--quiet"],
    ):
        result = subprocess.run(
            [sys.executable, "-m", "pipeline", *command], capture_output=True, text=True, cwd=ROOT
        )
        assert result.returncode == 2, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert lines[-1].startswith("error:") and CURATION in lines[-1] and words in lines[-1], lines
        assert len([line for line in lines if line.startswith("error:")]) == 1
    assert (out / CURATION).read_text(encoding="utf-8") == content
    assert (out / "manifest.json").read_bytes() == manifest
    assert not (tmp_path / "x.csv").exists()


def test_curate_help_documents_every_action():
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "curate", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0
    for action in (
        "list",
        "rename",
        "rename-theme",
        "merge",
        "hide",
        "note",
        "accept",
        "drop",
        "curation.json",
    ):
        assert action in result.stdout


# ---- the pure parts, on made-up tables ----


def tables():
    papers = pd.DataFrame({"doc_id": list("abcdefg"), "topic_id": [0, 0, 0, 1, 1, 2, -1]})
    topics = pd.DataFrame({"topic_id": [0, 1, 2], "label": ["A", "B", "C"], "size": [3, 2, 1]})
    themes = pd.DataFrame(
        {"theme_id": [0, 1], "label": ["T0", "T1"], "size": [5, 1], "topic_ids": [[0, 1], [2]]}
    )
    return papers, topics, themes


def test_apply_edits_moves_papers_recounts_and_skips_flagged_edits():
    papers, topics, themes = tables()
    edits = [
        Edit(1, "merge", topic=1, into=0),
        Edit(2, "hide", topic=2, into=-1),
        Edit(3, "rename", topic=0, name="Renamed", review="topic 0 was split by the rebuild"),
    ]
    view = apply_edits(papers, topics, themes, edits)
    assert view.papers["topic_id"].tolist() == [0, 0, 0, 0, 0, -1, -1]
    assert view.topics[["topic_id", "label", "size"]].values.tolist() == [[0, "A", 5]]
    assert view.themes[["theme_id", "size"]].values.tolist() == [[0, 5]]  # theme 1 held only topic 2
    assert view.applied == (1, 2) and view.review == (3,)
    assert papers["topic_id"].tolist() == [0, 0, 0, 1, 1, 2, -1]  # the inputs are untouched


def lineage_rows(rows):
    return pd.DataFrame(
        [
            {
                "topic_id": t,
                "status": s,
                "previous_topic_ids": [t],
                "successor_topic_ids": succ,
                "shared_papers": 0,
            }
            for t, s, succ in rows
        ]
    )


def test_carry_edits_flags_split_gone_and_scattered_topics_and_follows_themes():
    previous = {"a": 0, "b": 0, "c": 0, "d": 1, "e": 1, "f": 2, "g": 3, "h": 3}
    doc_ids = list("abcdefgh")
    labels = np.array([0, 0, 0, 4, 1, 5, 3, 1])  # topic 1: one of its two papers and one newcomer
    lineage = lineage_rows(
        [(0, "kept", []), (1, "shrunk", []), (2, "gone", [5]), (3, "split", []), (4, "new", [])]
    )
    themes = pd.DataFrame({"theme_id": [3, 7], "label": ["x", "y"], "topic_ids": [[0, 1], [5, 6, 8, 9]]})
    edits = [
        Edit(1, "rename", topic=0, name="Kept"),
        Edit(2, "note", topic=1, text="scattered"),
        Edit(3, "rename", topic=2, name="Gone"),
        Edit(4, "merge", topic=0, into=3),
        Edit(5, "rename-theme", theme=0, theme_topics=(0, 1), name="Follows"),
        Edit(6, "rename-theme", theme=1, theme_topics=(2, 3), name="Lost"),
        Edit(7, "rename", topic=0, name="Flagged before", review="earlier reason"),
        # Issue 62: its theme holds its two topics and two more: the name stays, flagged.
        Edit(8, "rename-theme", theme=2, theme_topics=(5, 6), name="Moved"),
    ]
    carried = {
        e.id: e
        for e in carry_edits(
            edits, lineage=lineage, previous_topic_of=previous, doc_ids=doc_ids, labels=labels, themes=themes
        )
    }
    assert carried[1].review is None
    assert "33% of topic 1" in carried[2].review
    assert "gone" in carried[3].review and "topic 5" in carried[3].review
    assert "split" in carried[4].review
    assert carried[5].review is None and carried[5].theme == 3
    assert "no rebuilt theme" in carried[6].review
    assert carried[7].review == "earlier reason"
    assert carried[8].theme == 7 and "content moved (2 of its 4 topics" in carried[8].review
    clash = carry_edits(
        edits[:1],
        lineage=lineage,
        previous_topic_of=previous,
        doc_ids=doc_ids,
        labels=labels,
        themes=None,
        names={0: "Old name", 4: "kept"},
    )
    assert clash[0].review == 'topic 4 is now called "Kept" too'
    fresh = carry_edits(
        edits[:6], lineage=None, previous_topic_of=previous, doc_ids=doc_ids, labels=labels, themes=themes
    )
    assert all("afresh" in e.review for e in fresh)  # theme renames too (docs/curation.md)


def test_a_damaged_edit_file_is_a_user_error_naming_it(tmp_path):
    (tmp_path / CURATION).write_text(
        json.dumps({"format": "abstract-atlas curation 1", "edits": [{"id": 1}]})
    )
    with pytest.raises(UserError, match=CURATION):
        read_curation(tmp_path)


def test_a_curated_rename_of_a_topic_whose_content_moved_is_flagged_for_review():
    previous = {"a": 0, "b": 0, "c": 1}
    lineage = lineage_rows([(0, "kept", []), (1, "kept", [])])
    edits = [Edit(1, "rename", topic=0, name="Flow"), Edit(2, "rename", topic=1, name="Kept")]
    carried = carry_edits(
        edits,
        lineage=lineage,
        previous_topic_of=previous,
        doc_ids=list("abc"),
        labels=np.array([0, 0, 1]),
        themes=None,
        content_moved={0: "2 of 10 keywords still"},
    )
    assert "content moved (2 of 10 keywords still)" in carried[0].review
    assert carried[1].review is None


def test_a_theme_renamed_after_merges_and_hides_follows_its_rebuilt_theme_as_its_editor_saw_it():
    # Theme 0 was [0, 1, 8, 9]; its editor merged 1 into 0 and hid 9, then renamed it, seeing [0, 8].
    previous = {"a": 0, "b": 1, "c": 8, "d": 9, "e": 2}
    lineage = lineage_rows(
        [(0, "kept", []), (1, "kept", []), (8, "kept", []), (9, "kept", []), (2, "kept", [])]
    )
    themes = pd.DataFrame({"theme_id": [0, 1], "label": ["x", "y"], "topic_ids": [[0, 1, 8, 9], [2]]})
    edits = [
        Edit(1, "merge", topic=1, into=0),
        Edit(2, "hide", topic=9),
        Edit(3, "rename-theme", theme=0, theme_topics=(0, 8), name="Curated theme"),
    ]
    carried = carry_edits(
        edits,
        lineage=lineage,
        previous_topic_of=previous,
        doc_ids=list("abcde"),
        labels=np.array([0, 1, 8, 9, 2]),
        themes=themes,
    )
    assert [e.review for e in carried] == [None, None, None]
    assert (carried[2].theme, carried[2].theme_topics) == (0, (0, 8))
    # Without those edits the same rebuilt theme holds two topics its name was not given for.
    alone = carry_edits(
        edits[2:],
        lineage=lineage,
        previous_topic_of=previous,
        doc_ids=list("abcde"),
        labels=np.array([0, 1, 8, 9, 2]),
        themes=themes,
    )
    assert "content moved (2 of its 4 topics" in alone[0].review
