"""The app's themes, trends and stability (issue 11) driven with AppTest: on the committed seed map
(themes, stability, no years) and on tiny maps with year and venue columns."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.text import markdown_literal
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import (
    REPO,
    link_in_view,
    live_panel,
    panel_summary,
    panel_topic,
    rows_of,
    start,
    texts,
    tiny_map,
    topic_table,
    url,
    whole_page,
)

SEED_MAP = REPO / "assets" / "maps" / "seeds"
EVIL_VENUE = "<b>Evil</b> venue"


@pytest.fixture
def seeds(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ATLAS_MAP", str(SEED_MAP))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return SEED_MAP


def seed_themes() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The committed seed map's topics and themes, read from its files (so a rebuilt seed map still passes)."""
    return read_map(SEED_MAP).topics, pd.read_parquet(SEED_MAP / "themes.parquet")


def trend_map(stability: bool = False):
    """120 papers over 2020-2024 in four topics: "Multi-view clustering" (3) only in 2023-24, "Graph neural
    networks" (0) only in 2020-21, the others spread evenly; three venues, one with markup in its name."""
    atlas = tiny_map(n=120)
    topic = np.arange(120) % 4
    step = np.arange(120) // 4
    atlas.papers["year"] = np.where(
        topic == 0, 2020 + step % 2, np.where(topic == 3, 2023 + step % 2, 2020 + step % 5)
    )
    atlas.papers["venue"] = [("ICML", "NeurIPS", EVIL_VENUE)[i % 3] for i in range(120)]
    atlas.topics["stability"] = [0.91, 0.42, 0.77, 0.66] if stability else [np.nan] * 4
    if stability:
        atlas.manifest = replace(
            atlas.manifest, stability={"runs": 5, "method": "90% subsamples", "seconds": 0.25}
        )
    else:
        atlas.manifest = replace(
            atlas.manifest, stability={"runs": 0, "method": "switched off (--no-stability)", "seconds": 0.0}
        )
    return atlas


@pytest.fixture
def trends(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "trends"
    write_map(folder, trend_map())
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return folder


def sections(at) -> list[tuple[dict, pd.DataFrame]]:
    """The topic list as the panel beside the map draws it (`tests.helpers.topic_table`), a section a
    heading (a theme, or Unassigned; one without a heading on a map without themes)."""
    state, summary = live_panel(at), panel_summary(at)
    table = topic_table(at)
    rising = state["sort"] == "rising" and "rising" in summary["lists"]
    shown = [
        s
        for s in summary["lists"]["rising" if rising else "size"]
        if s["theme"] is None or not state["themes"] or s["theme"] in state["themes"]
    ]
    out, start_row = [], 0
    for section in shown:
        out.append(
            (section, table.iloc[start_row : start_row + len(section["topics"])].reset_index(drop=True))
        )
        start_row += len(section["topics"])
    return out


def topic_lists(at) -> list[pd.DataFrame]:
    """The topic list's sections (one per theme where the map has themes), top to bottom."""
    return [frame for _, frame in sections(at)]


def listed_topics(at) -> list[str]:
    return [name for frame in topic_lists(at) for name in frame["Topic"]]


def group_headers(at) -> list[str]:
    """The theme headings of the topic list, as "**name** · N papers" (and "· M in view" when filtered)."""
    return [
        f"**{markdown_literal(s['name'])}** · {s['size']:,} papers"
        + (f" · {int(frame['In view'].sum()):,} in view" if "In view" in frame else "")
        for s, frame in sections(at)
        if s["name"] is not None
    ]


# --------------------------------------------------------------------------- themes
def unassigned_count() -> int:
    return int((read_map(SEED_MAP).papers["topic_id"] == -1).sum())


def test_topic_list_is_grouped_under_themes_and_the_theme_filter_narrows_it(seeds):
    topics, themes = seed_themes()
    at = start()
    assert not at.exception and not at.warning
    largest = themes.sort_values(["size", "theme_id"], ascending=[False, True])
    headers = group_headers(at)
    unassigned = unassigned_count()
    assert len(headers) == len(themes) + bool(unassigned)  # Unassigned is a group of its own
    if unassigned:
        assert headers[-1] == f"**Unassigned** · {unassigned} papers"
    assert (
        headers[0] == f"**{markdown_literal(largest['label'].iloc[0])}** · {largest['size'].iloc[0]} papers"
    )
    # every topic once, under its theme, and Unassigned under its own header
    assert sorted(listed_topics(at)) == sorted([*topics["label"], *(["Unassigned"] if unassigned else [])])
    assert at.multiselect(key="w_themes").options == [
        f"{label} ({size})" for label, size in zip(largest["label"], largest["size"])
    ]

    chosen = themes.sort_values("size").iloc[0]  # the smallest theme
    whole_page(at.multiselect(key="w_themes").select(int(chosen["theme_id"])).run())  # the list: as loaded
    members = topics[topics["theme_id"] == chosen["theme_id"]]
    assert sorted(listed_topics(at)) == sorted([*members["label"], *(["Unassigned"] if unassigned else [])])
    assert len(group_headers(at)) == 1 + bool(unassigned)  # the theme, and Unassigned (none in view)
    papers = read_map(SEED_MAP).papers
    in_theme = set(papers.loc[papers["topic_id"].isin(members["topic_id"]), "doc_id"])
    shown = re.sub(r"\\(.)", r"\1", texts(at))
    assert f"Showing the {len(in_theme)} papers in the theme “{chosen['label']}”" in shown
    assert set(np.flatnonzero(link_in_view(at))) == {
        i for i, d in enumerate(papers["doc_id"]) if d in in_theme
    }  # exactly the theme's papers: no unassigned ones
    assert url(at)["theme"] == [str(int(chosen["theme_id"]))]
    # the Topics filter offers only the theme's topics (and Unassigned, which the reader may add)
    offered = set(at.multiselect(key="w_topics").options)
    assert offered == {f"{r.label} ({r.size})" for r in members.itertuples()} | (
        {f"Unassigned ({int((papers['topic_id'] == -1).sum())})"}
        if (papers["topic_id"] == -1).any()
        else set()
    )


def test_a_search_inside_a_theme_counts_the_themes_papers_that_hold_the_word(seeds):
    topics, themes = seed_themes()
    papers = read_map(SEED_MAP).papers
    theme = themes.sort_values(["size", "theme_id"], ascending=[False, True]).iloc[0]
    in_theme = papers[
        papers["topic_id"].isin(topics.loc[topics["theme_id"] == theme["theme_id"], "topic_id"])
    ]
    text = (in_theme["title"] + " " + in_theme["abstract"]).str.lower()
    holding = in_theme[text.str.contains(r"\blanguages?\b")]  # every form Porter stems to "languag"
    at = start({"theme": str(int(theme["theme_id"])), "q": "language"})
    assert not at.exception and 0 < len(holding) < len(in_theme)
    shown = re.sub(r"\\(.)", r"\1", texts(at)).replace("**", "")
    listed = int(link_in_view(at).sum())  # those writing it, and any close in meaning
    assert (
        f"{listed} of the {len(in_theme)} papers in the theme “{theme['label']}” match “language”: "
        f"{len(holding)} write “language”" in shown
    )
    assert listed >= len(holding)


def test_a_theme_link_round_trips_and_a_malformed_one_shows_a_notice(seeds):
    _, themes = seed_themes()
    two = sorted(int(t) for t in themes["theme_id"])[:2]
    at = start({"theme": f"{two[1]},{two[0]}"})
    assert not at.warning and not at.exception
    assert at.multiselect(key="w_themes").value == [two[1], two[0]]
    assert url(at)["theme"] == [f"{two[1]},{two[0]}"]  # the link reproduces itself
    assert len(group_headers(at)) == 2 + bool(unassigned_count())

    at = start({"theme": "nope,99", "q": "language"})
    assert not at.exception
    notice = at.warning[0].value
    assert "Ignored themes" in notice and "nope" in notice and "99" in notice
    assert at.multiselect(key="w_themes").value == []
    assert len(group_headers(at)) == len(themes) + bool(unassigned_count())  # nothing narrowed
    assert url(at) == {"q": ["language"]}


def test_the_csv_download_names_each_papers_theme(seeds, downloads):  # noqa: F811
    topics, themes = seed_themes()
    at = start()
    assert not at.exception
    papers = read_map(SEED_MAP).papers
    rows = rows_of(downloads[f"Download the whole map · {len(papers)} (CSV)"])
    theme_of = dict(
        zip(topics["label"], topics["theme_id"].map(dict(zip(themes["theme_id"], themes["label"]))))
    )
    # an unassigned paper has no theme: an empty cell
    assert {r["theme"] for r in rows} == set(themes["label"]) | ({""} if unassigned_count() else set())
    assert all(r["theme"] == "" for r in rows if r["topic"] == "Unassigned")
    assert all(r["theme"] == theme_of[r["topic"]] for r in rows if r["topic"] != "Unassigned")


def test_a_map_without_themes_has_no_theme_ui_and_ignores_a_theme_link(trends):
    at = start({"theme": "0"})
    assert not at.exception
    assert not [m for m in at.multiselect if m.key == "w_themes"]
    assert not group_headers(at) and len(topic_lists(at)) == 1
    assert "Ignored theme \\'0\\'\\: not a theme of this map" in at.warning[0].value  # escaped markdown


# --------------------------------------------------------------------------- trends
def opened(at, topic: int) -> dict:
    """An opened topic as the panel reads it (its entry in the map's summary file)."""
    assert panel_topic(at) == topic
    [entry] = [t for t in panel_summary(at)["topics"] if t["id"] == topic]
    return entry


def test_the_topic_view_shows_yearly_shares_and_venues_where_the_map_has_them(trends):
    at = start({"topic": "3"})
    assert not at.exception
    topic = opened(at, 3)
    assert topic["keywords"]  # the three tabs: Keywords, Over the years, Venues (js/panel.js)
    years = topic["years"]
    assert [y["year"] for y in years] == [2020, 2021, 2022, 2023, 2024]
    assert [y["share"] for y in years[:3]] == [0, 0, 0] and min(y["share"] for y in years[3:]) > 0  # 2023-24
    venues = topic["venues"]
    assert sum(v["papers"] for v in venues) == 26  # 30 papers, 4 unassigned
    assert all(v["share"] == round(v["papers"] / v["total"], 4) for v in venues)  # of each venue's papers
    assert EVIL_VENUE in {v["venue"] for v in venues}  # as written: the panel shows it as text


def test_no_year_chart_without_years(seeds):
    at = start({"topic": "0"})
    assert not at.exception
    topic = opened(at, 0)
    assert topic["keywords"] and not topic["years"]  # the keywords alone


def test_rising_sorts_topics_by_growth_and_lives_in_the_url(trends):
    at = start()
    by_size = listed_topics(at)
    assert "Growth" not in topic_lists(at)[0].columns
    at = start({"sort": "rising"})  # the panel's Rising button (a "sort" event: tests/test_app_steps.py)
    rising = listed_topics(at)
    assert rising[0] == "Multi-view clustering" and rising[-2:] == ["Graph neural networks", "Unassigned"]
    assert rising != by_size
    growth = topic_lists(at)[0]["Growth"].tolist()
    scores = [float(g.lstrip("×")) for g in growth[:4]]  # shown as "×1.25"
    assert scores[:3] == sorted(scores[:3], reverse=True) and scores[3] == 0  # no recent papers
    assert growth[-1] == "–" and "None" not in growth  # unassigned papers have no growth score
    assert url(at)["sort"] == ["rising"] and not at.warning  # the link reproduces itself
    at = start({"sort": "fastest"})
    assert "sort\\=\\'fastest\\'" in at.warning[0].value and listed_topics(at) == by_size


def test_a_map_without_years_offers_no_rising_sort(seeds):
    at = start({"sort": "rising"})
    assert not at.exception
    assert not [control for control in at.segmented_control if control.key == "w_sort"]
    assert "no years" in at.warning[0].value and "sort" not in url(at)


# --------------------------------------------------------------------------- stability
def test_stability_shows_in_the_topic_view_and_about_panel(seeds):
    topics, _ = seed_themes()
    topic = topics.sort_values("topic_id").iloc[0]
    at = start({"topic": str(int(topic["topic_id"]))}, panels=("about_panel",))
    shown = texts(at)
    assert opened(at, int(topic["topic_id"]))["stability"] == round(float(topic["stability"]), 4)
    assert panel_summary(at)["stability_help"].startswith(
        "how reliably the topic comes back when the clustering is redone on 90% of the papers"
    )
    runs = json.loads((SEED_MAP / "manifest.json").read_text())["stability"]["runs"]
    assert f"· {runs} runs ·" in shown and "**Topic stability**" in shown


def test_stability_is_hidden_when_the_build_skipped_it(trends, tmp_path, monkeypatch):
    at = start({"topic": "1"})
    assert not at.exception
    assert opened(at, 1)["stability"] is None
    folder = tmp_path / "stable"
    write_map(folder, trend_map(stability=True))
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    at = start({"topic": "1"}, panels=("about_panel",))
    assert opened(at, 1)["stability"] == 0.42 and "· 5 runs · 0.25 s" in texts(at)


def test_a_link_to_a_theme_a_rebuild_dissolved_says_what_became_of_it(tmp_path, monkeypatch):
    """`?theme=9` on a rebuilt map where theme 9 is gone: a notice names it and where its papers went."""
    atlas = read_map(SEED_MAP)
    themes = atlas.themes
    successor = int(themes["theme_id"].iloc[0])
    themes_record = [
        {
            "theme_id": successor,
            "status": "renamed",
            "label": themes["label"].iloc[0],
            "previous_label": "Old name",
        },
        {
            "theme_id": 9,
            "status": "gone",
            "label": None,
            "previous_label": "Point cloud",
            "successor_theme_ids": [successor],
        },
    ]
    atlas.manifest = replace(atlas.manifest, lineage=replace(atlas.manifest.lineage, themes=themes_record))
    folder = tmp_path / "rebuilt"
    write_map(folder, atlas)
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    at = start({"theme": "9"})
    assert not at.exception
    notice = f"theme 9 (“Point cloud”) is gone since the last rebuild; most of its papers are now in “{themes['label'].iloc[0]}”"
    warnings = " ".join(re.sub(r"\\(.)", r"\1", w.value) for w in at.warning)
    assert notice in warnings, warnings
