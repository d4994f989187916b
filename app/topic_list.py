"""The topic list beside the map: topics by size or growth, grouped under themes where the map has them,
with the papers in view counted when filters are on."""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app.data import MapData
from app.session import on_topic_pick, widget_key
from app.state import SORTS, ViewState
from app.text import counted, markdown_literal
from app.themes import group_topic_list, usable_themes
from app.widgets import SIDE_WIDTH, wrapped_height

SORT_NAMES = {"size": "Largest", "rising": "Rising"}
MAX_HEIGHT = 600  # pixels; a longer grouped list scrolls inside its box


def topic_list(
    data: MapData, in_view: np.ndarray, state: ViewState, filtered: bool, rising: pd.Series | None = None
) -> None:
    """The list; `rising` (growth scores, None when the map has no years) offers the "Rising" order."""
    st.markdown("#### Topics")
    if rising is not None:
        st.segmented_control(
            "Order topics by",
            SORTS,
            key=widget_key("sort"),
            required=True,
            format_func=SORT_NAMES.get,
            help="Largest: most papers first. Rising: the topic's share of papers in the most recent "
            "years divided by its share in the years before, highest first (×1.0 = steady).",
        )
    growth = rising if rising is not None and state.sort == "rising" else None
    counts = np.bincount(data.topic_ids[in_view] + 1, minlength=max(data.topic_order, default=0) + 2)
    themes = usable_themes(data.topics, data.themes)
    if themes is None:
        ids = list(data.topic_order) if growth is None else _by_growth(data.topic_order, growth)
        if data.sizes[-1]:
            ids.append(-1)
        _table(data, ids, counts, filtered, growth, state, f"topic-list-{state.topic}")
    else:
        groups = group_topic_list(data.topics, themes, rising=growth)
        if state.themes:
            groups = [g for g in groups if g.theme_id in state.themes]
        sections = [(g.label, g.size, list(g.topic_ids), f"theme-{g.theme_id}") for g in groups]
        if data.sizes[-1]:
            sections.append(("Unassigned", data.sizes[-1], [-1], "unassigned"))
        rows = sum(len(ids) + 2 for _, _, ids, _ in sections)
        with st.container(height=MAX_HEIGHT if 35 * rows > MAX_HEIGHT else "content", border=False):
            for label, size, ids, name in sections:
                in_view_count = int(sum(counts[t + 1] for t in ids))
                st.markdown(
                    f"**{markdown_literal(label)}** · {counted(size, 'paper')}"
                    + (f" · {in_view_count:,} in view" if filtered else "")
                )
                _table(data, ids, counts, filtered, growth, state, f"topic-list-{name}-{state.topic}")
    st.caption(
        "Select a topic to open it."
        + (" Growth: recent share of papers ÷ earlier share (×1.0 = steady)." if growth is not None else "")
    )


def colour_dot(colour: str, row_height: int = 35) -> str:
    """A dot in `colour` (a hex colour of the map's palette) as an SVG data URL, for an image column: a
    pandas Styler colouring a text dot cost 30-100 ms a rerun to send. The image is as tall as the row
    (in proportion) so that the grid, which fits an image to the row's height, keeps the dot round.

    Examples:
        >>> colour_dot("#2f5fd0")[:60]
        "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/s"
    """
    if not re.fullmatch(r"#[0-9a-fA-F]{6}", colour):
        raise ValueError(f"not a palette colour: {colour!r}")
    height = max(12, round(12 * row_height / 35))
    return (
        f"data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' width='12' height='{height}'>"
        f"<circle cx='6' cy='{height / 2:g}' r='5' fill='%23{colour[1:]}'/></svg>"
    )


def growth_text(score: float) -> str:
    """A growth score as the list shows it; a dash where there is none (never a literal "None").

    Examples:
        >>> growth_text(1.234), growth_text(float("nan"))
        ('×1.23', '–')
    """
    return "–" if np.isnan(score) else f"×{score:.2f}"


def _by_growth(topic_ids: list[int], growth: pd.Series) -> list[int]:
    """Topics by growth, highest first; topics without a score last, in their usual order."""
    score = {t: float(growth.get(t, np.nan)) for t in topic_ids}
    return sorted(topic_ids, key=lambda t: (np.isnan(score[t]), -(0.0 if np.isnan(score[t]) else score[t])))


def _table(
    data: MapData,
    ids: list[int],
    counts: np.ndarray,
    filtered: bool,
    growth: pd.Series | None,
    state: ViewState,
    key: str,
) -> None:
    column = "In view" if filtered else "Papers"
    topic_width = SIDE_WIDTH - 20 - 70 - (62 if growth is not None else 0)  # the rest of the panel
    names = [data.label(t) for t in ids]
    row_height = wrapped_height([(names, topic_width)])  # names whole, wrapped when long
    table = pd.DataFrame(
        {
            "": [colour_dot(data.colours[t], row_height) for t in ids],
            "Topic": names,
            column: [int(counts[t + 1]) if filtered else data.sizes[t] for t in ids],
        }
    )
    config = {
        "": st.column_config.ImageColumn("", width=20),  # the topic's colour on the map
        "Topic": st.column_config.TextColumn("Topic", width=topic_width),
        column: st.column_config.ProgressColumn(
            column, format="%d", min_value=0, max_value=max(data.sizes.values()) or 1, width=70
        ),
    }
    if growth is not None:
        table["Growth"] = [growth_text(float(growth.get(t, np.nan)) if t != -1 else np.nan) for t in ids]
        config["Growth"] = st.column_config.TextColumn(
            "Growth", width=62, help="Recent share of papers ÷ earlier share; – where it cannot be measured"
        )
    chosen = [ids.index(state.topic)] if state.topic in ids else []
    st.dataframe(
        table,
        key=key,  # a new key only when the opened topic changes elsewhere
        hide_index=True,
        on_select=partial(on_topic_pick, key, ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": chosen}},
        height=min(MAX_HEIGHT, row_height * len(ids) + 38),
        row_height=row_height,
        column_config=config,
    )
