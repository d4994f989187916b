"""Each step reruns only the parts of the page it changes (keyed fragments: sidebar, the Topics filter
inside it, header, map, results, downloads). AppTest holds exactly what a run sent, so after a step it
shows which parts reran."""

from __future__ import annotations

import pytest

from pipeline.mapfolder.store import write_map
from tests.helpers import (
    papers_table,
    plain,
    start,
    table,
    table_state,
    themed_map,
    url,
    whole_page,
    write_tiny_map,
)


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    folder = write_tiny_map(tmp_path / "tiny")
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return folder


def parts(at) -> set[str]:
    """The parts of the page the last run drew, by an element each always has."""
    drawn = set()
    if [t for t in at.text_input if t.key == "w_search"]:
        drawn.add("sidebar")
    if [m for m in at.multiselect if m.key == "w_topics"]:
        drawn.add("topics")  # the Topics filter, a part inside the sidebar's
    if any(m.value.startswith("## ") for m in at.markdown):
        drawn.add("header")
    if [c for c in at.caption if "tap a point to open it" in c.value]:
        drawn.add("map")
    if table_state(at) is not None:
        drawn.add("results")
    if [b for b in at.get("download_button") if b.proto.id and "download_view" in b.proto.id]:
        drawn.add("downloads")
    return drawn


def test_a_full_run_draws_every_part(tiny):
    assert parts(start()) == {"sidebar", "topics", "header", "map", "results", "downloads"}


def test_a_search_reruns_the_header_and_downloads_the_browser_draws_the_map_and_table(tiny):
    """The header's state carries the search's hits (the page's facts): the browser draws the map, the
    topic list and the papers table of the link's view from them (tests/test_browser_legend.py)."""
    at = start()
    at.text_input(key="w_search").input("diffusion").run()
    assert parts(at) == {"header", "downloads"}
    assert "15 of the 60 papers of the map match the words “diffusion”" in plain(at)
    assert url(at)["q"] == ["diffusion"]  # the link, written by the server for the browser to follow
    assert len(table(whole_page(at))) == 15
    at.session_state["paper"] = "doc0005"  # with a paper open, the server draws the map (its panel)
    whole_page(at).text_input(key="w_search").input("policy").run()
    assert parts(at) == {"header", "map", "results", "downloads"}


def test_the_first_topic_chosen_hides_the_unassigned_switch_without_rerunning_the_sidebar(tiny):
    at = start()
    at.toggle(key="w_unassigned").set_value(False).run()
    # The unassigned switch is not drawn in a topic view.
    whole_page(at).multiselect(key="w_topics").select(1).run()
    # and the switch's own part; the header's sentence, the map and the table are the browser's
    assert parts(at) == {"downloads"}
    assert not [t for t in at.toggle if t.key == "w_unassigned"]
    assert "Showing the 13 papers in the topic “Diffusion models”" in plain(at)
    whole_page(at).multiselect(key="w_f_year").select("2024").run()  # the sidebar already shows it
    assert parts(at) == {"downloads"}
    whole_page(at).multiselect(key="w_topics").unselect(1).run()  # every topic again: the switch is back...
    assert at.toggle(key="w_unassigned").value is False  # ...as the reader left it
    assert "papers in a topic with year 2024" in plain(at)


def test_choosing_a_theme_reruns_the_topics_filter_for_the_topics_it_offers_not_the_sidebar(
    tmp_path, monkeypatch
):
    folder = tmp_path / "themed"
    write_map(folder, themed_map())
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    at = start()
    whole_page(at).multiselect(key="w_topics").select(3).run()  # a topic outside theme 0
    at = whole_page(at)
    at.multiselect(key="w_themes").select(0).run()  # theme 0: topics 1 and 2
    assert parts(at) == {"topics", "downloads"}
    assert not [t for t in at.toggle if t.key == "w_unassigned"]
    topics = at.multiselect(key="w_topics")
    offered = ["Diffusion models (13)", "Reinforcement learning (13)", "Unassigned (8)"]
    assert topics.options == offered and topics.value == []  # the theme's topics only; topic 3 dropped
    assert topics.placeholder == "All topics in the chosen themes"
    assert "Showing the 26 papers in the theme" in plain(at)
    whole_page(at).multiselect(key="w_themes").unselect(0).run()  # every theme: every topic offered again
    assert parts(at) == {"topics", "downloads"}
    assert len(at.multiselect(key="w_topics").options) == 5


def test_an_opened_topic_s_header_and_table_count_and_list_its_papers(tiny):
    """The topic panel opens topics in the browser (tests/test_browser_panel.py); the server's parts that
    depend on it (tests/test_panel_events.py: the header and the table, not the map) follow."""
    at = start({"topic": "2"})
    assert "Showing the 13 papers in the topic “Reinforcement learning”" in plain(at)
    assert papers_table(at)["heading"] == "Papers · 13"
    listed = table(at)
    assert len(listed) == 13 and set(listed["Topic"]) == {"Reinforcement learning"}


def test_a_topic_opened_during_a_search_says_how_many_of_its_papers_match(tiny):
    at = start({"q": "diffusion", "topic": "1"})
    assert "13 of the 13 papers in the topic “Diffusion models” match the words “diffusion”" in plain(at)
    at = start({"q": "diffusion", "topic": "2"})
    assert "0 of the 13 papers in the topic “Reinforcement learning” match the words “diffusion”" in plain(at)


def test_reset_view_reruns_every_part_it_changed(tiny):
    at = start({"q": "diffusion", "topics": "1"})
    [reset] = [b for b in at.button if b.label == "Reset view"]
    reset.click().run()
    assert parts(at) == {"sidebar", "topics", "header", "map", "results", "downloads"}
    assert at.text_input(key="w_search").value == ""
    assert "Showing the 60 papers of the map" in plain(at)
