"""The map panel: the live map component for the current view, and how to use it."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from app import session
from app.data import MapData
from app.map_component import live_map, points_url
from app.map_component.payload import Pin
from app.placement import pin_label
from app.state import ViewState


def map_panel(
    data: MapData, token: tuple, in_view: np.ndarray, state: ViewState, *, search_active: bool = False
) -> None:
    pin = st.session_state.get("pin")
    url = points_url(data, token)
    live_map(
        data,
        token,
        in_view,
        # Added papers are highlighted like search hits: larger and outlined over the faint rest.
        search_active=search_active or state.added_only,
        chosen_topic=state.topic,
        chosen_row=data.row_of.get(state.paper) if state.paper else None,
        pin=Pin(pin["x"], pin["y"], pin_label(data, pin)) if pin and "x" in pin else None,
        clear_selection=st.session_state.get("clear_selection", 0),
        on_click=partial(session.on_map_click, data, url),
        on_select=partial(session.on_map_select, data, url),
    )
    st.caption(
        "Click a point to open it · box :material/highlight_alt: or lasso :material/gesture: select (top right) "
        "to list a group · scroll to zoom, drag to pan, double-click to reset · theme names show on the "
        "whole map, topic names as you zoom in"
        if data.themes is not None and len(data.themes)
        else "Click a point to open it · box :material/highlight_alt: or lasso :material/gesture: select "
        "(top right) to list a group · scroll to zoom, drag to pan, double-click to reset"
    )
