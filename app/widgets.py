"""Page elements more than one panel shows: the selectable paper table."""

from __future__ import annotations

import hashlib
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app import session
from app.data import MapData, paper_places
from app.session import on_row_pick

SIDE_WIDTH = 300  # pixels the side panel's tables share out at 1400x900, after the row-select column
CHAR_WIDTH = 6.3  # pixels a character of table text takes, on average (14 px Source Sans), rounded up
MAX_LINES = 4  # a cell wraps onto at most this many lines; past that (rare) it ends in an ellipsis


def wrapped_lines(text: str, per_line: int) -> int:
    """Lines `text` takes when its words wrap at `per_line` characters (a longer word takes its own).

    Examples:
        >>> wrapped_lines("Path planning & multi-robot", 28), wrapped_lines("Path planning & multi-robot", 20)
        (1, 2)
    """
    lines, used = 1, 0
    for word in str(text).split():
        if used and used + 1 + len(word) > per_line:
            lines, used = lines + 1, len(word)
        else:
            used += len(word) + (1 if used else 0)
    return lines


def wrapped_height(columns: list[tuple[list[str], int]]) -> int:
    """A table's row height so that every cell's text shows whole: 35 px when each fits on one line,
    else tall enough for the longest cell's lines (Streamlit wraps cell text only past 64 px rows).

    `columns`: (the column's texts, its width in pixels).

    Examples:
        >>> wrapped_height([(["Depth"], 200)])
        35
        >>> wrapped_height([(["Degrees of freedom & manipulators"], 160)])
        66
        >>> wrapped_height([(["x " * 200], 100)])
        94
    """
    lines = 1
    for texts, width in columns:
        per_line = max(1, int((width - 17) / CHAR_WIDTH))  # less the cell's padding
        lines = max([lines, *(wrapped_lines(t, per_line) for t in texts)])
    if lines == 1:
        return 35
    return max(66, 10 + 21 * min(lines, MAX_LINES))


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
    each paper matched a search (a "Match" column). The table keeps its key (so it is not
    remounted) unless its rows change or the opened paper is one of them.
    """
    doc_ids = data.doc_ids[rows].tolist()
    extra: dict[str, list] = {"Match": match} if match is not None else {}
    if closeness is not None:
        extra["Closer than"] = closeness
    if similarity is not None:
        extra["Similarity"] = similarity
    table = paper_rows(data, rows, extra)
    if compact:  # beside the map: whole titles, wrapped; the topic only where the papers' topics differ
        keep = ["Title", "Topic"] if len(set(table["Topic"])) > 1 else ["Title"]
        table = table[[c for c in (*keep, "Similarity") if c in table.columns]]
    elif match is not None:  # how each paper matched, next to its title where a narrow table shows it
        table = table[["Title", *extra, *[c for c in table.columns if c != "Title" and c not in extra]]]
    opened = session.chosen("paper")
    here = opened if opened in doc_ids else ""
    key = f"{key_prefix}-{digest(doc_ids)}-{here}"
    row_height = None
    if compact:
        topic_width = 95 if "Topic" in table.columns else 0
        widths = {
            "Title": SIDE_WIDTH - topic_width - (75 if similarity is not None else 0),
            "Topic": topic_width or 1,
        }
        row_height = wrapped_height(
            [(table[c].tolist(), widths[c]) for c in ("Title", "Topic") if c in table]
        )
    else:
        widths = {"Title": 240 if similarity else 280, "Topic": 140}
    column_config = {
        "Title": st.column_config.TextColumn("Title", width=widths["Title"]),
        "Topic": st.column_config.TextColumn("Topic", width=widths["Topic"]),
        "Source": st.column_config.TextColumn("Source", width=110 if similarity is None else 90),
    }
    if match is not None:
        column_config["Match"] = st.column_config.TextColumn(
            "Match",
            width=110,
            help="How the paper matched the search. Words: exact word (as typed), word form (another "
            "form of it: ranking for rank), phrase, prefix or substring. Meaning: meaning (and + words when "
            "it also holds every word); when nothing on this map is close, the nearest are listed as related "
            "(closer than 90% of the map's pairs of papers) or not close.",
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
            "Similarity", format="%.2f", min_value=0.0, max_value=1.0, width=75 if compact else 90
        )
    st.dataframe(
        table,
        key=key,
        hide_index=True,
        on_select=partial(on_row_pick, key, doc_ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": [doc_ids.index(here)] if here else []}},
        column_config=column_config,
        height=height if row_height is None or height != "auto" else row_height * len(table) + 38,
        row_height=row_height,
    )
    if caption:
        st.caption(caption)
