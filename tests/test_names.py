"""Names that hold, on a real build of the seeds: theme names of their own that hold as their source says,
topic names used by most of their papers, and LLM safety findable by name (issues 21, 27). Support is measured by
`pipeline.modelling.evaluate.name_figures`, the benchmark's own measure (benchmarks/bench_names.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.mapfolder.store import read_map
from pipeline.modelling.evaluate import name_figures
from pipeline.naming.names import is_generic, name_key
from pipeline.naming.phrases import acronym_definitions
from pipeline.naming.support import uses_name

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


def test_every_theme_name_is_its_own_and_holds_as_its_share_says(seed_map):
    """A theme is named by at most two parts, each a phrase or a research area its papers write (the
    words, never the vectors, are the evidence), or, where no umbrella holds, by two parts of its
    member topics' names: never a list, never generic, never a member topic's whole name alone;
    `name_share` is the smallest share of a member topic's papers that write the name, and
    `name_written` the share of the theme's papers that do."""
    atlas = read_map(seed_map)
    papers, topics, themes = atlas.papers, atlas.topics, atlas.themes
    topic_keys = {name_key(n) for n in topics["label"]}
    documents = (papers["title"] + ". " + papers["abstract"]).tolist()
    acronyms = acronym_definitions(papers["abstract"].tolist())
    for row in themes.itertuples():
        parts = row.label.split(" & ")
        assert ";" not in row.label and len(parts) <= 2 and len(row.label) <= 60, row.label
        assert name_key(row.label) not in topic_keys, row.label
        for part in parts:
            assert not is_generic(part), row.label
        shares = [
            uses_name(
                row.label, [documents[i] for i in np.flatnonzero(papers["topic_id"] == t)], acronyms
            ).mean()
            for t in row.topic_ids
        ]
        assert min(shares) == pytest.approx(row.name_share, abs=0.05), row.label
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
