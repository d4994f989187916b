"""Turn a Plotly selection event from `st.plotly_chart(on_select=...)` into the papers it selected."""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class MapSelection:
    """The papers a click or a box/lasso selection picked, in event order, without repeats."""

    doc_ids: tuple[str, ...] = ()
    is_click: bool = False  # one point picked without a box or lasso: the reader clicked it


def _get(obj: object, key: str, default=None):
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def selected_papers(event: object, known: Container[str] | None = None) -> MapSelection:
    """Read doc_ids from a selection event through each point's `customdata`, never trace indices.

    Trace-local indices change whenever the traces are rebuilt (a filter, a search), so the
    figure carries `customdata = doc_id` and only that is trusted. Points without a doc_id
    (topic labels, the context layer, the pinned abstract) and doc_ids not in `known` are dropped.

    Examples:
        >>> event = {"selection": {"points": [{"customdata": "a1", "point_index": 4},
        ...                                   {"customdata": ["b2"]}, {"x": 1.0}], "box": [{}]}}
        >>> selected_papers(event)
        MapSelection(doc_ids=('a1', 'b2'), is_click=False)
        >>> selected_papers({"selection": {"points": [{"customdata": "a1"}]}}, known={"a1"}).is_click
        True
        >>> selected_papers(None), selected_papers({"selection": {"points": [{"customdata": "zz"}]}}, {"a1"})
        (MapSelection(doc_ids=(), is_click=False), MapSelection(doc_ids=(), is_click=False))
    """
    selection = _get(event, "selection") if event is not None else None
    if selection is None:
        return MapSelection()
    doc_ids: dict[str, None] = {}
    for point in _get(selection, "points", None) or []:
        value = _get(point, "customdata")
        if isinstance(value, list | tuple):
            value = value[0] if value else None
        if not isinstance(value, str) or not value:
            continue
        if known is not None and value not in known:
            continue
        doc_ids[value] = None
    drew_region = bool(_get(selection, "box", None)) or bool(_get(selection, "lasso", None))
    return MapSelection(doc_ids=tuple(doc_ids), is_click=len(doc_ids) == 1 and not drew_region)
