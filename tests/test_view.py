"""What the page shows, without AppTest (`app.view`): on the tiny map, the header's sentence and the
papers in view for a topic, a theme, a search, an opened topic and a selection on the map.

The tiny map (`tests.helpers.tiny_map`): 60 papers; paper i is in topic `i % 4`, or unassigned when
`i % 7 == 6`; its abstract names its topic's first word ("diffusion" for topic 1).
"""

from __future__ import annotations

import numpy as np
import pytest

from app.data import build_map_data
from app.loaders import MapKey
from app.selection import rows_inside
from app.state import ViewState, parse_selection
from app.view import current_view, header_sentence, opened_topic_view, view_scope
from pipeline.mapfolder.store import write_map
from tests.helpers import box_around, themed_map, write_tiny_map

DIFFUSION = [i for i in range(60) if i % 4 == 1 and i % 7 != 6]  # topic 1, "Diffusion models": 13 papers
SAYS_DIFFUSION = [i for i in range(60) if i % 4 == 1]  # their abstracts say "diffusion": 15 papers


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = write_tiny_map(tmp_path_factory.mktemp("view") / "tiny")
    return build_map_data("tiny", folder), MapKey.of("tiny", folder)


def shown(data, map_key, **settings):
    """The view for these settings, narrowed to an opened topic as the page shows it."""
    state = ViewState(**settings)
    return opened_topic_view(data, state, current_view(data, map_key, state))


def test_the_whole_map_is_in_view_and_the_header_says_so(tiny):
    data, key = tiny
    view = shown(data, key)
    assert header_sentence(data, view) == ("", "Showing the 60 papers of the map")
    assert view.rows.tolist() == list(range(60)) and view.in_view.all() and view.search is None


def test_a_chosen_topic_shows_its_papers_named_by_the_topic(tiny):
    data, key = tiny
    view = shown(data, key, topics=(1,))
    assert header_sentence(data, view) == ("", "Showing the 13 papers in the topic “Diffusion models”")
    assert view.rows.tolist() == DIFFUSION and np.flatnonzero(view.in_view).tolist() == DIFFUSION
    assert view_scope(data, ViewState(show_unassigned=False), 52) == "the 52 papers in a topic"


def test_a_chosen_theme_shows_its_topics_papers_named_by_the_theme(tmp_path):
    folder = tmp_path / "themed"
    write_map(folder, themed_map())  # theme 0: topics 1 and 2; theme 1: topics 0 and 3
    data = build_map_data("themed", folder)
    view = shown(data, MapKey.of("themed", folder), themes=(0,))
    members = [i for i in range(60) if i % 4 in (1, 2) and i % 7 != 6]
    assert header_sentence(data, view) == (
        "",
        "Showing the 26 papers in the theme “<b>Generative</b> models”",
    )
    assert view.rows.tolist() == members  # no unassigned paper, though it sits among them
    assert header_sentence(data, shown(data, MapKey.of("themed", folder), themes=(0, 1))) == (
        "",
        "Showing the 52 papers in 2 themes",
    )


def test_a_search_counts_its_matches_among_the_filtered_papers(tiny):
    data, key = tiny
    view = shown(data, key, search="diffusion")
    assert header_sentence(data, view) == ("15", "of the 60 papers of the map match the words “diffusion”")
    assert sorted(view.rows.tolist()) == SAYS_DIFFUSION and view.in_view.sum() == 15
    assert view.in_filter.all()  # the filters passed every paper; the search chose among them
    # within a filter it counts among the filter's papers: topic 2's abstracts never say "diffusion"
    inside = shown(data, key, search="diffusion", topics=(1, 2))
    assert header_sentence(data, inside) == ("13", "of the 26 papers in 2 topics match the words “diffusion”")
    assert sorted(inside.rows.tolist()) == DIFFUSION


def test_a_search_without_the_maps_model_searches_by_words_and_says_so(tiny):
    data, key = tiny  # the tiny map records no int8 model
    view = shown(data, key, search="diffusion")
    assert header_sentence(data, view)[0] == "15" and sorted(view.rows.tolist()) == SAYS_DIFFUSION
    [notice] = [n for n in view.notices if "not available" in n]
    assert notice.startswith("Search by meaning is not available here (") and notice.endswith(
        "searched by words alone."
    )


def test_an_opened_topic_narrows_the_header_the_map_and_the_table_to_its_papers(tiny):
    data, key = tiny
    view = shown(data, key, search="diffusion", topic=1)
    assert header_sentence(data, view) == (
        "13",
        "of the 13 papers in the topic “Diffusion models” match the words “diffusion”",
    )
    assert sorted(view.rows.tolist()) == DIFFUSION and np.flatnonzero(view.in_view).tolist() == DIFFUSION
    assert view.in_filter.all()  # the filters still pass every paper: the topic is what is open
    plain = shown(data, key, topic=3)
    assert header_sentence(data, plain) == ("", "Showing the 13 papers in the topic “Multi-view clustering”")
    # a paper opened from the topic (its panel leads back to it): still the topic's papers
    paper = shown(data, key, search="diffusion", topic=1, paper="doc0001")
    assert header_sentence(data, paper) == header_sentence(data, view) and paper.in_view.sum() == 13


def test_papers_selected_on_the_map_are_what_the_header_counts(tiny):
    data, key = tiny
    whole = shown(data, key)
    rows = lambda *doc_ids: np.array([data.row_of[d] for d in doc_ids])  # noqa: E731
    assert header_sentence(data, whole, rows("doc0003", "doc0001")) == (
        "",
        "Showing the 2 papers you selected on the map",
    )
    searched = shown(data, key, search="diffusion")
    picked = rows("doc0001", "doc0002")  # one says "diffusion", one does not (it is out of view)
    assert header_sentence(data, searched, picked) == (
        "15",
        "of the 60 papers of the map match the words “diffusion”; the table lists the 1 paper of them you "
        "selected on the map",
    )


def test_a_box_in_the_link_holds_the_papers_inside_it(tiny):
    data, _ = tiny
    text, inside = box_around(data.papers, ["doc0003", "doc0001", "doc0042"])
    x, y = data.papers["x"].to_numpy(dtype=np.float32), data.papers["y"].to_numpy(dtype=np.float32)
    assert [data.doc_ids[r] for r in rows_inside(parse_selection(text), x, y)] == inside
    assert {"doc0003", "doc0001", "doc0042"} <= set(inside)
