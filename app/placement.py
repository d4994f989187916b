"""'Where does my paper fit?': embed a pasted abstract with the map's model and pin it among its neighbours."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import encoder as encoding
from app.data import MapData
from app.loaders import load_topic_profile
from app.paper_table import paper_table
from app.session import remove_pin, request_placement
from app.text import markdown_literal


def place_abstract(data: MapData, map_key: tuple) -> None:
    """Embed the pasted abstract with the map's model and pin it; nothing is written anywhere.

    Placement is `pipeline.place.place`, the same as `python -m pipeline add`: nearest papers by
    similarity plus topic centroids, with the map's topic profile computed once per map.
    """
    from pipeline.place import place

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
    spot = place(
        vector,
        data.vectors,
        data.papers[["x", "y"]].to_numpy(),
        data.topic_ids,
        profile=load_topic_profile(*map_key),
    )
    st.session_state.pin = {
        "x": spot.x,
        "y": spot.y,
        "topic": spot.topic_id,
        "encoder": (data.manifest.get("model") or {}).get("encoder", "the map's model"),
        "rows": spot.neighbour_rows.tolist(),
        "similarities": spot.similarities.tolist(),
        "fits": spot.fits,
    }


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
            st.warning(pin["error"])
        elif pin:
            st.success(
                f"Placed in **{markdown_literal(data.label(pin['topic']))}** (the ★ on the map), "
                f"among the papers below.",
                icon=":material/push_pin:",
            )
            if pin.get("fits") is False:
                st.caption(
                    "It sits farther from this topic's centre than the topic's own papers do: the "
                    "nearest topic, not a close fit."
                )
            paper_table(
                data, np.array(pin["rows"], dtype=np.int64), "fit-neighbours", similarity=pin["similarities"]
            )
            st.button("Remove the pin", on_click=remove_pin, icon=":material/close:", key="remove_pin")
            st.caption(
                f"Embedded with {markdown_literal(pin['encoder'])}; the abstract is kept only in this "
                "browser session."
            )
