"""The topic panel's events (`app.session.on_panel_*`): what each changes in the session, which parts
of the page it reruns (the header and the table follow an opened topic; the map's part, which the
browser already changed, does not), and which events it ignores. The browser side: test_browser_panel."""

from __future__ import annotations

import contextlib
from functools import partial

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from app import session
from app.data import build_map_data
from app.map_component import KEY as MAP_KEY
from app.map_component import PANEL_KEY, TABLE_KEY
from app.view import view_vocabulary
from pipeline.mapfolder.store import write_map
from tests.helpers import themed_map

MAP = "app/static/atlas/points-this.bin.gz"
TOPIC, TOPICS, SORT, PAPER, SELECTION = (
    session.widget_key(n) for n in ("topic", "topics", "sort", "paper", "selection")
)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("panel") / "themed"
    write_map(folder, themed_map(names=("Generative", "Structure")))
    return build_map_data("themed", folder)


def vocabulary(data):
    """What a link may choose on the map (no topic's growth measured: one order offered)."""
    return view_vocabulary(data, pd.Series(np.nan, index=data.topics["topic_id"]))


pytestmark = pytest.mark.usefixtures("fresh_session")  # each test starts from an empty session


def send(name: str, **event) -> None:
    st.session_state[PANEL_KEY] = {name: {"map": MAP, **event}}


def test_opening_a_topic_in_the_panel_changes_the_downloads_key_not_the_map_s_nor_the_header_s(data):
    st.session_state[TOPIC] = None
    st.session_state[session.widget_key("search")] = "diffusion"
    before = session.part_keys()
    send("topic", topic=1, query="q=diffusion&topic=1")
    session.on_panel_topic(data, MAP, partial(vocabulary, data))
    after = session.part_keys()
    assert st.session_state[TOPIC] == 1
    assert after["map"] == before["map"]  # the browser shows it already: the map's part does not rerun
    assert after["header"] == before["header"]  # its sentence is the browser's (js/header.js)
    assert after["downloads"] != before["downloads"]
    assert after["results"] == before["results"]  # the papers table narrows to it in the browser
    assert st.session_state[session.URL_PARAMS] == {"q": ["diffusion"], "topic": ["1"]}  # the link it wrote
    send("topic", topic=None, query="q=diffusion")
    session.on_panel_topic(data, MAP, partial(vocabulary, data))
    assert st.session_state[TOPIC] is None and session.part_keys()["map"] == before["map"]


def test_a_topic_opened_from_a_view_the_server_has_not_followed_yet_is_the_link_s_view(data):
    """The panel's link says more than the topic (a step the server has not taken yet, a run cut short
    by a storm's steps): the view is the link's, and the map's and the table's parts follow it, so the
    header never says one view over a link that says another."""
    st.session_state[TOPIC] = None
    before = session.part_keys()
    send("topic", topic=1, query="theme=0&topic=1")
    session.on_panel_topic(data, MAP, partial(vocabulary, data))
    assert session.current_state().themes == (0,) and st.session_state[TOPIC] == 1
    after = session.part_keys()
    assert after["map"] != before["map"] and after["results"] != before["results"]
    assert st.session_state[session.URL_PARAMS] == {"theme": ["0"], "topic": ["1"]}


def test_a_topic_opened_or_closed_alone_reruns_the_map_s_part_only_with_a_paper_open(data, monkeypatch):
    """The topic panel, the browser's, opens and closes topics and follows the link: the map's part does
    not rerun for the opened topic alone, but where a paper is open (the map narrows to its topic). The
    opened topic's edit forms (where editing is on) are a part of their own: they follow the topic alone,
    and are drawn again inside the map's part where it reruns."""
    reruns = []
    monkeypatch.setattr(st, "rerun", reruns.append)
    st.session_state[TOPIC] = 1
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())  # editing on: the edit forms shown
    st.session_state[TOPIC] = None
    session.rerun_changed()
    assert reruns[-1] == ["curation", "downloads"]  # the map's part does not rerun
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    st.session_state[PAPER] = "doc0001"
    st.session_state[TOPIC] = 2
    session.rerun_changed()
    assert "map" in reruns[-1] and "curation" not in reruns[-1]  # drawn again inside the map's part
    assert session.part_keys()["curation"] == (None,)  # no edit forms beside an opened paper


def test_a_topic_the_server_opens_writes_its_link_which_the_panel_follows(data):
    """A topic opened by the server's step (a topic picked in "What changed", "Open topic" from a paper):
    its link written in the step's callback, since the map's part, which writes it otherwise, does not
    rerun for a topic alone."""
    st.session_state[TOPIC] = None
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    with contextlib.suppress(Exception):  # st.rerun of the downloads, outside a script run here
        session.open_topic(2)
    assert st.session_state[TOPIC] == 2
    assert st.session_state[session.URL_PARAMS] == {"topic": ["2"]}
    assert st.session_state[session.PARTS_SHOWN]["map"] == session.part_keys()["map"]


@pytest.mark.parametrize(
    "event",
    [
        {"topic": 99, "query": "topic=99"},  # not a topic of this map
        {"topic": "1", "query": "topic=1"},
        {"topic": True, "query": ""},
        {"topic": 1, "query": None},
        {"topic": 1, "query": "topic=1", "map": "app/static/atlas/points-other.bin.gz"},  # another map's
    ],
)
def test_malformed_or_foreign_panel_events_change_nothing(data, event):
    st.session_state[TOPIC] = None
    send("topic", **event)
    session.on_panel_topic(data, MAP, partial(vocabulary, data))
    assert st.session_state[TOPIC] is None and session.URL_PARAMS not in st.session_state


def test_only_this_topic_order_and_a_central_paper(data):
    send("only", topics=[1])
    session.on_panel_only(data, MAP, partial(vocabulary, data))
    assert st.session_state[TOPICS] == [1]
    send("only", topics=[42])
    session.on_panel_only(data, MAP, partial(vocabulary, data))
    assert st.session_state[TOPICS] == [1]
    send("sort", sort="rising")
    session.on_panel_sort(MAP)
    assert st.session_state[SORT] == "rising"
    send("sort", sort="fastest")
    session.on_panel_sort(MAP)
    assert st.session_state[SORT] == "rising"
    send("click", row=5)
    session.on_paper_click(data, MAP, PANEL_KEY)
    assert st.session_state[session.widget_key("paper")] == str(data.doc_ids[5])


@pytest.mark.parametrize("component", [MAP_KEY, TABLE_KEY, PANEL_KEY])
def test_a_paper_clicked_anywhere_opens_and_other_maps_rows_are_ignored(data, component):
    """A point on the map, a row of the papers table, a paper of the panel's lists (a topic's central
    papers, an opened paper's nearest): one handler (`on_paper_click`), reading the event of its own instance only."""
    st.session_state[PAPER] = None
    st.session_state[component] = {"click": {"map": "app/static/atlas/points-other.bin.gz", "row": 3}}
    session.on_paper_click(data, MAP, component)
    assert st.session_state[PAPER] is None  # a stale event of another map's
    for row in (-1, data.n, "3", 2.0, True):
        st.session_state[component] = {"click": {"map": MAP, "row": row}}
        session.on_paper_click(data, MAP, component)
        assert st.session_state[PAPER] is None, row
    other = next(key for key in (MAP_KEY, TABLE_KEY) if key != component)
    st.session_state[other] = {"click": {"map": MAP, "row": 4}}  # another instance's event: not this one's
    st.session_state[component] = {"click": {"map": MAP, "row": 3}}
    session.on_paper_click(data, MAP, component)
    assert st.session_state[PAPER] == str(data.doc_ids[3])


def test_escape_closes_the_opened_paper_back_to_the_topic_it_was_opened_from(data):
    """The map's "click" with no row (Escape, js/atlas_map.js): the opened paper closed, the topic it was
    opened from still open (as its "Back to …" button does); another map's, or with no paper open,
    changes nothing."""
    st.session_state[session.widget_key("topic")] = 2
    st.session_state[PAPER] = str(data.doc_ids[3])
    st.session_state[MAP_KEY] = {"click": {"map": "app/static/atlas/points-other.bin.gz", "row": None}}
    session.on_paper_click(data, MAP)
    assert st.session_state[PAPER] == str(data.doc_ids[3])
    st.session_state[MAP_KEY] = {"click": {"map": MAP, "row": None}}
    session.on_paper_click(data, MAP)
    assert st.session_state[PAPER] is None and st.session_state[session.widget_key("topic")] == 2
    session.on_paper_click(data, MAP)  # again, nothing open: nothing changes
    assert st.session_state[PAPER] is None and st.session_state[session.widget_key("topic")] == 2


def test_an_opened_paper_s_open_topic_closes_it_and_opens_its_topic(data):
    """The panel's "paper_topic" ("Open topic" beside an opened paper): the paper closed, the topic
    open; another map's event, or a topic the map does not have, changes nothing."""
    st.session_state[TOPIC] = None
    st.session_state[PAPER] = str(data.doc_ids[3])
    topic = int(data.topic_ids[3])
    for event in (
        {"map": "app/static/atlas/points-other.bin.gz", "topic": topic},
        {"map": MAP, "topic": 999},
        {"map": MAP, "topic": str(topic)},
        {"map": MAP},
    ):
        st.session_state[PANEL_KEY] = {"paper_topic": event}
        with contextlib.suppress(Exception):  # st.rerun of the parts, outside a script run here
            session.on_paper_topic(data, MAP)
        assert st.session_state[PAPER] == str(data.doc_ids[3]) and st.session_state[TOPIC] is None, event
    st.session_state[PANEL_KEY] = {"paper_topic": {"map": MAP, "topic": topic}}
    with contextlib.suppress(Exception):
        session.on_paper_topic(data, MAP)
    assert st.session_state[PAPER] is None and st.session_state[TOPIC] == topic


def test_the_papers_table_s_clear_selection_drops_the_selection(data):
    st.session_state[SELECTION] = "box:0,1,0,1"
    st.session_state[TABLE_KEY] = {"clear": {"map": "app/static/atlas/points-other.bin.gz"}}
    session.on_table_clear(data, MAP, partial(vocabulary, data))
    assert st.session_state[SELECTION] == "box:0,1,0,1"
    st.session_state[TABLE_KEY] = {"clear": {"map": MAP}}
    session.on_table_clear(data, MAP, partial(vocabulary, data))
    assert st.session_state[SELECTION] == ""


def test_back_to_a_view_the_browser_kept_follows_its_link_and_counts_the_map_and_table_as_drawn(data):
    """The map's "history" event (js/history.js, `redrawView`): the session takes the entry's link as
    Streamlit's rerun for Back would; the map's and the table's parts count as drawn (the browser drew
    them again from the states it kept), the header's does not; the next states sent differ from those
    the page holds (`browser_steps`); an event from another map, or without a link, changes nothing."""
    themes, search = session.widget_key("themes"), session.widget_key("search")
    st.session_state[themes] = [1]
    shown = st.session_state.setdefault(session.PARTS_SHOWN, {})
    shown.update(session.part_keys())
    picks = session.browser_steps()
    for event in ({"map": "app/static/atlas/points-other.bin.gz", "query": "q=diffusion"}, {"map": MAP}):
        st.session_state[MAP_KEY] = {"history": event}
        session.on_map_history(data, MAP, partial(vocabulary, data))
        assert st.session_state[themes] == [1] and session.browser_steps() == picks  # not this map's, no link
    st.session_state[MAP_KEY] = {"history": {"map": MAP, "query": "q=diffusion&view=0,1,0,1"}}
    with contextlib.suppress(Exception):  # st.rerun of the other parts, outside a script run here
        session.on_map_history(data, MAP, partial(vocabulary, data))
    assert st.session_state[themes] == [] and st.session_state[search] == "diffusion"
    now = session.part_keys()
    assert shown["map"] == now["map"] and shown["results"] == now["results"]  # the browser's drawing
    assert shown["header"] != now["header"] and shown["downloads"] != now["downloads"]  # the server's to draw
    assert session.browser_steps() == picks + 1
    assert st.session_state[session.URL_PARAMS] == {"q": ["diffusion"]}  # kept as the query, the zoom aside


def test_back_to_a_kept_view_with_editing_on_reruns_the_edit_forms_not_the_map(data, monkeypatch):
    """Where editing is on, Back to a view the browser kept with another topic open: the map and the
    table count as drawn by the browser; the edit forms (the server's) follow the entry's topic."""
    reruns = []
    monkeypatch.setattr(st, "rerun", reruns.append)
    st.session_state[TOPIC] = 0
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    st.session_state[MAP_KEY] = {"history": {"map": MAP, "query": "topic=1"}}
    session.on_map_history(data, MAP, partial(vocabulary, data))
    assert st.session_state[TOPIC] == 1
    assert "curation" in reruns[-1] and "map" not in reruns[-1] and "results" not in reruns[-1]


def test_a_box_the_browser_showed_is_its_link(data):
    """The map's "select" event with the link the browser wrote (js/select.js): the view is that link's,
    read as any link is (the map's name and the zoom aside); the map's and the table's parts count as
    drawn, the header's does not. Without a link the box is the server's: kept as the shape says, and
    the map's and the table's parts drawn by the server."""
    shown = st.session_state.setdefault(session.PARTS_SHOWN, {})
    for query, selection, drawn in (
        ("map=themed&select=box%3A0%2C1%2C0%2C1&view=0,2,0,2", "box:0,1,0,1", True),
        ("select=box%3A0%2C1%2C0%2C1&topics=1", "box:0,1,0,1", True),  # the link's topics too
        (None, "box:0,1,0,1", False),  # the server's step
    ):
        st.session_state[SELECTION], st.session_state[TOPICS] = "", []
        shown.update(session.part_keys())
        picks = session.browser_steps()
        shape = {"box": [0.0, 1.0, 0.0, 1.0]}
        event = {"map": MAP, "shape": shape} | ({} if query is None else {"query": query, "rows": 7})
        st.session_state[MAP_KEY] = {"select": event}
        with contextlib.suppress(Exception):  # st.rerun of the other parts, outside a script run here
            session.on_map_select(data, MAP, partial(vocabulary, data))
        now = session.part_keys()
        assert st.session_state[SELECTION] == selection
        assert st.session_state[TOPICS] == ([1] if query and "topics" in query else [])
        assert (shown["map"] == now["map"] and shown["results"] == now["results"]) == drawn, query
        assert session.browser_steps() == picks + drawn
        assert shown["header"] == now["header"]  # the browser's sentence counts the box itself (js/header.js)
        assert shown["downloads"] != now["downloads"]  # the server's to draw, always


def test_a_selection_the_browser_dropped_is_its_link(data):
    """ "Clear selection" in the table, or the map's own deselection, with the link the browser wrote
    for the view it kept without the box: the box is dropped, the view is the link's, and the map's and the table's parts count as drawn; without a link,
    the server draws them."""
    shown = st.session_state.setdefault(session.PARTS_SHOWN, {})
    for component, event in ((TABLE_KEY, "clear"), (MAP_KEY, "select")):
        for query, drawn in ((None, False), ("", True)):
            st.session_state[SELECTION] = "box:0,1,0,1"
            shown.update(session.part_keys())
            picks = session.browser_steps()
            value = {"map": MAP} | ({} if query is None else {"query": query})
            value |= {"shape": None} if event == "select" else {}
            st.session_state[component] = {event: value}
            with contextlib.suppress(Exception):  # st.rerun of the other parts, outside a script run here
                if event == "clear":
                    session.on_table_clear(data, MAP, partial(vocabulary, data))
                else:
                    session.on_map_select(data, MAP, partial(vocabulary, data))
            now = session.part_keys()
            assert st.session_state[SELECTION] == ""
            assert (shown["map"] == now["map"] and shown["results"] == now["results"]) == drawn, query
            assert session.browser_steps() == picks + drawn


def test_back_or_forward_follows_its_entry_s_link_whatever_link_was_written_last(data, monkeypatch):
    """Streamlit's rerun of a Back or Forward follows the entry's link where the view shown is another,
    even where the link the server wrote last is that entry's (a run cut short by the next Back or
    Forward left it so: the header then said one view over a link that said another)."""
    st.session_state[session.INITIALISED] = data.name
    st.session_state[TOPIC] = None
    st.session_state[session.URL_PARAMS] = {"topic": ["1"]}
    monkeypatch.setattr(session, "_history_run", lambda: True)
    session.open_view({"topic": ["1"], "view": ["0,1,0,1"]}, data, vocabulary(data), None)
    assert session.current_state().topic == 1
    st.session_state[session.PLACEMENT] = "placed"
    session.open_view({"topic": ["1"]}, data, vocabulary(data), None)  # the view shown: nothing dropped
    assert st.session_state[session.PLACEMENT] == "placed"
