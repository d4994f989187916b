"""Page elements more than one panel shows: the selectable paper table."""

from __future__ import annotations

import hashlib
import unicodedata
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app import session
from app.data import MapData, paper_places
from app.session import on_row_pick

MATCH_WIDTH = 110  # the papers table's "Match" column (how a paper matched a search)
# The papers table on a phone: its title ("Paper") and topic columns fit a 360 px phone's page (less the
# row-select column), and their cells wrap onto up to NARROW_LINES lines.
NARROW_WIDTHS = {"Paper": 180, "Topic": 110}
NARROW_LINES = 8
MAX_LINES = 4  # a cell wraps onto at most this many lines; past that (rare) it ends in an ellipsis
# Pixels each character of table text takes (14 px Source Sans, Streamlit's font, as Chromium measures
# it), rounded up to half a pixel: a text's width is at most the sum of its characters'.
CHAR_PIXELS = {
    **dict.fromkeys(" ", 3.0),
    **dict.fromkeys("',.:;ij|‘’", 3.5),
    **dict.fromkeys("Il", 4.0),
    **dict.fromkeys("!()-[]f{}", 4.5),
    **dict.fromkeys("/\\rt", 5.0),
    **dict.fromkeys('"*?sz“”', 6.0),
    **dict.fromkeys("cx", 6.5),
    **dict.fromkeys("#$+0123456789<=>FJLY^_ekvy~–", 7.0),
    **dict.fromkeys("ESTVXag", 7.5),
    **dict.fromkeys("ACPRZ`bdhnopqu", 8.0),
    **dict.fromkeys("BK", 8.5),
    **dict.fromkeys("&DG", 9.0),
    **dict.fromkeys("HNOQU", 9.5),
    **dict.fromkeys("Mw", 10.5),
    **dict.fromkeys("W", 11.0),
    **dict.fromkeys("—", 11.5),
    **dict.fromkeys("%@m", 12.0),
    **dict.fromkeys("…", 13.5),
}
WIDE_CHARACTER = 14.0  # any other character, unless an accented letter of the table: an em (CJK take one)


def text_width(text: str) -> float:
    """Pixels `text` takes in a table cell, at most (an accented letter as its base letter).

    Examples:
        >>> text_width("Depth"), text_width("Café"), text_width("日本")
        (37.0, 27.0, 28.0)
    """
    total = 0.0
    for ch in str(text):
        width = CHAR_PIXELS.get(ch)
        if width is None:
            width = CHAR_PIXELS.get(unicodedata.normalize("NFKD", ch)[:1], WIDE_CHARACTER)
        total += width
    return total


def wrapped_lines(text: str, room: float) -> int:
    """Lines `text` takes when its words wrap at its spaces within `room` pixels (a longer word takes
    its own lines).

    Examples:
        >>> wrapped_lines("Path planning & multi-robot", 190), wrapped_lines("Path planning & multi-robot", 120)
        (1, 2)
    """
    space = CHAR_PIXELS[" "]
    lines, used = 1, 0.0
    for word in str(text).split():
        width = text_width(word)
        if used and used + space + width > room:
            lines, used = lines + 1, width
        else:
            used += width + (space if used else 0.0)
        while used > room and room > 0:  # a word wider than a line goes on over the next
            lines, used = lines + 1, used - room
    return lines


def wrapped_height(columns: list[tuple[list[str], int]], max_lines: int = MAX_LINES) -> int:
    """A table's row height so that every cell's text shows whole: 35 px when each fits on one line,
    else tall enough for the longest cell's lines, up to `max_lines` (Streamlit wraps cell text only
    past 64 px rows).

    `columns`: (the column's texts, its width in pixels; a wider column, as Streamlit stretches them to
    fill the table, only takes fewer lines).

    Examples:
        >>> wrapped_height([(["Depth"], 200)])
        35
        >>> wrapped_height([(["Degrees of freedom & manipulators"], 160)])
        66
        >>> wrapped_height([(["x " * 200], 100)]), wrapped_height([(["x " * 200], 100)], max_lines=8)
        (94, 178)
    """
    lines = 1
    for texts, width in columns:
        room = width - 17  # less the cell's padding
        lines = max([lines, *(wrapped_lines(t, room) for t in texts)])
    if lines == 1:
        return 35
    return max(66, 10 + 21 * min(lines, max_lines))


def paper_rows(data: MapData, rows: np.ndarray, extra: dict[str, list] | None = None) -> pd.DataFrame:
    """A readable table of papers: title, topic, where it is from (as the hover says it, never an input
    file's name when the map knows better: `app.data.paper_places`) and a few metadata columns."""
    papers = data.papers.iloc[rows]
    table = pd.DataFrame(
        {
            "Title": papers["title"].astype(str).to_numpy(),
            "Topic": [data.label(t) for t in data.topic_ids[rows]],
        }
    )
    if data.show_source:
        table["Source"] = paper_places(papers).to_numpy()
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
    match: list[str] | None = None,
    closeness: list[float] | None = None,
    narrow: bool = False,
) -> None:
    """A selectable table of papers; choosing a row opens that paper.

    `narrow` keeps the title and topic only, in columns that fit a phone's width.

    `match` says how each paper matched a search (a "Match" column). The table keeps its key (so it is not
    remounted) unless its rows change or the opened paper is one of them.
    """
    doc_ids = data.doc_ids[rows].tolist()
    extra: dict[str, list] = {"Match": match} if match is not None else {}
    if closeness is not None:
        extra["Closer than"] = closeness
    if similarity is not None:
        extra["Similarity"] = similarity
    table = paper_rows(data, rows, extra)
    if narrow:
        return narrow_paper_table(table, doc_ids, key_prefix, height)
    if match is not None:  # how each paper matched, next to its title where a narrow table shows it
        table = table[["Title", *extra, *[c for c in table.columns if c != "Title" and c not in extra]]]
    opened = session.chosen("paper")
    here = opened if opened in doc_ids else ""
    key = f"{key_prefix}-{digest(doc_ids)}-{here}"
    # whole titles and topics, wrapped: at 1400x900 the columns are stretched to the page's width
    widths = {"Title": 340 if similarity else 400, "Topic": 160}
    row_height = wrapped_height(
        [(table["Title"].tolist(), widths["Title"]), (table["Topic"].tolist(), widths["Topic"])]
        + ([(table["Match"].tolist(), MATCH_WIDTH)] if "Match" in table else [])
    )
    column_config = {
        "Title": st.column_config.TextColumn("Title", width=widths["Title"]),
        "Topic": st.column_config.TextColumn("Topic", width=widths["Topic"]),
        "Source": st.column_config.TextColumn("Source", width=110 if similarity is None else 90),
    }
    if match is not None:
        column_config["Match"] = st.column_config.TextColumn(
            "Match",
            width=MATCH_WIDTH,
            help="Why the paper is listed: it writes the search's words (all of them, or several), it is "
            "close in meaning to it, or both. A search of quotes, OR, prefixes and -words alone says what "
            "matched: exact word (as typed), word form (ranking for rank), phrase, prefix or substring.",
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
            "Similarity", format="%.2f", min_value=0.0, max_value=1.0, width=90
        )
    st.dataframe(
        table,
        key=key,
        hide_index=True,
        on_select=partial(on_row_pick, key, doc_ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": [doc_ids.index(here)] if here else []}},
        column_config=column_config,
        height=table_height(height, row_height, len(table)),
        row_height=row_height,
    )
    if caption:
        st.caption(caption)


def narrow_paper_table(table: pd.DataFrame, doc_ids: list[str], key_prefix: str, height: int | str) -> None:
    """`paper_table`'s form for a phone's width: the title (headed "Paper") and the topic only, each
    whole, wrapped."""
    narrow = table[["Title", "Topic"]].rename(columns={"Title": "Paper"})
    opened = session.chosen("paper")
    here = opened if opened in doc_ids else ""
    key = f"{key_prefix}-{digest(doc_ids)}-{here}"
    row_height = wrapped_height(
        [(narrow[c].tolist(), width) for c, width in NARROW_WIDTHS.items()], max_lines=NARROW_LINES
    )
    st.dataframe(
        narrow,
        key=key,
        hide_index=True,
        on_select=partial(on_row_pick, key, doc_ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": [doc_ids.index(here)] if here else []}},
        column_config={c: st.column_config.TextColumn(c, width=w) for c, w in NARROW_WIDTHS.items()},
        height=table_height(height, row_height, len(narrow)),
        row_height=row_height,
    )


def table_height(height: int | str, row_height: int | None, rows: int) -> int | str:
    """A paper table's height: "auto" is every row of `row_height`; a height in pixels stays for one-line
    rows, and grows to at most 600 pixels for wrapped ones (more rows in sight), never past every row.

    Examples:
        >>> table_height(420, 35, 50), table_height(420, 66, 50), table_height(420, 66, 3), table_height("auto", 66, 3)
        (420, 600, 236, 236)
    """
    if row_height is None:
        return height
    every = row_height * rows + 38
    if height == "auto":
        return every
    return int(height) if row_height == 35 else min(every, max(int(height), 600))
