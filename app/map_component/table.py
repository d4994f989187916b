"""The papers table under the map, drawn and paged in the browser (js/table.js): what it receives.

It is the map's component again, a third instance. Once per map the browser downloads the table's
columns (`table_file`: each paper's source and metadata, in the point file's binary form; titles and
topics it reads from the map's point table). On a rerun that changes the view it receives the view
(`table_state`): the papers in view as a mask (map order), or, under a search, their rows best match
first with how each matched; and the papers the map's selection holds. Opening a topic, turning a
page and sorting by a column are answered in the browser; a click on a row opens the paper (a
"click" event, as on the map) and "Clear selection" asks the server to drop the selection.
"""

from __future__ import annotations

import base64
import gzip
import hashlib

import numpy as np
import pandas as pd

from app.data import MapData, paper_places
from app.map_component.payload import (
    ExtraColumn,
    TableColumn,
    TableState,
    TableTopic,
    encode_points,
)
from app.search import SearchResult

PAGE_ROWS = 50  # rows the table shows a page; the CSV download has them all
CODED_SHARE = 0.25  # a column with fewer distinct values than this share of the papers is sent as codes


def display_text(values: pd.Series) -> np.ndarray:
    """A metadata column as the table shows it: whole numbers without ".0", a missing value empty.

    Examples:
        >>> display_text(pd.Series([2024.0, None, 2023.5])).tolist()
        ['2024', '', '2023.5']
        >>> display_text(pd.Series(["ICML", None])).tolist()
        ['ICML', '']
    """
    out = []
    for value in values.tolist():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            out.append("")
        elif isinstance(value, float) and value.is_integer():
            out.append(str(int(value)))
        else:
            out.append(str(value))
    return np.array(out, dtype=object)


def _sort_key(text: str) -> tuple:
    """Numbers by value before texts, texts case-folded; the empty value last."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1 if text else 2, 0.0, text.casefold())


def table_columns(data: MapData) -> tuple[list[TableColumn], dict[str, np.ndarray]]:
    """The table file's columns after the title and the topic: Source (as the hover says it,
    `app.data.paper_places`; where it tells more than the columns beside it, `MapData.show_source`),
    then the map's metadata columns (`MapData.table_columns`)."""
    texts = (
        {"Source": paper_places(data.papers).astype(str).to_numpy(dtype=object)} if data.show_source else {}
    )
    for column in data.table_columns:
        texts[column.capitalize()] = display_text(data.papers[column])
    columns: list[TableColumn] = []
    arrays: dict[str, np.ndarray] = {}
    for k, (name, values) in enumerate(texts.items()):
        codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
        if len(uniques) <= max(1, CODED_SHARE * data.n):
            order = sorted(range(len(uniques)), key=lambda u: _sort_key(str(uniques[u])))
            position = np.empty(len(uniques), dtype=np.uint32)
            position[order] = np.arange(len(uniques), dtype=np.uint32)
            columns.append({"name": name, "values": [str(uniques[u]) for u in order]})
            arrays[f"col{k}"] = position[codes] if len(codes) else np.zeros(0, np.uint32)
            continue
        raw = [str(v).encode("utf-8") for v in values]
        arrays[f"col{k}:ends"] = np.cumsum([len(b) for b in raw], dtype=np.int64).astype(np.uint32)
        arrays[f"col{k}:bytes"] = np.frombuffer(b"".join(raw), dtype=np.uint8)
        ranked = sorted(range(len(values)), key=lambda i: _sort_key(str(values[i])))
        rank = np.empty(len(values), dtype=np.uint32)
        rank[ranked] = np.arange(len(values), dtype=np.uint32)
        arrays[f"col{k}:rank"] = rank
        columns.append({"name": name})
    return columns, arrays


def table_file(data: MapData) -> tuple[str, bytes]:
    """The table's per-map file (the point file's binary form, `encode_points`) and its name, its
    content's fingerprint: the columns (`table_columns`), the topics by palette position, and each
    title's rank in sort order (titles themselves are in the point table)."""
    columns, arrays = table_columns(data)
    titles = data.papers["title"].fillna("").astype(str).tolist()
    ranked = sorted(range(data.n), key=lambda i: (titles[i].casefold(), titles[i]))
    title_rank = np.empty(data.n, dtype=np.uint32)
    title_rank[ranked] = np.arange(data.n, dtype=np.uint32)
    topics: list[TableTopic] = [{"id": int(t), "name": data.label(int(t))} for t in data.topic_order]
    topics.append({"id": -1, "name": data.label(-1)})
    meta = {"n": data.n, "columns": columns, "topics": topics}
    packed = gzip.compress(
        encode_points({"meta": meta, "arrays": {"title_rank": title_rank, **arrays}}),
        compresslevel=6,
        mtime=0,
    )
    return f"table-{hashlib.blake2b(packed, digest_size=10).hexdigest()}.bin.gz", packed


def _base64(values: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(values).tobytes()).decode("ascii")


def search_columns(search: SearchResult) -> list[ExtraColumn]:
    """Each ranked paper's evidence (Match), and where meaning was searched its closeness and similarity."""
    labels = search.match_labels()
    codes, names = pd.factorize(pd.Series(labels, dtype=object))
    extras: list[ExtraColumn] = [
        {"name": "Match", "values": [str(n) for n in names], "codes": _base64(codes.astype(np.uint8))}
    ]
    if search.percentile is not None:  # for every listed paper: how near in meaning, close or not
        extras.append({"name": "Closer than", "numbers": _base64(np.asarray(search.percentile, "<f4"))})
    if search.similarity is not None:
        extras.append({"name": "Similarity", "numbers": _base64(np.asarray(search.similarity, "<f4"))})
    return extras


def table_state(*, table_url: str, points_url: str, topic: int | None, browser_steps: int = 0) -> TableState:
    """What the papers table receives on a rerun: the map's table file and point table, the opened
    topic (where no topic panel says it); `browser_steps`: as for `payload.view_state`. Which papers it
    lists the browser works out from the link's view and the page's facts (js/page.js)."""
    return {
        "table": table_url,
        "points": points_url,
        "topic": topic,
        "page_rows": PAGE_ROWS,
        "browser_steps": browser_steps,
    }
