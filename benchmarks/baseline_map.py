"""The previous map, kept as the benchmark's baseline: one whole Plotly figure for `st.plotly_chart` per rerun.

This is how the app drew its map before the live map component (app/map_component); bench_app.py
measures a page holding only this figure side by side with the app. Not used by the app.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

try:  # how Plotly itself sends numeric arrays (compact typed base64); plain JSON lists without it
    from _plotly_utils.utils import convert_to_base64
except ImportError:  # pragma: no cover
    convert_to_base64 = None

from app.data import MapData, label_limit, point_size
from app.map_component.payload import view_ranges
from app.palette import CONTEXT_COLOUR
from app.text import plotly_escape, plotly_wrap
from pipeline.text import shorten

WEBGL_ABOVE = 1000  # points; SVG is crisper and fully interactive below, WebGL keeps big maps fluid
MAP_HEIGHT = 640
INK = "#1f2937"
HOVER = "<b>%{text}</b><br>%{hovertext}<extra></extra>"
MAP_CONFIG = {  # `st.plotly_chart(config=...)` for the map
    "scrollZoom": True,
    "displaylogo": False,
    "displayModeBar": True,
    "modeBarButtonsToRemove": ["autoScale2d", "toImage", "zoomIn2d", "zoomOut2d", "zoom2d"],
    # WebGL maps (over 1,000 papers) draw at screen resolution instead of twice it: a third less
    # time per redraw where WebGL runs in software, and dots look the same.
    "plotGlPixelRatio": 1,
}


class PrebuiltFigure(go.Figure):
    """A Plotly figure assembled from plain dicts of already-typed, already-escaped arrays.

    `go.Figure` deep-copies every array when it is built and again in `to_dict` (which
    `st.plotly_chart` calls); for 80,000 titles that copying alone takes about two seconds per rerun.
    This figure keeps the dicts as they are and hands Streamlit a fresh container structure over the
    same arrays, encoded the way Plotly encodes them (numeric arrays as typed base64 arrays).
    """

    def __init__(self, spec: dict) -> None:
        super().__init__()
        self._atlas_spec = spec

    def to_dict(self) -> dict:
        spec = _copy_containers(self._atlas_spec)
        if convert_to_base64 is not None:
            convert_to_base64(spec)
        return spec


def _copy_containers(value):
    """Copy dicts and lists, share everything else (the arrays)."""
    if isinstance(value, dict):
        return {key: _copy_containers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_containers(item) for item in value]
    return value


@dataclass(frozen=True)
class Pin:
    """A pasted abstract placed on the map (see `pipeline.modelling.place`)."""

    x: float
    y: float
    topic_label: str


def hover_detail(data: MapData) -> np.ndarray:
    """Plotly-escaped "topic<br>source" lines under each title (what the app's MapData used to carry)."""
    cached = getattr(data, "_baseline_detail", None)
    if cached is None:
        labels = {t: plotly_escape(label) for t, label in data.labels.items()}
        sources = data.papers["source"].fillna("").astype(str).tolist()
        cached = np.array(
            [
                f"{labels.get(int(t), t)}<br>{plotly_escape(shorten(s, 70))}"
                for t, s in zip(data.topic_ids.tolist(), sources, strict=True)
            ],
            dtype=object,
        )
        data._baseline_detail = cached
    return cached


def hover_titles(data: MapData) -> np.ndarray:
    """Plotly-escaped titles wrapped with <br>, once per map (what the app's MapData used to carry)."""
    cached = getattr(data, "_baseline_titles", None)
    if cached is None:
        titles = data.papers["title"].fillna("").astype(str).tolist()
        cached = np.array([plotly_wrap(t, 64, 3) for t in titles], dtype=object)
        data._baseline_titles = cached
    return cached


def draw_order(data: MapData) -> np.ndarray:
    """Rows with unassigned papers first, so topics are drawn on top; once per map."""
    cached = getattr(data, "_baseline_order", None)
    if cached is None:
        cached = np.argsort(data.colour_index != len(data.topic_order), kind="stable")
        data._baseline_order = cached
    return cached


def discrete_colorscale(colours: list[str]) -> list[list]:
    """A Plotly colorscale mapping value i + 0.5 (cmin 0, cmax len) to `colours[i]`, with no blending.

    Examples:
        >>> discrete_colorscale(["#111111", "#222222"])
        [[0.0, '#111111'], [0.5, '#111111'], [0.5, '#222222'], [1.0, '#222222']]
    """
    scale = []
    for i, colour in enumerate(colours):
        scale += [[i / len(colours), colour], [(i + 1) / len(colours), colour]]
    return scale


def map_figure(
    data: MapData,
    in_view: np.ndarray,
    *,
    search_active: bool = False,
    chosen_row: int | None = None,
    chosen_topic: int | None = None,
    pin: Pin | None = None,
    height: int = MAP_HEIGHT,
) -> go.Figure:
    """The map for the current view.

    Papers in view are one trace coloured by topic (unassigned in grey, drawn underneath); papers
    outside the filters or search stay as a faint context layer, so a search reads as highlights
    on the whole map. Each paper point carries `customdata = doc_id`; nothing else is selectable
    data. The figure is assembled from precomputed, already-escaped arrays without Plotly's
    validation and copies (see `PrebuiltFigure`), which is what keeps a rerun fast on big maps.

    Args:
        data: the loaded map.
        in_view: boolean mask over `data.papers`, True for papers the filters and search keep.
        search_active: emphasise the kept points (outline, larger) because they are search hits.
        chosen_row: the opened paper's row, ringed on the map.
        chosen_topic: the opened topic, whose name is drawn first and in bold.
        pin: a placed abstract, drawn as a star.
        height: pixels.
    """
    n = data.n
    kind = "scattergl" if n > WEBGL_ABOVE else "scatter"
    size = point_size(n)
    x = data.papers["x"].to_numpy()
    y = data.papers["y"].to_numpy()
    traces: list[dict] = []

    context = np.flatnonzero(~in_view)
    if len(context):
        traces.append(
            {
                "type": kind,
                "x": x[context],
                "y": y[context],
                "mode": "markers",
                "name": "context",
                "hoverinfo": "skip",
                "showlegend": False,
                "marker": {
                    "color": CONTEXT_COLOUR,
                    "size": size * 0.85,
                    "opacity": 0.55 if n < 5000 else 0.35,
                },
            }
        )

    order = draw_order(data)
    rows = order[in_view[order]]
    if len(rows):
        outline = {"width": 0.8, "color": "white"} if n <= 2000 else {"width": 0}
        if search_active:
            outline = {"width": 1.2 if n <= 2000 else 0.6, "color": INK}
        traces.append(
            {
                "type": kind,
                "x": x[rows],
                "y": y[rows],
                "mode": "markers",
                "name": "papers",
                "customdata": data.papers["doc_id"].to_numpy()[rows],
                "text": hover_titles(data)[rows],
                "hovertext": hover_detail(data)[rows],
                "hovertemplate": HOVER,
                "showlegend": False,
                "marker": {
                    "color": data.colour_index[rows].astype(np.float32) + 0.5,
                    "cmin": 0,
                    "cmax": len(data.palette),
                    "colorscale": discrete_colorscale(data.palette),
                    "showscale": False,
                    "size": size * (1.25 if search_active else 1.0),
                    "opacity": 0.92 if n < 2000 else (0.8 if n < 20000 else 0.65),
                    "line": outline,
                },
            }
        )

    if chosen_row is not None:
        traces.append(
            {
                "type": "scatter",
                "x": [float(x[chosen_row])],
                "y": [float(y[chosen_row])],
                "mode": "markers",
                "name": "opened paper",
                "hoverinfo": "skip",
                "showlegend": False,
                "marker": {
                    "symbol": "circle-open",
                    "size": size * 2 + 10,
                    "color": INK,
                    "line": {"width": 3},
                },
            }
        )
    if pin is not None:
        traces.append(
            {
                "type": "scatter",
                "x": [pin.x],
                "y": [pin.y],
                "mode": "markers",
                "name": "your abstract",
                "hovertemplate": f"<b>Your abstract</b><br>{plotly_escape(pin.topic_label)}<extra></extra>",
                "showlegend": False,
                "marker": {
                    "symbol": "star",
                    "size": 24,
                    "color": "#111827",
                    "line": {"width": 1.5, "color": "white"},
                },
            }
        )

    x_range, y_range = view_ranges(x, y)
    in_sight = [(pin.x, pin.y)] if pin else []  # the pin and the opened paper, even if far out
    if chosen_row is not None:
        in_sight.append((float(x[chosen_row]), float(y[chosen_row])))
    for px, py in in_sight:
        x_range = [min(x_range[0], px), max(x_range[1], px)]
        y_range = [min(y_range[0], py), max(y_range[1], py)]
    layout = {
        "annotations": topic_annotations(data, in_view, x_range, y_range, chosen=chosen_topic)
        + (pin_annotation(pin) if pin else []),
        "height": height,
        "margin": {"l": 4, "r": 4, "t": 4, "b": 4},
        "plot_bgcolor": "#fbfbfd",
        "paper_bgcolor": "rgba(0,0,0,0)",
        "xaxis": {"visible": False, "showgrid": False, "zeroline": False, "range": x_range},
        "yaxis": {"visible": False, "showgrid": False, "zeroline": False, "range": y_range},
        "dragmode": "pan",
        "clickmode": "event+select",
        "hovermode": "closest",
        "hoverlabel": {"bgcolor": "white", "font": {"size": 13, "color": INK}, "align": "left"},
        "showlegend": False,
        "uirevision": data.name,  # keep the reader's zoom and pan across reruns of the same map
    }
    return PrebuiltFigure({"data": traces, "layout": layout})


def topic_annotations(
    data: MapData,
    in_view: np.ndarray,
    x_range: list[float],
    y_range: list[float],
    *,
    chosen: int | None = None,
    width_px: int = 600,
    height_px: int = MAP_HEIGHT,
) -> list[dict]:
    """Names of the largest topics still in view, at their label positions, biggest type for the biggest.

    At most `label_limit` names, largest topics first; a name that would overlap one already
    placed (estimated from its length in the opening view, `x_range` by `y_range`) is left out, so
    a dense map stays legible.
    """
    visible = set(np.unique(data.topic_ids[in_view]).tolist())
    candidates = [t for t in data.topic_order if t in visible]
    if chosen in candidates:  # the opened topic is always named, and wins any overlap
        candidates.remove(chosen)
        candidates.insert(0, chosen)
    limit = label_limit(data.n, len(data.topic_order))
    (x_low, x_high), (y_low, y_high) = x_range, y_range
    placed: list[tuple[float, float, float, float]] = []
    annotations = []
    for topic in candidates:
        if len(annotations) >= limit:
            break
        rank = len(annotations)
        row = data.topics.loc[topic]
        text = plotly_wrap(data.label(topic), 28, 2)
        font = 14 if rank < 5 else (12.5 if rank < 15 else 11)
        lines = text.split("<br>")
        half_w = (max(len(line) for line in lines) * font * 0.5 + 10) / width_px / 2
        half_h = (len(lines) * font * 1.25 + 8) / height_px / 2
        u = (float(row["x"]) - x_low) / (x_high - x_low)
        v = (float(row["y"]) - y_low) / (y_high - y_low)
        if not (0 <= u <= 1 and 0 <= v <= 1):
            continue  # its papers lie outside the opening view
        u = min(max(u, half_w), 1 - half_w)  # a name near the edge slides inwards instead of being cut
        if any(abs(u - pu) < half_w + pw and abs(v - pv) < half_h + ph for pu, pv, pw, ph in placed):
            continue
        placed.append((u, v, half_w, half_h))
        annotations.append(
            {
                "x": x_low + u * (x_high - x_low),
                "y": float(row["y"]),
                "text": f"<b>{text}</b>" if topic == chosen else text,
                "showarrow": False,
                "yshift": 14,  # sit just above the anchor paper rather than on it
                "font": {"size": font, "color": INK},
                "bgcolor": "rgba(255,255,255,0.82)",
                "bordercolor": data.colours[topic],
                "borderwidth": 3 if topic == chosen else 1.5,
                "borderpad": 3,
                "opacity": 0.95,
            }
        )
    return annotations


def pin_annotation(pin: Pin) -> list[dict]:
    return [
        {
            "x": pin.x,
            "y": pin.y,
            "text": "<b>Your abstract</b>",
            "showarrow": True,
            "arrowhead": 0,
            "ax": 36,
            "ay": -30,
            "font": {"size": 13, "color": "white"},
            "bgcolor": "#111827",
            "borderpad": 4,
            "arrowcolor": "#111827",
        }
    ]
