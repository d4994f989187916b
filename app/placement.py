"""'Where does my paper fit?': embed a pasted abstract with the map's model and place it among its
neighbours, pinned on the map (the placing and its wording: `app.place`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app import session
from app.data import MapData
from app.loaders import MapKey
from app.place import PlacementError, place_abstract, verdict_message
from app.session import remove_placement, request_placement
from app.text import markdown_literal
from app.widgets import paper_table
from pipeline.modelling.place import NEIGHBOURS


def placement_panel(data: MapData, map_key: MapKey) -> None:
    """The expander; `map_key` names the map for the loaders' caches (its topic profile is made once)."""
    placement = session.placement()
    panel = st.expander(
        "Where does my paper fit?",
        expanded=bool(placement),
        icon=":material/push_pin:",
        key=session.PLACEMENT_PANEL,
        on_change="rerun",
    )
    with panel:
        if not panel.open:  # its body is made only while it is open
            return
        with st.form(session.PLACEMENT_FORM, border=False):
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
                session.set_placement(place_abstract(data, map_key, session.pasted_abstract()))
            st.rerun()  # draw the pin on the map above
        if isinstance(placement, PlacementError):
            st.warning(markdown_literal(placement.message))
        elif placement:
            kind, message = verdict_message(data, placement)
            icon = ":material/push_pin:" if kind == "success" else ":material/explore_off:"
            {"success": st.success, "info": st.info, "warning": st.warning}[kind](message, icon=icon)
            st.markdown("**Nearest papers**")
            paper_table(
                data,
                np.array(placement.rows, dtype=np.int64),
                "placement-neighbours",
                similarity=list(placement.similarities),
            )
            evidence_table(data, placement.evidence)
            st.button(
                "Remove the pin", on_click=remove_placement, icon=":material/close:", key="remove_placement"
            )
            st.caption(
                f"Embedded with {markdown_literal(placement.encoder)}; the abstract is kept only in this "
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
        key="placement-topics",
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
