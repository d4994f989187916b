"""A box or lasso selection on the map, as the link keeps it and as the papers it holds.

The selection is a shape in the map's coordinates, written in the link as `select=`:

    select=box:x0,x1,y0,y1          a box (its x range, then its y range)
    select=lasso:x0,y0,x1,y1,...    a lasso: its corners in order, at least three

The grammar is the link's (`app.state.parse_selection`). The browser reports the shape the reader
drew (js/charts.js); `selection_text` writes it so (six significant digits a number, a long lasso
thinned to `app.state.MAX_CORNERS` corners), the map
draws the written shape back, and `rows_inside` is the one rule for which papers it holds: a box's
edges belong to it, a lasso holds the points its outline winds around an odd number of times (the
rule Plotly and js/sampling.js `rowsInShape` apply).
"""

from __future__ import annotations

import math

import numpy as np

from app.state import MAX_CORNERS, Shape, parse_selection


def _number(value: float) -> str:
    """A coordinate as the link writes it: six significant digits, no exponent where none is needed.

    Examples:
        >>> _number(1.23456789), _number(-0.5), _number(12345678.0)
        ('1.23457', '-0.5', '1.23457e+07')
    """
    return f"{value:.6g}"


def selection_text(event: dict) -> str:
    """The `select=` value of a selection the browser reported (`{"box": [x0, x1, y0, y1]}` or
    `{"lasso": {"x": [...], "y": [...]}}`), or "" when it is no usable shape.

    Examples:
        >>> selection_text({"box": [0.123456789, 1, 2, 3]})
        'box:0.123457,1,2,3'
        >>> selection_text({"lasso": {"x": list(range(200)), "y": [i % 7 for i in range(200)]}}).count(",")
        127
        >>> selection_text({"box": [0, 0, 1, 2]}), selection_text({"circle": 1})
        ('', '')
    """
    try:
        if "box" in event:
            numbers = [float(v) for v in event["box"]]
            kind = "box"
        elif "lasso" in event:
            xs, ys = [float(v) for v in event["lasso"]["x"]], [float(v) for v in event["lasso"]["y"]]
            if len(xs) != len(ys):
                return ""
            if len(xs) > MAX_CORNERS:  # thinned evenly: a hand-drawn outline keeps its shape
                keep = np.linspace(0, len(xs) - 1, MAX_CORNERS).round().astype(int)
                xs, ys = [xs[k] for k in keep], [ys[k] for k in keep]
            numbers = [v for pair in zip(xs, ys) for v in pair]
            kind = "lasso"
        else:
            return ""
    except (TypeError, ValueError, KeyError):
        return ""
    if not all(math.isfinite(v) for v in numbers):
        return ""
    text = f"{kind}:" + ",".join(_number(v) for v in numbers)
    return text if parse_selection(text) is not None else ""


def rows_inside(shape: Shape, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows of the points (x, y) the shape holds, in row order.

    Examples:
        >>> xs, ys = np.array([0.0, 1.0, 2.0, 0.2]), np.array([0.0, 1.0, 2.0, 0.1])
        >>> rows_inside(parse_selection("box:0,1,0,1"), xs, ys).tolist()
        [0, 1, 3]
        >>> rows_inside(parse_selection("lasso:-1,-1,1.5,-1,-1,1.5"), xs, ys).tolist()
        [0, 3]
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if shape.kind == "box":
        inside = (x >= shape.xs[0]) & (x <= shape.xs[1]) & (y >= shape.ys[0]) & (y <= shape.ys[1])
        return np.flatnonzero(inside)
    px, py = np.asarray(shape.xs), np.asarray(shape.ys)
    near = np.flatnonzero((x >= px.min()) & (x <= px.max()) & (y >= py.min()) & (y <= py.max()))
    inside = np.zeros(len(near), dtype=bool)
    xs, ys = x[near], y[near]
    for a in range(len(px)):  # even-odd rule, edge by edge
        b = a - 1
        crosses = (py[a] > ys) != (py[b] > ys)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = (px[b] - px[a]) * (ys - py[a]) / (py[b] - py[a]) + px[a]
        inside ^= crosses & (xs < at)
    return near[inside]
