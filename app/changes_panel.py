"""The 'Changes since the previous build' panel: what became of each topic when the map was rebuilt."""

from __future__ import annotations

from functools import partial

import streamlit as st

from app.changes import change_rows, resolve_shared_topic
from app.data import MapData
from app.session import on_topic_pick
from app.text import markdown_literal


def changes_panel(data: MapData) -> None:
    """A table of kept, grown, split, merged, new and gone topics; nothing for a map without lineage."""
    if data.lineage is None or data.lineage.empty:
        return
    topics = data.topics.reset_index(drop=True)
    rows = change_rows(data.lineage, topics)
    counts = data.lineage["status"].value_counts()
    summary = ", ".join(f"{int(counts[s]):,} {s}" for s in counts.index)
    with st.expander("Changes since the previous build", icon=":material/history:"):
        previous = ((data.manifest.get("lineage") or {}).get("previous") or {}).get("name")
        st.caption(
            f"Topics compared with the previous build{f' of {markdown_literal(previous)}' if previous else ''}"
            f": {markdown_literal(summary)}. Topics that match keep their ids, so older links still open "
            "them; select a row to open a topic (a gone topic opens where most of its papers went)."
        )
        # A gone topic opens its successor; the table shows names as plain text (dataframe cells).
        targets = [
            resolve_shared_topic(int(t), data.lineage, topics).topic_id for t in rows["topic_id"].tolist()
        ]
        key = "changes-table"
        st.dataframe(
            rows.drop(columns="topic_id"),
            key=key,
            hide_index=True,
            on_select=partial(on_topic_pick, key, targets),
            selection_mode="single-row",
            column_config={
                "Topic": st.column_config.TextColumn("Topic", width=180),
                "Change": st.column_config.TextColumn("Change", width=360),
            },
        )
