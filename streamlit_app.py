"""Abstract Atlas: explore a topic map of research abstracts (Streamlit entry point).

Run with `streamlit run streamlit_app.py` (the committed seed map), `... -- --map DIR` or
`ATLAS_MAP=DIR streamlit run streamlit_app.py` for another map folder. This file only composes the
page, as parts that a step reruns on their own (sidebar, header, map, results, downloads: keyed
fragments); each panel lives in its own module under `app/`, what the page shows (the papers in view
and the header's sentence) in `app/view.py`, the session state and its callbacks (which pick the parts
a step reruns) in `app/session.py`, and the live map component in `app/map_component/`.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import streamlit as st

from app import session
from app.about import about_panel
from app.changes_panel import changes_panel
from app.controls import header, no_map_page, notices_panel, sidebar
from app.curation_panel import edit_notice, edit_panel, editing_allowed
from app.data import MapData, map_catalog, map_titles, maps_root, requested_map
from app.downloads import chosen_sentence, downloads
from app.encoder import warm as warm_encoder
from app.loaders import MapKey, cached_rising, load_map
from app.map_component import PANEL_KEY, live_header, live_panel, points_url
from app.map_panel import map_panel
from app.paper_view import paper_state
from app.papers_panel import papers_panel
from app.placement import placement_panel
from app.search import SearchResult
from app.state import ViewState
from app.view import (
    header_sentence,
    opened_topic_view,
    page_view,
    selected_rows,
    sentence_hits,
    view_vocabulary,
)
from pipeline import UserError
from pipeline.text import shorten

MAP_HEIGHT = 600  # pixels: the map, and beside it the topic list or the opened paper or topic


def side_panel(
    data: MapData,
    map_key: MapKey,
    state: ViewState,
    rising,
    search: SearchResult | None,
    sent_before_map: set[str],
) -> None:
    """Beside the map, the topic panel (`app.map_component.live_panel`): the topic list, or the opened
    topic, which the browser draws and answers itself; or the opened paper in their place, which scrolls
    in a box as tall as the map (at 1400×900 it is read without losing the map), its first line leading
    back (to the topic it was opened from, or to the list)."""
    edit_notice()
    # What a link the browser wrote may choose (`rising` is None where one order is offered: read again)
    vocabulary = partial(view_vocabulary, data, cached_rising(map_key))
    paper = data.row_of[state.paper] if state.paper and state.paper in data.row_of else None
    url = points_url(data, map_key)
    editing = paper is None and editing_allowed(data.path)  # the edit forms under the panel, for a topic
    if paper is None:
        opened = None
    else:
        back = "the topic list" if state.topic is None else shorten(data.label(state.topic), 40)
        opened = paper_state(data, paper, search, f"Back to {back}")
    live_panel(
        data,
        map_key,
        state,
        rising=rising,
        files_sent=session.files_sent(),
        sent_before_map=sent_before_map,
        on_topic=partial(session.on_panel_topic, data, url, vocabulary),
        on_only=partial(session.on_panel_only, data, url, vocabulary),
        on_values=partial(session.on_panel_values, data, url, vocabulary),
        on_click=partial(session.on_paper_click, data, url, PANEL_KEY),
        on_sort=partial(session.on_panel_sort, url),
        on_paper_topic=partial(session.on_paper_topic, data, url),
        height=MAP_HEIGHT - (40 if editing else 0),
        browser_steps=session.browser_steps(),
        link=session.view_link(),
        paper=opened,
    )
    if editing:
        curation_part(data)


def main() -> None:
    st.set_page_config(
        page_title="Abstract Atlas",
        page_icon=str(Path(__file__).parent / "assets" / "icon.png"),  # a local file: no icon CDN
        layout="wide",
        initial_sidebar_state="auto",  # folded away on narrow windows (see map.js, foldSidebar)
    )
    catalog = map_catalog(requested_map(sys.argv[1:], os.environ), maps_root(os.environ))
    if not catalog:
        no_map_page("No map found under assets/maps/.")
        return
    names = [m.name for m in catalog]
    params = session.link_params()
    choice, gone = session.choose_map(params, names)
    ref = catalog[names.index(choice)]
    map_key = MapKey.of(ref.name, ref.path)
    try:
        data = load_map(map_key)
    except UserError as exc:
        no_map_page(str(exc), ref.path, ref.name)
        if len(catalog) > 1:
            with st.sidebar:
                st.selectbox(
                    "Map",
                    names,
                    key=session.MAP_CHOICE,
                    on_change=session.switch_map,
                    format_func=map_titles(catalog).get,
                )
        return

    rising = cached_rising(map_key)
    vocabulary = view_vocabulary(data, rising)
    session.open_view(params, data, vocabulary, gone)
    session.sanitise_state(data, vocabulary.theme_ids, vocabulary.sorts)

    with st.sidebar:
        sidebar_part(data, catalog)
    header_part(data, map_key)
    map_part(
        data,
        map_key,
        rising if len(vocabulary.sorts) > 1 else None,
        ref.name if (len(catalog) > 1 or "map" in params) else None,
    )
    placement_panel(data, map_key)
    changes_panel(data, map_key)
    results_part(data, map_key)
    downloads_part(data, map_key)
    about_panel(data)
    warm_encoder(data.manifest)  # the page drawn: the search's model loads while the reader reads it


# The page's parts that steps rerun on their own (keyed fragments; `app.session.rerun_changed` picks
# which). A part reruns with the arguments of its last call: it reads only the map from them, and
# what it shows from the session state.
@st.fragment(key="sidebar")
def sidebar_part(data: MapData, catalog: list) -> None:
    session.push_part("sidebar")
    sidebar(data, catalog)
    session.part_shown("sidebar")


@st.fragment(key="header")
def header_part(data: MapData, map_key: MapKey) -> None:
    """The map's name, the sentence saying what the page shows (written by the browser for the view the
    address bar says: js/header.js), and the notices."""
    state, view = page_view(data, map_key)
    selected = selected_rows(data, map_key, state)
    header(data)
    # Always one element here, so what follows keeps its place in the page and is not remounted.
    live_header(
        data,
        map_key,
        header_sentence(data, opened_topic_view(data, state, view), selected),
        sentence_hits(data, map_key, state),
        files_sent=session.files_sent(),
        link=session.view_link(),
    )
    notices_panel(view.notices)
    session.part_shown("header")


@st.fragment(key="map")
def map_part(data: MapData, map_key: MapKey, rising, map_name: str | None) -> None:
    """The map and the panel beside it, and the link: rerun by the steps the browser does not draw (a paper
    opened, Reset view, a map of another build), which write the link here
    (the sidebar's own steps write it in their callback: `app.session.sidebar_changed`)."""
    state, view = page_view(data, map_key)
    left, right = st.columns([1.6, 1], gap="medium")
    sent_before_map = set(session.files_sent())
    with left:
        map_panel(
            data,
            map_key,
            state,
            MAP_HEIGHT,
            vocabulary=lambda: view_vocabulary(data, cached_rising(map_key)),
        )
    with right:
        side_panel(data, map_key, state, rising, view.search, sent_before_map)
    params = session.link_params()
    session.sync_url(state, map_name, params)
    session.part_shown("map")


@st.fragment(key="curation")
def curation_part(data: MapData) -> None:
    """Under the topic panel where editing is on: the opened topic's edit forms, which follow the topic
    the panel opens (a part of its own, inside the map's: opening a topic in the browser reruns it alone)."""
    state = session.current_state()
    if state.paper is None and state.topic is not None:
        edit_panel(data, state.topic)
    session.part_shown("curation")


@st.fragment(key="results")
def results_part(data: MapData, map_key: MapKey) -> None:
    """The papers table: the map selection, else the papers in view, worked out in the browser from the
    link's view (js/page.js), which also narrows it to an opened topic, pages and sorts it (js/table.js)."""
    state, _ = page_view(data, map_key)
    papers_panel(data, map_key, state.topic)
    session.part_shown("results")


@st.fragment(key="downloads")
def downloads_part(data: MapData, map_key: MapKey) -> None:
    """The downloads of exactly what the table lists (of the opened topic when one is open)."""
    state, view = page_view(data, map_key)
    view = opened_topic_view(data, state, view)
    selected = selected_rows(data, map_key, state)
    rows = view.rows if selected is None else selected[view.in_view[selected]]
    chosen = chosen_sentence(view.sentence, None if selected is None else len(rows))
    downloads(data, rows, chosen, view.search)
    session.part_shown("downloads")


main()
