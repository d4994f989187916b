"""Paper tables: the selectable table every panel uses, and the papers panel under the map, paged."""

from __future__ import annotations

import hashlib
import math
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app.data import MapData, paper_places
from app.search import SearchResult
from app.session import clear_selection, on_row_pick, turn_page

PAGE_ROWS = 50  # rows sent to the browser per page of the papers table; the CSV download has them all


def paper_rows(data: MapData, rows: np.ndarray, extra: dict[str, list] | None = None) -> pd.DataFrame:
    """A readable table of papers: title, topic, where it is from (as the hover says it, never an input
    file's name when the map knows better: `app.data.paper_places`) and a few metadata columns."""
    papers = data.papers.iloc[rows]
    table = pd.DataFrame(
        {
            "Title": papers["title"].astype(str).to_numpy(),
            "Topic": [data.label(t) for t in data.topic_ids[rows]],
            "Source": paper_places(papers).to_numpy(),
        }
    )
    for column in data.table_columns:
        table[column.capitalize()] = papers[column].to_numpy()
    for name, values in (extra or {}).items():
        table[name] = values
    return table


def digest(doc_ids: list[str]) -> str:
    return hashlib.blake2b("\n".join(doc_ids).encode(), digest_size=6).hexdigest()


def paper_table(
    data: MapData,
    rows: np.ndarray,
    key_prefix: str,
    *,
    height: int | str = "auto",
    similarity: list[float] | None = None,
    caption: str | None = None,
    compact: bool = False,
    match: list[str] | None = None,
    closeness: list[float] | None = None,
) -> None:
    """A selectable table of papers; choosing a row opens that paper.

    `compact` keeps only title, topic and similarity, for the narrow detail panel; `match` says how
    each paper matched a search (a "Match" column), `closeness` how close in meaning it is as a share
    of the map's pairs of papers (a "Closer than" column). The table keeps its key (so it is not
    remounted) unless its rows change or the opened paper is one of them.
    """
    doc_ids = data.doc_ids[rows].tolist()
    extra: dict[str, list] = {"Match": match} if match is not None else {}
    if closeness is not None:
        extra["Closer than"] = closeness
    if similarity is not None:
        extra["Similarity"] = similarity
    table = paper_rows(data, rows, extra)
    if compact:
        table = table[[c for c in ("Title", "Topic", "Similarity") if c in table.columns]]
    elif match is not None:  # how each paper matched, next to its title where a narrow table shows it
        table = table[["Title", *extra, *[c for c in table.columns if c != "Title" and c not in extra]]]
    opened = st.session_state.get("paper")
    here = opened if opened in doc_ids else ""
    key = f"{key_prefix}-{digest(doc_ids)}-{here}"
    column_config = {
        "Title": st.column_config.TextColumn(
            "Title", width=(150 if similarity else 210) if compact else (240 if similarity else 280)
        ),
        "Topic": st.column_config.TextColumn("Topic", width=90 if compact else 140),
        "Source": st.column_config.TextColumn("Source", width=110 if similarity is None else 90),
    }
    if match is not None:
        column_config["Match"] = st.column_config.TextColumn(
            "Match",
            width=110,
            help="How the paper matched the search. Words: exact word (as typed), word form (another "
            "form of it: ranking for rank), phrase, prefix or substring. Meaning: meaning (and + words when "
            "it also holds every word), or not close (nothing on this map is; these are the nearest).",
        )
    if closeness is not None:
        column_config["Closer than"] = st.column_config.ProgressColumn(
            "Closer than",
            format="%.1f%% of pairs",
            min_value=0.0,
            max_value=100.0,
            width=110,
            help="Closer in meaning to your search than this share of the map's pairs of papers are to each "
            "other: 99% is very close, 50% is what two papers picked at random share",
        )
    if similarity is not None:
        column_config["Similarity"] = st.column_config.ProgressColumn(
            "Similarity", format="%.2f", min_value=0.0, max_value=1.0, width=70 if compact else 90
        )
    st.dataframe(
        table,
        key=key,
        hide_index=True,
        on_select=partial(on_row_pick, key, doc_ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": [doc_ids.index(here)] if here else []}},
        column_config=column_config,
        height=height,
    )
    if caption:
        st.caption(caption)


def page_of(count: int, page: int, size: int = PAGE_ROWS) -> tuple[int, int, int]:
    """(page, first row, end row) for a 0-based page, clamped to the pages there are.

    Examples:
        >>> page_of(120, 5), page_of(0, 0), page_of(120, 1)
        ((2, 100, 120), (0, 0, 0), (1, 50, 100))
    """
    pages = max(1, math.ceil(count / size))
    page = min(max(page, 0), pages - 1)
    return page, page * size, min(count, (page + 1) * size)


def papers_panel(data: MapData, view_rows: np.ndarray, search: SearchResult | None = None) -> np.ndarray:
    """The papers table: the map selection when there is one, else every paper in view, a page at a time.

    `view_rows` come best search match first; with a search each row says how it matched.
    """
    selection = st.session_state.get("selection") or ()
    in_view = np.zeros(data.n, dtype=bool)
    in_view[view_rows] = True
    if selection:
        picked = [d for d in selection if in_view[data.row_of[d]]]
        rows = np.array([data.row_of[d] for d in picked], dtype=np.int64)
        heading, action = st.columns([3, 1], vertical_alignment="bottom")
        heading.markdown(f"#### Selected on the map · {len(rows):,}")
        action.button(
            "Clear selection", on_click=clear_selection, icon=":material/deselect:", width="stretch"
        )
        if len(picked) < len(selection):
            st.caption(f"{len(selection) - len(picked):,} selected papers are hidden by the current filters.")
    else:
        rows = view_rows
        ranked = " · best matches first" if search is not None and len(rows) > 1 else ""
        st.markdown(f"#### Papers · {len(rows):,}{ranked}")
    if not len(rows):
        st.info("No papers match the current filters and search.", icon=":material/filter_alt_off:")
        return rows
    view = digest([str(len(rows)), *map(str, rows[:2000].tolist())])
    if st.session_state.get("page_of") != view:  # a new search, filter or selection starts at page 1
        st.session_state.page_of = view
        st.session_state.page = 0
    page, start, end = page_of(len(rows), st.session_state.get("page", 0))
    st.session_state.page = page
    match = similarity = closeness = None
    if search is not None and not selection:
        match = search.match_labels()[start:end]
        if search.similarity is not None:
            similarity = [float(v) for v in search.similarity[start:end]]
        if search.percentile is not None:
            closeness = [float(v) for v in search.percentile[start:end]]
    paper_table(
        data,
        rows[start:end],
        f"papers-p{page}",
        height=420,
        caption=None,
        match=match,
        similarity=similarity,
        closeness=closeness,
    )
    if len(rows) > PAGE_ROWS:
        pages = math.ceil(len(rows) / PAGE_ROWS)
        back, where, forward = st.columns([1, 3, 1], vertical_alignment="center")
        back.button(
            "Previous", on_click=turn_page, args=(-1,), icon=":material/chevron_left:",
            key="page_back", disabled=page == 0, width="stretch",
        )  # fmt: skip
        where.caption(
            f"Papers {start + 1:,}–{end:,} of {len(rows):,} · page {page + 1:,} of {pages:,}. "
            "Select a row to read the paper; the CSV download below has them all."
        )
        forward.button(
            "Next", on_click=turn_page, args=(1,), icon=":material/chevron_right:",
            key="page_next", disabled=page >= pages - 1, width="stretch",
        )  # fmt: skip
    else:
        st.caption("Select a row to read the paper.")
    return rows
