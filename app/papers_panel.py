"""The papers panel under the map: the map selection or every paper in view, a page at a time."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from app import session
from app.data import MapData
from app.search import SearchResult
from app.session import clear_selection, turn_page
from app.text import counted
from app.widgets import digest, paper_table

PAGE_ROWS = 50  # rows sent to the browser per page of the papers table; the CSV download has them all


def page_of(count: int, page: int, size: int = PAGE_ROWS) -> tuple[int, int, int]:
    """(page, first row, end row) for a 0-based page, clamped to the pages there are.

    Examples:
        >>> page_of(120, 5), page_of(0, 0), page_of(120, 1)
        ((2, 100, 120), (0, 0, 0), (1, 50, 100))
    """
    pages = max(1, math.ceil(count / size))
    page = min(max(page, 0), pages - 1)
    return page, page * size, min(count, (page + 1) * size)


def papers_panel(
    data: MapData,
    view_rows: np.ndarray,
    search: SearchResult | None = None,
    selected: np.ndarray | None = None,
) -> np.ndarray:
    """The papers table: the papers in view the map selection holds when there is one (`selected`:
    rows, in view or not), else every paper in view, a page at a time.

    `view_rows` come best search match first; with a search each row says how it matched.
    """
    in_view = np.zeros(data.n, dtype=bool)
    in_view[view_rows] = True
    if selected is not None:
        rows = selected[in_view[selected]]
        heading, action = st.columns([3, 1], vertical_alignment="bottom")
        heading.markdown(f"#### Selected on the map · {len(rows):,}")
        action.button(
            "Clear selection", on_click=clear_selection, icon=":material/deselect:", width="stretch"
        )
        if len(rows) < len(selected):
            hidden = len(selected) - len(rows)
            st.caption(
                f"{counted(hidden, 'paper')} inside the selection {'is' if hidden == 1 else 'are'} "
                "hidden by the current filters and search."
            )
    else:
        rows = view_rows
        ranked = " · best matches first" if search is not None and len(rows) > 1 else ""
        st.markdown(f"#### Papers · {len(rows):,}{ranked}")
    if not len(rows):
        st.info("No papers match the current filters and search.", icon=":material/filter_alt_off:")
        return rows
    view = digest([str(len(rows)), *map(str, rows[:2000].tolist())])
    page, start, end = page_of(len(rows), session.table_page(view))  # a new view starts at page 1
    session.set_table_page(page)
    match = similarity = closeness = None
    if search is not None and selected is None:
        match = search.match_labels()[start:end]
        if search.similarity is not None:
            similarity = [float(v) for v in search.similarity[start:end]]
        if search.percentile is not None:
            closeness = [float(v) for v in search.percentile[start:end]]
    # Two forms of the table; the page's stylesheet (app/map_component/map.css) shows the one that fits:
    # every column, or, narrower than 600 px (phones), the title and topic in columns that fit it.
    with st.container(key="papers-table"):
        for form in ("wide", "narrow"):
            with st.container(key=f"papers-{form}"):
                paper_table(
                    data,
                    rows[start:end],
                    f"papers-p{page}" + ("-narrow" if form == "narrow" else ""),
                    height=420,
                    caption=None,
                    match=match,
                    similarity=similarity,
                    closeness=closeness,
                    narrow=form == "narrow",
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
