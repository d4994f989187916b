"""The sidebar (map, search, filters, reset), the page header and the notice about ignored link settings."""

from __future__ import annotations

import streamlit as st

from app import session
from app.data import MapData, MapRef, map_titles
from app.session import dismiss_notices, filter_key, reset_view, switch_map, topic_options, widget_key
from app.text import column_name, counted, markdown_literal, without_server_paths
from app.themes import usable_themes

SEARCH_HELP = (
    "Words or a description: one list, best first, of the papers that write your words (in any form: "
    "*rank* finds *ranking*, *pose* never *propose*) or most of them, and of those close in meaning "
    "to it by this map's own model, even when they use other words. Each says why it is listed.\n\n"
    '"quoted phrase", *prefix\\**, *a* OR *b* and -*word* are exact: every paper listed keeps to them.'
)


def when_changed(data: MapData) -> dict:
    """A sidebar widget's callback: its change reruns only the parts of the page it changes."""
    return {"on_change": session.sidebar_changed, "args": (data,)}


def sidebar(data: MapData, catalog: list[MapRef]) -> None:
    """The sidebar's widgets (drawn inside `st.sidebar` by the page); each change reruns only the parts
    of the page it changes (`app.session.sidebar_changed`)."""
    changed = when_changed(data)
    st.markdown("### :material/travel_explore: Abstract Atlas")
    if len(catalog) > 1:
        titles = map_titles(catalog)
        st.selectbox(
            "Map",
            [m.name for m in catalog],
            key=session.MAP_CHOICE,
            on_change=switch_map,
            format_func=titles.get,
            help="Maps found under assets/maps/ (and the one given with --map or ATLAS_MAP).",
        )
    st.text_input(
        "Search",
        key=widget_key("search"),
        **changed,
        placeholder="Words, or describe what you look for",
        help=SEARCH_HELP,
    )
    themes_filter(data)
    topics_filter(data)
    facets_filter(data)
    unassigned_switch(data)
    if data.added is not None and data.added.any():  # only maps grown with `python -m pipeline add`
        st.toggle(
            f"Highlight papers added since the last build ({int(data.added.sum()):,})",
            key=widget_key("added_only"),
            **changed,
            help="Papers placed on this map by `python -m pipeline add` after its last full build: "
            "only they stay in colour on the map and in the table; the rest stays as faint context.",
        )
    st.button("Reset view", on_click=reset_view, icon=":material/restart_alt:", width="stretch")
    st.divider()
    st.caption(
        ":material/link: The address bar always holds a link to what you see: copy it to share this view."
    )


@st.fragment(key="themes")
def themes_filter(data: MapData) -> None:
    """The Themes filter: a part of the page of its own inside the sidebar's, so that a theme picked in
    the map's key, or a link's themes gone Back to, redraws only it."""
    session.push_part("themes")
    themes = usable_themes(data.topics, data.themes)
    if themes is not None:
        ordered = sorted(themes.itertuples(), key=lambda r: (-int(r.size), int(r.theme_id)))
        names = {int(r.theme_id): f"{r.label} ({int(r.size):,})" for r in ordered}
        st.multiselect(
            "Themes",
            list(names),
            key=widget_key("themes"),
            **when_changed(data),
            placeholder="All themes",
            select_all=False,
            format_func=names.get,
            help="Groups of related topics: choosing themes shows only their topics' papers.",
        )
    session.part_shown("themes")


@st.fragment(key="facets")
def facets_filter(data: MapData) -> None:
    """The metadata filters (year, venue, …): a part of their own inside the sidebar's, so that a value
    picked in the map's key, or a link's gone Back to, redraws only them."""
    session.push_part("facets")
    for column, values in data.facets.items():  # never input file names (`app.data.facet_columns`)
        name = column.replace("_", " ")
        st.multiselect(
            markdown_literal(column_name(column)),  # column names come from the data
            values,
            key=filter_key(column),
            **when_changed(data),
            placeholder=f"Any {name}",
            select_all=False,
        )
    session.part_shown("facets")


@st.fragment(key="topics")
def topics_filter(data: MapData) -> None:
    """The Topics filter: a part of the page of its own inside the sidebar's, so that choosing a theme,
    which changes the topics it offers, reruns only it and not the whole sidebar (its other widgets
    drawn again by React: benchmarks/STEPS_RESULTS.md, slice 7)."""
    session.push_part("topics")
    chosen_themes = list(session.chosen("themes"))
    st.multiselect(
        "Topics",
        topic_options(data, chosen_themes),
        key=widget_key("topics"),
        **when_changed(data),
        placeholder="All topics in the chosen themes" if chosen_themes else "All topics",
        select_all=False,  # no choice already means every topic
        format_func=lambda t: f"{data.label(t)} ({data.sizes[t]:,})",
        help="Choosing topics shows exactly their papers; choose “Unassigned” to include the "
        "papers no topic claimed."
        + (" Only the chosen themes' topics are offered." if chosen_themes else ""),
    )
    session.part_shown("topics")


@st.fragment(key="unassigned")
def unassigned_switch(data: MapData) -> None:
    """The unassigned papers' switch: a part of the page of its own inside the sidebar's, so that choosing
    the first topic or theme, which hides it, reruns only it and not the whole sidebar (0.15 s of that
    filter at 5,000 papers: benchmarks/STEPS_RESULTS.md, slice 5)."""
    # A map where every paper has a topic needs no such switch; in a topic or theme view the
    # unassigned papers are chosen under Topics instead (the switch keeps its value meanwhile).
    key = session.keep_unassigned_switch()
    if data.sizes[-1] and not (session.chosen("topics") or session.chosen("themes")):
        st.toggle(
            f"Show unassigned papers ({data.sizes[-1]:,})",
            key=key,
            **when_changed(data),
            help="Papers the clustering left out of every topic, drawn in grey. With topics or "
            "themes chosen, only their papers are shown: choose “Unassigned” under Topics to add them.",
        )
    session.part_shown("unassigned")


def header(data: MapData) -> None:
    """The map's name and facts (the sentence saying what the page counts follows: `app.map_component.live_header`)."""
    manifest = data.manifest
    st.markdown(f"## {markdown_literal(manifest.name or data.name)}")
    model = manifest.model.name.split("/")[-1]
    parts = [
        counted(data.n, "paper"),
        counted(len(data.topic_order), "topic"),
        f"{data.sizes[-1]:,} unassigned",
    ]
    if data.themes is not None and len(data.themes):
        parts.insert(1, counted(len(data.themes), "theme"))
    if model:
        parts.append(f"embedded with {model}")
    if manifest.built_at:
        parts.append(f"built {manifest.built_at[:10]}")
    st.caption(" · ".join(markdown_literal(p) for p in parts))
    for notice in data.notices:  # e.g. a damaged search index, replaced for this session
        st.caption(f":material/warning: {markdown_literal(notice)}")


def notices_panel(search_notices: tuple[str, ...] = ()) -> None:
    """Ignored link settings and shared-link history (until dismissed), and what the search left out."""
    notices, link_info = session.notices()
    with st.container(border=False):  # present even when empty: the page below keeps its place
        for line in search_notices:  # plain text: it quotes what the reader typed
            st.caption(f":material/info: {markdown_literal(line)}")
        for line in link_info:  # plain text: it quotes topic names from the data
            st.info(markdown_literal(line), icon=":material/history:")
        if link_info and not notices:
            st.button("Dismiss", on_click=dismiss_notices, key="dismiss_link_info", type="tertiary")
        if notices:
            st.warning(
                "Parts of this link could not be used and were ignored:\n\n"
                + "\n".join(f"- {markdown_literal(n)}" for n in notices),
                icon=":material/link_off:",
            )
            st.button("Dismiss", on_click=dismiss_notices, key="dismiss_notices", type="tertiary")


def no_map_page(message: str, folder: object = None, name: str = "") -> None:
    """The page shown when a map cannot be loaded: what is wrong, without the server's folders."""
    st.markdown("## :material/travel_explore: Abstract Atlas")
    st.error(markdown_literal(without_server_paths(message, folder, name)), icon=":material/map:")
    st.markdown(
        "Build the default map with `make run`, or with "
        "`python -m pipeline build seeds --out assets/maps/seeds`, then reload this page."
    )
