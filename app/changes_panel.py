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
from app.widgets import wrapped_height

CHANGE_LINES = 8  # a change note wraps onto up to this many lines (a merge of many topics names them all)


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
        widths = {"Topic": 200, "Change": 440}  # each cell whole, wrapped onto as many lines as it takes
        row_height = wrapped_height(
            [(rows[c].tolist(), w) for c, w in widths.items()], max_lines=CHANGE_LINES
        )
        st.dataframe(
            rows.drop(columns="topic_id"),
            key=key,
            hide_index=True,
            on_select=partial(on_topic_pick, key, targets),
            selection_mode="single-row",
            column_config={c: st.column_config.TextColumn(c, width=w) for c, w in widths.items()},
            row_height=row_height,
            height=min(600, row_height * len(rows) + 38),
        )
        theme_rows = theme_change_rows(data.manifest, data.themes)
        if not theme_rows.empty:
            st.caption(
                "Themes keep their ids where most of their papers stayed together, so links and colours keep their meaning."
            )
            widths = {"Theme": 240, "What became of it": 400}
            row_height = wrapped_height(
                [(theme_rows[c].tolist(), w) for c, w in widths.items()], max_lines=CHANGE_LINES
            )
            st.dataframe(
                theme_rows,
                key="theme-changes-table",
                hide_index=True,
                column_config={c: st.column_config.TextColumn(c, width=w) for c, w in widths.items()},
                row_height=row_height,
                height=min(600, row_height * len(theme_rows) + 38),
            )
