"""A click in the map's key (`app.session.on_legend_pick`): which filter it sets, and which events it
ignores (from another map, or naming what the key does not hold). The browser side: test_browser_legend."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from app import session
from app.data import build_map_data
from app.map_component import KEY, PANEL_KEY
from app.view import view_vocabulary
from pipeline.mapfolder.store import write_map
from tests.helpers import themed_map

MAP = "app/static/atlas/points-this.json.gz"
THEMES = session.widget_key("themes")
TOPICS = session.widget_key("topics")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("legend") / "keyed"
    atlas = themed_map(names=("Generative", "Structure"))
    atlas.papers["track"] = ["Main", "Findings"] * (len(atlas.papers) // 2)  # a second column to filter by
    write_map(folder, atlas)
    return build_map_data("keyed", folder)


def vocabulary(data):
    """What a link may choose on the map (no topic's growth measured: one order offered)."""
    return view_vocabulary(data, pd.Series(np.nan, index=data.topics["topic_id"]))


pytestmark = pytest.mark.usefixtures("fresh_session")  # each test starts from an empty session


@pytest.fixture
def reruns(monkeypatch) -> list[list[str]]:
    """The parts each step asked to rerun (`st.rerun([...])`), in order."""
    asked = []
    monkeypatch.setattr(st, "rerun", lambda parts: asked.append(parts))
    return asked


def drawn(parts: list[str]) -> None:
    """The parts a step reran (or the whole page), drawn: the sidebar's with the parts inside it; the
    map's with the topic panel beside it (no editing: no edit forms)."""
    for part in parts + (list(session.INSIDE_SIDEBAR) if "sidebar" in parts else []):
        if part != "curation":
            session.part_shown(part)


def click(data, colour: str = "", **event) -> None:
    st.session_state[KEY] = {"legend": {"map": MAP, **event}}
    session.on_legend_pick(data, MAP, partial(vocabulary, data), colour)


def test_a_theme_shows_alone_and_again_shows_all(data):
    st.session_state[TOPICS] = [1]
    click(data, theme=1)
    assert st.session_state[THEMES] == [1] and st.session_state[TOPICS] == []  # all of the theme's papers
    click(data, theme=0)
    assert st.session_state[THEMES] == [0]  # another theme takes its place
    click(data, theme=0)
    assert st.session_state[THEMES] == []  # the shown one again: every theme
    click(data, theme=1)
    click(data, theme=None)  # "Show all"
    assert st.session_state[THEMES] == []


def test_a_theme_closes_an_opened_topic_outside_it_and_keeps_one_inside(data):
    topic = session.widget_key("topic")
    st.session_state[topic] = 1  # "Diffusion models", in theme 0
    click(data, theme=0)
    assert st.session_state[topic] == 1
    click(data, theme=1)
    assert st.session_state[topic] is None  # it would show none of theme 1's papers
    st.session_state[topic] = -1  # the unassigned papers: in no theme
    click(data, theme=0)
    assert st.session_state[topic] is None


def test_a_value_of_the_colour_column_shows_alone_and_again_shows_all(data):
    key = session.filter_key("year")
    click(data, "year", value=1)
    assert st.session_state[key] == ["2024"]
    click(data, "year", value=1)
    assert st.session_state[key] == []
    click(data, "year", value=0)
    click(data, "year", value=None)
    assert st.session_state[key] == []


@pytest.mark.parametrize(
    "event",
    [
        {"theme": 7},  # no such theme
        {"theme": True},  # not a number
        {"theme": "1"},
        {"value": 5},  # no such value
        {"value": -1},
        {"other": 1},
    ],
)
def test_what_the_key_does_not_hold_changes_nothing(data, event):
    st.session_state[THEMES] = [1]
    st.session_state[session.filter_key("year")] = ["2023"]
    click(data, "year", **event)
    assert st.session_state[THEMES] == [1] and st.session_state[session.filter_key("year")] == ["2023"]


def test_a_click_from_another_map_changes_nothing(data):
    st.session_state[KEY] = {"legend": {"map": "app/static/atlas/points-other.json.gz", "theme": 1}}
    session.on_legend_pick(data, MAP, partial(vocabulary, data), "")
    assert THEMES not in st.session_state


def test_a_theme_the_browser_showed_itself_leaves_the_map_and_the_table_as_they_are(data, reruns):
    """With the link it wrote (`query`), a theme picked from the whole map was drawn by the browser:
    the map's and the table's parts count as showing it (they do not rerun), the header, the downloads
    and the sidebar's filters the theme changes (Themes, the topics Topics offers, the unassigned switch
    a theme view hides) do, not the rest of the sidebar; the link is kept as the query string, and the pick counted. So is the theme
    shown all again. Without a link the step is the server's."""

    drawn(list(session.PARTS))  # the whole page
    click(data, theme=1, query="theme=1")
    assert st.session_state[THEMES] == [1] and session.browser_steps() == 1
    assert reruns == [["themes", "topics", "unassigned", "downloads"]]  # the header's sentence: the browser's
    assert st.session_state[session.URL_PARAMS] == {"theme": ["1"]}
    drawn(reruns[-1])
    click(data, theme=None, query="")  # "Show all" in the browser
    assert st.session_state[THEMES] == [] and session.browser_steps() == 2
    assert reruns[-1] == ["themes", "topics", "unassigned", "downloads"]
    assert st.session_state[session.URL_PARAMS] == {}
    drawn(reruns[-1])

    click(data, theme=1)  # without a link: the server's step, which draws the map and the table
    assert st.session_state[THEMES] == [1] and session.browser_steps() == 2
    assert reruns[-1] == ["themes", "topics", "unassigned", "map", "results", "downloads"]


@pytest.mark.parametrize("theme, kept", [(0, 1), (1, None)], ids=["its theme", "another theme"])
def test_a_theme_picked_with_the_panel_s_topic_open_is_the_browser_s_and_the_panel_follows(
    data, reruns, theme, kept
):
    """Topic 1 ("Diffusion models", theme 0) open in the browser's topic panel (editing off), a theme
    picked with its link: the browser drew it (no map, no table from the server), keeping the topic
    open in its theme, closing it in another; the panel's topic follows, so opening topics there
    later still reruns nothing."""
    topic = session.widget_key("topic")
    st.session_state[topic] = 1
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    click(data, theme=theme, query=f"topic=1&theme={theme}" if kept else f"theme={theme}")
    assert st.session_state[THEMES] == [theme] and st.session_state[topic] == kept
    assert session.browser_steps() == 1
    assert "map" not in reruns[-1] and "results" not in reruns[-1]
    shown = session.part_keys()["map"]
    st.session_state[topic] = 2  # a topic opened in the panel after it
    assert session.part_keys()["map"] == shown


def test_a_value_the_browser_showed_itself_leaves_the_map_and_the_table_as_they_are(data, reruns):
    """Coloured by a column, a value picked in the key with the link the browser wrote is the
    browser's, as a theme is (the map's and the table's parts do not rerun)."""
    year = session.filter_key("year")
    st.session_state[session.widget_key("colour")] = "year"

    drawn(list(session.PARTS))
    click(data, "year", value=1, query="colour=year&f.year=2024")
    assert st.session_state[year] == ["2024"] and session.browser_steps() == 1
    assert reruns[-1] == ["facets", "downloads"]  # of the sidebar, only the column's filter
    assert st.session_state[session.URL_PARAMS] == {"colour": ["year"], "f.year": ["2024"]}
    drawn(reruns[-1])
    click(data, "year", value=None, query="colour=year")  # "Show all" in the browser
    assert st.session_state[year] == [] and session.browser_steps() == 2
    assert reruns[-1] == ["facets", "downloads"]  # of the sidebar, only the column's filter
    drawn(reruns[-1])


def only(data, topics: list, query: str | None = None) -> None:
    """Topics kept alone: ticked in the panel's list, or its "Only this topic" (with `query`: the link
    the browser wrote, showing them itself)."""
    st.session_state[PANEL_KEY] = {
        "only": {"map": MAP, "topics": topics, **({"query": query} if query is not None else {})}
    }
    session.on_panel_only(data, MAP, partial(vocabulary, data))


@pytest.mark.parametrize(
    "topics", [[7], [1, "x"], 1, None], ids=["unknown", "not a number", "not a list", "none"]
)
def test_ticks_naming_no_topic_of_the_map_change_nothing(data, reruns, topics):
    drawn(list(session.PARTS))
    only(data, topics, "topics=7")
    assert TOPICS not in st.session_state and reruns == [] and session.browser_steps() == 0


def test_a_tick_outside_the_chosen_themes_drops_them(data, reruns):
    """Themes chosen in the sidebar (the server's view), a topic of another theme ticked (the list
    offers the chosen themes' topics; a link or Back may name another): the themes are dropped, so the
    view shows the topic rather than nothing; one inside them keeps them."""
    st.session_state[THEMES] = [0]
    only(data, [1])  # topic 1 is in theme 0
    assert st.session_state[THEMES] == [0] and st.session_state[TOPICS] == [1]
    only(data, [1, 0])  # topic 0 is not
    assert st.session_state[THEMES] == [] and st.session_state[TOPICS] == [1, 0]


def values(data, column: object, codes: object, query: str | None = None) -> None:
    """Values of `column` toggled in the panel's list (with `query`: the link the browser wrote, showing
    them itself)."""
    st.session_state[PANEL_KEY] = {
        "values": {
            "map": MAP,
            "column": column,
            "values": codes,
            **({"query": query} if query is not None else {}),
        }
    }
    session.on_panel_values(data, MAP, partial(vocabulary, data))


@pytest.mark.parametrize(
    "column, codes",
    [("venue", [0]), ("year", [2]), ("year", ["2024"]), ("year", 1), (None, [0])],
    ids=["not a column of the list", "no such value", "not a position", "not a list", "no column"],
)
def test_values_naming_nothing_the_list_offers_change_nothing(data, reruns, column, codes):
    drawn(list(session.PARTS))
    values(data, column, codes, "f.year=2024")
    assert (
        session.filter_key("year") not in st.session_state and reruns == [] and session.browser_steps() == 0
    )


@pytest.mark.parametrize(
    "before, step, query, after",
    [
        ({"topic": 1}, (only, [1]), "topics=1&topic=1", {"topics": [1], "topic": 1}),
        ({"themes": [0]}, (only, [1]), "topics=1&theme=0", {"topics": [1], "themes": [0]}),
        ({"topics": [1]}, (only, [1, 0]), "topics=1%2C0", {"topics": [1, 0]}),
        ({}, (only, [-1]), "topics=-1&unassigned=hide", {"topics": [-1], "show_unassigned": False}),
        ({"search": "graph"}, (only, [1]), "q=graph&topics=1", {"topics": [1], "search": "graph"}),
        ({"topic": 1}, (values, [1]), "f.year=2024&topic=1", {"topic": 1}),
        ({"topics": [1]}, (values, [1, 0]), "topics=1&f.year=2024&f.year=2023", {"topics": [1]}),
        ({}, (values, [0]), "map=keyed&f.year=2023&f.track=Main&view=0,1,0,1", {}),
        ({}, (only, [1]), "topics=1%2C99&theme=7&sort=nope", {"topics": [1]}),  # what a link may not choose
    ],
    ids=["a topic open", "a theme", "over a Topics filter", "unassigned", "a search", "values, a topic open",
         "values over ticks", "two columns", "ignored parts"],
)  # fmt: skip
def test_a_step_the_browser_drew_is_its_link(data, reruns, before, step, query, after):
    """Ticks or values with the link the browser wrote (it drew them: js/legend.js decides which it
    draws, alone): the view is that link's, read as any link is (`parse_view`: the map's name and the
    zoom aside, what this map does not hold dropped); the map's and the table's parts count as drawn,
    the link is kept as the query string and the step counted."""
    for name, value in before.items():
        st.session_state[session.widget_key(name)] = value
    drawn(list(session.PARTS))
    kind, chosen = step
    if kind is only:
        only(data, chosen, query)
    else:
        values(data, "year", chosen, query)
    state = session.current_state()
    filters = dict(state.filters)
    expected = {"topics": [], "topic": None, "themes": [], "show_unassigned": True, "search": ""} | after
    assert {name: getattr(state, name) for name in expected} == {
        k: tuple(v) if isinstance(v, list) else v for k, v in expected.items()
    }
    link = dict(session._query_params(query))
    assert filters.get("year", ()) == tuple(link.get("f.year", ()))
    assert filters.get("track", ()) == tuple(link.get("f.track", ()))
    assert session.browser_steps() == 1 and "map" not in reruns[-1] and "results" not in reruns[-1]
    assert st.session_state[session.URL_PARAMS] == {k: v for k, v in link.items() if k != "view"}


def test_a_step_without_a_link_is_the_server_s(data, reruns):
    """Ticks or values sent without a link (the browser did not draw them): the server's step, which
    draws the map and the table."""
    drawn(list(session.PARTS))
    only(data, [1])
    assert st.session_state[TOPICS] == [1] and "map" in reruns[-1] and "results" in reruns[-1]
    drawn(list(session.PARTS))
    values(data, "year", [1])
    assert st.session_state[session.filter_key("year")] == ["2024"] and "map" in reruns[-1]
    assert session.browser_steps() == 0


def test_where_editing_is_on_a_step_the_browser_drew_reruns_the_edit_forms_not_the_map(data, reruns):
    """Where editing is on, the opened topic's edit forms are the server's (a part inside the map's): a
    key pick the browser drew that closes the topic reruns them, not the map nor the table."""
    topic = session.widget_key("topic")
    st.session_state[topic] = 1  # "Diffusion models", in theme 0
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())  # the edit forms among them
    click(data, theme=1, query="theme=1")
    assert (
        st.session_state[THEMES] == [1] and st.session_state[topic] is None and session.browser_steps() == 1
    )
    assert "curation" in reruns[-1] and "map" not in reruns[-1] and "results" not in reruns[-1]


def test_a_step_the_browser_did_not_draw_is_its_link_too_and_the_parts_follow_it(data, reruns):
    """A pick in the key, or a tick, the browser did not draw (`drawn`: false; its parts did not show
    the view yet, or it cannot draw it) comes with the link the browser wrote for it all the same
    (js/store.js): the view is that link's, kept as the query string (the server writes no other, which
    a step taken meanwhile in the browser would be put under), and the map and the table follow it."""
    st.session_state[TOPICS] = [1]
    drawn(list(session.PARTS))
    # topics chosen: the key's theme is the server's to draw
    click(data, theme=0, query="theme=0", drawn=False)
    assert st.session_state[THEMES] == [0] and st.session_state[TOPICS] == []
    assert "map" in reruns[-1] and "results" in reruns[-1] and session.browser_steps() == 0
    assert st.session_state[session.URL_PARAMS] == {"theme": ["0"]}
    drawn(reruns[-1])
    st.session_state[PANEL_KEY] = {"only": {"map": MAP, "topics": [0], "query": "topics=0", "drawn": False}}
    session.on_panel_only(data, MAP, partial(vocabulary, data))  # a topic outside the theme: it is dropped
    assert st.session_state[THEMES] == [] and st.session_state[TOPICS] == [0]
    assert "map" in reruns[-1] and "results" in reruns[-1] and session.browser_steps() == 0
    assert st.session_state[session.URL_PARAMS] == {"topics": ["0"]}
