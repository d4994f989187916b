"""The paper view: an opened paper's title, topic, details, abstract (as written, the searched words
highlighted) and nearest papers."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app import session
from app.data import MapData, paper_places
from app.loaders import MapKey
from app.map_component import NEAREST_KEY, live_nearest, points_url
from app.nearest import nearest_papers
from app.search import SearchResult
from app.text import highlighted_markdown, markdown_literal
from pipeline.mapfolder.search_index import highlight
from pipeline.modelling.floors import closeness
from pipeline.text import shorten


def paper_view(data: MapData, map_key: MapKey, row: int, search: SearchResult | None = None) -> None:
    paper = data.papers.iloc[row]
    topic = int(data.topic_ids[row])
    words = search.query if search is not None and search.kind == "words" else None
    title = str(paper["title"])
    st.markdown(
        "#### "
        + (
            highlighted_markdown(highlight(" ".join(title.split()), words))
            if words
            else markdown_literal(title)
        )
    )  # beside the map: "Back to …" above it closes the paper (streamlit_app.side_panel)
    topic_line = st.columns([3, 2], vertical_alignment="center")
    topic_line[0].markdown(f"**Topic:** {markdown_literal(data.label(topic))}")
    topic_line[1].button(
        "Open topic",
        on_click=session.open_topic,
        args=(topic,),
        icon=":material/hub:",
        key="paper_open_topic",
        width="stretch",
    )
    details = [paper_places(data.papers.iloc[row : row + 1]).iloc[0]]  # as the hover and table say it
    authors = paper["authors"] if "authors" in paper.index else None
    if isinstance(authors, list | tuple | np.ndarray):  # a list from JSONL input
        authors = ", ".join(str(a) for a in authors) or None
    if authors is not None and pd.notna(authors):
        details.append(str(authors))
    st.caption(" · ".join(markdown_literal(shorten(d, 120)) for d in details))
    if data.added is not None and data.added[row]:
        st.info(
            "Added since the last full build (with `python -m pipeline add`): placed among its nearest "
            "papers and given their topic; the topics themselves were not refitted.",
            icon=":material/new_releases:",
        )
    url = str(paper["url"]) if "url" in paper.index and pd.notna(paper["url"]) else ""
    if url.startswith(("https://", "http://")):  # never a javascript: or data: link from the data
        st.link_button("Open the paper's page", url, icon=":material/open_in_new:")
    if search is not None:
        match_line(search, row)
    with st.container(border=True):
        if words is not None:  # the abstract as written, as escaped Markdown, the matched words marked
            st.markdown(highlighted_markdown(highlight(str(paper["abstract"]), words)))
        else:
            st.text(str(paper["abstract"]))
    st.markdown("**Nearest papers** (ringed on the map)")
    rows, similarities = nearest_papers(data, row)
    url = points_url(data, map_key)
    click = partial(session.on_paper_click, data, url, NEAREST_KEY)
    live_nearest(data, map_key, rows, similarities, files_sent=session.files_sent(), on_click=click)


def match_line(search: SearchResult, row: int) -> None:
    """How the opened paper matched the current search, if it did."""
    position = np.flatnonzero(search.rows == row)
    if not len(position):
        st.caption(":material/search_off: Not among the papers your search found.")
    elif search.kind == "words":
        st.caption(":material/manage_search: Found by its words: the matches are highlighted.")
    else:
        at = int(position[0])
        similarity = float(search.similarity[at])
        also = " It also holds every word of the search." if search.has_words[at] else ""
        how = f"{closeness(float(search.percentile[at]))}, " if search.percentile is not None else ""
        if search.close is not None and at >= search.close:
            verdict = (
                "Related in meaning, not close"
                if search.match_labels()[at] == "related"
                else "Not close in meaning"
            )
            st.caption(
                f":material/psychology: {verdict}: {how}similarity {similarity:.2f} to your search. "
                "It is listed because nothing on this map is close to it."
            )
            return
        st.caption(
            f":material/psychology: Found by meaning: {how}similarity {similarity:.2f} to your search "
            f"(rank {at + 1:,}).{also}"
        )
