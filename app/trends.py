"""A topic over the years and across venues: shares, counts and a "rising" score (the topic panel draws
their charts, js/panel.js)."""

from __future__ import annotations

import numpy as np
import pandas as pd

YEAR, VENUE = "year", "venue"
MIN_YEAR_PAPERS = 5  # years with fewer papers in the whole map give shares too noisy to draw


def _years(papers: pd.DataFrame) -> pd.Series:
    """The `year` column as whole numbers (NaN where missing or not a year)."""
    if YEAR not in papers.columns:
        return pd.Series(np.nan, index=papers.index)
    years = pd.to_numeric(papers[YEAR], errors="coerce")
    return years.where((years >= 1000) & (years <= 9999) & (years == years.round()))


def has_years(papers: pd.DataFrame) -> bool:
    """Whether the map's papers carry usable years in at least two distinct years."""
    return _years(papers).dropna().nunique() >= 2


def has_venues(papers: pd.DataFrame) -> bool:
    """Whether the map's papers carry a `venue` column with at least one value."""
    return VENUE in papers.columns and papers[VENUE].notna().any()


def year_shares(
    papers: pd.DataFrame, topic_id: int, *, min_year_papers: int = MIN_YEAR_PAPERS
) -> pd.DataFrame:
    """Papers of a topic per year, as a count and as a share of all the map's papers that year.

    A share, not a count, so a topic is not "growing" only because the corpus is. Years with
    fewer than `min_year_papers` papers in the whole map are left out (one paper of two is 50%).

    Returns:
        Columns year (int), papers (topic's papers that year), total (map's papers that year),
        share (papers / total); one row per year in order; empty without years.

    Examples:
        >>> frame = pd.DataFrame({"year": [2020, 2020, 2021, 2021], "topic_id": [0, 1, 0, 0]})
        >>> year_shares(frame, 0, min_year_papers=1).to_dict("list")
        {'year': [2020, 2021], 'papers': [1, 2], 'total': [2, 2], 'share': [0.5, 1.0]}
    """
    years = _years(papers)
    known = years.notna()
    if not known.any():
        return pd.DataFrame(columns=["year", "papers", "total", "share"])
    total = years[known].astype(int).value_counts().sort_index()
    ours = years[known & (papers["topic_id"] == topic_id)].astype(int).value_counts()
    table = pd.DataFrame({"year": total.index.astype(int), "total": total.to_numpy()})
    table["papers"] = table["year"].map(ours).fillna(0).astype(int)
    table = table[table["total"] >= min_year_papers].reset_index(drop=True)
    table["share"] = (table["papers"] / table["total"]).round(4)
    return table[["year", "papers", "total", "share"]]


def venue_names(papers: pd.DataFrame) -> pd.Series:
    """Each paper's venue as `venue_counts` counts it ("Unknown venue" where missing or blank).

    Examples:
        >>> venue_names(pd.DataFrame({"venue": ["ICML", None, " "]})).tolist()
        ['ICML', 'Unknown venue', 'Unknown venue']
    """
    return papers[VENUE].map(
        lambda v: "Unknown venue" if v is None or v != v or str(v).strip() == "" else str(v)
    )


def venue_counts(
    papers: pd.DataFrame, topic_id: int, *, top: int = 12, names: pd.Series | None = None
) -> pd.DataFrame:
    """A topic's papers per venue, most first (ties A-Z), with each venue's total and the topic's share of it.

    Venues past the `top` are summed as "Other venues". The share (papers / total) is what compares:
    a big venue holds many papers of every topic. `names`: `venue_names(papers)`, made once for many topics.

    Returns:
        Columns venue (str), papers (int), total (the venue's papers in the whole map) and share;
        empty without a venue column.

    Examples:
        >>> frame = pd.DataFrame({"venue": ["ICML", "ICML", "NeurIPS", None], "topic_id": [0, 0, 1, 0]})
        >>> venue_counts(frame, 0).to_dict("list")
        {'venue': ['ICML', 'Unknown venue'], 'papers': [2, 1], 'total': [2, 1], 'share': [1.0, 1.0]}
    """
    if VENUE not in papers.columns:
        return pd.DataFrame(columns=["venue", "papers", "total", "share"])
    every = venue_names(papers) if names is None else names  # `names`: made once for many topics
    totals = every.value_counts()
    counts = every[papers["topic_id"] == topic_id].value_counts()
    counts = counts.iloc[
        sorted(range(len(counts)), key=lambda i: (-counts.iloc[i], counts.index[i]))
    ]  # ties A-Z
    table = pd.DataFrame({"venue": counts.index.astype(str), "papers": counts.to_numpy().astype(int)})
    table["total"] = table["venue"].map(totals).astype(int)
    if len(table) > top:
        rest = table.iloc[top:]
        other = {
            "venue": "Other venues",
            "papers": int(rest["papers"].sum()),
            "total": int(rest["total"].sum()),
        }
        table = pd.concat([table.iloc[:top], pd.DataFrame([other])], ignore_index=True)
    table["share"] = (table["papers"] / table["total"]).round(4)
    return table


def rising_scores(
    papers: pd.DataFrame, recent_years: int = 3, *, min_year_papers: int = MIN_YEAR_PAPERS
) -> pd.Series:
    """How much each topic grew lately: its share of papers in the last `recent_years` years
    divided by its share in the years before (1.0 = steady, 2.0 = doubled, 0.5 = halved).

    Shares are pooled over each window (papers / all papers in it), so small years do not swing
    the score; a topic with no earlier papers counts one half paper before (a new topic rises, but
    not infinitely). NaN for every topic when the map has no years before the recent window.

    Returns:
        A float Series indexed by topic id (unassigned papers, -1, left out), for sorting the topic list.

    Examples:
        >>> frame = pd.DataFrame({"year": [2019] * 4 + [2023] * 4, "topic_id": [0, 1, 1, 1, 0, 0, 0, 1]})
        >>> rising_scores(frame, 2, min_year_papers=1).round(2).to_dict()
        {0: 3.0, 1: 0.33}
    """
    years = _years(papers)
    topic_ids = sorted(int(t) for t in papers["topic_id"].unique() if t != -1)
    known = years.notna()
    counts = years[known].astype(int).value_counts()
    usable = sorted(y for y, n in counts.items() if n >= min_year_papers)
    if len(usable) < 2:
        return pd.Series(np.nan, index=pd.Index(topic_ids, name="topic_id"), dtype=float)
    recent = set(usable[-recent_years:]) if len(usable) > recent_years else set(usable[-(len(usable) // 2) :])
    earlier = set(usable) - recent
    in_recent = known & years.isin(recent)
    in_earlier = known & years.isin(earlier)
    topic = papers["topic_id"]
    recent_total, earlier_total = in_recent.sum(), in_earlier.sum()
    scores = {}
    for t in topic_ids:
        recent_share = (in_recent & (topic == t)).sum() / recent_total
        earlier_share = max((in_earlier & (topic == t)).sum(), 0.5) / earlier_total
        scores[t] = float(recent_share / earlier_share)
    return pd.Series(scores, name="rising", dtype=float).rename_axis("topic_id")
