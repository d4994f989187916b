"""The 'About this map' panel: what the manifest says about how the map was made and how good it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import session
from app.data import MapData
from app.text import markdown_literal
from pipeline.mapfolder.manifest import Manifest


def about_panel(data: MapData) -> None:
    manifest = data.manifest
    quality = manifest.quality
    panel = st.expander("About this map", icon=":material/info:", key=session.ABOUT_PANEL, on_change="rerun")
    with panel:
        if not panel.open:  # its body is made only while it is open
            return
        themes = len(data.themes) if data.themes is not None else 0
        st.markdown(
            f"**{markdown_literal(manifest.name or data.name)}** · "
            f"{manifest.papers if manifest.holds('papers') else data.n:,} papers · "
            f"{manifest.topics if manifest.holds('topics') else len(data.topic_order):,} "
            f"topics{f' in {themes:,} themes' if themes else ''} · "
            f"{manifest.unassigned if manifest.holds('unassigned') else data.sizes[-1]:,} unassigned"
        )
        st.caption(
            f"Model {markdown_literal(manifest.model.name or 'unknown')} · encoder "
            f"{markdown_literal(manifest.model.encoder or 'unknown')} · built "
            f"{markdown_literal(manifest.built_at or 'unknown')} · folder {markdown_literal(data.path.name)}"
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
        speed_label, speed, speed_note = embedding_speed(manifest)
        metrics[4].metric(speed_label, speed, help=speed_note)
        st.caption(markdown_literal(speed_note))
        stability_summary(data)
        names_line = name_evidence(data.topics, data.themes)
        if names_line:
            st.markdown(names_line)
        cliff_line(manifest)
        timings = manifest.timings_seconds
        if timings:  # plain text lines: cheaper to draw than a table, and the panel is usually closed
            st.markdown(
                "**Build timings** · "
                + " · ".join(f"{markdown_literal(stage)} {_seconds(v)}" for stage, v in timings.items())
            )
        config = manifest.config.settings
        if "n_topics" in config:
            st.markdown(topic_count_line(manifest, config["n_topics"]))
        settings = {k: v for k, v in config.items() if k != "n_topics"}
        if settings:
            st.markdown(
                "**Build settings** · "
                + " · ".join(f"{markdown_literal(k)} = {markdown_literal(v)}" for k, v in settings.items())
            )


def name_evidence(topics: pd.DataFrame, themes: pd.DataFrame | None) -> str:
    """How far the map's names are written by the papers they name (the build's `name_share` and
    `name_written`): a weak name shows as weak. Empty for a map built before names carried it.

    Examples:
        >>> topics = pd.DataFrame({"name_share": [0.9, 0.5, 0.2]})
        >>> themes = pd.DataFrame({"label": ["Robots"], "name_written": [0.64], "name_share": [0.3]})
        >>> print(name_evidence(topics, themes))
        **Names** · topic names are written by a median 50% of their papers (2 of 3 by at least a third) · Robots: written by 64% of its papers, 30% of its weakest topic's
    """
    if "name_share" not in topics.columns or not topics["name_share"].notna().any():
        return ""
    shares = topics["name_share"].dropna()
    line = (
        f"**Names** · topic names are written by a median {shares.median():.0%} of their papers "
        f"({int((shares >= 1 / 3).sum())} of {len(shares)} by at least a third)"
    )
    if themes is not None and "name_written" in themes.columns:
        line += "".join(
            f" · {markdown_literal(str(row.label))}: written by {row.name_written:.0%} of its papers, "
            f"{row.name_share:.0%} of its weakest topic's"
            for row in themes.itertuples()
            if pd.notna(row.name_written) and pd.notna(row.name_share)
        )
    return line


def topic_count_line(manifest: Manifest, asked: object) -> str:
    """How many topics the map holds and how the build came to them, in plain words: the count it
    started from (asked, or derived from the map's size), the count it cut (chosen where re-clusterings
    agreed best, when it could choose), and what moves the count after that.

    Examples:
        >>> from pipeline.mapfolder.manifest import ConfigBlock
        >>> made = Manifest(topics=18, quality={"chosen_topic_count": 20}, config=ConfigBlock.from_dict(
        ...     {"n_topics": 22, "choose_n_topics": True}))
        >>> print(topic_count_line(made, 22))  # doctest: +NORMALIZE_WHITESPACE
        **Topics** · 18 on the map · the build tried counts near 22 and cut the papers into 20, the count
        whose re-clusterings agreed best; small topics dissolved into others, dense groups apart from
        every topic and a curator's edits make the difference
        >>> topic_count_line(Manifest(topics=22, quality={"chosen_topic_count": 22}), 22)
        '**Topics** · 22 on the map · the build cut the papers into 22, as asked'
        >>> topic_count_line(Manifest(topics=4), 4)  # an older map: the count cut was not kept
        '**Topics** · 4 on the map · 4 asked'
    """
    cut = manifest.quality.get("chosen_topic_count")
    chose = manifest.config.settings.get("choose_n_topics") is True
    came = f"**Topics** · {manifest.topics:,} on the map · "
    if not isinstance(cut, int) or isinstance(cut, bool):
        return came + f"{markdown_literal(asked)} asked"
    how = (
        f"the build tried counts near {markdown_literal(asked)} and cut the papers into {cut:,}, the count whose "
        "re-clusterings agreed best"
        if chose
        else f"the build cut the papers into {cut:,}, as asked"
    )
    rest = (
        "; small topics dissolved into others, dense groups apart from every topic and a curator's edits "
        "make the difference"
    )
    return came + how + (rest if cut != manifest.topics else "")


def embedding_speed(manifest: Manifest) -> tuple[str, str, str]:
    """The About metric's label and value for the build's embedding speed, and the sentence saying what
    it counts (a map that recorded no embedding block: the end-to-end build speed, said so).

    Examples:
        >>> _, speed, note = embedding_speed(Manifest(embedding={"computed": 300, "cached": 1357,
        ...     "abstracts_per_second": 35.2, "model_seconds": 41.0}))
        >>> print(speed); print(note)  # doctest: +NORMALIZE_WHITESPACE
        35.2 abstracts/s
        Embedding speed: 300 abstracts embedded at 35.2 abstracts per second of embedding; 1,357 vectors
        came from the cache and the model's loading or one-time preparation (41.0 s) is not counted.
        >>> embedding_speed(Manifest(embedding={"computed": 0, "cached": 57}))
        ('Embedding speed', '–', 'Embedding speed: none embedded, all vectors from the cache (57).')
    """
    report = manifest.embedding
    computed, cached = report.get("computed"), report.get("cached")
    rate = report.get("abstracts_per_second")
    if computed == 0:
        return (
            "Embedding speed",
            "–",
            f"Embedding speed: none embedded, all vectors from the cache ({cached or 0:,}).",
        )
    if not isinstance(computed, int) or not rate:
        total = manifest.abstracts_per_second
        if total:
            return (
                "Build speed",
                f"{total:,} /s",
                "Build speed: the map's papers per second of the whole build, end to end.",
            )
        return "Embedding speed", "–", "Embedding speed: not recorded for this map."
    noun = "abstract" if computed == 1 else "abstracts"
    text = f"Embedding speed: {computed:,} {noun} embedded at {rate:,} abstracts per second of embedding"
    if cached:
        text += f"; {cached:,} {'vector' if cached == 1 else 'vectors'} came from the cache"
    if "model_seconds" in report:
        prepared = f" ({report['model_seconds']:.1f} s)" if report["model_seconds"] else ""
        text += f"{' and' if cached else ';'} the model's loading or one-time preparation{prepared} is not counted."
    else:
        text += " (the model's loading is counted in it: this map was built before that was kept apart)."
    return "Embedding speed", f"{rate:,} abstracts/s", text


def cliff_line(manifest: Manifest) -> None:
    """How well re-clusterings agree at the topic counts the build chose among (the chosen one marked)."""
    agreement = manifest.quality.get("agreement_at_nearby_topic_counts")
    chosen = manifest.quality.get("chosen_topic_count")
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
    block = data.manifest.stability
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
