"""Abstract Atlas: explore a topic map of research abstracts (Streamlit entry point).

Run with `streamlit run streamlit_app.py` (the committed seed map), `... -- --map DIR` or
`ATLAS_MAP=DIR streamlit run streamlit_app.py` for another map folder. This file only composes the
page, as parts that a step reruns on their own (sidebar, header, map, results: keyed fragments); each
panel lives in its own module under `app/`, the session state and its callbacks (which pick the parts
a step reruns) in `app/session.py`, and the live map component in `app/map_component/`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import streamlit as st

from app import session
from app.about import about_panel
from app.changes_panel import changes_panel
from app.controls import header, no_map_page, notices_panel, sidebar
from app.curation_panel import edit_notice, edit_panel
from app.data import MapData, map_catalog, map_signature, maps_root, requested_map
from app.downloads import chosen_sentence, downloads
from app.filters import chosen_topics, filter_mask, scope_phrase
from app.loaders import cached_meaning, cached_rising, cached_word_search, load_map
from app.map_panel import map_panel
from app.palette import colour_columns
from app.paper_view import paper_view
from app.papers_panel import papers_panel
from app.placement import fit_panel
from app.search import SearchResult, meaning_search, search_sentence, within, word_search
from app.state import SORTS, ViewState, Vocabulary, normalise_params
from app.text import counted, markdown_literal, shorten
from app.themes import gone_themes, topics_in_themes, usable_themes
from app.topic_list import topic_list
from app.topic_view import topic_view
from pipeline import UserError

MAP_HEIGHT = 600  # pixels: the map, and beside it the topic list or the opened paper or topic


def side_panel(
    data: MapData, state: ViewState, in_view: np.ndarray, filtered: bool, rising, search: SearchResult | None
) -> None:
    """Beside the map: the opened paper, else the opened topic, else the topic list.

    An opened view scrolls inside a box as tall as the map, so at 1400×900 it is read without losing
    the map; its first line leads back (to the topic a paper was opened from, or to the list).
    """
    edit_notice()
    paper = state.paper if state.paper and state.paper in data.row_of else None
    if paper is None and state.topic is None:
        topic_list(data, in_view, state, filtered=filtered, rising=rising)
        return
    if paper is not None and state.topic is not None:
        back = f"Back to {shorten(data.label(state.topic), 40)}"
    else:
        back = "Back to the topic list"
    st.button(
        markdown_literal(back),
        on_click=session.open_paper if paper is not None else session.open_topic,
        args=(None,),
        icon=":material/arrow_back:",
        type="tertiary",
        key="back_to_list",
    )
    with st.container(height=MAP_HEIGHT - 40, border=False):
        if paper is not None:
            paper_view(data, data.row_of[paper], search)
        else:
            topic_view(data, state.topic)
            edit_panel(data, state.topic)  # where editing is on


@dataclass(frozen=True)
class View:
    """What the page shows: the papers in view (best search match first) and what the header says."""

    in_filter: np.ndarray  # bool per paper: passes the filters
    in_view: np.ndarray  # bool per paper: passes the filters and the search
    rows: np.ndarray  # the papers in view, best match first (map order without a search)
    search: SearchResult | None
    sentence: tuple[str, str]  # the header's sentence (bold number, rest)
    notices: tuple[str, ...]  # what the search left out or could not do


def current_view(data: MapData, map_key: tuple, state: ViewState) -> View:
    """Apply the filters exactly (`app.filters`), then the search of the chosen kind (`app.search`)."""
    themes = usable_themes(data.topics, data.themes)
    within = topics_in_themes(data.topics, state.themes) if state.themes and themes is not None else None
    in_filter = filter_mask(
        data.topic_ids,
        topics=chosen_topics(state.topics, within),
        show_unassigned=state.show_unassigned,
        filters=state.filter_dict(),
        facet_text=data.facet_text,
    )
    if state.added_only and data.added is not None:
        in_filter &= data.added
    result = run_search(data, map_key, state, in_filter)
    notices = result.notices if result is not None else ()
    if result is not None and result.kind == "words" and result.query.empty:  # nothing to search: say so
        result = None
    rows = np.flatnonzero(in_filter) if result is None else result.rows
    in_view = np.zeros(data.n, dtype=bool)
    in_view[rows] = True
    sentence = search_sentence(result, view_scope(data, state, int(in_filter.sum())))
    return View(in_filter, in_view, rows, result, sentence, notices)


def view_scope(data: MapData, state: ViewState, count: int, topics: tuple[int, ...] | None = None) -> str:
    """What the `count` filtered papers are (`app.filters.scope_phrase`); `topics`: name these instead
    of the chosen topics and themes."""
    themes = usable_themes(data.topics, data.themes)
    theme_names = []
    if themes is not None:
        names = dict(zip(themes["theme_id"].astype(int), themes["label"]))
        theme_names = [str(names[t]) for t in state.themes if t in names]
    return scope_phrase(
        count,
        topics=topics if topics is not None else chosen_topics(state.topics, None) or (),
        topic_names=data.labels,
        theme_names=theme_names,
        show_unassigned=state.show_unassigned,
        filters=state.filter_dict(),
        added_only=state.added_only and data.added is not None,
    )


def opened_topic_view(data: MapData, state: ViewState, view: View) -> View:
    """The view narrowed to the opened topic while the panel beside the map shows it: the map dims the
    rest, the header counts, and the papers table lists, the topic's papers in view."""
    if state.topic is None or (state.paper and state.paper in data.row_of):
        return view
    in_topic = data.topic_ids == state.topic
    search = None if view.search is None else within(view.search, in_topic)
    scope = view_scope(data, state, int((view.in_filter & in_topic).sum()), topics=(state.topic,))
    rows = view.rows[in_topic[view.rows]]
    return replace(
        view,
        in_view=view.in_view & in_topic,
        rows=rows,
        search=search,
        sentence=search_sentence(search, scope),
    )


def header_sentence(data: MapData, view: View) -> tuple[str, str]:
    """The header's sentence follows what the page shows beside the map and under it: the papers
    picked on the map, else the view (an opened topic's papers: `opened_topic_view`)."""
    selection = session.selection()
    if not selection:
        return view.sentence
    picked = counted(int(sum(view.in_view[data.row_of[d]] for d in selection)), "paper")
    if len(view.rows) == data.n:
        return "", f"Showing the {picked} you selected on the map"
    number, rest = view.sentence
    return number, f"{rest}; the table lists the {picked} of them you selected on the map"


def page_view(data: MapData, map_key: tuple) -> tuple[ViewState, View]:
    """The view state and the papers in view, worked out once for each choice of filters and search
    (the parts of the page that rerun together share it)."""
    state = session.current_state()
    key = (map_key, session.view_key(state))
    return state, session.remembered("current_view", key, lambda: current_view(data, map_key, state))


def run_search(data: MapData, map_key: tuple, state: ViewState, in_filter: np.ndarray) -> SearchResult | None:
    """The search of the chosen kind within the filtered papers; None without search text.

    Search by meaning falls back to words, with a notice, when the map's encoder cannot be loaded.
    """
    text = " ".join(state.search.split())
    if not text:
        return None
    words = cached_word_search(*map_key, text)
    if state.search_kind == "meaning":
        try:
            with st.spinner("Embedding your search with the map's model (the first time also loads it)…"):
                similarity = cached_meaning(*map_key, text)
        except Exception as exc:  # a missing or broken model must not take the page down
            found = word_search(words, in_filter, text)
            notice = f"Search by meaning is not available here ({str(exc)[:120]}); searched by words instead."
            return replace(found, notices=(*found.notices, notice))
        return meaning_search(similarity, in_filter, words.rows, text, data.pairs)
    return word_search(words, in_filter, text)


def view_vocabulary(data: MapData, rising) -> Vocabulary:
    """What a link may choose on this map: its topics, filters and papers, its themes, and the sorts it allows."""
    themes = usable_themes(data.topics, data.themes)
    return replace(
        data.vocabulary(),
        theme_ids=frozenset() if themes is None else frozenset(themes["theme_id"].astype(int)),
        gone_themes=gone_themes(data.manifest, themes),
        sorts=SORTS if rising.notna().any() else SORTS[:1],
        colour_columns=colour_columns(data.facets),
    )


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
    params = normalise_params({key: st.query_params.get_all(key) for key in st.query_params})
    choice, gone = session.choose_map(params, names)
    ref = catalog[names.index(choice)]
    token = map_signature(ref.path)
    try:
        data = load_map(ref.name, str(ref.path), token)
    except UserError as exc:
        no_map_page(str(exc), ref.path, ref.name)
        if len(catalog) > 1:
            with st.sidebar:
                st.selectbox("Map", names, key=session.MAP_CHOICE, on_change=session.switch_map)
        return

    rising = cached_rising(ref.name, str(ref.path), token)
    vocabulary = view_vocabulary(data, rising)
    session.open_view(params, data, vocabulary, gone)
    session.sanitise_state(data, vocabulary.theme_ids, vocabulary.sorts)

    map_key = (ref.name, str(ref.path), token)
    with st.sidebar:
        sidebar_part(data, catalog)
    header_part(data, map_key)
    map_part(
        data,
        map_key,
        rising if len(vocabulary.sorts) > 1 else None,
        ref.name if (len(catalog) > 1 or "map" in params) else None,
    )
    fit_panel(data, map_key)
    changes_panel(data, map_key)
    results_part(data, map_key)
    about_panel(data)


# The page's parts that steps rerun on their own (keyed fragments; `app.session.rerun_changed` picks
# which). A part reruns with the arguments of its last call: it reads only the map from them, and
# what it shows from the session state.
@st.fragment(key="sidebar")
def sidebar_part(data: MapData, catalog: list) -> None:
    session.push_sidebar()
    sidebar(data, catalog)
    session.part_shown("sidebar")


@st.fragment(key="header")
def header_part(data: MapData, map_key: tuple) -> None:
    """The map's name, the sentence saying what the page shows, and the notices."""
    state, view = page_view(data, map_key)
    header(data, header_sentence(data, opened_topic_view(data, state, view)))
    notices_panel(view.notices)
    session.part_shown("header")


@st.fragment(key="map")
def map_part(data: MapData, map_key: tuple, rising, map_name: str | None) -> None:
    """The map and the panel beside it, and the link (every step that changes the view reruns this part)."""
    state, view = page_view(data, map_key)
    left, right = st.columns([1.6, 1], gap="medium")
    with left:
        shown = opened_topic_view(data, state, view).in_view
        map_panel(data, map_key, shown, state, MAP_HEIGHT, search_active=view.search is not None)
    with right:
        filtered = len(view.rows) != data.n
        side_panel(data, state, view.in_view, filtered=filtered, rising=rising, search=view.search)
    params = normalise_params({key: st.query_params.get_all(key) for key in st.query_params})
    session.sync_url(state, map_name, params)
    session.part_shown("map")


@st.fragment(key="results")
def results_part(data: MapData, map_key: tuple) -> None:
    """The papers table (the map selection, else the papers in view, of the opened topic when one is
    open) and the downloads."""
    state, view = page_view(data, map_key)
    view = opened_topic_view(data, state, view)
    rows = papers_panel(data, view.rows, view.search)
    downloads(data, rows, chosen_sentence(view.sentence, None if rows is view.rows else len(rows)))
    session.part_shown("results")


main()
