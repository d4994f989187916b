"""The topic view: a topic's keywords, representative papers and nearest topics, and the topic picker."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import session
from app.data import MapData
from app.session import on_topic_pick, on_topic_select_box, only_this_topic
from app.text import counted, markdown_literal, plotly_escape
from app.trends import has_venues, has_years, venue_counts, venue_figure, year_figure, year_shares
from app.widgets import SIDE_WIDTH, paper_table, topic_note, wrapped_height


def keyword_figure(keywords: list[str], weights: list[float], colour: str) -> go.Figure:
    """Horizontal bars of a topic's keywords by c-TF-IDF weight, the strongest on top."""
    order = list(range(len(keywords)))[::-1]
    figure = go.Figure(
        go.Bar(
            x=[float(weights[i]) for i in order],
            y=[plotly_escape(keywords[i]) for i in order],
            orientation="h",
            marker={"color": colour},
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        height=max(160, 24 * len(keywords) + 40),
        margin={"l": 4, "r": 4, "t": 4, "b": 28},
        xaxis={
            "title": {"text": "weight (c-TF-IDF)", "font": {"size": 11}},
            "showgrid": True,
            "gridcolor": "#eef0f3",
        },
        yaxis={"automargin": True},
        plot_bgcolor="white",
        paper_bgcolor="rgba(0,0,0,0)",
    )
    return figure


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
        f"{counted(size, 'paper')} · {share:.1%} of the map"
        + (" · topic " + str(topic) if topic != -1 else "")
    )
    st.button(
        "Only this topic",
        on_click=only_this_topic,
        args=(topic, data.topic_themes().get(topic)),
        icon=":material/filter_center_focus:",
        key="only_topic",
        help="Filter the map and the table to this topic's papers.",
    )
    if topic == -1:
        st.info(
            "Unassigned papers are those no topic claimed: too far from every cluster. They stay on the "
            "map in grey.",
            icon=":material/info:",
        )
        rows = np.flatnonzero(data.topic_ids == -1)
        paper_table(data, rows[:50], "unassigned", height=300, compact=True)
        return
    row = data.topics.loc[topic]
    topic_note(data, topic)
    stability_line(row)
    central = central_papers(data, topic)
    if len(central):
        st.markdown(f"**Most central papers** ({len(central)} of {size:,}, nearest the topic's centre first)")
        paper_table(data, central, "representatives", compact=True)
    charts(data, topic, row)
    nearest_topics(data, topic)


def charts(data: MapData, topic: int, row: pd.Series) -> None:
    """The topic's keywords, and where the map has them its share over the years and its venues, as
    tabs; only the open tab's chart is made and sent (each Plotly chart costs the browser ~0.1 s)."""
    keywords, weights = list(row["keywords"]), list(row["keyword_weights"])
    shares = year_shares(data.papers, topic) if has_years(data.papers) else None
    venues = (
        venue_counts(data.papers, topic)
        if has_venues(data.papers) and data.papers["venue"].nunique() >= 2
        else None
    )
    label = data.label(topic)
    made = {
        "Keywords": (lambda: keyword_figure(keywords, weights, data.colours[topic])) if keywords else None,
        "Over the years": (lambda: year_figure(shares, label))
        if shares is not None and len(shares) >= 2
        else None,
        "Venues": (lambda: venue_figure(venues, label)) if venues is not None and len(venues) else None,
    }
    made = {name: figure for name, figure in made.items() if figure is not None}
    if not made:
        return
    if len(made) == 1:
        name, figure = next(iter(made.items()))
        st.markdown(f"**{name}**")
        st.plotly_chart(figure(), config={"displayModeBar": False}, key=f"{name}-{topic}")
        return
    key = session.chart_tab(list(made))  # the tab the reader chose, kept from topic to topic
    for tab, (name, figure) in zip(st.tabs(list(made), key=key, on_change="rerun"), made.items()):
        if tab.open:
            with tab:
                st.plotly_chart(figure(), config={"displayModeBar": False}, key=f"{name}-{topic}")


CENTRAL = 10  # papers listed for an opened topic


def central_papers(data: MapData, topic: int, k: int = CENTRAL) -> np.ndarray:
    """Rows of the topic's `k` papers nearest its centre: the build's representative papers first, then
    the papers whose vectors are most like the mean of the topic's vectors (cosine), most like first."""
    rows = np.flatnonzero(data.topic_ids == topic)
    chosen = [data.row_of[d] for d in data.topics.loc[topic, "representative_doc_ids"] if d in data.row_of]
    if len(rows) > len(chosen):
        vectors = np.asarray(data.vectors[rows], dtype=np.float32)
        centre = vectors.mean(axis=0)
        order = rows[np.argsort(-(vectors @ centre), kind="stable")]
        listed = set(chosen)
        chosen += [int(r) for r in order[: k + len(listed)] if r not in listed]
    return np.array(chosen[:k], dtype=np.int64)


STABILITY_HELP = (
    "how reliably the topic comes back when the clustering is redone on 90% of the papers "
    "(1 = always the same papers, 0 = never)"
)


def stability_line(row: pd.Series) -> None:
    """The topic's stability score with what it means; nothing when the map was built without it."""
    value = pd.to_numeric(pd.Series([row.get("stability")]), errors="coerce").iat[0]
    if pd.isna(value):
        return
    st.markdown(f"**Stability {float(value):.2f}** · {STABILITY_HELP}")


def nearest_topics(data: MapData, topic: int) -> None:
    position = data.topic_order.index(topic)
    similarity = data.topic_similarity[position]
    nearest = [i for i in np.argsort(-similarity) if i != position][:5]
    if not nearest:
        return
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
    topic_width = SIDE_WIDTH - 60 - 80  # the rest of the panel: names whole, wrapped if long
    row_height = wrapped_height([(table["Topic"].tolist(), topic_width)])
    st.dataframe(
        table,
        key=key,
        hide_index=True,
        on_select=partial(on_topic_pick, key, ids),
        selection_mode="single-row",
        height=row_height * len(table) + 38,
        row_height=row_height,
        column_config={
            "Topic": st.column_config.TextColumn("Topic", width=topic_width),
            "Papers": st.column_config.NumberColumn("Papers", format="%d", width=60),
            "Similarity": st.column_config.ProgressColumn(
                "Similarity", format="%.2f", min_value=0.0, max_value=1.0, width=80
            ),
        },
    )
