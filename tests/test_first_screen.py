"""Issue 31: the first screen reads right — counts with the right noun and the thousands separator,
notices said properly, one pair of quotes in the header, no gap before punctuation after a highlight,
the map's own name, exports that carry the map and say how they were chosen, figures that say what
they count."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.search import search_sentence, word_search
from app.state import Vocabulary, parse_view
from app.text import highlighted_markdown
from pipeline.mapfolder.query import parse_query
from pipeline.mapfolder.search_index import WordHits, highlight
from pipeline.mapfolder.store import write_map
from tests.helpers import (
    panel_summary,
    panel_topic,
    plain,
    select_box,
    start,
    texts,
    themed_map,
    tiny_map,
)


# ------------------------------------------------------------------ 1. words
def test_a_single_unassigned_paper_is_one_paper_not_one_papers(tmp_path, monkeypatch):
    atlas = tiny_map(60)
    atlas.papers["topic_id"] = atlas.papers["topic_id"].where(
        (atlas.papers["topic_id"] != -1) | (atlas.papers.index == 6), 0
    )
    atlas.topics["size"] = [int((atlas.papers["topic_id"] == t).sum()) for t in range(4)]
    atlas.manifest = replace(atlas.manifest, unassigned=1)
    write_map(tmp_path / "one", themed_map(atlas))
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "one"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    at = start()
    unassigned = [s for s in panel_summary(at)["lists"]["size"] if s["name"] == "Unassigned"]
    assert unassigned == [
        {"theme": None, "name": "Unassigned", "size": 1, "topics": [-1], "colour": None}
    ]  # "1 paper" (panel.js)
    assert "1 papers" not in texts(at) and "1 papers" not in plain(at)
    at = start({"topic": "-1"})
    assert panel_topic(at) == -1 and "Showing the 1 paper " in plain(at)


def test_topics_outside_the_chosen_theme_are_ignored_in_a_proper_sentence():
    vocabulary = Vocabulary(
        topic_ids=frozenset({-1, 0, 1, 2, 3}),
        theme_ids=frozenset({0, 1}),
        topic_themes={0: 0, 1: 0, 2: 1, 3: 1},
    )
    _, notices = parse_view({"theme": ["0"], "topics": ["1,2"]}, vocabulary)
    assert notices == ["Ignored topic 2: it is not in the chosen theme."]
    _, notices = parse_view({"theme": ["0"], "topics": ["1,2,3"]}, vocabulary)
    assert notices == ["Ignored topics 2 and 3: they are not in the chosen theme."]
    _, notices = parse_view({"topics": ["1,77"], "theme": ["9"]}, vocabulary)
    assert notices == [
        "Ignored topic '77': not a topic of this map.",
        "Ignored theme '9': not a theme of this map.",
    ]


def test_a_searched_phrase_is_in_one_pair_of_quotes():
    result = word_search(WordHits(np.arange(31), parse_query('"optical flow"')), '"optical flow"')
    number, rest = search_sentence(result, "the 1,357 papers of the map")
    assert (number, rest) == ("31", "of the 1,357 papers of the map match the words “optical flow”")
    mixed = word_search(WordHits(np.arange(2), parse_query('graph "neural field"')), "")
    assert search_sentence(mixed, "the 60 papers of the map")[1].endswith("the words “graph ‘neural field’”")


def test_no_gap_before_punctuation_after_a_highlighted_word():
    text = "We propose the trace transform, allowing (trace). Done"
    shown = highlighted_markdown(highlight(text, parse_query('"trace transform"')))
    assert shown == "We propose the :orange-background[**trace transform**,] allowing \\(trace\\)\\. Done"
    shown = highlighted_markdown(highlight(text, parse_query("trace")))
    assert "] ," not in shown and "]," not in shown and "]\\)" not in shown
    assert ":orange-background[**trace**\\)\\.] Done" in shown


def test_the_build_summary_counts_with_the_thousands_separator():
    from pipeline.commands.build import build_summary

    first = build_summary(31, 12, 139, 1357, Path("maps/eccv"), 80.2)[0]
    assert (
        first
        == "31 topics in 12 themes, 139 of 1,357 papers unassigned (10.2%); map written to maps/eccv in 80.2 s"
    )


# ------------------------------------------------------------------ 2. the map's own name
def test_a_map_is_named_by_its_venue_and_year_else_its_folder_else_its_file_stems(tmp_path):
    from pipeline.commands.build import corpus_name
    from pipeline.ingest import ingest

    folder = tmp_path / "eccv-papers"
    folder.mkdir()
    one = folder / "eccv2020.csv"
    pd.DataFrame(
        {
            "abstract": ["A first abstract about flow.", "A second one on depth."],
            "venue": "ECCV",
            "year": 2020,
        }
    ).to_csv(one, index=False)
    assert corpus_name(ingest([one]).papers, [one]) == "ECCV 2020"
    two = folder / "eccv2022_300.csv"
    pd.DataFrame({"abstract": ["A third abstract, on pose."], "venue": "ECCV", "year": 2022}).to_csv(
        two, index=False
    )
    assert corpus_name(ingest([one, two]).papers, [one, two]) == "ECCV 2020–2022"
    iccv = tmp_path / "iccv2021.csv"
    pd.DataFrame({"abstract": ["A fourth abstract, on stereo."], "venue": "ICCV"}).to_csv(iccv, index=False)
    assert corpus_name(ingest([one, iccv]).papers, [one, iccv]) == "eccv2020, iccv2021"
    assert corpus_name(ingest([folder]).papers, [folder]) == "ECCV 2020–2022"  # the venue first
    plain_folder = tmp_path / "my-reading"
    plain_folder.mkdir()
    bare = plain_folder / "abstracts.csv"
    pd.DataFrame({"abstract": ["Only an abstract here."]}).to_csv(bare, index=False)
    assert corpus_name(ingest([plain_folder]).papers, [plain_folder]) == "my-reading"
    assert corpus_name(ingest([bare]).papers, [bare]) == "abstracts"


def test_the_builds_last_line_is_a_command_that_works_as_printed_without_an_active_venv(
    tmp_path, monkeypatch
):
    import os
    import shlex
    import subprocess

    from pipeline.commands.build import build_map
    from pipeline.config import BuildConfig
    from tests.helpers import FakeEncoder, synthetic_corpus

    monkeypatch.chdir(tmp_path)  # a folder of the user's, not the repository
    synthetic_corpus(60)[["title", "abstract"]].to_csv("papers.csv", index=False)
    lines: list[str] = []
    build_map(
        ["papers.csv"],
        Path("maps/mine"),
        BuildConfig(stability=False),
        encoder=FakeEncoder(),
        progress=False,
        log=lines.append,
    )
    said = lines[-1]
    assert said.startswith("open it with: ") and not said.startswith("open it with: streamlit ")
    command = shlex.split(said.removeprefix("open it with: "))
    assert command[1:4] == ["-m", "streamlit", "run"] and command[5:] == ["--", "--map", "maps/mine"]
    assert Path(command[4]).is_file() and Path(command[4]).name == "streamlit_app.py"  # from here
    assert (Path(command[-1]) / "manifest.json").is_file()
    # no virtual environment active, streamlit not on PATH: the printed interpreter still runs it
    bare = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    bare["PATH"] = "/usr/bin:/bin"
    ran = subprocess.run([*command[:4], "--help"], capture_output=True, text=True, env=bare, timeout=120)
    assert ran.returncode == 0 and "Usage" in ran.stdout, ran.stderr[-500:]


def test_a_build_inside_the_map_it_replaced_prints_whole_paths(monkeypatch):
    """`--out .` from inside the map: the current folder is gone after the swap, so "--map ." would
    name it; the command names the new map and the app by their whole paths."""
    import os
    import sys

    from pipeline.commands.build import APP, build_summary

    def gone():
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os, "getcwd", gone)
    line = build_summary(3, 1, 0, 12, Path("."), 1.0, Path("/maps/mine"))[-1]
    assert line == f"open it with: {sys.executable} -m streamlit run {APP} -- --map /maps/mine"


def test_a_derived_name_follows_the_inputs_and_a_given_one_stays(tmp_path):
    """ECCV 2020, rebuilt with ECCV 2022 papers, is "ECCV 2020–2022" (as manifest.json says, and
    where it says so); a name given with `--name` stays through later rebuilds."""
    import json

    from pipeline.commands.build import build_map
    from pipeline.config import BuildConfig
    from tests.helpers import FakeEncoder, synthetic_corpus

    corpus = synthetic_corpus(90).assign(venue="ECCV", year=[2020] * 60 + [2022] * 30)
    first, later = tmp_path / "eccv2020.csv", tmp_path / "eccv2022.csv"
    corpus.iloc[:60].to_csv(first, index=False)
    corpus.iloc[60:].to_csv(later, index=False)
    out, config = tmp_path / "map", BuildConfig(stability=False)

    def build(inputs, **options) -> dict:
        build_map(
            inputs, out, config, encoder=FakeEncoder(), progress=False, log=lambda line: None, **options
        )
        written = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        return {key: written[key] for key in ("name", "name_source")}

    assert build([first]) == {"name": "ECCV 2020", "name_source": "derived"}
    assert build([first, later]) == {"name": "ECCV 2020–2022", "name_source": "derived"}  # derived again
    assert build([first, later], name="My ECCV") == {"name": "My ECCV", "name_source": "given"}
    assert build([first]) == {"name": "My ECCV", "name_source": "given"}  # a given name stays


def test_an_older_maps_name_is_derived_when_its_inputs_derive_it(tmp_path):
    """A map written before `name_source`: its name is taken as derived when its own inputs give it."""
    from pipeline.commands.build import given_name_in

    inputs = tmp_path / "eccv2020.csv"
    inputs.write_text("abstract\n", encoding="utf-8")
    for name, kept in (("ECCV 2020", None), ("My conference", "My conference")):
        atlas = tiny_map(60)
        atlas.papers = atlas.papers.assign(venue="ECCV", year=2020)
        atlas.manifest = replace(atlas.manifest, name=name, name_source=None, inputs=[str(inputs)])
        write_map(tmp_path / name, atlas)
        assert given_name_in(tmp_path / name) == kept


@pytest.mark.slow  # two real builds of the seeds (the real model, unless its vectors are cached)
def test_a_rebuild_keeps_the_maps_name_and_the_last_line_says_how_to_open_it(tmp_path):
    from pipeline.commands.build import build_map, open_command
    from pipeline.config import BuildConfig
    from tests.helpers import SEEDS

    out = tmp_path / "map"
    atlas = tiny_map(60)
    atlas.manifest = replace(atlas.manifest, name="My conference")
    write_map(out, atlas)
    lines: list[str] = []
    built = build_map(
        [SEEDS], out, BuildConfig(stability=False), progress=False, log=lines.append, previous=False
    )
    assert built.manifest.name == "My conference"  # kept, not the seeds' collection name
    assert lines[-1] == f"open it with: {open_command(out, here=Path.cwd())}"
    renamed = build_map(
        [SEEDS], out, BuildConfig(stability=False), name="Renamed", progress=False, log=lines.append
    )
    assert renamed.manifest.name == "Renamed"


def test_the_readme_shows_how_to_name_a_map():
    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## A map of your own") : readme.index("## Share a hosted link")]
    assert "--name" in section.split("```")[1]  # in the commands themselves


def test_the_readme_s_first_screen_is_for_a_newcomer_and_its_figures_match_their_results():
    """Issue 66: UMAP, KMeans, HDBSCAN, Ward linkage, c-TF-IDF and CPU kinds came before "Two
    commands", a results cell was 1,302 characters, and the hosting line said 904 MB where
    benchmarks/HOSTING_RESULTS.md measures 475 MB."""
    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = readme[: readme.index("## How it works")]
    order = [
        first.index(part)
        for part in ("# Abstract Atlas", "assets/screenshot.png", "## Two commands", "## A map of your own")
    ]
    assert order == sorted(order)
    for word in ("UMAP", "KMeans", "HDBSCAN", "Ward", "c-TF-IDF", "AVX", "Plotly"):
        assert word not in first, word
    method = readme[readme.index("## How it works") : readme.index("## Share a hosted link")]
    assert method.count(". ") <= 6  # the method in a sentence, then where to read more
    results = readme[readme.index("## Results") : readme.index("## Documentation")]
    cells = [
        c.strip() for line in results.splitlines() if line.startswith("|") for c in line.strip("|").split("|")
    ]
    assert cells and max(len(c) for c in cells) <= 120, max(cells, key=len)
    for name in re.findall(r"`([A-Z_]+\.md)`", results):
        assert (ROOT / "benchmarks" / name).is_file(), name
    hosting = (ROOT / "benchmarks" / "HOSTING_RESULTS.md").read_text(encoding="utf-8")
    latest = hosting[: hosting.index("## Earlier run")]
    [row] = [line for line in latest.splitlines() if "peak anonymous memory, whole run" in line]
    big = row.strip("|").split("|")[-1].strip()  # the 81,646-paper map, after: the last column
    said = readme[readme.index("## Share a hosted link") : readme.index("## Results")]
    assert f"an 81,646-paper map at {big} MB" in said and "904" not in said


# ------------------------------------------------------------------ 3. exports
def clicked(downloads: dict, label: str, encoding: str = "utf-8") -> str:
    """What a download button hands the browser on a click (its data may be made only then)."""
    data = downloads[label]
    return (data() if callable(data) else data).decode(encoding)


def test_the_whole_map_csv_carries_x_and_y_beside_every_column_it_had(tiny, downloads):
    import csv
    import io

    from pipeline.mapfolder.store import read_map

    start()
    rows = list(
        csv.DictReader(io.StringIO(clicked(downloads, "Download the whole map · 60 (CSV)", "utf-8-sig")))
    )
    header = list(rows[0])
    leading = ["doc_id", "title", "abstract", "topic_id", "topic", "topic_keywords", "theme", "source"]
    assert header[: len(leading) + 2] == [*leading, "x", "y"] and "year" in header
    papers = read_map(tiny).papers.set_index("doc_id")
    for row in rows:
        assert np.float32(row["x"]) == papers.loc[row["doc_id"], "x"]
        assert np.float32(row["y"]) == papers.loc[row["doc_id"], "y"]


def test_the_apps_reading_lists_say_how_they_were_chosen(tiny, downloads):
    at = start({"q": "diffusion"})
    markdown = clicked(downloads, "Reading list of these 15 (Markdown)", "utf-8")
    assert markdown.splitlines()[2] == (
        "How it was chosen: 15 of the 60 papers of the map match the words “diffusion”"
    )
    bibtex = clicked(downloads, "These 15 as BibTeX", "utf-8")
    assert "% How it was chosen: 15 of the 60 papers of the map match the words “diffusion”\n" in bibtex
    downloads.clear()
    inside = select_box(at, ("doc0001", "doc0005"))
    picked = [d for d in inside if int(d[3:]) % 4 == 1]  # the tiny map's abstracts that say "diffusion"
    markdown = clicked(downloads, f"Reading list of these {len(picked)} (Markdown)", "utf-8")
    assert (
        f"How it was chosen: {len(picked)} papers selected on the map, among 15 of the 60 papers of the "
        "map match the words “diffusion”" in markdown
    ) and len(picked) >= 2


def test_the_export_commands_reading_lists_say_which_topic(tmp_path, capsys):
    from pipeline.__main__ import main

    folder = tmp_path / "tiny"
    write_map(folder, tiny_map(60))
    assert main(["export", str(folder), "--out", str(tmp_path / "t.md"), "--topic", "1"]) == 0
    markdown = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert "How it was chosen: the 13 papers of topic 1, “Diffusion models”" in markdown.splitlines()[2]
    assert main(["export", str(folder), "--out", str(tmp_path / "t.bib"), "--topic", "-1"]) == 0
    bibtex = (tmp_path / "t.bib").read_text(encoding="utf-8")
    assert bibtex.splitlines()[:2] == [
        "% Reading list from Tiny test map",
        "% How it was chosen: the 8 unassigned papers",
    ]
    assert main(["export", str(folder), "--out", str(tmp_path / "all.md")]) == 0
    assert "How it was chosen: every paper of the map (60)" in (tmp_path / "all.md").read_text(
        encoding="utf-8"
    )


def test_the_app_and_the_export_command_head_a_reading_list_alike(tiny, downloads, tmp_path):
    """Issue 66: "# Reading list from COLM 2024 (123 papers)" in the app, "# Reading list: COLM 2024
    (716 papers)" from the CLI, for the same map."""
    from pipeline.__main__ import main

    start()
    from_app = clicked(downloads, "Reading list of these 60 (Markdown)", "utf-8").splitlines()
    assert main(["export", str(tiny), "--out", str(tmp_path / "all.md")]) == 0
    from_cli = (tmp_path / "all.md").read_text(encoding="utf-8").splitlines()
    from pipeline.mapfolder.store import read_map

    name = read_map(tiny).manifest.name
    assert from_app[0] == from_cli[0] == f"# Reading list from {name} (60 papers)"


# ------------------------------------------------------------------ 4. figures
def test_about_says_what_the_embedding_speed_counts(tmp_path, monkeypatch):
    atlas = tiny_map(60)
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))

    def about(name: str, **embedding):
        """The About panel of the tiny map with this embedding report."""
        atlas.manifest = replace(atlas.manifest, embedding={"encoder": "synthetic", **embedding})
        write_map(tmp_path / name, atlas)
        monkeypatch.setenv("ATLAS_MAP", str(tmp_path / name))
        return start(panels=("about_panel",))

    at = about("speed", computed=300, cached=1357, abstracts_per_second=35.2, model_seconds=41.0)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Embedding speed"] == "35.2 abstracts/s" and "Build speed" not in metrics
    assert (
        "Embedding speed: 300 abstracts embedded at 35.2 abstracts per second of embedding; 1,357 vectors "
        "came from the cache and the model's loading or one-time preparation (41.0 s) is not counted."
    ) in plain(at)

    at = about("cached", computed=0, cached=1657, abstracts_per_second=None)
    assert {m.label: m.value for m in at.metric}["Embedding speed"] == "–"
    assert "Embedding speed: none embedded, all vectors from the cache (1,657)." in plain(at)


def test_the_embedding_rate_leaves_out_the_models_preparation(monkeypatch):
    import time

    from pipeline.embedding import embed
    from tests.helpers import FakeEncoder

    def slow_load(embedder, max_tokens):  # the one-time int8 preparation, as a first build meets it
        time.sleep(1.0)
        return FakeEncoder()

    monkeypatch.setattr(embed, "load_encoder", slow_load)
    _, report = embed.embed_texts(
        [f"abstract {i} on diffusion" for i in range(40)], use_cache=False, progress=False
    )
    assert report["computed"] == 40 and report["model_seconds"] >= 1.0
    assert report["abstracts_per_second"] > 40  # 40 abstracts in well under a second once the model is ready


def test_the_zoom_hint_names_ctrl_first_so_a_first_click_need_not_open_a_paper(tmp_path, monkeypatch):
    """On a dense map a first click lands on a paper: the page and the map's own hint tell the reader to
    hold Ctrl/⌘ while scrolling first, and to click only an empty spot."""
    from app.map_component.assets import map_script

    write_map(tmp_path / "map", tiny_map(60))
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "map"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    at = start()
    caption = " ".join(c.value for c in at.caption)
    assert "pinch, or hold Ctrl/⌘ and scroll, to zoom (or click an empty spot, then scroll)" in caption
    assert caption.index("Ctrl/⌘") < caption.index("click an empty spot")
    script = map_script()  # the map's own code, as published
    assert (
        'hint.textContent = "Hold Ctrl (⌘) and scroll to zoom (or click an empty spot of the map first)"'
        in script
    )


def test_the_readme_s_first_line_names_only_what_the_shipped_map_shows():
    """Issue 62: the first line promised "LLM safety", a name the seed map shows nowhere."""
    import pandas as pd

    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    promise = readme[: readme.index("![")]
    named = re.findall(r"\*([^*]+)\*", promise.replace("**", ""))
    seeds = ROOT / "assets" / "maps" / "seeds"
    shown = {
        " ".join(str(label).lower().split())
        for table in ("topics.parquet", "themes.parquet")
        for label in pd.read_parquet(seeds / table)["label"]
    }
    assert len(named) >= 3, named
    for name in named:
        assert " ".join(name.lower().split()) in shown, name
