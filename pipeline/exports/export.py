"""Spreadsheet-safe CSV export of a map's papers with their topics (the CLI and the app share it)."""

from __future__ import annotations

import re

import pandas as pd

from pipeline.text import BIDI_CHARACTERS

# OWASP CSV-injection guidance: a spreadsheet treats cells starting with these as formulas.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
LEADING = ["doc_id", "title", "abstract", "topic_id", "topic", "topic_keywords", "theme", "source"]
POSITION = ["x", "y"]  # where the paper is on the 2-D map, after the leading columns: enough to re-plot it
INTERNAL = {"x", "y", "theme_id"}
# Unicode's bidirectional controls (`pipeline.text.BIDI_CHARACTERS`): an abstract's U+202E can make
# "exe.pdf" show as "fdp.exe". Wherever the product shows or exports text they become U+FFFD, visible and inert.
BIDI_CONTROLS = re.compile(f"[{BIDI_CHARACTERS}]")


def without_bidi_controls(text: str) -> str:
    """`text` with each bidirectional control character replaced by U+FFFD.

    Examples:
        >>> without_bidi_controls("invoice\u202efdp.exe")
        'invoice\ufffdfdp.exe'
    """
    return BIDI_CONTROLS.sub("\ufffd", text)


def neutralise(value: object) -> object:
    """Prefix a text cell a spreadsheet would run as a formula with a single quote.

    Numbers are left alone: -1 is a number, not a formula. Bidi controls are shown, not obeyed; a NUL
    byte becomes U+FFFD.

    Examples:
        >>> neutralise("=HYPERLINK(\\"http://x\\")")
        '\\'=HYPERLINK("http://x")'
        >>> neutralise("-1"), neutralise(-1), neutralise("diffusion")
        ("'-1", -1, 'diffusion')
    """
    if not isinstance(value, str):
        return value
    value = without_bidi_controls(value).replace("\x00", "\ufffd")  # a NUL ends a cell in many readers
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def export_frame(
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    *,
    topic_id: int | None = None,
    themes: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The exported table: one row a paper, its topic's name and keywords, its theme, its `x`, `y` on
    the map, then its metadata.

    `theme` is the name of the topic's theme (from `themes` and topics' `theme_id`); empty for
    unassigned papers and for maps without themes.
    """
    names = dict(zip(topics["topic_id"], topics["label"]))
    theme_names = {}
    if themes is not None and "theme_id" in topics.columns:
        by_id = dict(zip(themes["theme_id"], themes["label"]))
        theme_names = {t: by_id.get(th, "") for t, th in zip(topics["topic_id"], topics["theme_id"])}
    keywords = dict(zip(topics["topic_id"], topics["keywords"].map(lambda ws: "; ".join(ws))))
    rows = papers if topic_id is None else papers[papers["topic_id"] == topic_id]
    table = rows.assign(
        topic=rows["topic_id"].map(names).fillna("Unassigned"),
        topic_keywords=rows["topic_id"].map(keywords).fillna(""),
        theme=rows["topic_id"].map(theme_names).fillna(""),
    )
    leading = list(LEADING)
    if (
        "note" in topics.columns
    ):  # a curator's notes (pipeline/mapfolder/curation.py), after the topic's theme
        notes = dict(zip(topics["topic_id"], topics["note"].fillna("")))
        table = table.assign(topic_note=rows["topic_id"].map(notes).fillna(""))
        leading.insert(leading.index("theme") + 1, "topic_note")
    leading += [c for c in POSITION if c in table.columns]
    metadata = [c for c in table.columns if c not in leading and c not in INTERNAL]
    table = table[leading + metadata].reset_index(drop=True)
    for column in table.columns:
        if table[column].dtype == object or pd.api.types.is_string_dtype(table[column]):
            table[column] = table[column].map(neutralise)
    table.columns = [
        neutralise(str(column)) for column in table.columns
    ]  # an input's column name is data too
    return table


def to_csv_bytes(table: pd.DataFrame) -> bytes:
    """RFC 4180 CSV (CRLF, so a stray CR in a cell gets quoted) in UTF-8 with a byte-order mark,
    so spreadsheets open non-English text correctly."""
    return table.to_csv(index=False, lineterminator="\r\n").encode("utf-8-sig")
