"""What the live map sends to the browser: the point table once per map, then small view state per rerun."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from dataclasses import dataclass

import numpy as np

from app.data import MapData, label_limit, paper_places, point_size
from app.palette import UNASSIGNED_COLOUR, colour_columns, value_colours
from app.text import plotly_escape, shorten

POINTS_FORMAT = 1
WEBGL_ABOVE = 1000  # points; SVG is crisper and fully interactive below, WebGL keeps big maps fluid
MAX_TOPIC_LABELS = 200  # candidates sent per rerun; the browser places as many as fit at the current zoom


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
        position = {v: k for k, v in enumerate(values)}
        text = data.facet_text[column].where(data.papers[column].notna())
        codes = text.map(position).fillna(len(values)).astype(int)
        out[column] = {
            "values": [plotly_escape(shorten(v, 40)) for v in values],
            "code": codes.tolist(),
            "palette": [*value_colours(len(values)), UNASSIGNED_COLOUR],
        }
    return out


def point_table(data: MapData) -> dict:
    """The per-map table the browser draws from, every text already escaped for Plotly.

    Row i of every list is row i of `papers.parquet`; the browser names a paper by that row.
    """
    x = data.papers["x"].to_numpy(dtype=np.float64)
    y = data.papers["y"].to_numpy(dtype=np.float64)
    codes, uniques = paper_places(data.papers).factorize()
    positions = {topic: rank for rank, topic in enumerate(data.topic_order)}
    names = [""] * len(data.palette)
    for topic, rank in positions.items():
        names[rank] = plotly_escape(data.label(topic))
    names[-1] = plotly_escape(data.label(-1))
    x_range, y_range = view_ranges(x, y)
    return {
        "format": POINTS_FORMAT,
        "n": data.n,
        "x": np.round(x, 5).tolist(),
        "y": np.round(y, 5).tolist(),
        "colour": data.colour_index.astype(int).tolist(),  # position in `palette`; the last is unassigned
        "source": codes.astype(int).tolist(),
        "sources": [plotly_escape(shorten(s, 70)) for s in uniques],
        "title": data.hover_title.tolist(),  # escaped, wrapped with <br>
        "palette": list(data.palette),
        "topic_names": names,
        "range": {"x": x_range, "y": y_range},
        "size": point_size(data.n),
        "webgl": data.n > WEBGL_ABOVE,
        "colourings": colourings(data),
    }


def points_file(data: MapData) -> tuple[str, bytes]:
    """The point table as a gzip'd JSON file and its name, which is its content's fingerprint."""
    raw = json.dumps(point_table(data), separators=(",", ":"), ensure_ascii=False).encode()
    packed = gzip.compress(raw, compresslevel=6, mtime=0)
    return f"points-{hashlib.blake2b(packed, digest_size=10).hexdigest()}.json.gz", packed


def encode_mask(mask: np.ndarray) -> str | None:
    """A boolean mask over the papers as base64 of its bits (little-endian within each byte); None = all.

    81,646 papers take 13.6 KB, whatever the mask.

    Examples:
        >>> encode_mask(np.array([True, False, True, True, False, False, False, False, True]))
        'DQE='
        >>> encode_mask(np.ones(5, dtype=bool)) is None
        True
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.all():
        return None
    return base64.b64encode(np.packbits(mask, bitorder="little").tobytes()).decode("ascii")


def topic_labels(data: MapData, in_view: np.ndarray, chosen: int | None = None) -> list[dict]:
    """Names of the topics that still have papers in view, the opened topic first, then by size.

    The browser places them greedily in this order, skipping any that would overlap one already
    placed at the current zoom, so zooming in reveals the smaller topics' names.
    """
    visible = set(np.unique(data.topic_ids[in_view]).tolist())
    order = [t for t in data.topic_order if t in visible]
    if chosen in order:
        order.remove(chosen)
        order.insert(0, chosen)
    where = dict(
        zip(data.topics["topic_id"].tolist(), zip(data.topics["x"].tolist(), data.topics["y"].tolist()))
    )
    return [
        {
            "text": data.label(topic),  # shown with textContent: literal, never markup
            "x": round(float(where[topic][0]), 5),
            "y": round(float(where[topic][1]), 5),
            "colour": data.colours[topic],
            "chosen": topic == chosen,
        }
        for topic in order[:MAX_TOPIC_LABELS]
    ]


def theme_labels(data: MapData, in_view: np.ndarray) -> list[dict]:
    """Names of the map's themes (from themes.parquet) that hold papers in view, largest first."""
    if data.themes is None or not len(data.themes):
        return []
    visible = set(np.unique(data.topic_ids[in_view]).tolist())
    labels = []
    for row in data.themes.sort_values("size", ascending=False).itertuples(index=False):
        if visible.isdisjoint(int(t) for t in row.topic_ids):
            continue
        labels.append({"text": str(row.label), "x": round(float(row.x), 5), "y": round(float(row.y), 5)})
    return labels


def legend(
    data: MapData, colour: str, themes: tuple[int, ...] = (), values: tuple[str, ...] = ()
) -> list[dict]:
    """The map's key: each theme's hue (topics are its shades), or each value of the column it is coloured by.

    An entry is {text, colour, pick, on}: `pick` is what clicking it shows alone ({"theme": id}, or
    {"value": position in the column's values}; None: not clickable, the missing values' entry), `on`
    whether the view shows it now by choice (`themes`: the chosen themes; `values`: the chosen values
    of the colour column's filter).
    """
    if colour:
        options = list(data.facets[colour])
        palette = value_colours(len(options))
        entries = [
            {"text": shorten(v, 40), "colour": c, "pick": {"value": k}, "on": v in values}
            for k, (v, c) in enumerate(zip(options, palette, strict=True))
        ]
        if data.papers[colour].isna().any():
            missing = f"No {colour.replace('_', ' ')}"
            entries.append({"text": missing, "colour": UNASSIGNED_COLOUR, "pick": None, "on": False})
        return entries
    if data.themes is None or not len(data.themes) or "theme_id" not in data.topics.columns:
        return []
    entries = []
    by_theme = data.topics.groupby("theme_id", sort=False)["topic_id"].first()  # its largest topic
    for row in data.themes.sort_values("size", ascending=False).itertuples(index=False):
        topic = by_theme.get(row.theme_id)
        if topic is not None:
            theme = int(row.theme_id)
            entries.append(
                {
                    "text": shorten(str(row.label), 40),
                    "colour": data.colours[int(topic)],
                    "pick": {"theme": theme},
                    "on": theme in themes,
                }
            )
    return entries


def view_state(
    data: MapData,
    in_view: np.ndarray,
    *,
    points_url: str,
    plotly_url: str,
    search_active: bool = False,
    chosen_row: int | None = None,
    chosen_topic: int | None = None,
    neighbours: list[int] | None = None,
    colour: str = "",
    pin: Pin | None = None,
    clear_selection: int = 0,
    reset_zoom: int = 0,
    height: int = 640,
    themes: tuple[int, ...] = (),
    values: tuple[str, ...] = (),
) -> dict:
    """Everything the map receives on a rerun: a few KB, whatever the size of the map.

    `themes`, `values`: the chosen themes and chosen values of the colour column (marked in the key)."""
    return {
        "points": points_url,
        "plotly": plotly_url,
        "n": data.n,
        "mask": encode_mask(in_view),
        "search": bool(search_active),
        "paper": chosen_row,
        "pin": {"x": pin.x, "y": pin.y, "topic": pin.topic_label} if pin else None,
        "topics": topic_labels(data, in_view, chosen_topic),
        "themes": theme_labels(data, in_view),
        "label_limit": label_limit(data.n, len(data.topic_order)),
        "neighbours": list(neighbours or []),
        "colour": colour,
        "legend": legend(data, colour, themes, values),
        "clear": clear_selection,
        "reset": reset_zoom,
        "height": height,
    }
