"""The 'Changes since the previous build' panel: what became of each topic when the map was rebuilt."""

from __future__ import annotations

from functools import partial

import streamlit as st

from app import session
from app.data import MapData
from app.loaders import MapKey, cached_changes
from app.session import on_topic_pick
from app.text import markdown_literal
from app.themes import theme_change_rows


def changes_panel(data: MapData, map_key: MapKey) -> None:
    """A table of kept, grown, split, merged, new and gone topics; nothing for a map without lineage.

    `map_key` names the map for the loaders' caches: the table is worked out once per map."""
    if data.lineage is None or data.lineage.empty:
        return
    panel = st.expander(
        "Changes since the previous build",
        icon=":material/history:",
        key=session.CHANGES_PANEL,
        on_change="rerun",
    )
    with panel:
        if not panel.open:  # its body is made only while it is open
            return
        rows, targets, summary = cached_changes(map_key)  # a gone topic opens where most of its papers went
        previous = data.manifest.previous_name
        st.caption(
            f"Topics compared with the previous build{f' of {markdown_literal(previous)}' if previous else ''}"
            f": {markdown_literal(summary)}. Topics that match keep their ids, so older links still open "
            "them; select a row to open a topic (a gone topic opens where most of its papers went)."
        )
        key = "changes-table"  # names show as plain text (dataframe cells)
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
        theme_rows = theme_change_rows(data.manifest, data.themes)
        if not theme_rows.empty:
            st.caption(
                "Themes keep their ids where most of their papers stayed together, so links and colours keep their meaning."
            )
            st.dataframe(theme_rows, key="theme-changes-table", hide_index=True)
