"""`python -m pipeline curate` and the app's curation panel: one edit to a map folder at a time,
made under the folder's lock (the edits themselves, their checks and how they apply: `pipeline.mapfolder.curation`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pipeline import UserError
from pipeline.mapfolder.curation import (
    CuratedView,
    apply_edits,
    new_edit,
    read_curation,
    shared_name,
    write_curation,
)
from pipeline.mapfolder.files import CURATION
from pipeline.mapfolder.lock import out_lock
from pipeline.mapfolder.store import read_map
from pipeline.text import shown_plainly


def edit_map(
    folder: str | Path,
    action: str,
    *,
    topic: int | None = None,
    theme: int | None = None,
    name: str | None = None,
    text: str | None = None,
    into: int | None = None,
    edit_id: int | None = None,
) -> str:
    """Make one edit to the map in `folder` (or `accept`/`drop` a stored one); returns what was done.

    Holds the map folder's lock from reading the map to replacing `curation.json`, so it never
    interleaves with a build or `add`. A bad edit raises `UserError` and changes nothing.

    Examples:
        >>> edit_map("maps/icml", "rename", topic=4, name="Optimal transport")  # doctest: +SKIP
        '#1 rename topic 4 to "Optimal transport"; saved in maps/icml/curation.json'
    """

    folder = Path(folder)
    read_map(folder, verify=False)  # a folder that is not a readable map is refused before the lock
    with out_lock(folder, command="edit"):  # refused while a build or add writes: "cannot edit now"
        atlas = read_map(folder, verify=False, curated=action not in ("accept", "drop"))
        edits = list(atlas.edits or [])
        if action in ("accept", "drop"):
            by_id = {e.id: e for e in edits}
            if edit_id not in by_id:
                shown = ", ".join(f"#{e.id}" for e in edits) or "none"
                raise UserError(f"{folder}: no edit #{edit_id} (edits are {shown})")
            edit = by_id[edit_id]
            if action == "accept":
                if not edit.review:
                    raise UserError(f"{folder}: edit #{edit_id} is not waiting for review")
                edits = [dataclasses.replace(e, review=None) if e.id == edit_id else e for e in edits]
                done = f"accepted {dataclasses.replace(edit, review=None).describe()}"
            else:
                edits = [e for e in edits if e.id != edit_id]
                done = f"dropped {edit.describe()}"
            shared = shared_name(apply_edits(atlas.papers, atlas.topics, atlas.themes, edits))
            before = shared_name(apply_edits(atlas.papers, atlas.topics, atlas.themes, atlas.edits or []))
            if (
                shared and not before
            ):  # e.g. dropping a hide brings back a topic whose name another took meanwhile
                raise UserError(
                    f"{folder}: cannot {action} edit #{edit_id}: {shared}; rename one of them first"
                )
        else:
            view = CuratedView(atlas.papers, atlas.topics, atlas.themes)
            try:
                edit = new_edit(
                    edits, action, view, topic=topic, theme=theme, name=name, text=text, into=into
                )
            except UserError as exc:
                raise UserError(f"{folder}: {exc}") from None
            edits.append(edit)
            done = edit.describe()
        try:
            write_curation(folder, edits)
        except PermissionError:
            raise UserError(
                f"{folder}: cannot write {CURATION} (permission denied); the map is read-only"
            ) from None
    # A note's line break or U+202E written as an escape, as `curate list` shows it.
    return shown_plainly(f"{done}; saved in {folder / CURATION}")


def list_edits(folder: str | Path) -> str:
    """The map's edits, one line each, flagged ones with the reason (read-only); line breaks and
    invisible characters (a note's line break, a bidi control U+202E) written as escapes."""
    edits = read_curation(folder)
    if not edits:
        return f"{folder}: no edits"
    flagged = sum(1 for e in edits if e.review)
    lines = [shown_plainly(e.describe()) for e in edits]
    lines.append(f"{len(edits)} edit(s), {flagged} waiting for review (accept with `curate DIR accept N`)")
    return "\n".join(lines)
