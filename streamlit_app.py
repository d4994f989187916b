"""Abstract Atlas: explore a topic map of research abstracts (Streamlit entry point).

Run with `streamlit run streamlit_app.py` (the committed seed map), `... -- --map DIR` or
`ATLAS_MAP=DIR streamlit run streamlit_app.py` for another map folder. Pure helpers live in
`app/`; this file loads the map through Streamlit's caches and composes small view functions.
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from app.data import MapData, MapRef, build_map_data, map_catalog, map_signature, maps_root, requested_map
from app.figure import MAP_CONFIG, Pin, keyword_figure, map_figure
from app.filters import filter_mask, search_mask, search_words
from app.selection import selected_papers
from app.state import ViewState, normalise_params, parse_map, parse_view, to_params
from app.text import markdown_literal, shorten
from pipeline import UserError
from pipeline.export import export_frame, to_csv_bytes

NEIGHBOURS = 8
TABLE_ROWS = 1000  # rows sent to the browser per paper table; the CSV download has them all
WIDGETS = ("w_search", "w_topics", "w_unassigned")
FACET_PREFIX = "w_f_"


# --------------------------------------------------------------------------- cached loaders
@st.cache_resource(show_spinner="Loading the map…", max_entries=4)
def load_map(name: str, path: str, signature: tuple) -> MapData:
    """The map and its precomputations; `signature` (file mtimes) makes a rebuilt map load afresh."""
    return build_map_data(name, Path(path))


@st.cache_data(show_spinner=False, max_entries=128)
def cached_search(name: str, path: str, signature: tuple, query: str) -> np.ndarray:
    return search_mask(load_map(name, path, signature).search_text, query)


@st.cache_resource(show_spinner=False)
def load_encoder_once(embedder: str):
    """The map's own encoder, loaded on first use of "Where does my paper fit?" and then kept."""
    from pipeline.embed import load_encoder

    try:
        return load_encoder(embedder)
    except ImportError:  # the ONNX encoder module is optional; the reference model gives the same space
        return load_encoder("torch-fp32")


# --------------------------------------------------------------------------- session state
def current_state() -> ViewState:
    filters = tuple(
        (key[len(FACET_PREFIX) :], tuple(st.session_state[key]))
        for key in sorted(k for k in st.session_state if str(k).startswith(FACET_PREFIX))
        if st.session_state[key]
    )
    return ViewState(
        search=(st.session_state.get("w_search") or "").strip(),
        topics=tuple(st.session_state.get("w_topics") or ()),
        show_unassigned=bool(st.session_state.get("w_unassigned", True)),
        filters=filters,
        topic=st.session_state.get("topic"),
        paper=st.session_state.get("paper"),
    )


def apply_state(state: ViewState, data: MapData) -> None:
    """Put a view state into the widgets' session keys (before the widgets are drawn)."""
    for key in [k for k in st.session_state if str(k).startswith(FACET_PREFIX)]:
        del st.session_state[key]
    st.session_state.w_search = state.search
    st.session_state.w_topics = list(state.topics)
    st.session_state.w_unassigned = state.show_unassigned
    chosen = state.filter_dict()
    for column in data.facets:
        st.session_state[FACET_PREFIX + column] = list(chosen.get(column, ()))
    st.session_state.topic = state.topic
    st.session_state.paper = state.paper
    st.session_state.selection = ()
    st.session_state.pin = None


def sanitise_state(data: MapData) -> None:
    """Drop widget values a rebuilt map no longer has, so a widget never sees an unknown option."""
    known = set(data.topic_order)
    st.session_state.w_topics = [t for t in st.session_state.get("w_topics", []) if t in known]
    for column, values in data.facets.items():
        key = FACET_PREFIX + column
        allowed = set(values)
        st.session_state[key] = [v for v in st.session_state.get(key, []) if v in allowed]
    if st.session_state.get("topic") not in data.vocabulary().topic_ids:
        st.session_state.topic = None
    if st.session_state.get("paper") not in data.row_of:
        st.session_state.paper = None
    st.session_state.selection = tuple(d for d in st.session_state.get("selection", ()) if d in data.row_of)


def sync_url(state: ViewState, map_name: str | None) -> None:
    """Write the view into the query string (only when it changed), so the address bar is a share link."""
    wanted = normalise_params(to_params(state, map_name))
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    if normalise_params(current) != wanted:
        st.query_params.from_dict(wanted)


# --------------------------------------------------------------------------- callbacks
def open_paper(doc_id: str | None) -> None:
    st.session_state.paper = doc_id


def open_topic(topic: int | None) -> None:
    st.session_state.topic = topic
    st.session_state.paper = None


def on_map_select(key: str, known: dict) -> None:
    selection = selected_papers(st.session_state.get(key), known=known)
    st.session_state.selection = selection.doc_ids
    if selection.is_click:
        st.session_state.paper = selection.doc_ids[0]


def clear_selection() -> None:
    st.session_state.selection = ()
    st.session_state.map_nonce = st.session_state.get("map_nonce", 0) + 1


def on_row_pick(key: str, doc_ids: list[str]) -> None:
    rows = st.session_state[key].selection.rows
    st.session_state.paper = doc_ids[rows[0]] if rows else None


def on_topic_pick(key: str, topic_ids: list[int]) -> None:
    rows = st.session_state[key].selection.rows
    open_topic(topic_ids[rows[0]] if rows else None)


def on_topic_select_box(key: str) -> None:
    open_topic(st.session_state[key])


def only_this_topic(topic: int) -> None:
    st.session_state.w_topics = [topic] if topic != -1 else []
    if topic == -1:
        st.session_state.w_unassigned = True


def reset_view() -> None:
    for key in [k for k in st.session_state if str(k).startswith(FACET_PREFIX)]:
        st.session_state[key] = []
    st.session_state.w_search = ""
    st.session_state.w_topics = []
    st.session_state.w_unassigned = True
    st.session_state.topic = None
    st.session_state.paper = None
    st.session_state.notices = []
    clear_selection()


def switch_map() -> None:
    st.session_state.initialised = None  # the next run starts the new map from its default view


def dismiss_notices() -> None:
    st.session_state.notices = []


def place_abstract(data: MapData) -> None:
    """Embed the pasted abstract with the map's model and pin it; nothing is written anywhere."""
    from pipeline.place import place

    text = (st.session_state.get("fit_text") or "").strip()
    if len(text.split()) < 5:
        st.session_state.pin = {"error": "Paste an abstract of at least a few sentences to place it."}
        return
    embedder = (data.manifest.get("config") or {}).get("embedder", "torch-fp32")
    try:
        encoder = load_encoder_once(embedder)
        vector = encoder.encode([text])[0]
    except Exception as exc:  # a missing or broken model must not take the page down
        st.session_state.pin = {"error": f"The embedding model could not be loaded ({str(exc)[:160]})."}
        return
    spot = place(vector, data.vectors, data.papers[["x", "y"]].to_numpy(), data.topic_ids, k=NEIGHBOURS)
    st.session_state.pin = {
        "x": spot.x,
        "y": spot.y,
        "topic": spot.topic_id,
        "encoder": getattr(encoder, "name", embedder),
        "rows": spot.neighbour_rows.tolist(),
        "similarities": spot.similarities.tolist(),
    }


def request_placement() -> None:
    st.session_state.fit_pending = True


def remove_pin() -> None:
    st.session_state.pin = None


# --------------------------------------------------------------------------- views
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
        st.multiselect(
            "Topics",
            data.topic_order,
            key="w_topics",
            placeholder="All topics",
            select_all=False,  # no choice already means every topic
            format_func=lambda t: f"{data.label(t)} ({data.sizes[t]:,})",
        )
        for column, values in data.facets.items():
            st.multiselect(
                markdown_literal(column.replace("_", " ").capitalize()),  # column names come from the data
                values,
                key=FACET_PREFIX + column,
                placeholder=f"Any {column.replace('_', ' ')}",
                select_all=False,
            )
        if data.sizes[-1]:  # a map where every paper has a topic needs no such switch
            st.toggle(
                f"Show unassigned papers ({data.sizes[-1]:,})",
                key="w_unassigned",
                help="Papers the clustering left out of every topic, drawn in grey.",
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
    if model:
        parts.append(f"embedded with {model}")
    if manifest.get("built_at"):
        parts.append(f"built {str(manifest['built_at'])[:10]}")
    st.caption(" · ".join(markdown_literal(p) for p in parts))
    if matches is not None:
        words = " ".join(search_words(state.search))
        st.markdown(f"**{matches:,}** of {data.n:,} papers match “{markdown_literal(shorten(words, 60))}”")
    elif shown != data.n:
        st.markdown(f"Showing **{shown:,}** of {data.n:,} papers")


def notices_panel() -> None:
    notices = st.session_state.get("notices") or []
    if notices:
        with st.container(border=False):
            st.warning(
                "Parts of this link could not be used and were ignored:\n\n"
                + "\n".join(f"- {markdown_literal(n)}" for n in notices),
                icon=":material/link_off:",
            )
            st.button("Dismiss", on_click=dismiss_notices, key="dismiss_notices", type="tertiary")


def map_view(data: MapData, in_view: np.ndarray, state: ViewState) -> None:
    pin = st.session_state.get("pin")
    figure = map_figure(
        data,
        in_view,
        search_active=bool(search_words(state.search)),
        chosen_topic=state.topic,
        chosen_row=data.row_of.get(state.paper) if state.paper else None,
        pin=Pin(pin["x"], pin["y"], data.label(pin["topic"])) if pin and "x" in pin else None,
    )
    key = f"map-{st.session_state.get('map_nonce', 0)}"
    st.plotly_chart(
        figure,
        key=key,
        on_select=partial(on_map_select, key, data.row_of),
        selection_mode=("points", "box", "lasso"),
        config=MAP_CONFIG,
    )
    st.caption(
        "Click a point to open it · box :material/highlight_alt: or lasso :material/gesture: select (top right) "
        "to list a group · scroll to zoom, drag to pan, double-click to reset"
    )


def topic_list(data: MapData, in_view: np.ndarray, state: ViewState, filtered: bool) -> None:
    """Topics by size beside the map; with filters on, the bars count only the papers in view."""
    st.markdown("#### Topics")
    ids = [*data.topic_order, -1] if data.sizes[-1] else list(data.topic_order)
    counts = np.bincount(data.topic_ids[in_view] + 1, minlength=max(ids) + 2)
    column = "In view" if filtered else "Papers"
    table = pd.DataFrame(
        {
            "": ["●"] * len(ids),
            "Topic": [data.label(t) for t in ids],
            column: [int(counts[t + 1]) if filtered else data.sizes[t] for t in ids],
        }
    )
    largest = max(data.sizes.values()) or 1
    styled = table.style.apply(lambda _: [f"color: {data.colours[t]}" for t in ids], subset=[""])
    chosen = [ids.index(state.topic)] if state.topic in ids else []
    key = f"topic-list-{state.topic}"
    st.dataframe(
        styled,
        key=key,
        hide_index=True,
        on_select=partial(on_topic_pick, key, ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": chosen}},
        height=min(560, 35 * (len(ids) + 1) + 3),
        row_height=35,
        column_config={
            "": st.column_config.TextColumn("", width=20),
            "Topic": st.column_config.TextColumn("Topic", width=155),
            column: st.column_config.ProgressColumn(
                column, format="%d", min_value=0, max_value=largest, width=90
            ),
        },
    )
    st.caption("Select a topic to open it.")


def paper_rows(data: MapData, rows: np.ndarray, extra: dict[str, list] | None = None) -> pd.DataFrame:
    """A readable table of papers: title, topic, source and a few metadata columns."""
    papers = data.papers.iloc[rows]
    table = pd.DataFrame(
        {
            "Title": papers["title"].astype(str).to_numpy(),
            "Topic": [data.label(t) for t in data.topic_ids[rows]],
            "Source": papers["source"].astype(str).to_numpy(),
        }
    )
    for column in data.table_columns:
        table[column.capitalize()] = papers[column].to_numpy()
    for name, values in (extra or {}).items():
        table[name] = values
    return table


def paper_table(
    data: MapData,
    rows: np.ndarray,
    key_prefix: str,
    *,
    height: int | str = "auto",
    similarity: list[float] | None = None,
    caption: str | None = None,
    compact: bool = False,
) -> None:
    """A selectable table of papers; choosing a row opens that paper.

    `compact` keeps only title, topic and similarity, for the narrow detail panel.
    """
    doc_ids = data.papers["doc_id"].to_numpy()[rows].tolist()
    extra = {"Similarity": similarity} if similarity is not None else None
    table = paper_rows(data, rows, extra)
    if compact:
        table = table[[c for c in ("Title", "Topic", "Similarity") if c in table.columns]]
    digest = hashlib.blake2b("\n".join(doc_ids).encode(), digest_size=6).hexdigest()
    key = f"{key_prefix}-{digest}-{st.session_state.get('paper')}"
    opened = st.session_state.get("paper")
    chosen = [doc_ids.index(opened)] if opened in doc_ids else []
    column_config = {
        "Title": st.column_config.TextColumn(
            "Title", width=(150 if similarity else 210) if compact else (240 if similarity else 280)
        ),
        "Topic": st.column_config.TextColumn("Topic", width=90 if compact else 140),
        "Source": st.column_config.TextColumn("Source", width=110 if similarity is None else 90),
    }
    if similarity is not None:
        column_config["Similarity"] = st.column_config.ProgressColumn(
            "Similarity", format="%.2f", min_value=0.0, max_value=1.0, width=70 if compact else 90
        )
    st.dataframe(
        table,
        key=key,
        hide_index=True,
        on_select=partial(on_row_pick, key, doc_ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": chosen}},
        column_config=column_config,
        height=height,
    )
    if caption:
        st.caption(caption)


def papers_panel(data: MapData, view_rows: np.ndarray) -> np.ndarray:
    """The papers table: the map selection when there is one, else every paper in view."""
    selection = st.session_state.get("selection") or ()
    in_view = np.zeros(data.n, dtype=bool)
    in_view[view_rows] = True
    picked = [d for d in selection if in_view[data.row_of[d]]]
    if selection:
        rows = np.array([data.row_of[d] for d in picked], dtype=np.int64)
        heading, action = st.columns([3, 1], vertical_alignment="bottom")
        heading.markdown(f"#### Selected on the map · {len(rows):,}")
        action.button(
            "Clear selection", on_click=clear_selection, icon=":material/deselect:", width="stretch"
        )
        if len(picked) < len(selection):
            st.caption(f"{len(selection) - len(picked):,} selected papers are hidden by the current filters.")
    else:
        rows = view_rows
        st.markdown(f"#### Papers · {len(rows):,}")
    if len(rows):
        caption = "Select a row to read the paper."
        if len(rows) > TABLE_ROWS:
            caption = (
                f"Showing the first {TABLE_ROWS:,} of {len(rows):,}: search, filter or select on the map "
                "to narrow them, or download them all as CSV. " + caption
            )
        paper_table(data, rows[:TABLE_ROWS], "papers", height=420, caption=caption)
    else:
        st.info("No papers match the current filters and search.", icon=":material/filter_alt_off:")
    return rows


def downloads(data: MapData, rows: np.ndarray) -> None:
    left, right = st.columns(2)

    def view_csv(rows=rows) -> bytes:
        return to_csv_bytes(export_frame(data.papers.iloc[rows], data.topics.reset_index(drop=True)))

    def map_csv() -> bytes:
        return to_csv_bytes(export_frame(data.papers, data.topics.reset_index(drop=True)))

    left.download_button(
        f"Download these {len(rows):,} papers (CSV)",
        view_csv,
        file_name=f"{data.name}-view.csv",
        mime="text/csv",
        icon=":material/download:",
        key="download_view",
        width="stretch",
        on_click="ignore",
        disabled=not len(rows),
    )
    right.download_button(
        f"Download the whole map · {data.n:,} (CSV)",
        map_csv,
        file_name=f"{data.name}.csv",
        mime="text/csv",
        icon=":material/download:",
        key="download_map",
        width="stretch",
        on_click="ignore",
    )


def detail_panel(data: MapData, state: ViewState) -> None:
    if state.paper and state.paper in data.row_of:
        paper_view(data, data.row_of[state.paper])
    elif state.topic is not None:
        topic_view(data, state.topic)
    else:
        st.markdown("#### Explore")
        st.markdown(
            "Open a **topic** from the list or a **paper** from the table, click a point on the map, or "
            "select a group of papers with the map's **box** or **lasso** tool."
        )
        topic_picker(data, None)


def topic_picker(data: MapData, topic: int | None) -> None:
    options = [*data.topic_order, -1] if data.sizes[-1] else list(data.topic_order)
    key = f"topic-pick-{topic}"
    st.selectbox(
        "Topic",
        options,
        index=options.index(topic) if topic in options else None,
        key=key,
        format_func=lambda t: f"{data.label(t)} ({data.sizes[t]:,})",
        on_change=on_topic_select_box,
        args=(key,),
        placeholder="Choose a topic…",
        label_visibility="collapsed",
    )


def topic_view(data: MapData, topic: int) -> None:
    topic_picker(data, topic)
    size = data.sizes.get(topic, 0)
    st.markdown(f"#### {markdown_literal(data.label(topic))}")
    share = size / data.n if data.n else 0
    st.caption(
        f"{size:,} papers · {share:.1%} of the map" + (" · topic " + str(topic) if topic != -1 else "")
    )
    buttons = st.columns(2)
    buttons[0].button(
        "Only this topic",
        on_click=only_this_topic,
        args=(topic,),
        icon=":material/filter_center_focus:",
        width="stretch",
        key="only_topic",
    )
    buttons[1].button(
        "Close",
        on_click=open_topic,
        args=(None,),
        icon=":material/close:",
        width="stretch",
        key="close_topic",
    )
    if topic == -1:
        st.info(
            "Unassigned papers are those no topic claimed: too far from every cluster. They stay on the "
            "map in grey.",
            icon=":material/info:",
        )
        rows = np.flatnonzero(data.topic_ids == -1)
        paper_table(data, rows[:200], "unassigned", height=300, compact=True)
        return
    row = data.topics.loc[topic]
    keywords, weights = list(row["keywords"]), list(row["keyword_weights"])
    if keywords:
        st.markdown("**Keywords**")
        st.plotly_chart(
            keyword_figure(keywords, weights, data.colours[topic]),
            config={"displayModeBar": False},
            key=f"keywords-{topic}",
        )
    representatives = [data.row_of[d] for d in row["representative_doc_ids"] if d in data.row_of]
    if representatives:
        st.markdown("**Representative papers**")
        paper_table(data, np.array(representatives, dtype=np.int64), "representatives", compact=True)
    position = data.topic_order.index(topic)
    similarity = data.topic_similarity[position]
    nearest = [i for i in np.argsort(-similarity) if i != position][:5]
    if nearest:
        st.markdown("**Nearest topics**")
        ids = [data.topic_order[i] for i in nearest]
        table = pd.DataFrame(
            {
                "Topic": [data.label(t) for t in ids],
                "Papers": [data.sizes[t] for t in ids],
                "Similarity": [float(similarity[i]) for i in nearest],
            }
        )
        key = f"nearest-topics-{topic}"
        st.dataframe(
            table,
            key=key,
            hide_index=True,
            on_select=partial(on_topic_pick, key, ids),
            selection_mode="single-row",
            column_config={
                "Similarity": st.column_config.ProgressColumn(
                    "Similarity", format="%.2f", min_value=0.0, max_value=1.0
                )
            },
        )


def paper_view(data: MapData, row: int) -> None:
    paper = data.papers.iloc[row]
    topic = int(data.topic_ids[row])
    top = st.columns([5, 1], vertical_alignment="top")
    top[0].markdown(f"#### {markdown_literal(paper['title'])}")
    top[1].button("Close", on_click=open_paper, args=(None,), icon=":material/close:", key="close_paper")
    topic_line = st.columns([3, 2], vertical_alignment="center")
    topic_line[0].markdown(f"**Topic:** {markdown_literal(data.label(topic))}")
    topic_line[1].button(
        "Open topic",
        on_click=open_topic,
        args=(topic,),
        icon=":material/hub:",
        key="paper_open_topic",
        width="stretch",
    )
    details = [str(paper["source"])]
    for column in ("collection", "venue", "year", "authors"):
        if column in paper.index and pd.notna(paper[column]) and str(paper[column]) not in details:
            details.append(str(paper[column]))
    st.caption(" · ".join(markdown_literal(shorten(d, 120)) for d in details))
    url = str(paper["url"]) if "url" in paper.index and pd.notna(paper["url"]) else ""
    if url.startswith(("https://", "http://")):  # never a javascript: or data: link from the data
        st.link_button("Open the paper's page", url, icon=":material/open_in_new:")
    with st.container(border=True):
        st.text(str(paper["abstract"]))
    st.markdown("**Nearest papers**")
    from pipeline.topics import cosine_knn

    neighbours, similarities = cosine_knn(data.vectors[row : row + 1], data.vectors, NEIGHBOURS + 1)
    keep = neighbours[0] != row
    paper_table(
        data,
        neighbours[0][keep][:NEIGHBOURS],
        "neighbours",
        similarity=[float(s) for s in similarities[0][keep][:NEIGHBOURS]],
        compact=True,
    )


def fit_panel(data: MapData) -> None:
    pin = st.session_state.get("pin")
    with st.expander("Where does my paper fit?", expanded=bool(pin), icon=":material/push_pin:"):
        with st.form("fit", border=False):
            st.text_area(
                "Abstract",
                key="fit_text",
                height=140,
                placeholder="Paste an abstract: it is embedded with this map's model and pinned among "
                "its nearest papers. Nothing is stored.",
            )
            st.form_submit_button(
                "Place on the map", on_click=request_placement, icon=":material/push_pin:", type="primary"
            )
        if st.session_state.pop("fit_pending", False):
            model = (data.manifest.get("model") or {}).get("name", "the map's model").split("/")[-1]
            with st.spinner(f"Embedding your abstract with {model} (the first time also loads the model)…"):
                place_abstract(data)
            st.rerun()  # draw the pin on the map above
        if pin and "error" in pin:
            st.warning(pin["error"])
        elif pin:
            st.success(
                f"Placed in **{markdown_literal(data.label(pin['topic']))}** (the ★ on the map), "
                f"among the papers below.",
                icon=":material/push_pin:",
            )
            paper_table(
                data, np.array(pin["rows"], dtype=np.int64), "fit-neighbours", similarity=pin["similarities"]
            )
            st.button("Remove the pin", on_click=remove_pin, icon=":material/close:", key="remove_pin")
            st.caption(
                f"Embedded with {markdown_literal(pin['encoder'])}; the abstract is kept only in this "
                "browser session."
            )


def about_panel(data: MapData) -> None:
    manifest = data.manifest
    quality = manifest.get("quality") or {}
    with st.expander("About this map", icon=":material/info:"):
        model = manifest.get("model") or {}
        st.markdown(
            f"**{markdown_literal(manifest.get('name') or data.name)}** · "
            f"{manifest.get('papers', data.n):,} papers · {manifest.get('topics', len(data.topic_order)):,} "
            f"topics · {manifest.get('unassigned', data.sizes[-1]):,} unassigned"
        )
        st.caption(
            f"Model {markdown_literal(model.get('name', 'unknown'))} · encoder "
            f"{markdown_literal(model.get('encoder', 'unknown'))} · built "
            f"{markdown_literal(manifest.get('built_at', 'unknown'))} · folder {markdown_literal(data.path)}"
        )
        metrics = st.columns(5)
        metrics[0].metric("Unassigned share", _percent(quality.get("unassigned_share")))
        metrics[1].metric("Largest topic share", _percent(quality.get("largest_topic_share")))
        metrics[2].metric(
            "Coherence (NPMI)",
            _number(quality.get("coherence_npmi")),
            help="Mean normalised PMI of each topic's top words in the abstracts: -1 to 1, higher "
            "is more coherent.",
        )
        metrics[3].metric(
            "Topic diversity",
            _number(quality.get("diversity")),
            help="Share of distinct words among all topics' top words: 1 means no overlap.",
        )
        metrics[4].metric(
            "Build speed",
            f"{manifest['abstracts_per_second']:,} /s" if manifest.get("abstracts_per_second") else "–",
            help="Abstracts per second, end to end.",
        )
        timings = manifest.get("timings_seconds") or {}
        if timings:  # plain text lines: cheaper to draw than a table, and the panel is usually closed
            st.markdown(
                "**Build timings** · "
                + " · ".join(f"{markdown_literal(stage)} {_seconds(v)}" for stage, v in timings.items())
            )
        config = manifest.get("config") or {}
        if config:
            st.markdown(
                "**Build settings** · "
                + " · ".join(f"{markdown_literal(k)} = {markdown_literal(v)}" for k, v in config.items())
            )


def _seconds(value) -> str:
    return f"{value:,.1f} s" if isinstance(value, int | float) else markdown_literal(value)


def _percent(value) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) else "–"


def _number(value) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "–"


def no_map_page(message: str) -> None:
    st.markdown("## :material/travel_explore: Abstract Atlas")
    st.error(markdown_literal(message), icon=":material/map:")
    st.markdown(
        "Build the default map with `make run`, or with "
        "`python -m pipeline build seeds --out assets/maps/seeds`, then reload this page."
    )


# --------------------------------------------------------------------------- page
def main() -> None:
    st.set_page_config(
        page_title="Abstract Atlas",
        page_icon=":material/travel_explore:",
        layout="wide",
        initial_sidebar_state="expanded",
    )
    catalog = map_catalog(requested_map(sys.argv[1:], os.environ), maps_root(os.environ))
    if not catalog:
        no_map_page("No map found under assets/maps/.")
        return
    names = [m.name for m in catalog]
    first_run = "initialised" not in st.session_state
    params = normalise_params({key: st.query_params.get_all(key) for key in st.query_params})
    if first_run:
        st.session_state.map_choice, st.session_state.notices = parse_map(params, names, names[0])
    if st.session_state.get("map_choice") not in names:
        st.session_state.map_choice = names[0]
    ref = catalog[names.index(st.session_state.map_choice)]
    try:
        data = load_map(ref.name, str(ref.path), map_signature(ref.path))
    except UserError as exc:
        no_map_page(str(exc))
        if len(catalog) > 1:
            with st.sidebar:
                st.selectbox("Map", names, key="map_choice", on_change=switch_map)
        return

    if st.session_state.get("initialised") != ref.name:
        state, notices = parse_view(params, data.vocabulary()) if first_run else (ViewState(), [])
        apply_state(state, data)
        st.session_state.notices = st.session_state.get("notices", []) + notices if first_run else []
        st.session_state.initialised = ref.name
    sanitise_state(data)

    sidebar(data, catalog)
    state = current_state()
    signature = map_signature(ref.path)
    in_filter = filter_mask(
        data.topic_ids,
        topics=state.topics,
        show_unassigned=state.show_unassigned,
        filters=state.filter_dict(),
        facet_text=data.facet_text,
    )
    searching = bool(search_words(state.search))
    matches = cached_search(ref.name, str(ref.path), signature, state.search) if searching else None
    in_view = in_filter & matches if matches is not None else in_filter
    view_rows = np.flatnonzero(in_view)

    header(data, len(view_rows), state, int(in_view.sum()) if searching else None)
    notices_panel()
    left, right = st.columns([2, 1], gap="medium")
    with left:
        map_view(data, in_view, state)
        fit_panel(data)
    with right:
        topic_list(data, in_view, state, filtered=len(view_rows) != data.n)
    lower_left, lower_right = st.columns([1.5, 1], gap="large")
    with lower_left:
        rows = papers_panel(data, view_rows)
        downloads(data, rows)
    with lower_right:
        detail_panel(data, state)
    about_panel(data)
    sync_url(state, ref.name if (len(catalog) > 1 or "map" in params) else None)


main()
