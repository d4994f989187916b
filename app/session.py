"""Session state: the keys the page keeps, the callbacks that change them, and their URL round trip.

Keys (all in `st.session_state`):
    w_search, w_search_kind   the search box and its kind ("words" or "meaning")
    w_topics, w_unassigned, w_f_<column>   the sidebar's filters (topics may hold -1, the unassigned papers)
    w_themes, w_sort      the theme filter (sidebar) and the topic list's order ("size" or "rising")
    topic, paper          the opened topic id and paper doc_id (None when closed)
    selection             doc_ids picked on the map with box or lasso, in event order
    clear_selection       a counter the map watches to drop its box/lasso when the selection is cleared
    page, page_of         the papers table's page and the view it belongs to
    pin                   the placed abstract (see app.placement), or {"error": ...}
    notices               link settings that were ignored, shown until dismissed
    link_info             what became of a shared link's topic on a rebuilt map (plain text), likewise
    w_added               the "papers added since the last build" toggle (maps that have such papers)
    map_choice, initialised   the chosen map, and the map whose view the widgets hold
    w_colour              the metadata column the map is coloured by ("" = by topic)
    url_params            the query string the page last wrote or read (normalised): a different one on a
                          rerun means the reader went Back or Forward in the browser's history
    reset_zoom            a counter the map watches to return to the whole map ("Reset view")
    outside_key           what the page outside the map and its side panel showed at the last full run
                          (`outside_key`): a map-only step reruns just that fragment
The shareable part of this is a `ViewState` (app.state), which `sync_url` keeps in the query string.
"""

from __future__ import annotations

import streamlit as st

from app.data import MapData
from app.map_component import event
from app.palette import colour_columns
from app.search import KINDS
from app.state import SORTS, ZOOM_KEY, ViewState, normalise_params, to_params
from app.themes import topics_in_themes

FACET_PREFIX = "w_f_"


# --------------------------------------------------------------------------- state <-> widgets <-> URL
def current_state() -> ViewState:
    filters = tuple(
        (key[len(FACET_PREFIX) :], tuple(st.session_state[key]))
        for key in sorted(k for k in st.session_state if str(k).startswith(FACET_PREFIX))
        if st.session_state[key]
    )
    return ViewState(
        search=(st.session_state.get("w_search") or "").strip(),
        search_kind=st.session_state.get("w_search_kind") or KINDS[0],
        topics=tuple(st.session_state.get("w_topics") or ()),
        show_unassigned=bool(st.session_state.get("w_unassigned", True)),
        filters=filters,
        topic=st.session_state.get("topic"),
        paper=st.session_state.get("paper"),
        themes=tuple(st.session_state.get("w_themes") or ()),
        sort=st.session_state.get("w_sort") or SORTS[0],
        added_only=bool(st.session_state.get("w_added", False)),
        colour=st.session_state.get("w_colour") or "",
    )


def apply_state(state: ViewState, data: MapData) -> None:
    """Put a view state into the widgets' session keys (before the widgets are drawn)."""
    for key in [k for k in st.session_state if str(k).startswith(FACET_PREFIX)]:
        del st.session_state[key]
    st.session_state.w_search = state.search
    st.session_state.w_search_kind = state.search_kind
    st.session_state.w_topics = list(state.topics)
    st.session_state.w_unassigned = state.show_unassigned
    st.session_state.w_themes = list(state.themes)
    st.session_state.w_sort = state.sort
    chosen = state.filter_dict()
    for column in data.facets:
        st.session_state[FACET_PREFIX + column] = list(chosen.get(column, ()))
    st.session_state.topic = state.topic
    st.session_state.paper = state.paper
    st.session_state.w_added = state.added_only
    st.session_state.w_colour = state.colour
    st.session_state.selection = ()
    st.session_state.pin = None
    st.session_state.page = 0


def sanitise_state(
    data: MapData, theme_ids: frozenset[int] = frozenset(), sorts: tuple[str, ...] = SORTS[:1]
) -> None:
    """Drop widget values a rebuilt map no longer has, so a widget never sees an unknown option.

    Topics outside the chosen themes are dropped too: the Topics filter offers only those inside.
    """
    st.session_state.w_themes = [t for t in st.session_state.get("w_themes", []) if t in theme_ids]
    known = set(topic_options(data, st.session_state.w_themes))
    st.session_state.w_topics = [t for t in st.session_state.get("w_topics", []) if t in known]
    if st.session_state.get("w_search_kind") not in KINDS:
        st.session_state.w_search_kind = KINDS[0]
    # Set on every run, so the switch keeps its value through runs that do not draw it (topic views).
    st.session_state.w_unassigned = bool(st.session_state.get("w_unassigned", True))
    if st.session_state.get("w_sort") not in sorts:
        st.session_state.w_sort = SORTS[0]
    for column, values in data.facets.items():
        key = FACET_PREFIX + column
        allowed = set(values)
        st.session_state[key] = [v for v in st.session_state.get(key, []) if v in allowed]
    if st.session_state.get("topic") not in data.vocabulary().topic_ids:
        st.session_state.topic = None
    if st.session_state.get("paper") not in data.row_of:
        st.session_state.paper = None
    if st.session_state.get("w_colour") not in ("", *colour_columns(data.facets)):
        st.session_state.w_colour = ""
    if not data.vocabulary().has_added:
        st.session_state.w_added = False
    st.session_state.selection = tuple(d for d in st.session_state.get("selection", ()) if d in data.row_of)


def topic_options(data: MapData, themes: list[int] | tuple[int, ...]) -> list[int]:
    """What the Topics filter offers: the topics of the chosen themes (all without), largest first,
    then "Unassigned" (-1) when the map has such papers."""
    inside = set(topics_in_themes(data.topics, themes)) if themes else None
    options = [t for t in data.topic_order if inside is None or t in inside]
    return options + ([-1] if data.sizes.get(-1) else [])


def outside_key(state: ViewState) -> tuple:
    """What the page outside the map and its side panel shows: when it changes, the whole page reruns."""
    return (
        state.search,
        state.search_kind,
        state.topics,
        state.show_unassigned,
        state.filters,
        state.themes,
        state.added_only,
        st.session_state.get("selection", ()),
        st.session_state.get("page", 0),
        st.session_state.get("pin") is not None,
    )


def navigated(params: dict[str, list[str]]) -> bool:
    """Whether the reader went Back or Forward in the browser to a view other than the one shown.

    Streamlit pushes a history entry for each query string the app writes, and on Back or Forward
    reruns the script with that entry's query string, saying so (`is_history_navigation`); the view
    then follows the link. Only such runs count: an ordinary rerun may carry a query string a step
    old (the page sends it before the last run's new one arrives). The zoom (`view=`) does not count.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not getattr(ctx, "is_history_navigation", False):
        return False
    last = st.session_state.get("url_params")
    return last is not None and _without_zoom(params) != last


def sync_url(state: ViewState, map_name: str | None, params: dict[str, list[str]]) -> None:
    """Write the view into the query string when it changed (a new browser history entry, so Back
    undoes it); the map's zoom (`view=`), which the browser writes, is kept as it is."""
    wanted = normalise_params(to_params(state, map_name))
    st.session_state.url_params = wanted
    if _without_zoom(params) != wanted:
        zoom = params.get(ZOOM_KEY)  # the browser corrects it to the current zoom (map.js, keepZoomInUrl)
        st.query_params.from_dict({**wanted, ZOOM_KEY: zoom} if zoom else wanted)


def _without_zoom(params: dict[str, list[str]]) -> dict[str, list[str]]:
    return {key: values for key, values in params.items() if key != ZOOM_KEY}


# --------------------------------------------------------------------------- callbacks
def open_paper(doc_id: str | None) -> None:
    st.session_state.paper = doc_id


def open_topic(topic: int | None) -> None:
    st.session_state.topic = topic
    st.session_state.paper = None


def _map_rows(name: str, data: MapData, points_url: str) -> list[int] | None:
    """Rows an event of the live map names, or None when it came from another map or is malformed."""
    value = event(name)
    if not value or value.get("map") != points_url:
        return None
    rows = value.get("rows") if name == "select" else [value.get("row")]
    if not isinstance(rows, list):
        return None
    return [r for r in rows if isinstance(r, int) and 0 <= r < data.n]


def on_map_click(data: MapData, points_url: str) -> None:
    rows = _map_rows("click", data, points_url)
    if rows:
        open_paper(str(data.doc_ids[rows[0]]))


def on_map_select(data: MapData, points_url: str) -> None:
    rows = _map_rows("select", data, points_url)
    if rows is None:
        return
    st.session_state.selection = tuple(dict.fromkeys(str(data.doc_ids[r]) for r in rows))
    st.session_state.page = 0


def clear_selection() -> None:
    st.session_state.selection = ()
    st.session_state.clear_selection = st.session_state.get("clear_selection", 0) + 1


def on_row_pick(key: str, doc_ids: list[str]) -> None:
    rows = st.session_state[key].selection.rows
    st.session_state.paper = doc_ids[rows[0]] if rows else None


def on_topic_pick(key: str, topic_ids: list[int]) -> None:
    rows = st.session_state[key].selection.rows
    open_topic(topic_ids[rows[0]] if rows else None)


def on_topic_select_box(key: str) -> None:
    open_topic(st.session_state[key])


def only_this_topic(topic: int, theme: int | None = None) -> None:
    """Show exactly this topic's papers (`theme`: the topic's theme; other chosen themes are dropped)."""
    st.session_state.w_topics = [topic]
    themes = st.session_state.get("w_themes") or []
    if themes and topic != -1 and theme not in themes:
        st.session_state.w_themes = []


def turn_page(step: int) -> None:
    st.session_state.page = max(0, st.session_state.get("page", 0) + step)


def reset_view() -> None:
    for key in [k for k in st.session_state if str(k).startswith(FACET_PREFIX)]:
        st.session_state[key] = []
    st.session_state.w_search = ""
    st.session_state.w_search_kind = KINDS[0]
    st.session_state.w_topics = []
    st.session_state.w_themes = []
    st.session_state.w_unassigned = True
    st.session_state.topic = None
    st.session_state.paper = None
    st.session_state.w_added = False
    st.session_state.w_colour = ""
    st.session_state.notices = []
    st.session_state.link_info = []
    st.session_state.reset_zoom = st.session_state.get("reset_zoom", 0) + 1
    clear_selection()


def switch_map() -> None:
    st.session_state.initialised = None  # the next run starts the new map from its default view


def dismiss_notices() -> None:
    st.session_state.notices = []
    st.session_state.link_info = []


def request_placement() -> None:
    st.session_state.fit_pending = True


def remove_pin() -> None:
    st.session_state.pin = None
