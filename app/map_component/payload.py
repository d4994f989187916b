"""What the live map sends to the browser: the point table once per map, then small view state per rerun.

The component's protocol, both ways, is typed here once (`ViewState`, what Python sends on every rerun;
`EVENTS`, what the browser sends back) and mirrored by the JSDoc typedefs of `js/protocol.js`
(tests/test_map_script.py holds the two to each other and to docs/app.md). The constants both sides
need are written here once too and generated into the browser's script (`shared_constants`).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import struct
from dataclasses import dataclass
from typing import NotRequired, Required, TypedDict

import numpy as np
import pyarrow as pa

from app.data import MapData, label_limit, paper_places, point_size
from app.filters import UNASSIGNED
from app.palette import CONTEXT_COLOUR, UNASSIGNED_COLOUR, colour_columns, value_colours
from app.state import (
    MAP_KEY,
    MAX_CORNERS,
    SETTINGS,
    URL_KEY,
    VIEW_DEFAULTS,
    ZOOM_KEY,
    ZOOM_MIN_SPAN,
    ZOOM_NUMBER,
    parse_selection,
)
from app.text import column_name, plotly_escape
from pipeline.text import shorten

POINTS_FORMAT = 2
POINTS_MAGIC = b"ATLASPT" + str(POINTS_FORMAT).encode()  # the point file's first 8 bytes
SAMPLE_CELLS = 512  # squares a side of the opening view for the draw order (`draw_order`)
SAMPLE_SEED = 0
# Points drawn at most per view (js/sampling.js); ATLAS_DRAW_CAP overrides it. Software WebGL (SwiftShader)
# redraws about 100,000 points a second while panning: a frame stays near a second at most.
DRAW_CAP = 100_000
WEBGL_ABOVE = 1000  # points; SVG is crisper and fully interactive below, WebGL keeps big maps fluid
MAX_TOPIC_LABELS = 200  # names the map tries for a view; it places as many as fit at the current zoom
ZOOM_PARTS = ("x0", "x1", "y0", "y1")  # the zoom in the link: view=x0,x1,y0,y1 (`app.state.parse_zoom`)


def shared_constants() -> dict:
    """The constants the browser's script shares with Python, generated into it as `SHARED`
    (`assets.map_script`; typed in js/protocol.js as `Shared`), so no JavaScript file writes them."""
    return {
        "zoom_key": ZOOM_KEY,
        "zoom_parts": list(ZOOM_PARTS),
        "zoom_number": ZOOM_NUMBER,
        "zoom_min_span": ZOOM_MIN_SPAN,
        "draw_cap": DRAW_CAP,
        "points_magic": POINTS_MAGIC.decode("ascii"),
        "points_format": POINTS_FORMAT,
        "context_colour": CONTEXT_COLOUR,
        "link_order": [MAP_KEY, *(setting.url for setting in SETTINGS)],
        "link_keys": {setting.name: setting.url for setting in SETTINGS if setting.in_state},
        "view_defaults": {
            name: list(value) if isinstance(value, tuple) else value for name, value in VIEW_DEFAULTS.items()
        },
        "topic_key": URL_KEY["topic"],
        "topics_key": URL_KEY["topics"],
        "theme_key": URL_KEY["themes"],
        "filter_key": URL_KEY["filters"],
        "select_key": URL_KEY["selection"],
        "max_corners": MAX_CORNERS,
        "max_topic_labels": MAX_TOPIC_LABELS,
        "unassigned": UNASSIGNED,
    }


# ------------------------------------------------------------------ the protocol, as types
# Mirrored field by field by js/protocol.js and described in docs/app.md ("The map component's protocol").


class PinMark(TypedDict):
    """A placed abstract's star."""

    x: float
    y: float
    topic: str


class ThemeName(TypedDict):
    """A theme name, shown while most of the map is in view."""

    id: int
    text: str
    x: float
    y: float


class KeyPick(TypedDict, total=False):
    """What clicking an entry of the key shows alone: a theme, or a value of the colour column."""

    theme: int
    value: int


class KeyEntry(TypedDict):
    """An entry of the map's key (`legend`)."""

    text: str
    colour: str
    pick: KeyPick | None
    link: str | None
    on: bool


class LassoPath(TypedDict):
    """A lasso's corners, in order."""

    x: list[float]
    y: list[float]


class Outline(TypedDict, total=False):
    """A box (its x range, then its y range) or a lasso drawn on the map (`app.selection`)."""

    box: list[float]
    lasso: LassoPath


class ViewState(TypedDict):
    """Everything the browser receives on a rerun (`view_state`, then `live_map` adds `module` and the
    inline files); docs/app.md says what each field means."""

    points: str
    plotly: str
    n: int
    paper: int | None
    pin: PinMark | None
    label_limit: int
    neighbours: list[int]
    colour: str
    legend: list[KeyEntry]
    browser_steps: int
    reset: int
    height: int
    draw_cap: int
    selection: Outline | None
    link: NotRequired[str]  # the view's link, set by `live_*`: the browser keeps the state by it
    module: NotRequired[str]
    points_data: NotRequired[str]
    plotly_data: NotRequired[str]
    module_data: NotRequired[str]


class PanelFacet(TypedDict):
    """A metadata column the topic list offers values of to filter by (every filterable column):
    its values as the data writes them (the link's), and the chosen ones, as positions in `values`."""

    column: str
    name: str
    values: list[str]
    chosen: list[int]


class PanelState(TypedDict):
    """Everything the topic panel beside the map receives on a rerun (`panel_state`, then `live_panel`
    adds `module` and the inline files); docs/app.md says what each field means."""

    summary: str
    points: str
    plotly: str
    sort: str
    themes: list[int]
    topics: list[int]
    facets: list[PanelFacet]
    browser_steps: int
    height: int
    paper: PaperState | None
    link: NotRequired[str]  # the view's link, set by `live_*`: the browser keeps the state by it
    module: NotRequired[str]
    summary_data: NotRequired[str]
    plotly_data: NotRequired[str]
    module_data: NotRequired[str]


class HeaderFacet(TypedDict):
    """A filterable column's values as the data writes them (the link's): the point table's codes of
    the column are positions in `values`."""

    column: str
    values: list[str]


class SearchFacts(TypedDict):
    """What the header's sentence quotes of a search (`app.search.search_facts`)."""

    shown: str
    fused: bool
    nearest: str
    close: str


class HeaderState(TypedDict):
    """Everything the header's sentence receives on a rerun (`header_state`, then `live_header` adds
    `module`): the server's sentence for its view (drawn until the browser can write its own), what the
    browser writes it from beside the map's point table (each topic's and theme's name, each topic's
    theme, each column's values, the papers added), and the search's one ranked list over the whole map
    (varints, best first), each hit's evidence and how it matched (the papers table's columns): sent
    once a search, shared by every part of the page (js/page.js); docs/app.md says what each field means."""

    sentence: tuple[str, str]
    points: str
    ranks: list[int]
    names: list[str]
    theme_of: list[int]
    themes: list[int]
    theme_names: list[str]
    facets: list[HeaderFacet]
    added: str | None
    search: SearchFacts | None
    hits: str | None
    evidence: str | None
    columns: list[ExtraColumn]
    link: NotRequired[str]  # the view's link, set by `live_*`: its hits are that view's
    module: NotRequired[str]


class NearPaper(TypedDict):
    """One of an opened paper's nearest papers: its row, title, similarity, and its topic's name where
    the nearest papers' topics differ (else null: the topic line above them says it)."""

    row: int
    title: str
    topic: str | None
    similarity: float


Piece = tuple[str, bool]  # a piece of a text, and whether the search matched it (marked)


class MatchNote(TypedDict):
    """How an opened paper matched the search: `kind` ("words", "meaning", "both", "none": not found)
    and the sentence saying it, with its rank (`app.paper_view.match_note`)."""

    kind: str
    text: str


class PaperState(TypedDict):
    """An opened paper as the topic panel shows it in the list's place (`app.paper_view.paper_state`):
    texts as written (set as text, never markup), the title and abstract in pieces, those a word search
    matched marked; `back`: the line leading back; `url`: its page (http or https only)."""

    back: str
    title: list[Piece]
    topic: int
    topic_name: str
    details: str
    added: bool
    url: str | None
    match: MatchNote | None
    abstract: list[Piece]
    nearest: list[NearPaper]


class TableColumn(TypedDict):
    """One column of the table file: its header, and either its distinct values in sort order (a
    paper's `codes` index them; "" = none) or, for a column of nearly unique texts (authors), each
    paper's text as UTF-8 (`bytes` and `ends`, like the point table's titles) and its `rank` in sort order."""

    name: str
    values: NotRequired[list[str]]


class TableTopic(TypedDict):
    """A topic as the table names it, by its position in the map's palette (the point table's `colour`)."""

    id: int
    name: str


class ExtraColumn(TypedDict):
    """A column a search adds, one value per ranked row: "Match" (how the paper matched: `values`
    indexed by `codes`), "Closer than" (% of the map's pairs) or "Similarity" (float32 values)."""

    name: str
    values: NotRequired[list[str]]
    codes: NotRequired[str]  # base64 of one byte a ranked row
    numbers: NotRequired[str]  # base64 of little-endian float32, one a ranked row


class TableState(TypedDict):
    """Everything the papers table receives on a rerun (`app.map_component.table.table_state`, then `live_table` adds `module`
    and the inline files); docs/app.md says what each field means."""

    table: str
    points: str
    topic: int | None
    page_rows: int
    browser_steps: int
    link: NotRequired[str]  # the view's link, set by `live_*`: the browser keeps the state by it
    module: NotRequired[str]
    table_data: NotRequired[str]
    module_data: NotRequired[str]


class CentralPaper(TypedDict):
    """One of a topic's papers nearest its centre: its row in the point table and its title."""

    row: int
    title: str


class NearTopic(TypedDict):
    """A topic near another (cosine between their centres)."""

    id: int
    similarity: float


class YearShare(TypedDict):
    """A topic's papers in one year, and their share of the map's papers that year (`app.trends.year_shares`)."""

    year: int
    papers: int
    total: int
    share: float


class VenueCount(TypedDict):
    """A topic's papers at one venue, and their share of the venue's papers (`app.trends.venue_counts`)."""

    venue: str
    papers: int
    total: int
    share: float


class SummaryTopic(TypedDict):
    """One topic (or the unassigned papers, id -1) as the panel shows it (`app.topic_summary`)."""

    id: int
    rank: int
    name: str
    size: int
    colour: str
    theme: int | None
    x: float | None
    y: float | None
    keywords: list[str]
    weights: list[float]
    central: list[CentralPaper]
    nearest: list[NearTopic]
    stability: float | None
    growth: float | None
    written: float | None  # share of its papers that write its name (None: not measured, or renamed by hand)
    note: str
    years: list[YearShare]
    venues: list[VenueCount]


class ListSection(TypedDict):
    """A heading of the topic list (a theme, or the unassigned papers) and its topics in order; one
    section without a name on a map without themes."""

    theme: int | None
    name: str | None
    size: int
    topics: list[int]
    colour: str | None  # the theme's colour (the key's), beside its name; None for other sections


class TopicLists(TypedDict):
    """The topic list in each order it offers: by size, and by growth where the map has years."""

    size: list[ListSection]
    rising: NotRequired[list[ListSection]]


class Summary(TypedDict):
    """The per-map file the panel reads (`app.topic_summary.topic_summary`), sent once per map."""

    n: int
    topics: list[SummaryTopic]
    themes: list[ThemeName]
    lists: TopicLists
    stability_help: str


class ClickEvent(TypedDict):
    """The reader clicked a paper (None: closed the opened paper: Escape, or the panel's "Back to …")."""

    row: int | None
    map: str


class SelectEvent(TypedDict, total=False):
    """A box or lasso selection (shape = None when cleared); `query`: the query string the browser
    wrote for the step (js/select.js): the step is that link (`app.session.follow_step`); `drawn`:
    whether the browser drew it itself (js/steps.js)."""

    shape: Required[Outline | None]
    query: str
    drawn: bool
    map: Required[str]


class LegendEvent(TypedDict, total=False):
    """The reader clicked an entry of the key (a theme's id, or a position in the colour column's values),
    or "Show all" (None); `query`: the link the browser wrote for the step (js/store.js), which the server
    follows (`app.session.follow_step`); `drawn`: whether the browser drew the step itself (js/steps.js),
    else the server draws the link's view."""

    theme: int | None
    value: int | None
    query: str
    drawn: bool
    map: Required[str]


class TopicEvent(TypedDict):
    """The panel opened a topic (None: back to the list), from a click or a key; `query` is the address
    bar's query string it wrote, for the server to keep."""

    topic: int | None
    query: str
    map: str


class HistoryEvent(TypedDict):
    """Back or Forward in the browser went to the link `query`, a view the server drew before, which the
    browser drew again from the map's, the panel's and the table's states it kept for that link."""

    query: str
    map: str


class ClearEvent(TypedDict, total=False):
    """The papers table's "Clear selection"; `query`: the query string the browser wrote for the step
    (js/select.js); `drawn`: whether the browser drew it itself (js/steps.js)."""

    query: str
    drawn: bool
    map: Required[str]


class OnlyEvent(TypedDict, total=False):
    """Topics kept alone: ticked in the panel's list, or its "Only this topic" (none: every topic
    again); `query`: the link the browser wrote for the step, which the server follows; `drawn`: whether
    the browser drew the step itself (js/steps.js)."""

    topics: Required[list[int]]
    query: str
    drawn: bool
    map: Required[str]


class ValuesEvent(TypedDict, total=False):
    """Values of a metadata column toggled in the panel's list (positions in its `PanelFacet.values`;
    none: every value again); `query`: the link the browser wrote for the step, which the server follows;
    `drawn`: whether the browser drew the step itself (js/steps.js)."""

    column: Required[str]
    values: Required[list[int]]
    query: str
    drawn: bool
    map: Required[str]


class PaperTopicEvent(TypedDict):
    """The opened paper's "Open topic" in the panel: the paper closed, its topic opened (the server's step)."""

    topic: int
    map: str


class SortEvent(TypedDict):
    """The panel's list order chosen ("size" or "rising")."""

    sort: str
    map: str


# trigger name -> its value (the map sends click, select, legend and history; the panel click, topic,
# only, values, sort and paper_topic; the papers table click and clear)
EVENTS = {
    "click": ClickEvent,
    "select": SelectEvent,
    "legend": LegendEvent,
    "history": HistoryEvent,
    "topic": TopicEvent,
    "only": OnlyEvent,
    "values": ValuesEvent,
    "sort": SortEvent,
    "paper_topic": PaperTopicEvent,
    "clear": ClearEvent,
}


@dataclass(frozen=True)
class Pin:
    """A pasted abstract placed on the map (see `pipeline.modelling.place`)."""

    x: float
    y: float
    topic_label: str


def view_ranges(x: np.ndarray, y: np.ndarray, *, keep: float = 0.998, pad: float = 0.04):
    """The map's opening x and y ranges: the central `keep` share of the papers on each axis, padded.

    A handful of far-off papers (UMAP strands a tiny detached group now and then) would otherwise
    squeeze the whole map into a corner; they stay reachable by panning and zooming out.

    Examples:
        >>> xs = np.r_[np.linspace(0, 1, 999), 50.0]
        >>> [round(v, 2) for v in view_ranges(xs, xs)[0]]
        [-0.04, 1.04]
    """
    ranges = []
    for values in (x, y):
        if len(values) >= 500:
            low, high = np.quantile(values, [(1 - keep) / 2, (1 + keep) / 2], method="nearest")
        elif len(values):  # every paper counts on a small map
            low, high = values.min(), values.max()
        else:
            low = high = 0.0
        margin = (high - low) * pad or 1.0
        ranges.append([float(low - margin), float(high + margin)])
    return ranges[0], ranges[1]


def colourings(data: MapData) -> dict:
    """Per-row codes of the metadata columns the map can be coloured by, with a colour per value.

    code[i] is the position of row i's value in `values` (and `palette`), or len(values) where the
    value is missing (drawn grey).
    """
    out = {}
    for column in colour_columns(data.facets):
        values = list(data.facets[column])
        out[column] = {
            "values": [plotly_escape(shorten(v, 40)) for v in values],
            "code": facet_codes(data, column),
            "palette": [*value_colours(len(values)), UNASSIGNED_COLOUR],
        }
    return out


def facet_codes(data: MapData, column: str) -> np.ndarray:
    """Each row's value of the filterable column as its position in `data.facets[column]`, or the
    number of values where it is missing."""
    values = data.facets[column]
    position = {v: k for k, v in enumerate(values)}
    text = data.facet_text[column].where(data.papers[column].notna())
    return text.map(position).fillna(len(values)).to_numpy(dtype=np.uint16)


def draw_order(x: np.ndarray, y: np.ndarray, x_range, y_range, cells: int = SAMPLE_CELLS) -> np.ndarray:
    """Every row once, in the order the browser draws a sample of the map from (js/sampling.js, `sampleRows`).

    The opening view is cut into `cells` x `cells` squares; the first paper of every square comes first,
    then the second of every square, and so on (within a square, and among squares, in a seeded random
    order). The first k rows of the order are a density-biased sample: sparse places keep every paper,
    dense ones are thinned evenly. Zoomed in, the browser takes the rows in view in this order up to its
    cap, so each step in shows more of the same places' papers, and every paper once few are in view.

    Examples:
        >>> order = draw_order(np.r_[np.zeros(8), 1.0], np.r_[np.zeros(8), 1.0], [0, 1], [0, 1], cells=2)
        >>> sorted(order.tolist()) == list(range(9)), 8 in order[:2].tolist()  # the lone paper comes early
        (True, True)
    """
    n = len(x)
    if n == 0:
        return np.arange(0, dtype=np.uint32)
    shuffled = np.random.default_rng(SAMPLE_SEED).permutation(n)
    column = np.clip(
        ((x[shuffled] - x_range[0]) / (x_range[1] - x_range[0]) * cells).astype(np.int64), 0, cells - 1
    )
    row = np.clip(
        ((y[shuffled] - y_range[0]) / (y_range[1] - y_range[0]) * cells).astype(np.int64), 0, cells - 1
    )
    square = column * cells + row
    by_square = np.argsort(square, kind="stable")  # within a square: the shuffled order
    sorted_squares = square[by_square]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_squares)) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, n]))
    place = np.empty(n, dtype=np.int64)
    place[by_square] = np.arange(n) - first  # 0 for a square's first paper, 1 for its second, ...
    return shuffled[np.argsort(place, kind="stable")].astype(np.uint32)


def point_table(data: MapData) -> dict:
    """The per-map table the browser draws from: `meta` (names, palettes, ranges; every text there
    already escaped for Plotly) and one NumPy array a column.

    Row i of every array is row i of `papers.parquet`; the browser names a paper by that row. Titles
    are raw UTF-8 (`title_bytes`, row i from `title_end[i-1]` to `title_end[i]`): the browser escapes
    and wraps each one for Plotly when it first draws it (js/load.js, `hoverTitle`), as `app.text.plotly_wrap` does.
    """
    x = data.papers["x"].to_numpy(dtype=np.float32)
    y = data.papers["y"].to_numpy(dtype=np.float32)
    codes, uniques = paper_places(data.papers).factorize()
    positions = {topic: rank for rank, topic in enumerate(data.topic_order)}
    names = [""] * len(data.palette)
    for topic, rank in positions.items():
        names[rank] = plotly_escape(data.label(topic))
    names[-1] = plotly_escape(data.label(-1))
    x_range, y_range = view_ranges(x, y)
    titles = pa.array(data.papers["title"].fillna("").astype(str), type=pa.large_string())
    if isinstance(titles, pa.ChunkedArray):  # a big map's column comes in chunks
        titles = titles.combine_chunks()
    title_ends = np.frombuffer(titles.buffers()[1], dtype=np.int64)[
        titles.offset : titles.offset + len(titles) + 1
    ]
    title_bytes = np.frombuffer(titles.buffers()[2], dtype=np.uint8)[title_ends[0] : title_ends[-1]]
    painted = colourings(data)
    arrays = {
        "x": x,
        "y": y,
        "colour": data.colour_index.astype(np.uint16),  # position in `palette`; the last is unassigned
        "source": codes.astype(np.uint32),
        "order": draw_order(x, y, x_range, y_range),
        "title_end": (title_ends[1:] - title_ends[0]).astype(np.uint32),
        "title_bytes": title_bytes,
        # every filterable column's codes (the topic list's "Filter by" values): the colourings', the
        # others' one byte each (at most MAX_FACET_VALUES values)
        **{
            f"code:{column}": painted[column]["code"]
            if column in painted
            else facet_codes(data, column).astype(np.uint8)
            for column in data.facets
        },
    }
    meta = {
        "format": POINTS_FORMAT,
        "n": data.n,
        "sources": [plotly_escape(shorten(s, 70)) for s in uniques],
        "palette": list(data.palette),
        "topic_names": names,
        "range": {"x": x_range, "y": y_range},
        "size": point_size(data.n),
        "webgl": data.n > WEBGL_ABOVE,
        "colourings": {c: {k: v for k, v in entry.items() if k != "code"} for c, entry in painted.items()},
        "facets": list(data.facets),  # the columns with codes (`code:<column>`)
    }
    return {"meta": meta, "arrays": arrays}


def encode_points(table: dict) -> bytes:
    """The point table as one binary file (before gzip), decoded by js/load.js (`decodePoints`):

        POINTS_MAGIC  uint32 header length  header (UTF-8 JSON, padded with spaces)  arrays

    (`POINTS_MAGIC` is b"ATLASPT" and the format's number, 8 bytes.)

    The header is `meta` plus `arrays`: {name: [type, byte offset after the header, length]}; each
    array is little-endian, starts at a multiple of 8 bytes from the file's start and is one of
    float32, uint8, uint16, uint32.
    """
    kinds = {np.dtype(np.float32): "float32", np.dtype(np.uint8): "uint8", np.dtype(np.uint16): "uint16",
             np.dtype(np.uint32): "uint32"}  # fmt: skip
    arrays = {name: np.ascontiguousarray(values).astype(np.dtype(values.dtype).newbyteorder("<"), copy=False)
              for name, values in table["arrays"].items()}  # fmt: skip
    layout, offset = {}, 0
    for name, values in arrays.items():
        layout[name] = [kinds[np.dtype(values.dtype.name)], offset, len(values)]
        offset += -(-values.nbytes // 8) * 8
    header = json.dumps(
        {**table["meta"], "arrays": layout}, separators=(",", ":"), ensure_ascii=False
    ).encode()
    start = -(-(len(POINTS_MAGIC) + 4 + len(header)) // 8) * 8
    header += b" " * (start - len(POINTS_MAGIC) - 4 - len(header))
    parts = [POINTS_MAGIC, struct.pack("<I", len(header)), header]
    for values in arrays.values():
        raw = values.tobytes()
        parts += [raw, b"\0" * (-len(raw) % 8)]
    return b"".join(parts)


def decode_points(raw: bytes) -> dict:
    """`encode_points`'s file back to `meta` and arrays (what js/load.js reads; for tests and benchmarks)."""
    if raw[: len(POINTS_MAGIC)] != POINTS_MAGIC:
        raise ValueError("not a point file")
    (length,) = struct.unpack_from("<I", raw, len(POINTS_MAGIC))
    header = json.loads(raw[len(POINTS_MAGIC) + 4 : len(POINTS_MAGIC) + 4 + length])
    start = len(POINTS_MAGIC) + 4 + length
    arrays = {
        name: np.frombuffer(raw, dtype=np.dtype(kind).newbyteorder("<"), count=count, offset=start + offset)
        for name, (kind, offset, count) in header.pop("arrays").items()
    }
    return {"meta": header, "arrays": arrays}


def summary_file(summary: Summary) -> tuple[str, bytes]:
    """The topic panel's summary (`app.topic_summary`) as a gzip'd JSON file and its name, its
    content's fingerprint."""
    raw = json.dumps(summary, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    packed = gzip.compress(raw, compresslevel=6, mtime=0)
    return f"summary-{hashlib.blake2b(packed, digest_size=10).hexdigest()}.json.gz", packed


def panel_facets(data: MapData, filters: dict[str, tuple[str, ...]]) -> list[PanelFacet]:
    """The columns the topic list offers values of (every filterable column), each with its chosen values."""
    out: list[PanelFacet] = []
    for column in data.facets:
        values = list(data.facets[column])
        chosen = [values.index(v) for v in filters.get(column, ()) if v in values]
        out.append(
            {
                "column": column,
                "name": column_name(column),
                "values": values,
                "chosen": chosen,
            }
        )
    return out


def panel_state(
    data: MapData,
    *,
    summary_url: str,
    points_url: str,
    plotly_url: str,
    sort: str,
    themes: tuple[int, ...],
    topics: tuple[int, ...],
    filters: dict[str, tuple[str, ...]],
    height: int,
    browser_steps: int = 0,
    paper: PaperState | None = None,
) -> PanelState:
    """Everything the topic panel receives on a rerun (the papers of each topic in view it counts from
    the link's view, js/page.js; the topic it opens is the link's): the list's order, the chosen themes and topics (the
    list's ticks), the values of each column the map can be coloured by and the chosen ones (`filters`:
    the view's metadata filters); `browser_steps`: as for `view_state`; `paper`: the opened paper, shown
    in the list's place (None: none open)."""
    return {
        "summary": summary_url,
        "points": points_url,
        "plotly": plotly_url,
        "sort": sort,
        "themes": [int(t) for t in themes],
        "topics": [int(t) for t in topics],
        "facets": panel_facets(data, filters),
        "browser_steps": browser_steps,
        "height": height,
        "paper": paper,
    }


def header_state(
    data: MapData,
    sentence: tuple[str, str],
    hits: dict,
    *,
    points_url: str,
    columns: list[ExtraColumn] | None = None,
) -> HeaderState:
    """Everything the header's sentence receives on a rerun, the page's facts (js/page.js): the server's
    `sentence` for the view, the map's topics by colour rank (the point table's `colour`; the unassigned
    last) with their names and themes (-1: none, or no usable themes), the themes' names, each
    filterable column's values, the papers added (a mask; None: a full build), and `hits`
    (`app.view.sentence_hits`): a search's one list over the whole map, best first, as varints, and
    each hit's evidence, a byte a hit (None each: no search); `columns`: how each hit matched, a
    value a hit (`app.map_component.table.search_columns`)."""
    from app.themes import theme_of_topic, usable_themes  # pure, as this module

    themes = usable_themes(data.topics, data.themes)
    theme_of = theme_of_topic(data.topics) if themes is not None else {}
    ranks = [*data.topic_order, UNASSIGNED]
    words = hits["words"]
    packed = lambda raw: base64.b64encode(raw).decode("ascii")  # noqa: E731
    added = None
    if data.added is not None:  # `encode_mask`'s forms, every paper's too (None says a full build)
        mask = np.asarray(data.added, dtype=bool)
        added = encode_mask(mask) or "b" + packed(np.packbits(mask, bitorder="little").tobytes())
    return {
        "sentence": (str(sentence[0]), str(sentence[1])),
        "points": points_url,
        "ranks": [int(t) for t in ranks],
        "names": [data.label(t) for t in ranks],
        "theme_of": [int(theme_of.get(t, -1)) for t in ranks],
        "themes": [] if themes is None else [int(t) for t in themes["theme_id"]],
        "theme_names": [] if themes is None else [str(v) for v in themes["label"]],
        "facets": [{"column": column, "values": list(values)} for column, values in data.facets.items()],
        "added": added,
        "search": hits["search"],
        "hits": None if words is None else packed(varints(np.asarray(words, dtype=np.uint64))),
        "evidence": None if words is None else packed(np.asarray(hits["evidence"], dtype=np.uint8).tobytes()),
        "columns": columns or [],
    }


def points_file(data: MapData) -> tuple[str, bytes]:
    """The point table as a gzip'd binary file (`encode_points`) and its name, its content's fingerprint."""
    # Level 1: 17.5 MB at a million papers in 0.6 s (level 6: 16.7 MB in 1.5 s).
    packed = gzip.compress(encode_points(point_table(data)), compresslevel=1, mtime=0)
    return f"points-{hashlib.blake2b(packed, digest_size=10).hexdigest()}.bin.gz", packed


def encode_mask(mask: np.ndarray) -> str | None:
    """A boolean mask over the papers, in the shorter of two forms; None = all.

    "b" + base64 of its bits (little-endian within each byte): 13.6 KB at 81,646 papers, whatever
    the mask. "d" + base64 of the gaps between its rows (the first row + 1, then each row minus the one
    before) as LEB128 varints: a search's few hundred hits take a few hundred bytes, at any map size.

    Examples:
        >>> encode_mask(np.array([True, False, True, True, False, False, False, False, True]))
        'bDQE='
        >>> encode_mask(np.r_[np.zeros(1000, dtype=bool), True])
        'd6Qc='
        >>> encode_mask(np.ones(5, dtype=bool)) is None
        True
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.all():
        return None
    rows = np.flatnonzero(mask)
    gaps = np.diff(rows, prepend=-1).astype(np.uint64)
    if len(gaps) * 5 < (len(mask) + 7) // 8:  # few rows: their gaps are surely the shorter
        return "d" + base64.b64encode(varints(gaps)).decode("ascii")
    bits = np.packbits(mask, bitorder="little").tobytes()
    if len(gaps) <= len(bits):
        deltas = varints(gaps)
        if len(deltas) < len(bits):
            return "d" + base64.b64encode(deltas).decode("ascii")
    return "b" + base64.b64encode(bits).decode("ascii")


def varints(values: np.ndarray) -> bytes:
    """Unsigned LEB128 of each value (7 bits a byte, low first, high bit = more to come), vectorised."""
    values = values.astype(np.uint64)
    length = np.ones(len(values), dtype=np.int64)
    for k in range(1, 10):
        length += values >= (np.uint64(1) << np.uint64(7 * k))
    ends = np.cumsum(length)
    out = np.zeros(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    starts = ends - length
    for k in range(int(length.max(initial=0))):
        has = length > k
        byte = (values[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (length[has] > k + 1).astype(np.uint64) << np.uint64(7)
        out[starts[has] + k] = (byte | more).astype(np.uint8)
    return out.tobytes()


def legend(
    data: MapData, colour: str, themes: tuple[int, ...] = (), values: tuple[str, ...] = ()
) -> list[KeyEntry]:
    """The map's key: each theme's hue (topics are its shades), or each value of the column it is coloured by.

    An entry is {text, colour, pick, link, on}: `pick` is what clicking it shows alone ({"theme": id},
    or {"value": position in the column's values}; None: not clickable, the missing values' entry),
    `link` the value the link's key (`theme=`, or the column's `f.` key) then holds, as the server
    writes it, `on` whether the view shows it now by choice (`themes`: the chosen themes; `values`:
    the chosen values of the colour column's filter).
    """
    if colour:
        options = list(data.facets[colour])
        palette = value_colours(len(options))
        entries = [
            {"text": v, "colour": c, "pick": {"value": k}, "link": v, "on": v in values}
            for k, (v, c) in enumerate(zip(options, palette, strict=True))
        ]
        if data.papers[colour].isna().any():
            missing = f"No {colour.replace('_', ' ')}"
            entries.append(
                {"text": missing, "colour": UNASSIGNED_COLOUR, "pick": None, "link": None, "on": False}
            )
        return entries
    if data.themes is None or not len(data.themes) or "theme_id" not in data.topics.columns:
        return []
    entries = []
    for row in data.themes.sort_values("size", ascending=False).itertuples(index=False):
        theme = int(row.theme_id)
        if theme in data.theme_colours:  # a theme holding topics of the map
            entries.append(
                {
                    "text": str(row.label),  # whole: the key wraps a long name (map.css)
                    "colour": data.theme_colours[theme],
                    "pick": {"theme": theme},
                    "link": str(theme),
                    "on": theme in themes,
                }
            )
    return entries


def view_state(
    data: MapData,
    *,
    points_url: str,
    plotly_url: str,
    chosen_row: int | None = None,
    neighbours: list[int] | None = None,
    colour: str = "",
    pin: Pin | None = None,
    reset_zoom: int = 0,
    height: int = 640,
    themes: tuple[int, ...] = (),
    values: tuple[str, ...] = (),
    selection: str = "",
    browser_steps: int = 0,
) -> ViewState:
    """Everything the map receives on a rerun: a few KB, whatever the size of the map. Which papers it
    draws, their names and whether they are hits it works out from the link's view (js/atlas_map.js).

    `themes`, `values`: the chosen themes and chosen values of the colour column (marked in the key);
    `selection`: the box or lasso selection as the link writes it (`app.state.parse_selection`);
    `browser_steps`: how many steps the browser has drawn so far (`app.session.browser_steps`): a state sent
    after one is never the state sent before it, so the browser always takes it in."""
    return {
        "points": points_url,
        "plotly": plotly_url,
        "n": data.n,
        "paper": chosen_row,
        "pin": {"x": pin.x, "y": pin.y, "topic": pin.topic_label} if pin else None,
        "label_limit": label_limit(data.n, len(data.topic_order)),
        "neighbours": list(neighbours or []),
        "colour": colour,
        "legend": legend(data, colour, themes, values),
        "browser_steps": browser_steps,
        "reset": reset_zoom,
        "height": height,
        "draw_cap": draw_cap(),
        "selection": outline(selection),
    }


def outline(selection: str) -> Outline | None:
    """A `select=` value as the browser draws it (js/charts.js, `showSelection`); None: no selection.

    Examples:
        >>> outline("box:0,1,2,3"), outline("lasso:0,0,1,0,0,1"), outline("")
        ({'box': [0.0, 1.0, 2.0, 3.0]}, {'lasso': {'x': [0.0, 1.0, 0.0], 'y': [0.0, 0.0, 1.0]}}, None)
    """
    shape = parse_selection(selection) if selection else None
    if shape is None:
        return None
    if shape.kind == "box":
        return {"box": [*shape.xs, *shape.ys]}
    return {"lasso": {"x": list(shape.xs), "y": list(shape.ys)}}


def draw_cap(environ=os.environ) -> int:
    """Points the browser draws at most per view (`DRAW_CAP`, or the ATLAS_DRAW_CAP environment variable).

    Examples:
        >>> draw_cap({}) == DRAW_CAP, draw_cap({"ATLAS_DRAW_CAP": "500"}), draw_cap({"ATLAS_DRAW_CAP": "x"}) == DRAW_CAP
        (True, 500, True)
    """
    try:
        return max(1, int(environ.get("ATLAS_DRAW_CAP", DRAW_CAP)))
    except ValueError:
        return DRAW_CAP
