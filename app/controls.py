"""The sidebar (map, search, filters, reset), the page header and the notice about ignored link settings."""

from __future__ import annotations

import streamlit as st

from app.data import MapData, MapRef
from app.filters import search_words
from app.paper_view import INPUT_FILE
from app.session import FACET_PREFIX, dismiss_notices, reset_view, switch_map
from app.state import ViewState
from app.text import markdown_literal, shorten
from app.themes import usable_themes


def sidebar(data: MapData, catalog: list[MapRef]) -> None:
    with st.sidebar:
        st.markdown("### :material/travel_explore: Abstract Atlas")
        if len(catalog) > 1:
            st.selectbox(
                "Map",
                [m.name for m in catalog],
                key="map_choice",
                on_change=switch_map,
                help="Maps found under assets/maps/ (and the one given with --map or ATLAS_MAP).",
            )
        st.text_input(
            "Search",
            key="w_search",
            placeholder="Words in titles and abstracts",
            help="Case-insensitive; a paper must contain every word. Matches are highlighted on "
            "the map and listed in the table.",
        )
        themes = usable_themes(data.topics, data.themes)
        if themes is not None:
            ordered = sorted(themes.itertuples(), key=lambda r: (-int(r.size), int(r.theme_id)))
            names = {int(r.theme_id): f"{r.label} ({int(r.size):,})" for r in ordered}
            st.multiselect(
                "Themes",
                list(names),
                key="w_themes",
                placeholder="All themes",
                select_all=False,
                format_func=names.get,
                help="Groups of related topics: choosing themes shows only their topics' papers.",
            )
        st.multiselect(
            "Topics",
            data.topic_order,
            key="w_topics",
            placeholder="All topics",
            select_all=False,  # no choice already means every topic
            format_func=lambda t: f"{data.label(t)} ({data.sizes[t]:,})",
        )
        for column, values in data.facets.items():
            files = column == "source" and all(INPUT_FILE.search(v) for v in values)
            name = "input file" if files else column.replace("_", " ")  # say what a file-name source is
            st.multiselect(
                markdown_literal(name.capitalize()),  # column names come from the data
                values,
                key=FACET_PREFIX + column,
                placeholder=f"Any {name}",
                select_all=False,
            )
        if data.sizes[-1]:  # a map where every paper has a topic needs no such switch
            st.toggle(
                f"Show unassigned papers ({data.sizes[-1]:,})",
                key="w_unassigned",
                help="Papers the clustering left out of every topic, drawn in grey.",
            )
        if data.added is not None and data.added.any():  # only maps grown with `python -m pipeline add`
            st.toggle(
                f"Highlight papers added since the last build ({int(data.added.sum()):,})",
                key="w_added",
                help="Papers placed on this map by `python -m pipeline add` after its last full build: "
                "only they stay in colour on the map and in the table; the rest stays as faint context.",
            )
        st.button("Reset view", on_click=reset_view, icon=":material/restart_alt:", width="stretch")
        st.divider()
        st.caption(
            ":material/link: The address bar always holds a link to what you see: copy it to share this view."
        )


def header(data: MapData, shown: int, state: ViewState, matches: int | None) -> None:
    manifest = data.manifest
    st.markdown(f"## {markdown_literal(manifest.get('name') or data.name)}")
    model = (manifest.get("model") or {}).get("name", "").split("/")[-1]
    parts = [f"{data.n:,} papers", f"{len(data.topic_order):,} topics", f"{data.sizes[-1]:,} unassigned"]
    if data.themes is not None and len(data.themes):
        parts.insert(1, f"{len(data.themes):,} themes")
    if model:
        parts.append(f"embedded with {model}")
    if manifest.get("built_at"):
        parts.append(f"built {str(manifest['built_at'])[:10]}")
    st.caption(" · ".join(markdown_literal(p) for p in parts))
    # Always one element here, so what follows keeps its place in the page and is not remounted.
    if matches is not None:
        words = " ".join(search_words(state.search))
        line = f"**{matches:,}** of {data.n:,} papers match “{markdown_literal(shorten(words, 60))}”"
    elif shown != data.n:
        line = f"Showing **{shown:,}** of {data.n:,} papers"
    else:
        line = f"Showing all {data.n:,} papers"
    st.markdown(line)


def notices_panel() -> None:
    notices = st.session_state.get("notices") or []
    link_info = st.session_state.get("link_info") or []
    with st.container(border=False):  # present even when empty: the page below keeps its place
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


def no_map_page(message: str) -> None:
    st.markdown("## :material/travel_explore: Abstract Atlas")
    st.error(markdown_literal(message), icon=":material/map:")
    st.markdown(
        "Build the default map with `make run`, or with "
        "`python -m pipeline build seeds --out assets/maps/seeds`, then reload this page."
    )
