"""Names that hold, on a real build of the seeds: theme names of their own that hold as their source says,
topic names used by most of their papers, and LLM safety findable by name (issues 21, 27). Support is measured by
`pipeline.modelling.evaluate.name_figures`, the benchmark's own measure (benchmarks/bench_names.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.embedding.embed import load_encoder
from pipeline.mapfolder.store import read_map
from pipeline.modelling.evaluate import name_figures
from pipeline.naming.areas import AREA_MAJORITY, area_share, area_votes
from pipeline.naming.names import is_generic, name_key
from pipeline.naming.support import name_support

# The LLM-safety abstracts of the seeds, by words of their own.
SAFETY_PAPERS = ("SafetyAnalyst", "Vulnerability-Aware Alignment")


def test_theme_and_topic_names_hold_on_the_seed_map(seed_map):
    atlas = read_map(seed_map)
    figures = name_figures(atlas.papers, atlas.topics, atlas.themes)
    supports = {row["name"]: row["support"] for row in figures["topic_rows"]}
    assert figures["topic_names_under_25_share"] <= 0.15, supports
    # Every theme's topics are its own: each topic in exactly one theme, themes named distinctly.
    members = sorted(t for ids in atlas.themes["topic_ids"] for t in ids)
    assert members == sorted(atlas.topics["topic_id"].tolist())
    assert atlas.themes["label"].str.lower().is_unique


def test_every_theme_name_is_its_own_and_holds_as_its_source_says(seed_map):
    """A theme is named by a phrase each of its topics writes, or by a research area most of its papers
    are closest to (checked here again with the map's own vectors and encoder); never a list, never a
    generic word, never a topic's name."""
    atlas = read_map(seed_map)
    papers, topics, themes = atlas.papers, atlas.topics, atlas.themes
    topic_keys = {name_key(n) for n in topics["label"]}
    votes = area_votes(np.asarray(atlas.embeddings, dtype=np.float32), load_encoder().encode)
    theme_of_topic = dict(zip(topics["topic_id"], topics["theme_id"], strict=True))
    for row in themes.itertuples():
        assert ";" not in row.label and " & " not in row.label and len(row.label) <= 40, row.label
        assert not is_generic(row.label) and name_key(row.label) not in topic_keys, row.label
        rows = np.flatnonzero(papers["topic_id"].map(theme_of_topic).fillna(-1).to_numpy() == row.theme_id)
        if row.name_source == "area":
            assert area_share(votes, rows, row.label) == pytest.approx(row.name_share, abs=1e-3)
            assert row.name_share >= AREA_MAJORITY, (row.label, row.name_share)
        elif row.name_source == "nearest area":
            assert area_share(votes, rows, row.label) >= 1 / 3, row.label
        else:
            documents = papers["abstract"].tolist()
            for topic in row.topic_ids:
                own = [documents[i] for i in np.flatnonzero(papers["topic_id"].to_numpy() == topic)]
                assert name_support(row.label, own) >= 0.25, (row.label, topic)
    for name in topics["label"]:
        assert not is_generic(name), name
        for part in name.split(" & "):
            assert not is_generic(part), name


def test_the_seed_field_s_areas_are_found_by_name(seed_map):
    """Diffusion, clustering and optimal transport each name a topic or a theme holding their papers."""
    atlas = read_map(seed_map)
    names = " | ".join([*atlas.topics["label"], *atlas.themes["label"]]).lower()
    for area in ("diffusion", "clustering", "optimal transport"):
        assert area in names, names


def test_llm_safety_is_found_by_name_on_the_seed_map(seed_map):
    atlas = read_map(seed_map)
    papers, topics, themes = atlas.papers, atlas.topics, atlas.themes
    named = set(topics.loc[topics["label"].str.contains("safety", case=False), "topic_id"])
    for row in themes.itertuples():
        if "safety" in row.label.lower():
            named |= set(row.topic_ids)
    assert named, (
        f"no topic or theme name says safety: {topics['label'].tolist()} / {themes['label'].tolist()}"
    )
    for words in SAFETY_PAPERS:
        [topic] = papers.loc[papers["abstract"].str.contains(words, regex=False), "topic_id"].tolist()
        assert topic in named, (words, topics.set_index("topic_id")["label"].get(topic))
