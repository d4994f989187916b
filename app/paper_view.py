"""The paper view: what the topic panel beside the map shows of an opened paper (js/panel.js draws it):
its title, topic, details, abstract (as written, the searched words marked), how it matched the search,
and its nearest papers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.data import MapData, paper_places
from app.map_component.payload import MatchNote, NearPaper, PaperState, Piece
from app.nearest import nearest_papers
from app.search import SearchResult
from app.text import visible
from pipeline.mapfolder.search_index import highlight
from pipeline.modelling.floors import closeness
from pipeline.text import shorten


def _pieces(text: str, search: SearchResult | None) -> list[Piece]:
    """`text` in pieces, the words of the search it writes marked (one unmarked piece without a search)."""
    if search is None:
        return [(visible(text), False)] if text else []
    return [(visible(piece), marked) for piece, marked in highlight(text, search.query)]


def paper_state(data: MapData, row: int, search: SearchResult | None, back: str) -> PaperState:
    """The opened paper (`row`) as the panel shows it, under the view's `search`; `back`: its first
    line, which leads back (to the topic it was opened from, or to the list)."""
    paper = data.papers.iloc[row]
    topic = int(data.topic_ids[row])
    details = [paper_places(data.papers.iloc[row : row + 1]).iloc[0]]  # as the hover and table say it
    authors = paper["authors"] if "authors" in paper.index else None
    if isinstance(authors, list | tuple | np.ndarray):  # a list from JSONL input
        authors = ", ".join(str(a) for a in authors) or None
    if authors is not None and pd.notna(authors):
        details.append(str(authors))
    url = str(paper["url"]) if "url" in paper.index and pd.notna(paper["url"]) else ""
    rows, similarities = nearest_papers(data, row)
    return {
        "back": visible(back),
        "title": _pieces(" ".join(str(paper["title"]).split()), search),
        "topic": topic,
        "topic_name": visible(data.label(topic)),
        "details": " · ".join(visible(shorten(d, 120)) for d in details),
        "added": bool(data.added is not None and data.added[row]),
        "url": url if url.startswith(("https://", "http://")) else None,  # never a javascript: or data: link
        "match": match_note(search, row) if search is not None else None,
        "abstract": _pieces(str(paper["abstract"]), search),
        "nearest": nearest_list(data, rows, similarities),
    }


def nearest_list(data: MapData, rows: np.ndarray, similarity: list[float]) -> list[NearPaper]:
    """The opened paper's nearest papers (`app.nearest.nearest_papers`), nearest first, as the panel
    lists them: titles as written, each topic's name only where their topics differ."""
    topics = [data.label(int(t)) for t in data.topic_ids[rows]]
    differ = len(set(topics)) > 1
    titles = data.papers["title"].iloc[rows].astype(str).tolist()
    return [
        {
            "row": int(row),
            "title": visible(title),
            "topic": visible(topic) if differ else None,
            "similarity": round(float(s), 4),
        }
        for row, title, topic, s in zip(rows, titles, topics, similarity, strict=True)
    ]


def match_note(search: SearchResult, row: int) -> MatchNote:
    """How the opened paper matched the current search: "words", "meaning", "both" or "none" (not
    among the papers found), and the sentence saying it: its own evidence and its rank in the list."""
    position = np.flatnonzero(search.rows == row)
    if not len(position):
        return {"kind": "none", "text": "Not among the papers your search found."}
    at = int(position[0])
    rank = f"#{at + 1:,} of {len(search.rows):,}"
    if not search.fused:
        return {"kind": "words", "text": f"Found by its words ({rank}): the matches are highlighted."}
    close = bool(search.close[at])
    parts = []
    if search.every_word[at] or search.some[at]:
        parts.append(search.labels[at].split(" + ")[0] + " (highlighted)")
    if close:
        parts.append(
            f"close in meaning: {closeness(float(search.percentile[at]))}, "
            f"similarity {float(search.similarity[at]):.2f} to your search"
        )
    kind = "both" if len(parts) == 2 else "meaning" if close else "words"
    text = "; ".join(parts)
    return {"kind": kind, "text": f"{text[:1].upper()}{text[1:]} ({rank})."}
