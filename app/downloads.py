"""Downloads: the papers in view as CSV, Markdown reading list and BibTeX, and the whole map as CSV,
each made only when the reader clicks."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.data import MapData
from pipeline.export import export_frame, to_csv_bytes
from pipeline.reading_list import reading_list_bibtex, reading_list_markdown


def downloads(data: MapData, rows: np.ndarray) -> None:
    """`rows` are the papers of the current view (search, filters, topics, map selection)."""
    left, right = st.columns(2)
    topics = data.topics.reset_index(drop=True)

    def view_csv(rows=rows) -> bytes:
        return to_csv_bytes(export_frame(data.papers.iloc[rows], topics, themes=data.themes))

    def map_csv() -> bytes:
        return to_csv_bytes(export_frame(data.papers, topics, themes=data.themes))

    def view_markdown(rows=rows) -> bytes:
        heading = f"Reading list from {data.manifest.get('name') or data.name}"
        return reading_list_markdown(data.papers.iloc[rows], topics, heading=heading).encode("utf-8")

    def view_bibtex(rows=rows) -> bytes:
        return reading_list_bibtex(data.papers.iloc[rows]).encode("utf-8")

    left.download_button(
        f"Download these {len(rows):,} papers (CSV)",
        view_csv,
        file_name=f"{data.name}-view.csv",
        mime="text/csv",
        icon=":material/download:",
        key="download_view",
        width="stretch",
        on_click="ignore",
        disabled=not len(rows),
    )
    right.download_button(
        f"Download the whole map · {data.n:,} (CSV)",
        map_csv,
        file_name=f"{data.name}.csv",
        mime="text/csv",
        icon=":material/download:",
        key="download_map",
        width="stretch",
        on_click="ignore",
    )
    left.download_button(
        f"Reading list of these {len(rows):,} (Markdown)",
        view_markdown,
        file_name=f"{data.name}-reading-list.md",
        mime="text/markdown",
        icon=":material/format_list_bulleted:",
        key="download_view_markdown",
        width="stretch",
        on_click="ignore",
        disabled=not len(rows),
        help="Titles, a one-line summary and links where the map has them, grouped by topic.",
    )
    right.download_button(
        f"These {len(rows):,} as BibTeX",
        view_bibtex,
        file_name=f"{data.name}-reading-list.bib",
        mime="application/x-bibtex",
        icon=":material/menu_book:",
        key="download_view_bibtex",
        width="stretch",
        on_click="ignore",
        disabled=not len(rows),
        help="One entry a paper: title, authors, year, venue and url where the map has them.",
    )
