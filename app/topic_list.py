"""The topic list beside the map: topics by size, with the papers in view counted when filters are on."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from app.data import MapData
from app.session import on_topic_pick
from app.state import ViewState


def topic_list(data: MapData, in_view: np.ndarray, state: ViewState, filtered: bool) -> None:
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
    key = f"topic-list-{state.topic}"  # a new key only when the opened topic changes elsewhere
    st.dataframe(
        styled,
        key=key,
        hide_index=True,
        on_select=partial(on_topic_pick, key, ids),
        selection_mode="single-row",
        selection_default={"selection": {"rows": chosen}},
        height=min(600, 35 * (len(ids) + 1) + 3),
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
