"""'Where does my paper fit?': embed a pasted abstract with the map's model and pin it among its
neighbours (the placing and its wording: `app.pin`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app import session
from app.data import MapData
from app.pin import place_abstract, verdict_message
from app.session import remove_pin, request_placement
from app.text import markdown_literal
from app.widgets import paper_table
from pipeline.modelling.place import NEIGHBOURS


def fit_panel(data: MapData, map_key: tuple) -> None:
    """The expander; `map_key` is (name, path, signature), the map loader's cache key."""
    pin = session.pin()
    panel = st.expander(
        "Where does my paper fit?",
        expanded=bool(pin),
        icon=":material/push_pin:",
        key="fit_panel",
        on_change="rerun",
    )
    with panel:
        if not panel.open:  # its body is made only while it is open
            return
        with st.form("fit", border=False):
            st.text_area(
                "Abstract",
                key=session.PASTED,
                height=140,
                placeholder="Paste an abstract: it is embedded with this map's model and pinned among "
                "its nearest papers. Nothing is stored.",
            )
            st.form_submit_button(
                "Place on the map", on_click=request_placement, icon=":material/push_pin:", type="primary"
            )
        if session.placement_requested():
            model = (data.manifest.model.name or "the map's model").split("/")[-1]
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
            **(
                {"Its nearest paper": evidence["nearest"], "Needed": evidence["needed"]}
                if "nearest" in evidence
                else {}
            ),
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
            "Its nearest paper": st.column_config.NumberColumn(
                format="%.2f", help="Similarity of your abstract to the topic's paper most like it"
            ),
            "Needed": st.column_config.NumberColumn(
                format="%.2f",
                help="To fit, the topic's nearest paper must be this similar: as close as 95% of the topic's "
                "papers are to their nearest fellow member, and closer than 99% of the map's pairs of papers",
            ),
        },
    )
