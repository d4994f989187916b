"""The 'About this map' panel: what the manifest says about how the map was made and how good it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.data import MapData
from app.text import markdown_literal
from pipeline.mapfolder.manifest import Manifest


def about_panel(data: MapData) -> None:
    manifest = data.manifest
    quality = manifest.get("quality") or {}
    with st.expander("About this map", icon=":material/info:"):
        info = Manifest.from_dict(manifest)
        themes = len(data.themes) if data.themes is not None else 0
        st.markdown(
            f"**{markdown_literal(info.name or data.name)}** · "
            f"{manifest.get('papers', data.n):,} papers · {manifest.get('topics', len(data.topic_order)):,} "
            f"topics{f' in {themes:,} themes' if themes else ''} · "
            f"{manifest.get('unassigned', data.sizes[-1]):,} unassigned"
        )
        st.caption(
            f"Model {markdown_literal(info.model_name or 'unknown')} · encoder "
            f"{markdown_literal(info.encoder or 'unknown')} · built "
            f"{markdown_literal(info.built_at or 'unknown')} · folder {markdown_literal(data.path.name)}"
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
        stability_summary(data)
        cliff_line(manifest)
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


def cliff_line(manifest: dict) -> None:
    """How well re-clusterings agree at the topic counts the build chose among (the chosen one marked)."""
    agreement = (manifest.get("quality") or {}).get("agreement_at_nearby_topic_counts")
    chosen = (manifest.get("quality") or {}).get("chosen_topic_count")
    if not isinstance(agreement, dict) or len(agreement) < 2:
        return
    parts = []
    for count, value in agreement.items():
        try:
            part = f"{int(count)} topics → {float(value):.2f}"
        except (TypeError, ValueError):
            continue
        parts.append(f"**{part}**" if str(count) == str(chosen) else part)
    st.markdown("**Agreement of re-clusterings at nearby topic counts** · " + " · ".join(parts))
    st.caption(
        "The build tried these numbers of topics, clustered each three times with other seeds, and kept "
        "the number whose runs agreed best (1.00: every run drew the same topics). Merges, hidden topics "
        "and papers that fit no topic can leave the map with fewer topics than the count it chose."
    )


def stability_summary(data: MapData) -> None:
    """The manifest's stability block and the topics' scores; nothing when the build skipped stability."""
    block = data.manifest.get("stability")
    scores = (
        pd.to_numeric(data.topics["stability"], errors="coerce").dropna()
        if "stability" in data.topics.columns
        else pd.Series(dtype=float)
    )
    if not isinstance(block, dict) or not block.get("runs") or scores.empty:
        return
    st.markdown(
        f"**Topic stability** · median {scores.median():.2f} (lowest {scores.min():.2f}) · "
        f"{markdown_literal(block.get('runs'))} runs · {_short_seconds(block.get('seconds'))}"
    )
    st.caption(
        "Stability: how reliably a topic comes back when the clustering is redone on 90% of the papers "
        f"(1 = always the same papers). Method: {markdown_literal(block.get('method', 'unknown'))}."
    )


def _short_seconds(value) -> str:
    """Seconds, with two decimals below ten so a 0.04 s step does not read as 0.0 s."""
    if not isinstance(value, int | float):
        return "–"
    return f"{value:.2f} s" if value < 10 else f"{value:,.0f} s"


def _seconds(value) -> str:
    return f"{value:,.1f} s" if isinstance(value, int | float) else markdown_literal(value)


def _percent(value) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) else "–"


def _number(value) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "–"
