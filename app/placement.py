"""'Where does my paper fit?': embed a pasted abstract with the map's model and pin it among its neighbours."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app import encoder as encoding
from app.data import MapData
from app.loaders import load_topic_profile
from app.paper_table import paper_table
from app.session import remove_pin, request_placement
from app.text import markdown_literal
from pipeline.place import EDGE, FITS, NEIGHBOURS, OUTSIDE, verdict


def place_abstract(data: MapData, map_key: tuple) -> None:
    """Embed the pasted abstract with the map's model and pin it; nothing is written anywhere.

    Placement and its verdict are `pipeline.place.place` and `pipeline.place.verdict`, the same as
    `python -m pipeline add`, with the map's topic profile computed once per map.
    """
    from pipeline.place import fits_any_topic, place

    text = (st.session_state.get("fit_text") or "").strip()
    if len(text.split()) < 5:
        st.session_state.pin = {"error": "Paste an abstract of at least a few sentences to place it."}
        return
    try:
        vector = encoding.encode_queries(data.manifest, [text])[0]
    except encoding.EncoderUnavailable as exc:
        st.session_state.pin = {"error": str(exc)}
        return
    except Exception as exc:  # a broken model must not take the page down
        st.session_state.pin = {"error": f"The embedding model could not be loaded ({str(exc)[:160]})."}
        return
    profile = load_topic_profile(*map_key)
    spot = place(vector, data.vectors, data.papers[["x", "y"]].to_numpy(), data.topic_ids, profile=profile)
    st.session_state.pin = {
        "x": spot.x,
        "y": spot.y,
        "topic": spot.topic_id,
        "encoder": (data.manifest.get("model") or {}).get("encoder", "the map's model"),
        "rows": spot.neighbour_rows.tolist(),
        "similarities": spot.similarities.tolist(),
        "verdict": verdict(spot.fits, bool(fits_any_topic(vector[None, :], profile)[0])),
        "evidence": topic_evidence(
            data.topic_ids[spot.neighbour_rows], spot.similarities, vector, profile
        ).to_dict("list"),
    }


def topic_evidence(
    neighbour_topics: np.ndarray, similarities: np.ndarray, vector: np.ndarray, profile
) -> pd.DataFrame:
    """The topics a placed abstract is nearest to, and how close: the evidence behind the verdict.

    One row per topic among the nearest papers and the three nearest topic centres, nearest centre
    first: `topic_id`, `neighbours` (how many of the nearest papers are in it), `best` (the closest
    of them), `centre` (similarity to the topic's centroid) and `typical` (the centroid similarity
    that 95% of the topic's own papers reach: at or above it, a paper fits the topic).

    Examples:
        >>> from pipeline.place import TopicProfile
        >>> profile = TopicProfile(np.array([0, 1]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.8, 0.7]))
        >>> table = topic_evidence(np.array([1, 1, 0]), np.array([0.6, 0.5, 0.4]), np.array([0.6, 0.8]), profile)
        >>> table.to_dict("list")["topic_id"], table.to_dict("list")["neighbours"]
        ([1, 0], [2, 1])
    """
    centre = dict(zip(profile.topic_ids.tolist(), (profile.centroids @ vector).tolist(), strict=True))
    typical = dict(zip(profile.topic_ids.tolist(), profile.typical.tolist(), strict=True))
    nearest_centres = sorted(centre, key=centre.get, reverse=True)[:3]
    ids = list(dict.fromkeys([*nearest_centres, *(int(t) for t in neighbour_topics if t != -1)]))
    rows = []
    for topic in ids:
        near = similarities[neighbour_topics == topic]
        rows.append(
            {
                "topic_id": int(topic),
                "neighbours": int(len(near)),
                "best": float(near.max()) if len(near) else float("nan"),
                "centre": float(centre.get(topic, float("nan"))),
                "typical": float(typical.get(topic, float("nan"))),
            }
        )
    table = pd.DataFrame(rows, columns=["topic_id", "neighbours", "best", "centre", "typical"])
    return table.sort_values("centre", ascending=False, kind="stable").reset_index(drop=True)


def pin_label(data: MapData, pin: dict) -> str:
    """What the ★ on the map says about the abstract: its topic only when it fits one."""
    name = data.label(pin["topic"])
    if pin["verdict"] == OUTSIDE:
        return "no topic fits it"
    if pin["topic"] == -1:
        return "among the unassigned papers"
    return name if pin["verdict"] == FITS else f"at the edge of {name}"


def verdict_message(data: MapData, pin: dict) -> tuple[str, str]:
    """(kind, Markdown) of the sentence that gives the verdict; kind is "success" only for FITS."""
    name = f"**{markdown_literal(data.label(pin['topic']))}**"
    best = max(pin["similarities"], default=0.0)
    if pin["verdict"] == OUTSIDE:
        return "warning", (
            "**No topic of this map fits this abstract.** It is farther from every topic's centre than "
            f"almost all of that topic's own papers, and its nearest paper is only {best:.2f} similar. "
            "The ★ on the map sits by the papers it is least unlike; they are listed below."
        )
    if pin["topic"] == -1:
        return "info", (
            "Placed among **unassigned** papers (the ★ on the map): most of its nearest papers belong to "
            "no topic, so no topic is claimed for it."
        )
    if pin["verdict"] == EDGE:
        return "info", (
            f"At the edge of {name} (the ★ on the map): this is its nearest topic, but it sits farther "
            "from the topic's centre than 95% of the topic's own papers do, so it is not a close fit."
        )
    return "success", f"Placed in {name} (the ★ on the map), among the papers below."


def fit_panel(data: MapData, map_key: tuple) -> None:
    """The expander; `map_key` is (name, path, signature), the map loader's cache key."""
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
                place_abstract(data, map_key)
            st.rerun()  # draw the pin on the map above
        if pin and "error" in pin:
            st.warning(markdown_literal(pin["error"]))
        elif pin:
            kind, message = verdict_message(data, pin)
            icon = ":material/push_pin:" if kind == "success" else ":material/explore_off:"
            {"success": st.success, "info": st.info, "warning": st.warning}[kind](message, icon=icon)
            st.markdown("**Nearest papers**")
            paper_table(
                data, np.array(pin["rows"], dtype=np.int64), "fit-neighbours", similarity=pin["similarities"]
            )
            evidence_table(data, pd.DataFrame(pin["evidence"]))
            st.button("Remove the pin", on_click=remove_pin, icon=":material/close:", key="remove_pin")
            st.caption(
                f"Embedded with {markdown_literal(pin['encoder'])}; the abstract is kept only in this "
                "browser session. The verdict is the one `python -m pipeline add` gives."
            )


def evidence_table(data: MapData, evidence: pd.DataFrame) -> None:
    """The nearest topics with the numbers the verdict rests on."""
    if evidence.empty:
        return
    st.markdown("**Nearest topics**")
    table = pd.DataFrame(
        {
            "Topic": [data.label(t) for t in evidence["topic_id"]],
            "Of the nearest papers": evidence["neighbours"].astype(int),
            "To its centre": evidence["centre"],
            "Its papers reach": evidence["typical"],
        }
    )
    st.dataframe(
        table,
        hide_index=True,
        key="fit-topics",
        column_config={
            "Of the nearest papers": st.column_config.NumberColumn(
                help=f"How many of the {NEIGHBOURS} nearest papers are in this topic"
            ),
            "To its centre": st.column_config.NumberColumn(
                format="%.2f", help="Similarity of your abstract to the topic's centre"
            ),
            "Its papers reach": st.column_config.NumberColumn(
                format="%.2f",
                help="95% of the topic's own papers are at least this similar to its centre: an abstract "
                "below it is at the topic's edge, or outside it",
            ),
        },
    )
