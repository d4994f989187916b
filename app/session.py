"""Session state: the one module that reads or writes `st.session_state`.

The link settings' widget keys come from `app.state.SETTINGS` (one declaration a setting):
`current_state`, `apply_state` and `reset_view` read and write them through it, and widgets take
their key from `widget_key(name)` / `filter_key(column)`. Every other key is one of the named
constants below (the expanders' keys among them: a panel's open state lives in the session too).
The shareable part of this is a `ViewState` (app.state), which `sync_url` keeps in the query string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TypeGuard, TypeVar
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from app.changes import follow_shared_topic
from app.data import MapData
from app.map_component import KEY as MAP_COMPONENT
from app.map_component import PANEL_KEY, TABLE_KEY
from app.palette import colour_columns
from app.place import Placement, PlacementError
from app.selection import selection_text
from app.state import (
    MAP_KEY,
    SESSION_KEY,
    SETTING,
    SETTINGS,
    SORTS,
    ZOOM_KEY,
    Action,
    LinkSetting,
    ViewState,
    Vocabulary,
    normalise_params,
    parse_map,
    parse_selection,
    parse_view,
    step,
    to_params,
)
from app.themes import topics_in_themes

FACET_PREFIX = SESSION_KEY["filters"]
# The map and the view.
MAP_CHOICE = "map_choice"  # the map selector's key: the chosen map's name
INITIALISED = "initialised"  # the map whose view the widgets hold
URL_PARAMS = "url_params"  # the query string the page last wrote or read (normalised): a different one
#                            on a rerun means the reader went Back or Forward in the browser's history
NOTICES = "notices"  # link settings that were ignored, shown until dismissed
LINK_INFO = "link_info"  # what became of a shared link's topic on a rebuilt map (plain text), likewise
# The live map.
RESET_ZOOM = "reset_zoom"  # a counter the map watches to return to the whole map ("Reset view")
FILES_SENT = "atlas_files_sent"  # the files this session's browser already received through the map
BROWSER_STEPS = "browser_steps"  # how many steps the browser drew itself (`browser_steps`)
# Which parts of the page rerun, and what a run keeps for the next (`remembered`).
PARTS_SHOWN = "parts_shown"  # what each part of the page (a keyed fragment) showed when last drawn
PUSH_PARTS = "push_parts"  # the sidebar's parts a step reruns: their widgets' values are written again
CURRENT_VIEW = "current_view"  # the papers in view for the last filters and search (`app.view.page_view`)
SELECTED_ROWS = "selected_rows"  # the rows the last box or lasso selection holds (`app.view.selected_rows`)
NEAREST_PAPERS = "nearest_papers"  # the last opened paper's nearest papers (`app.nearest`)
# Panels.
PLACEMENT = "placement"  # the placed abstract: an `app.place.Placement`, or a `PlacementError`
PLACEMENT_FORM = "placement_form"  # the placement panel's form ...
PASTED = "placement_text"  # ... and its text area: the abstract to place
PLACEMENT_REQUESTED = "placement_requested"  # "Place on the map" was pressed (asked once)
EDIT_NOTICE = "curation_notice"  # what the last edit did (app.curation_panel), shown once on the next run
PLACEMENT_PANEL = "placement_panel"  # the expanders' keys: whether each is open
CHANGES_PANEL = "changes_panel"
ABOUT_PANEL = "about_panel"
EDIT_PANEL = "edit_panel"
T = TypeVar("T")


# --------------------------------------------------------------------------- state <-> widgets <-> URL
def widget_key(name: str) -> str:
    """The session key of the widget that holds the link setting `name` (`app.state.SETTINGS`)."""
    return SESSION_KEY[name]


def filter_key(column: str) -> str:
    """The session key of the filter widget of a metadata column."""
    return FACET_PREFIX + column


def _read(setting: LinkSetting) -> object:
    if setting.prefix:
        keys = sorted(k for k in st.session_state if str(k).startswith(setting.session))
        return tuple(
            (key[len(setting.session) :], setting.state(st.session_state[key]))
            for key in keys
            if st.session_state[key]
        )
    return setting.state(st.session_state.get(setting.session, setting.default))


def _write(setting: LinkSetting, value: object, columns: Mapping[str, object] = {}) -> None:
    """Put a setting's value into its widget's session key; a prefix setting (the filters) sets one
    key a column of `columns` and drops the keys of columns it no longer has."""
    if setting.prefix:
        for key in [k for k in st.session_state if str(k).startswith(setting.session)]:
            del st.session_state[key]
        chosen = dict(value)
        for column in columns:
            st.session_state[setting.session + column] = setting.widget(chosen.get(column, ()))
    else:
        st.session_state[setting.session] = setting.widget(value)


def chosen(name: str) -> object:
    """The current value of one link setting, as `ViewState` holds it."""
    return _read(SETTING[name])


def current_state() -> ViewState:
    return ViewState(**{s.name: _read(s) for s in SETTINGS if s.in_state and s.session})


def apply_state(state: ViewState, data: MapData) -> None:
    """Put a view state into the widgets' session keys (before the widgets are drawn); a placed
    abstract is dropped."""
    _put_state(state, data)
    st.session_state[PLACEMENT] = None


def _put_state(state: ViewState, data: MapData) -> None:
    for setting in SETTINGS:
        if setting.in_state and setting.session:
            _write(setting, getattr(state, setting.name), data.facets)


def choose_map(params: dict[str, list[str]], names: list[str]) -> tuple[str, str | None]:
    """The map to show (a link's on the first run, else the reader's choice, else the first), and the
    name of the one chosen before when its folder is gone."""
    first_run = INITIALISED not in st.session_state
    if first_run:
        st.session_state[MAP_CHOICE], st.session_state[NOTICES] = parse_map(params, names, names[0])
    gone = None
    if st.session_state.get(MAP_CHOICE) not in names:
        gone = None if first_run else st.session_state.get(MAP_CHOICE)
        st.session_state[MAP_CHOICE] = names[0]
    return st.session_state[MAP_CHOICE], gone


def open_view(params: dict[str, list[str]], data: MapData, vocabulary: Vocabulary, gone: str | None) -> None:
    """Start the view: from the link on the first run, from the default view when another map was
    chosen, from the history entry on Back or Forward; say what a link asked for that is not here."""
    first_run = INITIALISED not in st.session_state
    if st.session_state.get(INITIALISED) == data.name and navigated(params, vocabulary):
        follow_link(params, data, vocabulary)  # Back or Forward in the browser
    if st.session_state.get(INITIALISED) != data.name:
        # A link to a previous build's topic that is gone opens where its papers went, saying so.
        followed, link_info = follow_shared_topic(params, data.lineage, data.topics.reset_index(drop=True))
        state, notices = parse_view(followed, vocabulary) if first_run else (ViewState(), [])
        apply_state(state, data)
        st.session_state[NOTICES] = st.session_state.get(NOTICES, []) + notices if first_run else []
        st.session_state[LINK_INFO] = [link_info] if first_run and link_info else []
        st.session_state[INITIALISED] = data.name
    if gone is not None:  # its folder was deleted or moved while this page was open
        st.session_state[LINK_INFO] = [
            *st.session_state.get(LINK_INFO, []),
            f"The map {gone!r} is no longer there (its folder was deleted or moved); showing {data.name!r}.",
        ]


def follow_link(params: dict[str, list[str]], data: MapData, vocabulary: Vocabulary) -> None:
    """The view a history entry's link says, put into the widgets' keys, and what it asked for that is
    not here said (Back or Forward in the browser: Streamlit's rerun, or a view the browser drew again)."""
    state, said = parse_view(params, vocabulary)
    apply_state(state, data)
    st.session_state[NOTICES] = said


def notices() -> tuple[list[str], list[str]]:
    """The link settings that were ignored, and what became of a shared link's topic (plain text)."""
    return st.session_state.get(NOTICES) or [], st.session_state.get(LINK_INFO) or []


def sanitise_state(
    data: MapData, theme_ids: frozenset[int] = frozenset(), sorts: tuple[str, ...] = SORTS[:1]
) -> None:
    """Drop widget values a rebuilt map no longer has, so a widget never sees an unknown option.

    Topics outside the chosen themes are dropped too: the Topics filter offers only those inside.
    """
    key = SESSION_KEY
    themes = [t for t in st.session_state.get(key["themes"], []) if t in theme_ids]
    st.session_state[key["themes"]] = themes
    known = set(topic_options(data, themes))
    st.session_state[key["topics"]] = [t for t in st.session_state.get(key["topics"], []) if t in known]
    # The unassigned switch keeps its value in its own part (`keep_unassigned_switch`), in every run.
    if st.session_state.get(key["sort"]) not in sorts:
        st.session_state[key["sort"]] = SORTS[0]
    for column, values in data.facets.items():
        allowed = set(values)
        st.session_state[filter_key(column)] = [
            v for v in st.session_state.get(filter_key(column), []) if v in allowed
        ]
    if st.session_state.get(key["topic"]) not in data.vocabulary().topic_ids:
        st.session_state[key["topic"]] = None
    if st.session_state.get(key["paper"]) not in data.row_of:
        st.session_state[key["paper"]] = None
    if st.session_state.get(key["colour"]) not in ("", *colour_columns(data.facets)):
        st.session_state[key["colour"]] = ""
    if not data.vocabulary().has_added:
        st.session_state[key["added_only"]] = False
    if parse_selection(st.session_state.get(key["selection"]) or "") is None:
        st.session_state[key["selection"]] = ""


def keep_unassigned_switch() -> str:
    """The unassigned switch's widget key, its value written again first. Its part runs in every run of
    the page and of the sidebar, and alone: so the switch keeps its value through the runs that do not
    draw it (topic and theme views; Streamlit drops a widget's value then)."""
    key = SESSION_KEY["show_unassigned"]
    st.session_state[key] = bool(st.session_state.get(key, True))
    return key


def topic_options(data: MapData, themes: list[int] | tuple[int, ...]) -> list[int]:
    """What the Topics filter offers: the topics of the chosen themes (all without), largest first,
    then "Unassigned" (-1) when the map has such papers."""
    inside = set(topics_in_themes(data.topics, themes)) if themes else None
    options = [t for t in data.topic_order if inside is None or t in inside]
    return options + ([-1] if data.sizes.get(-1) else [])


def view_key(state: ViewState) -> tuple:
    """The settings that decide which papers are in view (filters and search): `current_view`'s key."""
    return (
        state.search,
        state.topics,
        state.show_unassigned,
        state.filters,
        state.themes,
        state.added_only,
    )


# --------------------------------------------------------------------------- which parts of the page rerun
# The page's keyed fragments (streamlit_app.py; "themes", "topics", "facets" and "unassigned", the sidebar's
# filters and switch, are inside "sidebar"; "curation", the opened topic's edit forms, inside "map"), and the
# settings each part's widgets show.
INSIDE_SIDEBAR = ("themes", "topics", "facets", "unassigned")
PARTS = ("sidebar", *INSIDE_SIDEBAR, "header", "map", "curation", "results", "downloads")
PART_SETTINGS = {
    "sidebar": ("search", "added_only"),
    "themes": ("themes",),
    "topics": ("topics",),
    "facets": ("filters",),
    "unassigned": ("show_unassigned",),  # written again on every run anyway (`keep_unassigned_switch`)
}
INSIDE = {"sidebar": INSIDE_SIDEBAR, "map": ("curation",)}  # drawn again with the part they are in
# The parts a step the browser drew itself stands for (js/steps.js): the map beside its topic panel, and
# the papers table.
BROWSER_PARTS = ("map", "results")


def part_keys() -> dict[str, tuple]:
    """What each part of the page shows, as far as the session state decides it: a step reruns the
    parts whose key it changed (`rerun_changed`). The sidebar's parts' keys are (their shape, their
    widgets' values): a filter set from the map's key or by Back reruns only its own widget."""
    state = current_state()
    view = view_key(state)
    selection = state.selection
    opened = state.topic  # the downloads hold an opened topic's papers, a paper opened from it too
    said = tuple(map(tuple, notices()))
    # The header's sentence is the browser's for the link's view (js/header.js): the server sends it the
    # search's hits, and the notices.
    searched = " ".join(state.search.split())
    # The topic panel opens and closes topics in the browser, which follows the link: the map's part
    # reruns for one only where a paper is open (the map narrows to its topic); the edit forms of the
    # opened topic (where editing is on) are a part of their own.
    paper = state.paper is not None
    return {
        "sidebar": ((), (state.search, state.added_only)),
        "themes": ((), state.themes),
        "topics": ((state.themes,), state.topics),  # the topics offered are the chosen themes'
        "facets": ((), state.filters),
        # hidden in a topic or theme view
        "unassigned": ((bool(state.topics or state.themes),), state.show_unassigned),
        "header": (searched, said),
        "map": (state if paper else replace(state, topic=None), reset_zoom()),
        "curation": (None if paper else state.topic,),
        # The papers table narrows to an opened topic, pages and sorts in the browser (js/table.js).
        "results": (view, selection),
        "downloads": (view, opened, selection),
    }


def part_shown(name: str) -> None:
    """Keep what part `name` shows as it is drawn (see `rerun_changed`)."""
    st.session_state.setdefault(PARTS_SHOWN, {})[name] = part_keys()[name]


def rerun_changed(from_sidebar: bool = False) -> None:
    """In a step's callback: rerun only the parts of the page whose content the step changed.

    A sidebar widget already shows its new value: then its part reruns only when its shape changes
    (the search box's hint, the topics the Topics filter offers, the unassigned switch hidden in a
    topic or theme view). Each filter is a part of its own inside the sidebar's, so a filter set
    elsewhere (the map's key, Back in the browser) reruns only its widget. Nothing changed: the
    widget's own part reruns (Streamlit's default). In the run of a Back or Forward in the browser (a
    table's selection may fire as the view changes), the whole page reruns and follows the link.
    """
    if _history_run():
        return
    shown = st.session_state.get(PARTS_SHOWN, {})
    now = part_keys()
    if from_sidebar:  # (shape, value): the widgets show their values already
        for part in PART_SETTINGS:
            if part in shown:
                shown[part] = (shown[part][0], now[part][1])
    changed = [part for part in PARTS if part in shown and shown[part] != now[part]]
    pushed = [part for part in changed if part in PART_SETTINGS]
    if "sidebar" in changed:
        pushed = list(PART_SETTINGS)
    inside = {part for outer in changed for part in INSIDE.get(outer, ())}
    changed = [part for part in changed if part not in inside]  # drawn again inside the part they are in
    st.session_state[PUSH_PARTS] = set(pushed)
    if changed:
        st.rerun(changed)


def push_part(part: str) -> None:
    """Before a sidebar part's widgets are drawn in a rerun a step asked for: write their values again,
    so each widget shows its value even where the browser still holds one the part never drew back (a
    search typed while the sidebar did not rerun, then cleared by Reset view)."""
    pushed = st.session_state.get(PUSH_PARTS) or set()
    if part not in pushed:
        return
    pushed.discard(part)
    for name in PART_SETTINGS[part]:
        prefix = SESSION_KEY[name]
        keys = (
            [k for k in st.session_state if str(k).startswith(prefix)] if SETTING[name].prefix else [prefix]
        )
        for key in keys:
            if key in st.session_state:
                st.session_state[key] = st.session_state[key]


def _history_run() -> bool:
    """Whether this run is Streamlit's rerun for a Back or Forward in the browser's history."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "is_history_navigation", False))


def navigated(params: dict[str, list[str]], vocabulary: Vocabulary) -> bool:
    """Whether the reader went Back or Forward in the browser to a view other than the one shown.

    Streamlit pushes a history entry for each query string the app writes, and on Back or Forward
    reruns the script with that entry's query string, saying so (`is_history_navigation`); the view
    then follows the link. Only such runs count: an ordinary rerun may carry a query string a step
    old (the page sends it before the last run's new one arrives). The view shown is the session's,
    not the link the server wrote last: a run cut short by the next Back or Forward may have left that
    on this entry's link over another view. The zoom (`view=`) does not count.
    """
    return _history_run() and parse_view(_without_zoom(params), vocabulary)[0] != current_state()


def link_params() -> dict[str, list[str]]:
    """The query string the browser sent with this run, normalised (`app.state.normalise_params`)."""
    return normalise_params({key: st.query_params.get_all(key) for key in st.query_params})


def sync_url(state: ViewState, map_name: str | None, params: dict[str, list[str]]) -> None:
    """Write the view into the query string when it changed (a new browser history entry, so Back
    undoes it); the map's zoom (`view=`), which the browser writes, is kept as it is."""
    wanted = normalise_params(to_params(state, map_name))
    st.session_state[URL_PARAMS] = wanted
    if _without_zoom(params) != wanted:
        zoom = params.get(ZOOM_KEY)  # the browser corrects it to the current zoom (map.js, keepZoomInUrl)
        st.query_params.from_dict({**wanted, ZOOM_KEY: zoom} if zoom else wanted)


def _without_zoom(params: dict[str, list[str]]) -> dict[str, list[str]]:
    return {key: values for key, values in params.items() if key != ZOOM_KEY}


# --------------------------------------------------------------------------- callbacks
# Each step's callback changes the session state, then reruns only the parts it changed.
def take_step(action: Action, theme_of: Mapping[int, int] = {}) -> ViewState:
    """The reading step `action` (`app.state.step`, the browser's own rule too) taken: each setting it
    changes written into its widget's session key."""
    before = current_state()
    after = step(before, action, theme_of)
    for setting in SETTINGS:
        value = getattr(after, setting.name, None)
        if not (setting.in_state and setting.session) or getattr(before, setting.name) == value:
            continue
        if setting.prefix:  # one key a column whose values changed
            old, new = dict(before.filters), dict(after.filters)
            for column in {*old, *new}:
                if old.get(column) != new.get(column):
                    st.session_state[filter_key(column)] = list(new.get(column, ()))
        else:
            _write(setting, value)
    return after


def open_paper(doc_id: str | None) -> None:
    take_step({"kind": "paper", "paper": doc_id})
    rerun_changed()


def open_topic(topic: int | None) -> None:
    """The server's step to a topic (or the list): its link written here, which the topic panel follows
    (the map's part reruns for it only where a paper closes, `part_keys`; the edit forms follow it)."""
    write_link(take_step({"kind": "topic", "topic": topic}))
    rerun_changed()


def sidebar_changed(data: MapData) -> None:
    """A sidebar widget (search, filters) changed its value; topics outside the chosen themes are
    dropped (the Topics filter offers only those inside).

    The step (a filter, a search) is drawn by the browser, as the steps taken on the map are, where
    it opens no paper (an abstract and its nearest papers are the server's): the link is written
    here, and the map, the topic list and the papers table follow it from the page's facts (js/links.js
    `linkChanged`; a search's hits come with the header's state, js/page.js `onFacts`); the server
    draws what it owns (the sidebar's widgets, the header's state, the downloads)."""
    known = set(topic_options(data, st.session_state.get(SESSION_KEY["themes"]) or []))
    topics = st.session_state.get(SESSION_KEY["topics"]) or []
    st.session_state[SESSION_KEY["topics"]] = [t for t in topics if t in known]
    state, shown, now = current_state(), st.session_state.get(PARTS_SHOWN, {}), part_keys()
    # Streamlit may call the callback where nothing changed, or in its run for Back or Forward: no step.
    moved = shown.get("map", now["map"]) != now["map"] and not _history_run()
    if moved and state.paper is None:
        _count_drawn()
        write_link(state)
    rerun_changed(from_sidebar=True)


def write_link(state: ViewState) -> None:
    """The view's link written in a step's callback, for a step the map's part (which writes it
    otherwise) may not rerun for; the map's name as the page last wrote it."""
    named = st.session_state.get(URL_PARAMS, {}).get(MAP_KEY)
    sync_url(state, named[0] if named else None, link_params())


def on_paper_click(data: MapData, points_url: str, component: str = MAP_COMPONENT) -> None:
    """A paper clicked: a point on the map, or, by `component`, a row of the papers table
    (`TABLE_KEY`), or a paper of the topic panel's lists (`PANEL_KEY`: a topic's central papers, an
    opened paper's nearest), or chosen there with the keyboard; no row (None): the opened paper closed
    (Escape or the panel's "Back to …", where the browser kept no view to go back to: js/history.js
    `closePaper`). An event of another map, or a row out of range, is ignored."""
    value = map_event("click", component)
    if not value or value.get("map") != points_url:
        return
    row = value.get("row")
    if row is None and "row" in value and current_state().paper is not None:
        open_paper(None)  # back to the topic it was opened from, or to the list
    elif type(row) is int and 0 <= row < data.n:
        open_paper(str(data.doc_ids[row]))


def on_map_select(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary]) -> None:
    """A box or lasso drawn on the map (or cleared): kept as the link writes it (`app.selection`).
    With the link the browser wrote for it (js/select.js), the step is that link (`follow_step`)."""
    value = map_event("select")
    if not value or value.get("map") != points_url:
        return
    shape = value.get("shape")
    st.session_state[SESSION_KEY["selection"]] = selection_text(shape) if isinstance(shape, dict) else ""
    follow_step(data, vocabulary, value.get("query"), value.get("drawn"))
    rerun_changed()


def _is_query(query: object) -> TypeGuard[str]:
    """Whether an event's `query` is a query string the browser could have written for a step it drew."""
    return isinstance(query, str) and len(query) < 10_000


def on_table_clear(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary]) -> None:
    """The papers table's "Clear selection" (with the link the browser wrote for it, js/select.js:
    `follow_step`)."""
    value = map_event("clear", TABLE_KEY)
    if value and value.get("map") == points_url:
        take_step({"kind": "select", "selection": ""})
        follow_step(data, vocabulary, value.get("query"), value.get("drawn"))
        rerun_changed()


def on_row_pick(key: str, doc_ids: list[str]) -> None:
    rows = st.session_state[key].selection.rows
    open_paper(doc_ids[rows[0]] if rows else None)


def on_topic_pick(key: str, topic_ids: list[int]) -> None:
    rows = st.session_state[key].selection.rows
    open_topic(topic_ids[rows[0]] if rows else None)


def _panel_event(name: str, points_url: str) -> dict | None:
    value = map_event(name, PANEL_KEY)
    return value if value and value.get("map") == points_url else None


def on_paper_topic(data: MapData, points_url: str) -> None:
    """The opened paper's "Open topic" in the panel: the paper closes, its topic opens (the server's step:
    the map, narrowed to the paper's view, is drawn again)."""
    value = _panel_event("paper_topic", points_url)
    topic = value.get("topic") if value else None
    if type(topic) is int and topic in data.vocabulary().topic_ids:
        open_topic(topic)


def on_panel_topic(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary]) -> None:
    """The topic panel opened a topic, or went back to the list (a click or a key): the header and the
    downloads follow; the map and the papers table show it already.

    The panel wrote the address bar itself (a new history entry): the view is that link's
    (`follow_step`), kept as the query string, so Streamlit adds no entry of its own. The panel drew
    the topic alone: where the link's view differs from the server's in more (a step of the server's
    it has not taken yet), the map and the table follow it too."""
    value = _panel_event("topic", points_url)
    if value is None:
        return
    topic, query = value.get("topic"), value.get("query")
    if (
        topic is not None and (type(topic) is not int or topic not in data.vocabulary().topic_ids)
    ) or not _is_query(query):
        return
    follow_step(data, vocabulary, query, drawn=False)
    rerun_changed()


def _keep_query(query: str) -> None:
    """The address bar's query as the browser wrote it for a step it drew itself (a new history
    entry, or the one Back or Forward went to): kept as the query string, so that Streamlit adds no
    entry of its own."""
    params = _query_params(query)
    st.session_state[URL_PARAMS] = _without_zoom(params)
    st.query_params.from_dict(params)


def _query_params(query: str) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {}
    for key, item in parse_qsl(query, keep_blank_values=True):
        params.setdefault(key, []).append(item)
    return params


def view_link() -> str:
    """The view's link as the server writes it, without the map's name and the zoom: the browser keeps
    the map's, the topic panel's and the papers table's states by it (js/links.js, `keepView`), to draw
    Back or Forward to this view again itself (`on_map_history`)."""
    return urlencode(normalise_params(to_params(current_state(), None)), doseq=True)


def on_map_history(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary]) -> None:
    """Back or Forward in the browser went to a view the browser drew itself (js/history.js
    `historyStep`: from the page's facts, or from the states it kept for the link): the view follows
    the entry's link as Streamlit's rerun of it would (`open_view`), and the server draws again only
    what it owns (the sidebar, the header, the downloads, an opened topic's edit forms). The link is
    kept as the query string (Streamlit adds no entry); the next states sent differ from those the
    page holds (`BROWSER_STEPS`), so the parts follow them."""
    value = map_event("history") or {}
    query = value.get("query")
    if value.get("map") != points_url or not _is_query(query):
        return
    follow_link(_without_zoom(_query_params(query)), data, vocabulary())
    _drawn_in_browser(query)
    # To or from an opened paper in the same view nothing else changed: the map's part reruns (Streamlit's
    # default for its event; a rerun of the header alone instead lost the next of two quick Forwards).
    rerun_changed()


def follow_step(
    data: MapData, vocabulary: Callable[[], Vocabulary], query: object, drawn: object = True
) -> None:
    """A step of the browser's comes with the link it wrote (`query`; none: the server's step, taken
    here): the view is that link's, read as any link is (`parse_view`; what it ignores was said when
    the address bar got it). Where the browser drew it itself (`drawn`), the parts it drew count as
    drawn (`BROWSER_PARTS`); else they follow the link's view. The browser alone decides
    which steps it draws (js/steps.js `browserDraws`)."""
    if not _is_query(query):
        return
    state, _ = parse_view(_without_zoom(_query_params(query)), vocabulary())
    _put_state(state, data)
    if drawn is False:
        _keep_query(query)
    else:
        _drawn_in_browser(query)


def _drawn_in_browser(query: str) -> None:
    """A step the browser drew itself (`_count_drawn`), the link it wrote (or went to) kept as the query
    string, so that Streamlit adds no entry of its own."""
    _count_drawn()
    _keep_query(query)


def _count_drawn() -> None:
    """The browser draws the step in its parts (`BROWSER_PARTS`): they count as drawn, so they do not
    rerun; the next states sent differ from those the page holds (`BROWSER_STEPS`), so the parts follow
    them."""
    shown, now = st.session_state.setdefault(PARTS_SHOWN, {}), part_keys()
    for part in BROWSER_PARTS:
        shown[part] = now[part]
    st.session_state[BROWSER_STEPS] = browser_steps() + 1


def on_panel_only(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary]) -> None:
    """Topics kept alone: ticked in the panel's list, or its "Only this topic" (none: every topic again).
    The step is the link the browser wrote for it (`query`, `follow_step`), drawn by the browser itself
    where it says so (`drawn`, js/steps.js)."""
    value = _panel_event("only", points_url)
    topics = value.get("topics") if value else None
    ids = data.vocabulary().topic_ids
    if not isinstance(topics, list) or not all(type(t) is int and t in ids for t in topics):
        return
    take_step({"kind": "topics", "topics": topics}, data.topic_themes())
    follow_step(data, vocabulary, value.get("query"), value.get("drawn"))
    rerun_changed()


def on_panel_values(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary]) -> None:
    """Values of a filterable column toggled in the topic list (none: every value again): that column's
    filter. The step is the link the browser wrote for it (`query`, `follow_step`), drawn by the browser
    itself where it says so (`drawn`, js/steps.js)."""
    value = _panel_event("values", points_url)
    column = value.get("column") if value else None
    if column not in data.facets:
        return
    options, codes = data.facets[column], value.get("values")
    if not isinstance(codes, list) or not all(type(c) is int and 0 <= c < len(options) for c in codes):
        return
    take_step({"kind": "values", "column": column, "values": [options[c] for c in codes]})
    follow_step(data, vocabulary, value.get("query"), value.get("drawn"))
    rerun_changed()


def on_panel_sort(points_url: str) -> None:
    value = _panel_event("sort", points_url)
    if value and value.get("sort") in SORTS:
        st.session_state[SESSION_KEY["sort"]] = value["sort"]
        rerun_changed()


def on_legend_pick(data: MapData, points_url: str, vocabulary: Callable[[], Vocabulary], colour: str) -> None:
    """The map's key was clicked: show only that theme (or, coloured by `colour`, only that value of
    the column); the entry shown alone, clicked again, or "Show all" (a null pick): everything again.
    The step is the link the browser wrote for it (`query`, `follow_step`), drawn by the browser itself
    where it says so (`drawn`, js/steps.js)."""
    value = map_event("legend") or {}
    pick = value.get("theme", value.get("value"))
    if value.get("map") != points_url or not (pick is None or type(pick) is int):
        return
    if "theme" in value:
        options = [] if data.themes is None else data.themes["theme_id"].tolist()
        chosen = pick if pick in options else None
        action: Action = {"kind": "key", "theme": chosen}
    elif "value" in value and colour in data.facets:
        options = data.facets[colour]
        chosen = options[pick] if pick is not None and 0 <= pick < len(options) else None
        action = {"kind": "key", "column": colour, "value": chosen}
    else:
        return
    if pick is not None and chosen is None:
        return  # not an entry of this map's key
    take_step(action, data.topic_themes())
    follow_step(data, vocabulary, value.get("query"), value.get("drawn"))
    rerun_changed()  # the header, the downloads and the sidebar's filter follow (the map and table too, from the server)


def reset_view() -> None:
    """Every link setting back to its default (but the topic list's order), notices dismissed, the
    map back to its opening view, the selection dropped."""
    take_step({"kind": "reset"})
    st.session_state[NOTICES] = []
    st.session_state[LINK_INFO] = []
    st.session_state[RESET_ZOOM] = st.session_state.get(RESET_ZOOM, 0) + 1
    rerun_changed()


def switch_map() -> None:
    st.session_state[INITIALISED] = None  # the next run starts the new map from its default view
    st.rerun()  # the whole page, even from the sidebar's own part


def dismiss_notices() -> None:
    st.session_state[NOTICES] = []
    st.session_state[LINK_INFO] = []
    rerun_changed()


def request_placement() -> None:
    st.session_state[PLACEMENT_REQUESTED] = True


def remove_placement() -> None:
    st.session_state[PLACEMENT] = None


# --------------------------------------------------------------------------- what panels keep between runs
def map_event(name: str, component: str = MAP_COMPONENT) -> dict | None:
    """The live map's trigger value `name` ("click", "select" or "legend"; the topic panel's, `PANEL_KEY`:
    "topic", "only", "values", "sort", "click" or "paper_topic"; the papers table's, `TABLE_KEY`: "click"
    or "clear") inside an `on_*_change` callback."""
    value = (st.session_state.get(component) or {}).get(name)
    return value if isinstance(value, dict) else None


def files_sent() -> set[str]:
    """Files this session's browser already received through the map component (read-only static/)."""
    return st.session_state.setdefault(FILES_SENT, set())


def browser_steps() -> int:
    """How many steps the browser drew itself (`_count_drawn`), sent to the map, the topic panel and the
    papers table. Streamlit does not hand a component a state equal to the last one it sent (a probe: a
    rerun with the same data calls the component's function no more), yet after steps the browser drew
    the part may show something else (an opened paper closed in the browser, then opened again by the
    server, is the state sent before it): so counted, the next state is never the one sent before."""
    return st.session_state.get(BROWSER_STEPS, 0)


def reset_zoom() -> int:
    """How many times "Reset view" was pressed: the live map takes its opening view when it moves."""
    return st.session_state.get(RESET_ZOOM, 0)


def placement() -> Placement | PlacementError | None:
    """The placed abstract (`app.place`), or why it was not placed; None when there is none."""
    return st.session_state.get(PLACEMENT)


def set_placement(value: Placement | PlacementError | None) -> None:
    st.session_state[PLACEMENT] = value


def pasted_abstract() -> str:
    return (st.session_state.get(PASTED) or "").strip()


def placement_requested() -> bool:
    """Whether "Place on the map" was pressed since the last run (asked once)."""
    return bool(st.session_state.pop(PLACEMENT_REQUESTED, False))


def remembered(name: str, key: object, compute: Callable[[], T]) -> T:
    """`compute()`, kept under `name` for as long as `key` stays the same (one answer a name)."""
    kept = st.session_state.get(name)
    if kept and kept[0] == key:
        return kept[1]
    answer = compute()
    st.session_state[name] = (key, answer)
    return answer


def set_edit_notice(kind: str, text: str) -> None:
    """What the last edit did ("ok") or why it was refused ("error"), for the next run."""
    st.session_state[EDIT_NOTICE] = (kind, text)


def take_edit_notice() -> tuple[str, str] | None:
    return st.session_state.pop(EDIT_NOTICE, None)
