"""Issue 62: a name is a claim its papers' words back, and the page says how far it holds.

Fast: each naming rule on small synthetic groups (a phrase a third of the map writes refused, an area no
paper writes never taken, author keywords as candidates, a keywords column that is not text refused), and
the evidence as the reader sees it on the committed seed map: the About panel's line and the topic
panel's share (the per-topic summary js/panel.js draws it from) against the map's own tables; a map
without the columns still opens."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from app.data import build_map_data
from app.text import markdown_literal
from app.topic_summary import topic_summary
from pipeline.commands.build import naming_texts
from pipeline.mapfolder.store import read_map
from pipeline.modelling.themes import name_themes
from pipeline.naming.names import OWN_WORDS, Retrieval, common_keys, name_groups, same_head, too_common
from pipeline.naming.phrases import count_phrases
from pipeline.naming.support import name_support
from tests.helpers import ROOT, SEED_MAP, open_panel, start, texts


def test_a_phrase_a_third_of_the_map_writes_is_never_a_name_nor_its_head():
    """Every paper writes "language models"; each topic's own words name it, never "Large language
    models" (headed by the map's own phrase), however many of a topic's papers write it."""
    docs = ["Large language models read spiking neurons."] * 3 + [
        "Large language models read legal documents."
    ] * 3
    names = name_groups(docs, np.array([0, 0, 0, 1, 1, 1]))
    assert names[1] == "Legal documents" and "language model" not in names[0].lower(), names
    counts = count_phrases(docs)
    common = common_keys(counts, np.array([0, 0, 0, 1, 1, 1]))
    assert "language model" in common and "legal document" not in common
    assert too_common("Large language models", common) and not too_common("Legal documents", common)


def test_of_the_names_the_words_back_the_one_that_points_at_its_own_group_is_taken():
    """Both "Alpha particles" (every paper) and "Beta decay" (three of four) are written by a third of
    group 0's papers; the map's encoder puts "Alpha particles" nearer group 1's papers, so group 0 is
    named "Beta decay" (the words alone would say "Alpha particles")."""
    docs = ["Alpha particles and beta decay in nuclei."] * 3 + ["Alpha particles in nuclei."]
    docs += ["Gamma rays from pulsars."] * 4
    groups = np.repeat([0, 1], 4)
    assert name_groups(docs, groups)[0] == "Alpha particles"
    axes = np.eye(2)
    encode = lambda texts: np.array([axes[0] if "Beta" in t else axes[1] for t in texts])  # noqa: E731
    names = name_groups(docs, groups, {0: axes[0], 1: axes[1]}, encode=encode)
    assert names == {0: "Beta decay", 1: "Gamma rays"}, names


def test_when_no_name_that_holds_points_home_two_lines_that_together_hold_and_do_are_taken():
    """Group 0 is two lines under one: "Solar wind" and "Proton flux" (four papers of nine) and the
    pairs the words rank first all point at the sibling group 1 (the encoder here says so of every
    name with "solar" or "proton"); "dust grains" and "ice giants" are each written by two papers, so
    neither holds alone, and neither points home alone (the encoder puts each halfway), but together
    they are written by four of nine and point home: the encoder is offered that pair too, and it is
    taken, not a name that points at the sibling."""
    docs = ["Solar wind studies of proton flux."] * 4
    docs += ["Dust grains in comet tails."] * 2 + ["Ice giants and ring systems."] * 2
    docs += ["Notes on telescopes."] + ["Coral reefs under heat stress."] * 9
    groups = np.repeat([0, 1], 9)
    axes = np.eye(2)

    def encode(texts):
        def vector(text):
            text = text.lower()
            far = "solar" in text or "proton" in text
            return axes[0] * (("dust" in text) + ("ice " in text + " ")) + axes[1] * (1 + 2 * far)

        return np.array([vector(t) for t in texts])

    names = name_groups(
        docs, groups, {0: axes[0], 1: axes[1]}, encode=encode, siblings={0: [1], 1: [0]}, distinct=OWN_WORDS
    )
    assert names[0] == "Dust grains & ice giants", names
    assert name_support(names[0], docs[:9]) >= 1 / 3


def test_a_topic_is_named_first_by_what_only_its_papers_write():
    """Every paper of topic 0 writes "sequence models", but so does half of its neighbour topic 1;
    "selective scan" and "long inputs" are written by half of topic 0 and nowhere else. The name
    leads with one of those (its lift over the map is the highest), not with the shared phrase, in
    the names the map shows (`OWN_WORDS`; the first names the themes are formed with keep the order
    of coverage)."""
    docs = ["Sequence models with a selective scan over tokens."] * 2
    docs += ["Sequence models for long inputs."] * 2
    docs += ["Sequence models of protein chains."] * 2 + ["Protein chains fold in water."] * 2
    docs += ["Galaxy clusters in the sky."] * 4 + ["Coral reefs under heat."] * 4
    docs += ["Glacier melt in spring."] * 4
    groups = np.repeat([0, 1, 2, 3, 4], 4)
    assert name_groups(docs, groups)[0] == "Sequence models"
    name = name_groups(docs, groups, distinct=OWN_WORDS)[0]
    assert name.split(" & ")[0] in ("Selective scan", "Long inputs"), name
    assert name_support(name, docs[:4]) == 1.0, name


def test_a_theme_no_umbrella_holds_for_is_named_by_two_phrases_a_quarter_of_each_member_writes():
    """No phrase holds for all three topics of theme 0, and the theme's two broad phrases are as common
    in theme 1; together "graph coloring" and "protein folding" are written by every paper of theme 0
    and half of theme 1's: the theme is named by both, not by its largest lines."""
    docs = ["Graph coloring heuristics for exam timetables."] * 4
    docs += ["Graph coloring bounds for sparse graphs."] * 2 + ["Protein folding with contact maps."] * 2
    docs += ["Protein folding of membranes."] * 4 + ["Protein folding and graph coloring in yeast."] * 4
    docs += ["Quantum error correction with surface codes."] * 4
    rows = np.split(np.arange(20), [4, 8, 12, 16])
    topic_names = ["Timetables", "Sparse graphs", "Membranes", "Yeast", "Surface codes"]
    [(name, source, share), _] = name_themes(
        [[0, 1, 2], [3, 4]], rows, topic_names, 20, count_phrases(docs), None, docs, lambda form: True
    )
    assert (name, source) == ("Graph coloring & protein folding", "phrase") and share >= 0.25


def test_a_theme_whose_umbrella_points_at_another_theme_takes_a_pair_that_holds_and_points_home():
    """ "Climate records" holds for both topics of theme 0, but the map's encoder (here: every name
    with "climate" is nearest theme 1's papers) says it points at theme 1; "Sea ice" and "Glacier
    melt", its two topics' names, together hold for each of them and point home: the theme is named
    by both (on the old code, an umbrella that holds was taken wherever it pointed)."""
    docs = ["Climate records of sea ice in the Arctic."] * 4 + ["Climate records of glacier melt."] * 4
    docs += ["Coral reefs under heat stress."] * 4 + ["Coral bleaching in warm water."] * 4
    rows = np.split(np.arange(16), [4, 8, 12])
    axes = np.eye(2)

    def encode(texts):
        home = lambda t: "climate" not in t.lower() and ("ice" in t.lower() or "glacier" in t.lower())  # noqa: E731
        return np.array([axes[0] if home(t) else axes[1] for t in texts])

    ranker = Retrieval(encode, [0, 1], axes)
    topic_names = ["Sea ice", "Glacier melt", "Heat stress", "Coral bleaching"]
    [(name, _, share), _] = name_themes(
        [[0, 1], [2, 3]], rows, topic_names, 16, count_phrases(docs), None, docs, lambda form: True, ranker
    )
    assert name in ("Sea ice & glacier melt", "Glacier melt & sea ice") and share == 1.0, name


def test_no_topic_of_the_seed_map_is_named_by_a_sibling_s_head():
    """ "Language models" beside "Large language models" in one theme tells neither apart."""
    atlas = read_map(SEED_MAP)
    for ids in atlas.themes["topic_ids"]:
        names = atlas.topics.set_index("topic_id").loc[list(ids), "label"].tolist()
        parts = [(n, p) for n in names for p in n.split(" & ")]
        clashes = [(a, b) for a, p in parts for b, q in parts if a != b and same_head(p, q)]
        assert not clashes, clashes


def test_an_area_is_written_or_not_its_forms_count_and_distance_never_does():
    """A paper writes "Reinforcement learning" when it writes it or a listed form ("RL", "MARL" for
    multi-agent RL); words far apart ("learning ... theory") are not "Learning theory"."""
    assert (
        name_support("Reinforcement learning", ["An RL agent.", "Deep RL.", "A reinforcement signal."])
        == 2 / 3
    )
    assert name_support("Multi-agent RL", ["MARL in traffic.", "Two agents."]) == 0.5
    assert (
        name_support("Learning theory", ["Learning in game theory.", "Statistical learning theory."]) == 0.5
    )


def test_author_keywords_are_candidates_checked_like_the_words_of_the_abstract():
    papers = pd.DataFrame(
        {
            "abstract": ["We fit a model to images."] * 3 + ["We fit a model to sounds."] * 3,
            "keywords": ["neural radiance fields; view synthesis"] * 3 + ["speech enhancement", "", None],
        }
    )
    documents = naming_texts(papers)
    assert documents[0].endswith("Keywords: neural radiance fields; view synthesis.")
    assert documents[4] == "We fit a model to sounds."
    names = name_groups(documents, np.array([0, 0, 0, 1, 1, 1]))
    assert names[0].startswith(("Neural radiance", "View synthesis")), names
    assert name_groups(papers["abstract"].tolist(), np.array([0, 0, 0, 1, 1, 1]))[0] != names[0]


def test_a_keywords_column_that_is_not_text_is_one_error_line_naming_file_and_row(tmp_path):
    source = tmp_path / "papers.parquet"
    pd.DataFrame(
        {"abstract": ["An abstract about robots.", "Another one about rats."], "keywords": [3, 4]}
    ).to_parquet(source)
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "build", str(source), "--out", str(tmp_path / "map")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and "papers.parquet: row 1: 'keywords'" in line, line
    assert not (tmp_path / "map").exists()


def test_the_page_says_how_far_each_name_is_written(monkeypatch, tmp_path):
    atlas = read_map(SEED_MAP)
    data = build_map_data("seeds", SEED_MAP)
    shown = {t["id"]: t["written"] for t in topic_summary(data, None)["topics"] if t["id"] != -1}
    assert shown == dict(zip(atlas.topics["topic_id"], atlas.topics["name_share"].round(4), strict=True))
    monkeypatch.setenv("ATLAS_MAP", str(SEED_MAP))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    page = texts(open_panel(start(), "about_panel"))
    for row in atlas.themes.itertuples():
        assert f"{markdown_literal(row.label)}: written by {row.name_written:.0%} of its papers" in page


def test_a_map_built_before_names_carried_their_evidence_still_opens(monkeypatch, tmp_path):
    folder = tmp_path / "old"
    shutil.copytree(SEED_MAP, folder)
    for name, column in (("topics.parquet", "name_share"), ("themes.parquet", "name_written")):
        table = pd.read_parquet(folder / name)
        table.drop(columns=[column]).to_parquet(folder / name)
    summary = topic_summary(build_map_data("old", folder), None)
    assert {t["written"] for t in summary["topics"]} == {None}
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    page = texts(open_panel(start(), "about_panel"))
    assert "57 papers · 10 topics" in page and "written by" not in page


@pytest.mark.parametrize("column", ["name_share"])
def test_the_seed_map_s_names_are_written_by_a_third_of_their_papers(column):
    topics = read_map(SEED_MAP).topics
    assert (topics[column] >= 1 / 3).mean() >= 0.9, topics[["label", column]]
