"""A click in the map's key (`app.session.on_legend_pick`): which filter it sets, and which events it
ignores (from another map, or naming what the key does not hold). The browser side: test_browser_legend."""

from __future__ import annotations

import pytest
import streamlit as st

from app import session
from app.data import build_map_data
from app.map_component import KEY, PANEL_KEY
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


pytestmark = pytest.mark.usefixtures("fresh_session")  # each test starts from an empty session


@pytest.fixture
def reruns(monkeypatch) -> list[list[str]]:
    """The parts each step asked to rerun (`st.rerun([...])`), in order."""
    asked = []
    monkeypatch.setattr(st, "rerun", lambda parts: asked.append(parts))
    return asked


def drawn(parts: list[str]) -> None:
    """The parts a step reran (or the whole page), drawn: the sidebar's with the parts inside it."""
    for part in parts + (list(session.INSIDE_SIDEBAR) if "sidebar" in parts else []):
        session.part_shown(part)


def click(data, colour: str = "", **event) -> None:
    st.session_state[KEY] = {"legend": {"map": MAP, **event}}
    session.on_legend_pick(data, MAP, colour)


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
    session.on_legend_pick(data, MAP, "")
    assert THEMES not in st.session_state


def test_a_theme_the_browser_showed_itself_leaves_the_map_and_the_table_as_they_are(data, reruns):
    """With the link it wrote (`query`), a theme picked from the whole map was drawn by the browser:
    the map's and the table's parts count as showing it (they do not rerun), the header, the downloads
    and the sidebar's filters the theme changes (Themes, the topics Topics offers, the unassigned switch
    a theme view hides) do, not the rest of the sidebar; the link is kept as the query string, and the pick counted. So is the theme
    shown all again, while those parts have not been drawn since (the browser holds the view before it)."""

    drawn(list(session.PARTS))  # the whole page
    click(data, theme=1, query="theme=1")
    assert st.session_state[THEMES] == [1] and session.key_picks() == 1
    assert reruns == [["themes", "topics", "unassigned", "header", "downloads"]]
    assert st.session_state[session.URL_PARAMS] == {"theme": ["1"]}
    drawn(reruns[-1])
    click(data, theme=None, query="")  # "Show all" in the browser
    assert st.session_state[THEMES] == [] and session.key_picks() == 2
    assert reruns[-1] == ["themes", "topics", "unassigned", "header", "downloads"]
    assert st.session_state[session.URL_PARAMS] == {}
    drawn(reruns[-1])

    click(data, theme=1, query="theme=1")
    drawn(reruns[-1] + ["map"])  # and a paper clicked: the map's part drew the theme from the server's state
    click(data, theme=1, query="")  # shown all again: the map holds the theme's papers, the server draws all
    assert st.session_state[THEMES] == [] and session.key_picks() == 3
    assert reruns[-1] == ["themes", "topics", "unassigned", "header", "map", "results", "downloads"]


def test_another_theme_while_the_browser_shows_one_is_the_browser_s_while_the_map_holds_the_view_before(
    data, reruns
):
    """A theme the browser showed, then another picked in its place (the key, the list's heading, or Back
    or Forward between them): the browser draws it from the view before the first, which the map and
    the table still hold, so the server takes its link and draws neither; once the map's part has been
    drawn since (it holds the theme now, not the view before it), the server draws the next one."""

    drawn(list(session.PARTS))
    click(data, theme=1, query="theme=1")
    drawn(reruns[-1])
    click(data, theme=0, query="theme=0")
    assert st.session_state[THEMES] == [0] and session.key_picks() == 2
    assert reruns[-1] == ["themes", "topics", "header", "downloads"]  # no map, no table
    assert st.session_state[session.URL_PARAMS] == {"theme": ["0"]}
    drawn(reruns[-1])
    click(data, theme=None, query="")  # and "Show all" from it, as from the first
    assert st.session_state[THEMES] == [] and session.key_picks() == 3
    assert "map" not in reruns[-1]
    drawn(reruns[-1])

    click(data, theme=1, query="theme=1")
    drawn(reruns[-1] + ["map"])  # a paper clicked meanwhile: the map's part drew the theme itself
    click(data, theme=0, query="theme=0")
    assert st.session_state[THEMES] == [0] and session.key_picks() == 4
    assert "map" in reruns[-1] and "results" in reruns[-1]


@pytest.mark.parametrize("theme, kept", [(0, 1), (1, None)], ids=["its theme", "another theme"])
def test_a_theme_picked_with_the_panel_s_topic_open_is_the_browser_s_and_the_panel_follows(
    data, reruns, theme, kept
):
    """Topic 1 ("Diffusion models", theme 0) open in the browser's topic panel (`PANEL_TOPIC`), a theme
    picked with its link: the browser drew it (no map, no table from the server), keeping the topic
    open in its theme, closing it in another; the panel's topic follows, so opening topics there
    later still reruns nothing. Open by the server (no panel holds it), the server draws the theme."""
    topic = session.widget_key("topic")
    st.session_state[topic] = 1
    st.session_state[session.PANEL_TOPIC] = 1
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    click(data, theme=theme, query=f"theme={theme}")
    assert st.session_state[THEMES] == [theme] and st.session_state[topic] == kept
    assert st.session_state[session.PANEL_TOPIC] == kept and session.key_picks() == 1
    assert "map" not in reruns[-1] and "results" not in reruns[-1]


@pytest.mark.parametrize("chosen", [{"themes": [0]}, {"topics": [1]}, {"topic": 1}, {"colour": "year"}])
def test_the_server_draws_a_theme_whenever_the_view_before_it_did_not_let_the_browser(data, reruns, chosen):
    """A theme the browser says it drew (`query`) where the view before it had a theme, topic or opened
    topic chosen, or the key showed a column's values: the server does not take its word, and draws
    the map and the table (`app.state.key_in_browser`)."""
    for name, value in chosen.items():
        st.session_state[session.widget_key(name)] = value
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    click(data, theme=1, query="theme=1")
    assert st.session_state[THEMES] == [1] and session.key_picks() == 0
    assert "map" in reruns[-1] and "results" in reruns[-1]


def test_a_value_the_browser_showed_itself_leaves_the_map_and_the_table_as_they_are(data, reruns):
    """Coloured by a column, a value picked in the key with the link the browser wrote is the
    browser's, as a theme is (the map's and the table's parts do not rerun); not while the column's
    filter holds values (the pick would replace them, not narrow the view), nor a theme sent from a
    key that shows values (the browser never draws it)."""
    year = session.filter_key("year")
    st.session_state[session.widget_key("colour")] = "year"

    drawn(list(session.PARTS))
    click(data, "year", value=1, query="colour=year&f.year=2024")
    assert st.session_state[year] == ["2024"] and session.key_picks() == 1
    assert reruns[-1] == ["facets", "header", "downloads"]  # of the sidebar, only the column's filter
    assert st.session_state[session.URL_PARAMS] == {"colour": ["year"], "f.year": ["2024"]}
    drawn(reruns[-1])
    click(data, "year", value=None, query="colour=year")  # "Show all" in the browser
    assert st.session_state[year] == [] and session.key_picks() == 2
    assert reruns[-1] == ["facets", "header", "downloads"]  # of the sidebar, only the column's filter
    drawn(reruns[-1])

    st.session_state[year] = ["2023"]  # the column's filter chosen in the sidebar
    drawn(list(session.PARTS))
    click(data, "year", value=1, query="colour=year&f.year=2024")
    assert st.session_state[year] == ["2024"] and session.key_picks() == 2
    assert "map" in reruns[-1] and "results" in reruns[-1]

    st.session_state[year] = []
    drawn(list(session.PARTS))
    click(data, "year", theme=1, query="colour=year&theme=1")  # not an entry of a key of values
    assert session.key_picks() == 2 and "map" in reruns[-1] and "results" in reruns[-1]


def only(data, topics: list, query: str | None = None) -> None:
    """Topics kept alone: ticked in the panel's list, or its "Only this topic" (with `query`: the link
    the browser wrote, showing them itself)."""
    st.session_state[PANEL_KEY] = {
        "only": {"map": MAP, "topics": topics, **({"query": query} if query is not None else {})}
    }
    session.on_panel_only(data, MAP)


@pytest.mark.parametrize(
    "before, query, drew",
    [
        ({}, "topics=1&topic=1", True),
        ({}, "topics=1", False),  # not the view's link: the topic is still open
        ({"themes": [0]}, "topics=1&topic=1&theme=0", False),  # a theme chosen: not the browser's
    ],
    ids=["the whole map", "another link", "a theme chosen"],
)
def test_only_this_topic_the_browser_showed_itself_leaves_the_map_and_the_table_as_they_are(
    data, reruns, before, query, drew
):
    """Topic 1 open in the browser's topic panel, "Only this topic" sent with the link the browser
    wrote: where the view let the browser show it (as it lets it show an entry of the key) and the link
    is the view's, the map's and the table's parts do not rerun, the link is kept and the pick counted;
    else the server draws them. Either way the Topics filter holds the topic alone."""
    for name, value in {**before, "topic": 1}.items():
        st.session_state[session.widget_key(name)] = value
    st.session_state[session.PANEL_TOPIC] = 1
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    only(data, [1], query)
    assert st.session_state[TOPICS] == [1]
    assert session.key_picks() == int(drew) and ("map" in reruns[-1]) == (not drew)
    assert ("results" in reruns[-1]) == (not drew) and "header" in reruns[-1]
    if drew:
        assert st.session_state[session.BROWSER_PICK].chosen == ((TOPICS, (1,)),)
        assert st.session_state[session.URL_PARAMS] == {"topics": ["1"], "topic": ["1"]}


def test_only_this_topic_a_link_opened_is_the_server_s(data, reruns):
    """Topic 1 open because a link opened it (the server drew it; no panel holds it): the server draws
    the topic alone, whatever the browser says."""
    st.session_state[session.widget_key("topic")] = 1
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    only(data, [1], "topics=1&topic=1")
    assert st.session_state[TOPICS] == [1] and session.key_picks() == 0 and "map" in reruns[-1]


@pytest.mark.parametrize("shown", [True, False], ids=["shown", "hidden"])
def test_only_the_unassigned_papers_are_the_browser_s_where_the_view_shows_them(data, reruns, shown):
    """The unassigned papers (the panel's "Unassigned" opened) kept alone: the browser's where the view
    shows them; where it hides them it holds none to narrow, and the server draws them."""
    st.session_state[session.widget_key("topic")] = -1
    st.session_state[session.widget_key("show_unassigned")] = shown
    st.session_state[session.PANEL_TOPIC] = -1
    st.session_state[session.PARTS_SHOWN] = dict(session.part_keys())
    hidden = "" if shown else "&unassigned=hide"
    only(data, [-1], f"topics=-1{hidden}&topic=-1")
    assert st.session_state[TOPICS] == [-1] and session.key_picks() == int(shown)
    assert ("map" in reruns[-1]) == (not shown)


def test_topics_ticked_in_the_list_are_the_browser_s_while_the_map_holds_the_view_under_them(data, reruns):
    """Topics ticked one by one in the panel's list, then unticked, each with the link the browser
    wrote: the first from the whole map, the next ones while the map and the table still hold the
    view under the first (the browser draws each from it), so neither part reruns and the Topics
    filter holds the ticked topics in their order; so are ticks once the map's part has been drawn
    since (narrowing the view without its Topics filter, which the server sends), but not with a
    search (the table lists its hits in the order found in the view the server drew)."""
    drawn(list(session.PARTS))
    only(data, [1], "topics=1")
    assert st.session_state[TOPICS] == [1] and session.key_picks() == 1
    assert "map" not in reruns[-1] and "results" not in reruns[-1] and "topics" in reruns[-1]
    drawn(reruns[-1])
    only(data, [1, 0], "topics=1%2C0")
    assert st.session_state[TOPICS] == [1, 0] and session.key_picks() == 2
    assert st.session_state[session.URL_PARAMS] == {"topics": ["1,0"]}
    assert "map" not in reruns[-1] and "results" not in reruns[-1]
    drawn(reruns[-1])
    only(data, [], "")  # the last ones unticked ("Show all topics"): the view under them again
    assert st.session_state[TOPICS] == [] and session.key_picks() == 3
    assert "map" not in reruns[-1] and st.session_state[session.BROWSER_PICK] is None
    drawn(reruns[-1])

    only(data, [1], "topics=1")
    drawn(reruns[-1] + ["map"])  # a step of the server's meanwhile: the map's part drew topic 1 alone itself
    only(data, [1, 0], "topics=1%2C0")  # over the view's Topics filter: from the view without it (`unticked`)
    assert st.session_state[TOPICS] == [1, 0] and session.key_picks() == 5
    assert "map" not in reruns[-1] and "results" not in reruns[-1]
    drawn(reruns[-1] + ["map"])
    st.session_state[session.widget_key("search")] = "graph"  # a search: the table lists its hits in order
    drawn(list(session.PARTS))
    only(data, [1], "q=graph&topics=1")
    assert st.session_state[TOPICS] == [1] and session.key_picks() == 5
    assert "map" in reruns[-1] and "results" in reruns[-1]


@pytest.mark.parametrize(
    "topics", [[7], [1, "x"], 1, None], ids=["unknown", "not a number", "not a list", "none"]
)
def test_ticks_naming_no_topic_of_the_map_change_nothing(data, reruns, topics):
    drawn(list(session.PARTS))
    only(data, topics, "topics=7")
    assert TOPICS not in st.session_state and reruns == [] and session.key_picks() == 0


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
    session.on_panel_values(data, MAP)


def test_values_toggled_in_the_list_are_the_browser_s_while_the_column_has_no_filter_of_its_own(data, reruns):
    """Years toggled in the panel's list with the link the browser wrote: from a view whose year
    column has no filter, then while the map and the table still hold that view (each drawn from it),
    neither part reruns and the year's filter holds the values in their order; all dropped, the same.
    Once the map's part has been drawn since (the year's filter is the server's now), the server draws
    the next toggle; so it does where the sidebar chose a year."""
    year = session.filter_key("year")
    st.session_state[TOPICS] = [1]  # other filters may narrow the view
    drawn(list(session.PARTS))
    values(data, "year", [1], "topics=1&f.year=2024")
    assert st.session_state[year] == ["2024"] and session.key_picks() == 1
    assert "map" not in reruns[-1] and "results" not in reruns[-1] and "facets" in reruns[-1]
    drawn(reruns[-1])
    values(data, "year", [1, 0], "topics=1&f.year=2024&f.year=2023")
    assert st.session_state[year] == ["2024", "2023"] and session.key_picks() == 2
    assert st.session_state[session.URL_PARAMS] == {"topics": ["1"], "f.year": ["2024", "2023"]}
    assert "map" not in reruns[-1]
    drawn(reruns[-1])
    values(data, "year", [], "topics=1")
    assert st.session_state[year] == [] and session.key_picks() == 3 and "map" not in reruns[-1]
    drawn(reruns[-1])

    values(data, "year", [1], "topics=1&f.year=2024")
    drawn(reruns[-1] + ["map"])  # a step of the server's meanwhile: the map's part drew the year itself
    values(data, "year", [1, 0], "topics=1&f.year=2024&f.year=2023")
    assert st.session_state[year] == ["2024", "2023"] and session.key_picks() == 4 and "map" in reruns[-1]


@pytest.mark.parametrize(
    "before",
    [{"topic": 1}],
    ids=["a topic opened"],
)
def test_values_toggled_where_the_view_does_not_let_the_browser_are_the_server_s(data, reruns, before):
    for name, value in before.items():
        st.session_state[session.widget_key(name)] = value
    drawn(list(session.PARTS))
    values(data, "year", [1], "f.year=2024")
    assert st.session_state[session.filter_key("year")] == ["2024"] and session.key_picks() == 0
    assert "map" in reruns[-1] and "results" in reruns[-1]


@pytest.mark.parametrize(
    "column, codes",
    [("venue", [0]), ("year", [2]), ("year", ["2024"]), ("year", 1), (None, [0])],
    ids=["not a column of the list", "no such value", "not a position", "not a list", "no column"],
)
def test_values_naming_nothing_the_list_offers_change_nothing(data, reruns, column, codes):
    drawn(list(session.PARTS))
    values(data, column, codes, "f.year=2024")
    assert session.filter_key("year") not in st.session_state and reruns == [] and session.key_picks() == 0


def test_ticks_and_values_of_one_column_combine_in_the_browser_while_the_map_holds_the_view_under_them(
    data, reruns
):
    """A topic ticked, a year pressed, another topic ticked, the year dropped and another pressed, each
    with the link the browser wrote: the browser draws each from the view before the first tick (the
    map's and the table's parts never rerun) and both filters hold their choices. Values of a second
    column over them are the server's (the browser combines ticks with one column's values)."""
    year = session.filter_key("year")
    drawn(list(session.PARTS))
    steps = [
        (only, [1], "topics=1"),
        (values, [1], "topics=1&f.year=2024"),
        (only, [1, 0], "topics=1%2C0&f.year=2024"),
        (values, [], "topics=1%2C0"),
        (values, [0], "topics=1%2C0&f.year=2023"),
    ]
    for k, (step, chosen, query) in enumerate(steps, start=1):
        if step is only:
            only(data, chosen, query)
        else:
            values(data, "year", chosen, query)
        assert session.view_link() == query and session.key_picks() == k
        assert "map" not in reruns[-1] and "results" not in reruns[-1]
        drawn(reruns[-1])
    assert st.session_state[TOPICS] == [1, 0] and st.session_state[year] == ["2023"]
    query = "topics=1%2C0&f.track=Findings&f.year=2023"
    values(data, "track", [0], query)
    assert session.view_link() == query and session.key_picks() == len(steps)
    assert "map" in reruns[-1] and "results" in reruns[-1]


def test_ticks_over_values_are_the_server_s_where_the_view_would_not_let_the_browser_tick(data, reruns):
    """A year pressed with a theme chosen (the browser may press values there, not tick topics): the
    tick that follows is the server's."""
    st.session_state[THEMES] = [0]
    drawn(list(session.PARTS))
    values(data, "year", [1], "f.year=2024&theme=0")
    assert session.key_picks() == 1 and "map" not in reruns[-1]
    drawn(reruns[-1])
    query = "topics=1&f.year=2024&theme=0"
    only(data, [1], query)
    assert session.view_link() == query and session.key_picks() == 1 and "map" in reruns[-1]
