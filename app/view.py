"""What the page shows: the papers in view for the filters and the search, and the sentence saying so.

The page's parts (`streamlit_app.py`) share one `View` a change of filters or search (`page_view`):
the header says `header_sentence`, the map dims what is out of view, and the papers table lists
`View.rows`; while a topic is open they all follow `opened_topic_view`. Nothing here draws but the
spinner of a search by meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from app import session
from app.data import MapData
from app.filters import chosen_topics, filter_mask, scope_phrase
from app.loaders import MapKey, cached_fused_search, cached_word_search
from app.palette import colour_columns
from app.search import SearchResult, search_evidence, search_facts, search_sentence, within, word_search
from app.selection import rows_inside
from app.state import SORTS, ViewState, Vocabulary, parse_selection
from app.text import counted
from app.themes import gone_themes, topics_in_themes, usable_themes
from pipeline.mapfolder.query import parse_query


@dataclass(frozen=True)
class View:
    """What the page shows: the papers in view (best search match first) and what the header says."""

    in_filter: np.ndarray  # bool per paper: passes the filters
    in_view: np.ndarray  # bool per paper: passes the filters and the search
    rows: np.ndarray  # the papers in view, best match first (map order without a search)
    search: SearchResult | None
    sentence: tuple[str, str]  # the header's sentence (bold number, rest)
    notices: tuple[str, ...]  # what the search left out or could not do


def current_view(data: MapData, map_key: MapKey, state: ViewState) -> View:
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
    if result is not None and result.query.empty:  # nothing to search: say so
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
    rest, the header counts, and the papers table lists, the topic's papers in view (a paper opened
    from it too: the panel leads back to the topic)."""
    if state.topic is None:
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


def selected_rows(data: MapData, map_key: MapKey, state: ViewState) -> np.ndarray | None:
    """Rows of the papers the map's box or lasso selection holds (`app.selection`), in view or not;
    None without a selection."""
    shape = parse_selection(state.selection) if state.selection else None
    if shape is None:
        return None
    papers = data.papers
    inside = lambda: rows_inside(shape, papers["x"].to_numpy(np.float32), papers["y"].to_numpy(np.float32))  # noqa: E731
    return session.remembered(session.SELECTED_ROWS, (map_key, state.selection), inside)


def counted_in_view(view: View, selected: np.ndarray | None) -> np.ndarray:
    """What the topic list counts: the papers in view, or those of them the map's selection holds."""
    if selected is None:
        return view.in_view
    mask = np.zeros_like(view.in_view)
    mask[selected] = True
    return view.in_view & mask


def header_sentence(data: MapData, view: View, selected: np.ndarray | None = None) -> tuple[str, str]:
    """The header's sentence follows what the page shows beside the map and under it: the papers
    picked on the map (`selected`, rows), else the view (an opened topic's papers:
    `opened_topic_view`)."""
    if selected is None:
        return view.sentence
    picked = counted(int(view.in_view[selected].sum()), "paper")
    if len(view.rows) == data.n:
        return "", f"Showing the {picked} you selected on the map"
    number, rest = view.sentence
    return number, f"{rest}; the table lists the {picked} of them you selected on the map"


def sentence_hits(data: MapData, map_key: MapKey, state: ViewState) -> dict:
    """What the view's search holds over the whole map, as the browser counts it (js/view.js
    `ViewHits`): its one list (`words`, best first), each hit's evidence and what the sentence quotes of
    the search (`app.search.search_facts`); None each without a search; `found`, the search itself (the
    papers table's columns of how each hit matched). (The papers a box or lasso holds the browser finds
    itself, by their places.)"""
    found = run_search(data, map_key, state, np.ones(data.n, dtype=bool))
    if found is not None and found.query.empty:
        found = None
    return {
        "words": None if found is None else np.asarray(found.rows, dtype=np.int64),
        "evidence": None if found is None else search_evidence(found),
        "search": None if found is None else search_facts(found),
        "found": found,
    }


def page_view(data: MapData, map_key: MapKey) -> tuple[ViewState, View]:
    """The view state and the papers in view, worked out once for each choice of filters and search
    (the parts of the page that rerun together share it)."""
    state = session.current_state()
    key = (map_key, session.view_key(state))
    return state, session.remembered(session.CURRENT_VIEW, key, lambda: current_view(data, map_key, state))


def run_search(
    data: MapData, map_key: MapKey, state: ViewState, in_filter: np.ndarray
) -> SearchResult | None:
    """The search's hits over the whole map (`app.search`: words and meaning in one ranked list), those
    among the filtered papers, in the same order; None without search text.

    A search of operators alone (quotes, OR, prefixes, exclusions) is ranked by its words, as is every
    search, with a notice, when the map's encoder cannot be loaded.
    """
    text = " ".join(state.search.split())
    if not text:
        return None
    if not parse_query(text).free:
        return within(word_search(cached_word_search(map_key, text), text), in_filter)
    try:
        with st.spinner("Embedding your search with the map's model (the first time also loads it)…"):
            found = cached_fused_search(map_key, text)
    except Exception as exc:  # a missing or broken model must not take the page down
        found = word_search(cached_word_search(map_key, text), text)
        notice = f"Search by meaning is not available here ({str(exc)[:120]}); searched by words alone."
        found = replace(found, notices=(*found.notices, notice))
    return within(found, in_filter)


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
