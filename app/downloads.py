"""Downloads: the papers in view as CSV, Markdown reading list and BibTeX, and the whole map as CSV,
each made only when the reader clicks."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.data import MapData
from app.search import SearchResult
from app.text import counted
from pipeline.exports.export import export_frame, neutralise, to_csv_bytes
from pipeline.exports.reading_list import reading_list_bibtex, reading_list_heading, reading_list_markdown


def ranked_evidence(
    search: SearchResult | None, rows: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, str]] | None]:
    """`rows` in the search's order with each one's rank in its list and evidence (its Match label),
    or as they are (None) without a search.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> found = SearchResult(parse_query("a"), "a", np.array([4, 2, 7]), ("x", "y", "z"), np.ones(3, bool))
        >>> order, said = ranked_evidence(found, np.array([7, 4]))
        >>> order.tolist(), said
        ([4, 7], [(1, 'x'), (3, 'z')])
    """
    if search is None:
        return rows, None
    rank = {int(r): i for i, r in enumerate(search.rows.tolist())}
    order = np.array(sorted(rows.tolist(), key=lambda r: rank[int(r)]), dtype=np.int64)
    return order, [(rank[r] + 1, search.labels[rank[r]]) for r in order.tolist()]


def downloads(
    data: MapData, rows: np.ndarray, chosen: str | None = None, search: SearchResult | None = None
) -> None:
    """`rows` are the papers of the current view (search, filters, topics, map selection); `chosen`
    says how they were chosen (`chosen_sentence`), for the reading lists; under a `search` each file
    lists them best first, each with its rank and evidence (`ranked_evidence`)."""
    left, right = st.columns(2)
    topics = data.topics.reset_index(drop=True)
    rows, evidence = ranked_evidence(search, rows)

    def view_csv(rows=rows) -> bytes:
        table = export_frame(data.papers.iloc[rows], topics, themes=data.themes)
        if evidence is not None:  # first: the rank in the search's list, and why the paper is in it
            table.insert(0, "search_evidence", [neutralise(label) for _, label in evidence])
            table.insert(0, "search_rank", [rank for rank, _ in evidence])
        return to_csv_bytes(table)

    def map_csv() -> bytes:
        return to_csv_bytes(export_frame(data.papers, topics, themes=data.themes))

    def view_markdown(rows=rows) -> bytes:
        heading = reading_list_heading(data.manifest.name or data.name)
        return reading_list_markdown(
            data.papers.iloc[rows], topics, heading=heading, chosen=chosen, evidence=evidence
        ).encode("utf-8")

    def view_bibtex(rows=rows) -> bytes:
        heading = reading_list_heading(data.manifest.name or data.name)
        return reading_list_bibtex(data.papers.iloc[rows], heading=heading, chosen=chosen).encode("utf-8")

    one = len(rows) == 1  # "this paper", never "these 1 papers"
    these = "this paper" if one else f"these {counted(len(rows), 'paper')}"
    buttons = [  # (column, label, data, file name, MIME type, icon, key, help); each made only on click
        (
            left,
            f"Download {these} (CSV)",
            view_csv,
            f"{data.name}-view.csv",
            "text/csv",
            "download",
            "download_view",
            None,
        ),
        (
            right,
            f"Download the whole map · {data.n:,} (CSV)",
            map_csv,
            f"{data.name}.csv",
            "text/csv",
            "download",
            "download_map",
            None,
        ),
        (
            left,
            f"Reading list of {'this paper' if one else f'these {len(rows):,}'} (Markdown)",
            view_markdown,
            f"{data.name}-reading-list.md",
            "text/markdown",
            "format_list_bulleted",
            "download_view_markdown",
            "Titles, a one-line summary and links where the map has them, grouped by topic.",
        ),
        (
            right,
            f"{'This paper' if one else f'These {len(rows):,}'} as BibTeX",
            view_bibtex,
            f"{data.name}-reading-list.bib",
            "application/x-bibtex",
            "menu_book",
            "download_view_bibtex",
            "One entry a paper: title, authors, year, venue and url where the map has them.",
        ),
    ]
    if not len(rows):  # nothing in view: no button offers an empty file, only the whole map's
        buttons = [button for button in buttons if button[6] == "download_map"]
        left.caption(":material/download: No papers in view to download.")
    for column, label, make, file_name, mime, icon, key, help_text in buttons:
        column.download_button(
            label,
            make,
            file_name=file_name,
            mime=mime,
            icon=f":material/{icon}:",
            key=key,
            width="stretch",
            on_click="ignore",
            help=help_text,
        )


def chosen_sentence(sentence: tuple[str, str], selected: int | None = None) -> str:
    """How the papers of a download were chosen, from the header's sentence (`app.search.search_sentence`)
    and, when the reader picked points on the map, how many they picked.

    Examples:
        >>> chosen_sentence(("31", "of the 1,357 papers of the map match the words “optical flow”"))
        '31 of the 1,357 papers of the map match the words “optical flow”'
        >>> chosen_sentence(("", "Showing the 60 papers in the topic “Pose”"), selected=4)
        '4 papers selected on the map, among the 60 papers in the topic “Pose”'
    """
    number, rest = sentence
    text = f"{number} {rest}" if number else rest.removeprefix("Showing ")
    if selected is None:
        return text
    return f"{counted(selected, 'paper')} selected on the map, among {text}"
