"""'Edit this topic': rename, annotate, merge or hide a topic and rename its theme, where editing is on.

Editing is off unless the app is started with `ATLAS_EDITING=1` (a hosted map stays read-only by
default) and the map folder is writable. Every edit goes through `pipeline.commands.curate.edit_map`, the
same call as `python -m pipeline curate`: it holds the map folder's lock, checks the edit (a bad
one is shown as an error and changes nothing) and replaces `curation.json`; the map then reloads
because its signature (see `app.data.map_signature`) includes that file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from app import session
from app.data import MapData
from app.text import markdown_literal, without_server_paths
from pipeline import UserError
from pipeline.commands.curate import edit_map
from pipeline.mapfolder.curation import MAX_NAME, MAX_NOTE, UNASSIGNED, read_curation

EDITING = "ATLAS_EDITING"


def editing_allowed(path: Path, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this app may edit the map at `path`: switched on, and the folder (and its lock's
    folder) writable.

    Examples:
        >>> editing_allowed(Path("."), {})
        False
    """
    if environ.get(EDITING, "").strip().lower() not in ("1", "true", "yes", "on"):
        return False
    path = Path(path)
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def edit_notice() -> None:
    """What the last edit did (or why it was refused), once."""
    notice = session.take_edit_notice()
    if notice:
        kind, text = notice
        (st.success if kind == "ok" else st.error)(markdown_literal(text), icon=":material/edit:")


def _edit(path: Path, action: str, **fields) -> None:
    try:
        done = edit_map(path, action, **fields)
    except UserError as exc:
        session.set_edit_notice("error", f"Not saved: {without_server_paths(exc, path, path.name)}")
        return
    session.set_edit_notice(
        "ok", f"Saved: {without_server_paths(done.split('; saved in')[0], path, path.name)}"
    )


def edit_panel(data: MapData, topic: int) -> None:
    """The editing forms for `topic`, when editing is allowed on this map."""
    if topic == -1 or not editing_allowed(data.path):
        return
    others = [t for t in data.topic_order if t != topic]
    panel = st.expander("Edit this topic", icon=":material/edit:", key=session.EDIT_PANEL, on_change="rerun")
    with panel:
        if not panel.open:  # its body is made only while it is open
            return
        st.caption(
            "Edits are saved in the map folder (curation.json) and applied again when the map is rebuilt."
        )
        review_list(data.path)
        with st.form(f"rename-{topic}", border=False):
            name = st.text_input("Name", value=data.label(topic), max_chars=MAX_NAME)
            if st.form_submit_button("Rename topic"):
                _edit(data.path, "rename", topic=topic, name=name)
                st.rerun()
        current = ""
        if "note" in data.topics.columns:
            current = str(data.topics.loc[topic].get("note") or "")
        with st.form(f"note-{topic}", border=False):
            text = st.text_area(
                "Note", value=current, max_chars=MAX_NOTE, help="plain text; empty removes it"
            )
            if st.form_submit_button("Save note"):
                _edit(data.path, "note", topic=topic, text=text)
                st.rerun()
        if others:
            with st.form(f"merge-{topic}", border=False):
                # No topic chosen beforehand: one click never merges into a topic the curator did not pick.
                into = st.selectbox(
                    "Merge into", others, index=None, format_func=data.label, placeholder="Choose a topic"
                )
                if st.form_submit_button("Merge topic"):
                    if into is None:
                        st.warning("Choose the topic to merge it into first.")
                    else:
                        _edit(data.path, "merge", topic=topic, into=into)
                        st.rerun()
        with st.form(f"hide-{topic}", border=False):
            target = st.selectbox(
                "Hide; its papers go to",
                [UNASSIGNED, *others],
                format_func=lambda t: "Unassigned" if t == UNASSIGNED else data.label(t),
            )
            if st.form_submit_button("Hide topic"):
                _edit(data.path, "hide", topic=topic, into=target)
                st.rerun()
        theme = _theme_of(data, topic)
        if theme is not None:
            theme_id, label = theme
            with st.form(f"theme-{topic}", border=False):
                name = st.text_input("Theme name", value=label, max_chars=MAX_NAME)
                if st.form_submit_button("Rename theme"):
                    _edit(data.path, "rename-theme", theme=theme_id, name=name)
                    st.rerun()


def review_list(path: Path) -> None:
    """Edits a rebuild could not apply (their topic moved), each with Accept and Drop."""
    try:
        flagged = [e for e in read_curation(path) if e.review]
    except UserError as exc:
        st.error(markdown_literal(without_server_paths(exc, path, path.name)))
        return
    for edit in flagged:
        st.warning(markdown_literal(f"Waiting for review: {edit.describe()}"), icon=":material/rule:")
        accept, drop = st.columns(2)
        if accept.button("Accept", key=f"accept-{edit.id}", help="apply it to the topic as it is now"):
            _edit(path, "accept", edit_id=edit.id)
            st.rerun()
        if drop.button("Drop", key=f"drop-{edit.id}"):
            _edit(path, "drop", edit_id=edit.id)
            st.rerun()


def _theme_of(data: MapData, topic: int) -> tuple[int, str] | None:
    if data.themes is None:
        return None
    for row in data.themes.itertuples():
        if topic in [int(t) for t in row.topic_ids]:
            return int(row.theme_id), str(row.label)
    return None
