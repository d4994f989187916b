"""Names that hold, on a real build of the seeds: theme names true of every member topic, topic names
used by most of their papers, and LLM safety findable by name (issue 21). Support is measured by
`pipeline.modelling.evaluate.name_figures`, the benchmark's own measure (benchmarks/bench_names.py)."""

from __future__ import annotations

from pipeline.mapfolder.store import read_map
from pipeline.modelling.evaluate import name_figures

# The LLM-safety abstracts of the seeds, by words of their own.
SAFETY_PAPERS = ("SafetyAnalyst", "Vulnerability-Aware Alignment")


def test_theme_and_topic_names_hold_on_the_seed_map(seed_map):
    atlas = read_map(seed_map)
    figures = name_figures(atlas.papers, atlas.topics, atlas.themes)
    weakest = {row["name"]: row["weakest_support"] for row in figures["theme_rows"]}
    assert figures["theme_weakest_median"] >= 0.25, weakest
    assert figures["theme_weakest_min"] >= 0.05, weakest
    supports = {row["name"]: row["support"] for row in figures["topic_rows"]}
    assert figures["topic_names_under_25_share"] <= 0.15, supports
    # Every theme's topics are its own: each topic in exactly one theme, themes named distinctly.
    members = sorted(t for ids in atlas.themes["topic_ids"] for t in ids)
    assert members == sorted(atlas.topics["topic_id"].tolist())
    assert atlas.themes["label"].str.lower().is_unique


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
