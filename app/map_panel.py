"""The map panel: the live map component for the current view, its colour choice, and how to use it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from app import session
from app.data import MapData
from app.loaders import MapKey
from app.map_component import live_map, points_url
from app.map_component.payload import Pin
from app.nearest import nearest_papers
from app.palette import colour_columns
from app.place import Placement, placement_label
from app.state import ViewState, Vocabulary
from app.text import column_name, markdown_literal


def map_panel(
    data: MapData,
    map_key: MapKey,
    state: ViewState,
    height: int = 600,
    *,
    vocabulary: Callable[[], Vocabulary],
) -> None:
    """The map, its key and the colour choice under it. `vocabulary`: what a link may choose on this
    map, for a step the browser drew and Back or Forward to a view it draws again."""
    placement = session.placement()
    url = points_url(data, map_key)
    chosen_row = data.row_of.get(state.paper) if state.paper else None
    live_map(  # its papers, their names and hits the browser works out from the link's view (js/page.js)
        data,
        map_key,
        chosen_row=chosen_row,
        neighbours=nearest_papers(data, chosen_row)[0].tolist() if chosen_row is not None else [],
        colour=state.colour,
        pin=(
            Pin(placement.x, placement.y, placement_label(data, placement))
            if isinstance(placement, Placement)
            else None
        ),
        reset_zoom=session.reset_zoom(),
        files_sent=session.files_sent(),
        on_click=partial(session.on_paper_click, data, url),
        on_select=partial(session.on_map_select, data, url, vocabulary),
        on_legend=partial(session.on_legend_pick, data, url, vocabulary, state.colour),
        themes=state.themes,
        values=state.filter_dict().get(state.colour, ()) if state.colour else (),
        selection=state.selection,
        browser_steps=session.browser_steps(),
        height=height,
        link=session.view_link(),
        on_history=partial(session.on_map_history, data, url, vocabulary),
    )
    columns = colour_columns(data.facets)
    bottom = st.columns([1.3, 2], vertical_alignment="center")  # the chosen option reads whole
    if columns:
        # Topics, each a shade of its theme's hue on a map with themes
        names = {"": "Themes and topics" if data.themes is not None else "Topics"}
        names |= {c: markdown_literal(column_name(c)) for c in columns}
        bottom[0].selectbox(
            "Colour by",
            list(names),
            key=session.widget_key("colour"),
            format_func=names.get,
            help="Colour the points by topic, or by a metadata column with few values; the key is on the map.",
        )
    bottom[1].caption(
        "Click or tap a point to open it · box :material/highlight_alt: or lasso :material/gesture: select "
        "(top right) to list a group · drag to pan · pinch, or hold Ctrl/⌘ and scroll, to zoom (or click an "
        "empty spot, then scroll) · double-click to see the whole map again"
        + (
            " · theme names show on the whole map, topic names as you zoom in"
            if data.themes is not None
            else ""
        )
    )
