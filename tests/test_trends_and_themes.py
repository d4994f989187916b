"""App logic for issue 11: a topic over the years and venues, and themes in the topic list and the link."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.themes import (
    THEME_KEY,
    UNGROUPED,
    group_topic_list,
    parse_themes,
    theme_params,
    topics_in_themes,
)
from app.trends import (
    has_venues,
    has_years,
    rising_scores,
    venue_counts,
    venue_names,
    year_shares,
)
from pipeline.mapfolder.store import read_map
from tests.helpers import ROOT


def corpus() -> pd.DataFrame:
    """Topic 0 grows from 10% to 50% of each year's papers while the corpus doubles; topic 1 shrinks."""
    rows = []
    for year, total, ours in ((2019, 20, 2), (2020, 20, 4), (2021, 40, 12), (2022, 40, 16), (2023, 40, 20)):
        rows += [{"year": year, "topic_id": 0, "venue": "ICML" if i % 2 else "NeurIPS"} for i in range(ours)]
        rows += [{"year": year, "topic_id": 1, "venue": "CVPR"} for _ in range(total - ours - 1)]
        rows.append({"year": year, "topic_id": -1, "venue": None})
    return pd.DataFrame(rows)


def test_year_shares_are_shares_of_each_years_papers():
    table = year_shares(corpus(), 0)
    assert table["year"].tolist() == [2019, 2020, 2021, 2022, 2023]
    assert table["share"].tolist() == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert table["papers"].tolist() == [2, 4, 12, 16, 20] and table["total"].tolist() == [20, 20, 40, 40, 40]


def test_years_with_too_few_papers_and_bad_years_are_left_out():
    papers = pd.concat([corpus(), pd.DataFrame({"year": [1999, "n/a", 20.5], "topic_id": [0, 0, 0]})])
    table = year_shares(papers, 0)
    assert 1999 not in table["year"].tolist() and len(table) == 5
    assert year_shares(pd.DataFrame({"topic_id": [0, 1]}), 0).empty
    assert has_years(corpus()) and not has_years(pd.DataFrame({"topic_id": [0], "year": [2020]}))


def test_venue_counts_most_first_with_the_rest_summed():
    counts = venue_counts(corpus(), 0)
    assert counts.to_dict("list") == {
        "venue": ["ICML", "NeurIPS"], "papers": [27, 27], "total": [27, 27], "share": [1.0, 1.0]
    }  # fmt: skip
    shared = venue_counts(corpus().assign(venue="ICML"), 0)  # one venue: the topic's share of it
    assert shared.to_dict("list") == {"venue": ["ICML"], "papers": [54], "total": [160], "share": [0.3375]}
    many = pd.DataFrame({"topic_id": [0] * 20, "venue": [f"V{i % 15}" for i in range(20)]})
    top = venue_counts(many, 0, top=3)
    assert top["venue"].tolist()[-1] == "Other venues" and top["papers"].sum() == 20
    assert venue_counts(pd.DataFrame({"topic_id": [0]}), 0).empty and not has_venues(pd.DataFrame({"a": [1]}))


def test_rising_ranks_the_growing_topic_first():
    scores = rising_scores(corpus(), recent_years=2)
    # Topic 0: 36/80 recently against 18/80 before; topic 1 the other way round.
    assert scores[0] == pytest.approx((36 / 80) / (18 / 80))
    assert scores[0] > 1 > scores[1]
    assert list(scores.sort_values(ascending=False).index) == [0, 1]
    assert rising_scores(pd.DataFrame({"topic_id": [0, 1], "year": [2020, 2020]})).isna().all()


def test_a_topic_new_in_the_recent_years_rises_but_finitely():
    papers = pd.concat([corpus(), pd.DataFrame({"year": [2023] * 6, "topic_id": [2] * 6})])
    assert np.isfinite(rising_scores(papers, recent_years=2)[2]) and rising_scores(papers, 2)[2] > 1


def test_a_topic_s_shares_of_each_year_and_venue_count_every_paper_once():
    hostile = "<img src=x onerror=alert(1)>"  # a venue's name is kept as written (the panel shows text)
    papers = corpus().assign(venue=lambda f: f["venue"].fillna(hostile))
    papers.loc[0, "venue"] = hostile
    assert (year_shares(papers, 0)["share"] * 100).round(2).tolist() == [10.0, 20.0, 30.0, 40.0, 50.0]
    venues = venue_counts(papers, 0)
    assert hostile in set(venues["venue"])
    assert venues["papers"].sum() == (papers["topic_id"] == 0).sum()  # every paper of the topic counted once
    assert venues["share"].tolist() == (venues["papers"] / venues["total"]).round(4).tolist()  # shares
    assert venue_counts(papers, 0, names=venue_names(papers)).equals(venues)  # names made once: the same


def test_a_year_without_data_is_left_out_of_the_shares():
    papers = corpus()
    papers = papers[papers["year"] != 2021]  # no papers that year: the panel's line breaks there
    assert year_shares(papers, 0)["year"].tolist() == [2019, 2020, 2022, 2023]


def topics_table() -> tuple[pd.DataFrame, pd.DataFrame]:
    topics = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 3],
            "label": ["Diffusion models", "Optimal transport", "LLM safety", "Jailbreaks"],
            "size": [9, 3, 7, 4],
            "theme_id": [0, 0, 1, 1],
            "x": [0.0, 1.0, 2.0, 3.0],
            "y": [0.0, 1.0, 2.0, 3.0],
        }
    )
    themes = pd.DataFrame(
        {
            "theme_id": [0, 1],
            "label": ["Generative models", "<b>Safety</b>"],
            "size": [12, 11],
            "x": [0.5, 2.5],
            "y": [0.5, 2.5],
        }
    )
    return topics, themes


def test_theme_filter_keeps_the_papers_of_the_chosen_themes():
    from app.filters import chosen_topics, filter_mask

    topics, _ = topics_table()
    topic_ids = np.array([0, 1, 2, 3, -1])
    assert topics_in_themes(topics, [1]) == (2, 3)
    chosen = chosen_topics((), topics_in_themes(topics, [1]))
    assert filter_mask(topic_ids, topics=chosen).tolist() == [False, False, True, True, False]  # no -1
    assert topics_in_themes(topics, []) == (0, 1, 2, 3)  # no theme chosen: every topic


def test_topic_list_groups_topics_under_themes_by_size_or_growth():
    topics, themes = topics_table()
    groups = group_topic_list(topics, themes)
    assert [(g.label, g.topic_ids) for g in groups] == [
        ("Generative models", (0, 1)),
        ("<b>Safety</b>", (2, 3)),
    ]
    rising = pd.Series({0: 0.5, 1: 3.0, 2: 1.0, 3: np.nan})
    by_growth = group_topic_list(topics, themes, rising=rising)
    assert [g.topic_ids for g in by_growth] == [(1, 0), (2, 3)]
    # A map built before themes: one heading holds every topic.
    old = group_topic_list(topics.drop(columns="theme_id"), None)
    assert [(g.label, g.topic_ids) for g in old] == [(UNGROUPED, (0, 2, 3, 1))]


def test_theme_link_setting_round_trips_and_ignores_bad_values():
    chosen, notices = parse_themes({THEME_KEY: ["1,0,1"]}, {0, 1})
    assert chosen == (1, 0) and notices == []
    assert parse_themes(theme_params(chosen), {0, 1}) == ((1, 0), [])
    chosen, notices = parse_themes({THEME_KEY: ["7", "<script>" * 20]}, {0, 1})
    assert chosen == () and len(notices) == 1 and "not themes of this map" in notices[0]
    assert len(notices[0]) < 150  # a hostile link cannot flood the page
    assert theme_params(()) == {}


def test_the_committed_seed_map_feeds_the_theme_helpers():
    atlas = read_map(ROOT / "assets" / "maps" / "seeds")
    groups = group_topic_list(atlas.topics, atlas.themes)
    assert [g.theme_id for g in groups] == atlas.themes.sort_values("size", ascending=False)[
        "theme_id"
    ].tolist()
    assert sorted(t for g in groups for t in g.topic_ids) == sorted(atlas.topics["topic_id"])
