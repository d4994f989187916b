"""CSV downloads: the papers in view and the whole map, made only when the reader clicks."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.data import MapData
from pipeline.export import export_frame, to_csv_bytes


def downloads(data: MapData, rows: np.ndarray) -> None:
    left, right = st.columns(2)

    def view_csv(rows=rows) -> bytes:
        topics = data.topics.reset_index(drop=True)
        return to_csv_bytes(export_frame(data.papers.iloc[rows], topics, themes=data.themes))

    def map_csv() -> bytes:
        return to_csv_bytes(export_frame(data.papers, data.topics.reset_index(drop=True), themes=data.themes))

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
