"""Curation: a person's edits to a map (names, merges, hidden topics, notes), kept with the map and
applied again by every rebuild through the stable topic ids.

The edits live in `curation.json` in the map folder, a small file a person can read and keep in
git. The map's tables stay as the build wrote them; `pipeline.mapfolder.store.read_map` applies the edits
on top, so the app, exports and `add` all see one curated map, and the next rebuild matches its
topics against the fitted (uncurated) ones. A rebuild carries every edit forward; an edit whose
topic's content moved (split, merged, gone, or most papers elsewhere) is kept and flagged for
review instead of being applied to what is now a different topic. See docs/curation.md.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline import UserError
from pipeline.mapfolder.files import CURATION
from pipeline.text import name_key, name_problem, plain_name, shown_plainly

if TYPE_CHECKING:  # numpy and pandas load on first use: `python -m pipeline --help` stays instant
    import numpy as np
    import pandas as pd

FORMAT = "abstract-atlas curation 1"
ACTIONS = ("rename", "rename-theme", "merge", "hide", "note")
UNASSIGNED = -1
UNASSIGNED_NAME = "Unassigned"  # the page's name for papers outside every topic
MAX_NAME = 80
MAX_NOTE = 2_000
# Characters Markdown or HTML would read as markup (a name is shown in Markdown lists, Plotly labels
# and exports); line breaks and invisible characters are `pipeline.text.name_problem`'s.
MARKUP = re.compile(r"[<>\[\]`*_|\\{}]|^[#=+\-]")
NOTE_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# An edited topic whose papers are less than this share still together after a rebuild (Jaccard over
# the papers both builds hold) has moved: the same bar the lineage uses before keeping a topic's name.
MIN_STILL_TOGETHER = 0.5
# A renamed theme whose rebuilt theme shares less than this share of its topics (Jaccard) moved: the
# name a person gave stays in the file, flagged for review, as a rebuild names such a theme afresh.
THEME_STILL_SAME = 2 / 3

# The temporary file `write_curation` renames into place (`tempfile.mkstemp`'s random tail): one
# left by a killed `curate` is ours, not the user's; the next writer of the edits removes it.
TEMPORARY = re.compile(r"^\.curation\.json\.[A-Za-z0-9_]{6,}$")


@dataclasses.dataclass(frozen=True)
class Edit:
    """One edit. `topic` is the edited topic (None for a theme edit); `theme_topics` anchors a theme
    edit to the theme's topics when it was made: theme ids are kept across rebuilds (`theme_lineage`),
    but the edit follows the rebuilt theme holding most of those topics."""

    id: int
    action: str
    topic: int | None = None
    theme: int | None = None
    theme_topics: tuple[int, ...] = ()
    name: str | None = None
    text: str | None = None
    into: int | None = None
    made_at: str = ""
    review: str | None = None  # why a rebuild did not apply it; None = applied

    def to_json(self) -> dict:
        row = {"id": self.id, "action": self.action}
        for key in ("topic", "theme", "name", "text", "into", "made_at", "review"):
            value = getattr(self, key)
            if value is not None and value != "":
                row[key] = value
        if self.theme_topics:
            row["theme_topics"] = list(self.theme_topics)
        return row

    def did(self) -> str:
        """What a merge or hide did to its topic, after "edit #3 already": "merged it into topic 4"."""
        return f"merged it into topic {self.into}" if self.action == "merge" else "hid it"

    def describe(self) -> str:
        """One line saying what the edit does, e.g. `#3 rename topic 4 to "Optimal transport"`."""
        if self.action == "rename":
            what = f'rename topic {self.topic} to "{self.name}"'
        elif self.action == "rename-theme":
            what = f'rename theme {self.theme} (topics {", ".join(map(str, self.theme_topics))}) to "{self.name}"'
        elif self.action == "merge":
            what = f"merge topic {self.topic} into topic {self.into}"
        elif self.action == "hide":
            where = "unassigned" if self.into == UNASSIGNED else f"topic {self.into}"
            what = f"hide topic {self.topic} (its papers go to {where})"
        else:
            what = (
                f"note on topic {self.topic}: {self.text}"
                if self.text
                else f"remove the note on topic {self.topic}"
            )
        return f"#{self.id} {what}" + (f"  [review: {self.review}]" if self.review else "")


# ---- the file ----


def read_curation(folder: str | Path) -> list[Edit]:
    """The map's edits in order ([] when it has none); a damaged file, or a `curation.json` that is
    not a file (a folder, a link to nothing, a pipe), is a `UserError` naming it."""
    from pipeline.mapfolder.bounded_json import read_json_file
    from pipeline.mapfolder.safe_output import file_kind

    path = Path(folder) / CURATION
    if not os.path.lexists(path):
        return []
    try:
        kind = file_kind(os.stat(path).st_mode)
    except OSError as exc:
        kind = "a link to nothing" if isinstance(exc, FileNotFoundError) else f"unreadable ({exc.strerror})"
    if kind:
        raise UserError(
            f"{path} is {kind}, not the map's file of edits; move it out of the map folder "
            "(a map's edits are a JSON file)"
        )

    try:
        document = read_json_file(path, "damaged edit file")  # bounded: depth, numbers, size
    except UserError as exc:
        raise UserError(f"{exc}; fix it or remove it to drop the edits") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UserError(f'{path}: damaged edit file (expected a JSON object with "format": "{FORMAT}")')
    rows = document.get("edits")
    if not isinstance(rows, list):
        raise UserError(f'{path}: damaged edit file ("edits" must be a list)')
    edits = [_edit_from_json(row, path, number) for number, row in enumerate(rows, 1)]
    ids = [e.id for e in edits]
    if len(set(ids)) != len(ids):
        raise UserError(f"{path}: damaged edit file (two edits share an id)")
    return edits


def _edit_from_json(row: object, path: Path, number: int) -> Edit:
    where = f"{path}: edit {number}"
    if not isinstance(row, dict):
        raise UserError(f"{where} is not a JSON object")
    unknown = set(row) - {f.name for f in dataclasses.fields(Edit)}
    if unknown:
        raise UserError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    if row.get("action") not in ACTIONS:
        raise UserError(f"{where}: action must be one of {', '.join(ACTIONS)}, not {row.get('action')!r}")

    def whole(key: str, required: bool, low: int = 0) -> int | None:
        """A whole number of at least `low`: edit numbers from 1, topic and theme ids from 0, the
        receiving topic of a hide from -1 (unassigned)."""
        value = row.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise UserError(f"{key!r} must be a whole number of at least {low}, not {value!r}")
        return value

    action = row["action"]
    try:
        edit = Edit(
            id=whole("id", True, low=1),
            action=action,
            topic=whole("topic", action != "rename-theme"),
            theme=whole("theme", action == "rename-theme"),
            theme_topics=tuple(int(t) for t in row.get("theme_topics", ())),
            name=check_name(row.get("name"), "name") if action in ("rename", "rename-theme") else None,
            text=check_note(row.get("text") or "") if action == "note" else None,
            into=whole("into", action in ("merge", "hide"), low=UNASSIGNED),
            made_at=str(row.get("made_at", "")),
            review=None if row.get("review") is None else str(row["review"]),
        )
    except (TypeError, ValueError) as exc:
        raise UserError(f"{where}: {exc}") from None
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    if action in ("merge", "hide") and edit.into == edit.topic:
        raise UserError(
            f"{where}: {'merges' if action == 'merge' else 'hides'} topic {edit.topic} into itself"
        )
    return edit


def curation_json(edits: Iterable[Edit]) -> str:
    document = {"format": FORMAT, "edits": [e.to_json() for e in edits]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_curation(folder: str | Path, edits: list[Edit]) -> None:
    """Replace `curation.json` in one atomic rename (readers see the old or the new file, never half)."""
    folder = Path(folder)
    for stray in folder.iterdir():  # a killed writer's temporary file (the caller holds the map's lock)
        if TEMPORARY.match(stray.name) and stray.is_file():
            stray.unlink(missing_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{CURATION}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(curation_json(edits))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, folder / CURATION)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


# ---- checks a person's input must pass ----


def check_name(name: object, what: str = "name") -> str:
    """A name, stripped; refused when empty, too long, not one line of visible text (a line break,
    a control or an invisible character, or nothing visible: `pipeline.text.name_problem`), read as
    "Unassigned", or holding markup. The one rule for every name a person gives: `curate`, the app's
    edit panel and `curation.json` as read.

    Examples:
        >>> check_name("  Optimal transport ")
        'Optimal transport'
    """
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"the {what} is empty; give a name")
    name = name.strip()
    shown = shown_plainly(name)
    if len(name) > MAX_NAME:
        raise UserError(f"the {what} is {len(name)} characters long; at most {MAX_NAME}")
    problem = name_problem(name)
    if problem:
        raise UserError(f'the {what} "{shown}" holds {problem}; give one line of plain text')
    if is_unassigned(name):
        raise UserError(
            f'the {what} "{shown}" reads as "{UNASSIGNED_NAME}", the name of the papers outside every topic; give another'
        )
    if MARKUP.search(name):
        raise UserError(
            f'the {what} "{shown}" holds markup (< > [ ] ` * _ | \\ {{ }} or a leading # = + -); '
            "give plain text"
        )
    return name


def is_unassigned(name: str) -> bool:
    """Whether `name` reads as "Unassigned" (fullwidth, other case, with invisible characters)."""
    return name_key(name) == name_key(UNASSIGNED_NAME)


def same_name(first: str, second: str) -> bool:
    """Whether two names read the same (`pipeline.text.name_key`): two topics never share one."""
    return name_key(first) == name_key(second)


def shown_name(label: object, fallback: str) -> str:
    """A topic's or theme's name read from a map's tables, fit to show on one line: as built, or with
    its line breaks and invisible characters taken out (a bidi control shown as U+FFFD), or `fallback` ("Topic 4") when nothing
    visible is left or it reads as "Unassigned"."""
    name = plain_name(str(label), fallback)
    return fallback if is_unassigned(name) else name


def check_note(text: object) -> str:
    """A note, stripped: plain text (shown as text, never rendered), at most MAX_NOTE characters."""
    if not isinstance(text, str):
        raise UserError("a note must be text")
    text = text.strip()
    if len(text) > MAX_NOTE:
        raise UserError(f"the note is {len(text)} characters long; at most {MAX_NOTE}")
    if NOTE_CONTROL.search(text):
        raise UserError("the note holds control characters; give plain text")
    return text


def new_edit(
    edits: list[Edit],
    action: str,
    view: CuratedView,
    *,
    topic: int | None = None,
    theme: int | None = None,
    name: str | None = None,
    text: str | None = None,
    into: int | None = None,
) -> Edit:
    """A checked edit of the curated map `view`, numbered after `edits`; a bad one is a `UserError`."""
    topics = set(view.topics["topic_id"].astype(int))

    def known(topic_id: int | None, role: str) -> int:
        if topic_id not in topics:
            shown = ", ".join(str(t) for t in sorted(topics)) or "none"
            taken = _taken_by(edits, topic_id)
            said = f": edit #{taken.id} already {taken.did()}" if taken else ""
            undo = f"; drop edit #{taken.id} to undo it" if taken else ""
            raise UserError(f"no topic {topic_id} to {role}{said} (topics are {shown}{undo})")
        return int(topic_id)

    fields: dict = {}
    if action == "rename-theme":
        themes = view.themes
        if themes is None or theme not in set(themes["theme_id"].astype(int)):
            shown = "none" if themes is None else ", ".join(str(t) for t in sorted(themes["theme_id"]))
            raise UserError(f"no theme {theme} to rename (themes are {shown})")
        row = themes[themes["theme_id"] == theme].iloc[0]
        fields = {"theme": int(theme), "theme_topics": tuple(sorted(int(t) for t in row["topic_ids"]))}
        fields["name"] = _unique(
            check_name(name, "theme name"), themes["label"], themes["theme_id"], theme, "theme"
        )
    else:
        fields["topic"] = known(
            topic, {"merge": "merge", "hide": "hide", "note": "write a note on"}.get(action, action)
        )
        if action == "rename":
            table = view.topics
            fields["name"] = _unique(check_name(name), table["label"], table["topic_id"], topic, "topic")
        elif action == "merge":
            if into == topic:
                raise UserError(f"cannot merge topic {topic} into itself")
            fields["into"] = known(into, "merge into")
        elif action == "hide":
            if into == topic:
                raise UserError(f"cannot hide topic {topic} into itself")
            fields["into"] = (
                UNASSIGNED if into in (None, UNASSIGNED) else known(into, "move the hidden papers to")
            )
        elif action == "note":
            fields["text"] = check_note(text or "")
        else:
            raise UserError(f"unknown edit {action!r}")
    number = max([e.id for e in edits], default=0) + 1
    return Edit(
        id=number, action=action, made_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **fields
    )


def _taken_by(edits: list[Edit], topic_id: int | None) -> Edit | None:
    """The applied edit that merged or hid the topic `topic_id`, if one did.

    Examples:
        >>> merged = Edit(id=3, action="merge", topic=16, into=4)
        >>> _taken_by([merged], 16).did(), _taken_by([merged], 5)
        ('merged it into topic 4', None)
    """
    for edit in reversed(edits):
        if edit.topic == topic_id and edit.action in ("merge", "hide") and not edit.review:
            return edit
    return None


def shared_name(view: CuratedView) -> str | None:
    """Two topics (or two themes) of `view` called the same, said in words; None when all differ."""
    tables = [("topic", view.topics, "topic_id")]
    if view.themes is not None:
        tables.append(("theme", view.themes, "theme_id"))
    for what, table, key in tables:
        seen: dict[str, int] = {}
        for other, label in zip(table[key].astype(int), table["label"].astype(str), strict=True):
            key = name_key(label)
            if key in seen:
                return f'{what}s {seen[key]} and {other} would both be called "{shown_plainly(label)}"'
            seen[key] = other
    return None


def _unique(name: str, labels: pd.Series, ids: pd.Series, own: int | None, what: str) -> str:
    for other, label in zip(ids.astype(int), labels.astype(str), strict=True):
        if other != own and same_name(label, name):
            raise UserError(
                f'{what} {other} is already called "{shown_plainly(label)}"; two {what}s cannot share a name'
            )
    return name


# ---- applying edits ----


@dataclasses.dataclass(frozen=True)
class CuratedView:
    """A map's tables with its edits applied, and which edits were (applied, waiting for review)."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    themes: pd.DataFrame | None
    applied: tuple[int, ...] = ()
    review: tuple[int, ...] = ()


def apply_edits(
    papers: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame | None, edits: list[Edit]
) -> CuratedView:
    """The map as its curator sees it: edits applied in order, flagged ones left out. Pure.

    A merged or hidden topic's papers take the receiving topic (or -1) and its row goes; sizes of
    topics and themes are counted again; a note becomes the topics' `note` column. An edit whose
    topic is not (or no longer) on the map changes nothing.
    """
    import numpy as np
    import pandas as pd

    papers, topics = papers.copy(), topics.copy()
    themes = None if themes is None else themes.copy()
    applied, review = [], []
    labels = papers["topic_id"].to_numpy(dtype=np.int64).copy()
    notes: dict[int, str] = {}
    for edit in edits:
        if edit.review:
            review.append(edit.id)
            continue
        present = set(topics["topic_id"].astype(int))
        if edit.action == "rename-theme":
            if themes is None or edit.theme not in set(themes["theme_id"].astype(int)):
                continue
            themes.loc[themes["theme_id"] == edit.theme, "label"] = edit.name
            for column in ("name_share", "name_written"):  # measured on the name the build gave
                if column in themes.columns:
                    themes.loc[themes["theme_id"] == edit.theme, column] = float("nan")
        elif edit.topic not in present:
            continue
        elif edit.action == "rename":
            topics.loc[topics["topic_id"] == edit.topic, "label"] = edit.name
            if "name_share" in topics.columns:  # measured on the name the build gave
                topics.loc[topics["topic_id"] == edit.topic, "name_share"] = float("nan")
        elif edit.action == "note":
            notes[edit.topic] = edit.text or ""
        else:  # merge or hide
            if edit.into != UNASSIGNED and edit.into not in present:
                continue
            labels[labels == edit.topic] = edit.into
            topics = topics[topics["topic_id"] != edit.topic]
            notes.pop(edit.topic, None)
            if themes is not None:
                themes["topic_ids"] = themes["topic_ids"].map(
                    lambda ids, gone=edit.topic: [t for t in ids if t != gone]
                )
        applied.append(edit.id)
    papers["topic_id"] = labels
    counts = pd.Series(labels[labels != UNASSIGNED]).value_counts()
    topics["size"] = topics["topic_id"].map(counts).fillna(0).astype(topics["size"].dtype)
    if any(notes.values()):
        topics["note"] = topics["topic_id"].map(lambda t: notes.get(int(t), ""))
    topics = topics.reset_index(drop=True)
    if themes is not None:
        themes = themes[themes["topic_ids"].map(len) > 0].copy()
        size_of = dict(zip(topics["topic_id"].astype(int), topics["size"], strict=True))
        themes["size"] = themes["topic_ids"].map(lambda ids: int(sum(size_of.get(int(t), 0) for t in ids)))
        themes = themes.reset_index(drop=True)
    return CuratedView(papers, topics, themes, tuple(applied), tuple(review))


# ---- carrying edits through a rebuild ----


def carry_edits(
    edits: list[Edit],
    *,
    lineage: pd.DataFrame | None,
    previous_topic_of: dict[str, int],
    doc_ids: list[str],
    labels: np.ndarray,
    themes: pd.DataFrame | None,
    names: dict[int, str] | None = None,
    content_moved: dict[int, str] | None = None,
) -> list[Edit]:
    """The previous map's edits for the rebuilt map: each one still applied where its topics kept
    their content, else kept with a `review` note saying what happened (never silently dropped).

    Args:
        edits: the previous map's edits.
        lineage: the rebuild's lineage table; None when topics were numbered afresh.
        previous_topic_of: doc_id -> topic id in the previous map, as fitted (before edits).
        doc_ids, labels: the rebuilt map's papers and their final topic ids, as fitted.
        themes: the rebuilt map's themes (theme edits follow the theme holding their topics).
        names: the rebuilt map's topic names; a rename to a name another topic now has is flagged
            (two topics never share a name).
        content_moved: topic id -> why its content moved (`pipeline.modelling.lineage.content_moved`); a
            rename of such a topic is flagged: the name a person gave may no longer fit.
    """
    import numpy as np

    labels = np.asarray(labels)
    doc_ids = np.asarray(doc_ids, dtype=object)
    in_both = np.array([d in previous_topic_of for d in doc_ids.tolist()], dtype=bool)
    previous = np.array([previous_topic_of.get(d, -2) for d in doc_ids.tolist()])

    def moved(topic: int) -> str | None:
        if lineage is None:
            return "topic ids were numbered afresh (--no-previous)"
        rows = lineage[lineage["topic_id"] == topic]
        live = rows[rows["status"] != "gone"]
        if live.empty:
            successors = [t for ids in rows["successor_topic_ids"] for t in ids]
            went = f" (its papers went to topic {', '.join(map(str, successors))})" if successors else ""
            return f"topic {topic} is gone since this edit{went}"
        status = str(live["status"].iloc[0])
        if status in ("split", "merged"):
            return f"topic {topic} was {status} by the rebuild"
        before = in_both & (previous == topic)
        after = in_both & (labels == topic)
        union = int((before | after).sum())
        together = int((before & after).sum()) / union if union else 0.0
        if together < MIN_STILL_TOGETHER:
            return f"only {together:.0%} of topic {topic}'s papers are still together"
        return None

    carried = []
    for edit in edits:
        if edit.review:  # a flag stays until a person accepts or drops the edit
            carried.append(edit)
            continue
        if edit.action == "rename-theme":
            # The theme as its editor saw it: without the topics the edits before it merged or hid
            # (as `apply_edits` takes them off their themes).
            removed = {e.topic for e in carried if e.action in ("merge", "hide") and not e.review}
            followed = _follow_theme(edit, themes, removed)
            if lineage is None:  # ids numbered afresh: flagged like every other edit
                why = ["theme ids were numbered afresh (--no-previous)", followed.review]
                followed = dataclasses.replace(followed, review="; ".join(r for r in why if r))
            carried.append(followed)
            continue
        targets = [edit.topic] + ([edit.into] if edit.into not in (None, UNASSIGNED) else [])
        reasons = [r for r in (moved(int(t)) for t in targets) if r]
        if edit.action == "rename" and names:
            taken = [t for t, label in names.items() if t != edit.topic and same_name(label, edit.name)]
            reasons += [f'topic {t} is now called "{edit.name}" too' for t in taken]
        if edit.action == "rename" and edit.topic in (content_moved or {}):
            why = content_moved[edit.topic]
            reasons.append(f"topic {edit.topic}'s content moved ({why}): does the name still fit?")
        carried.append(dataclasses.replace(edit, review="; ".join(reasons)) if reasons else edit)
    return carried


def _follow_theme(edit: Edit, themes: pd.DataFrame | None, removed: set[int | None]) -> Edit:
    """A theme edit moved to the rebuilt theme holding (most of) the same topics, or flagged; a
    rebuilt theme's topics are counted without those in `removed` (merged or hidden by earlier edits)."""
    anchor = set(edit.theme_topics)
    best, best_score = None, 0.0
    for theme_id, ids in zip(
        [] if themes is None else themes["theme_id"], [] if themes is None else themes["topic_ids"]
    ):
        ids = {int(t) for t in ids} - removed
        score = len(anchor & ids) / len(anchor | ids) if anchor | ids else 0.0
        if score > best_score:
            best, best_score = (int(theme_id), tuple(sorted(ids))), score
    if best is None or best_score < MIN_STILL_TOGETHER:
        held = ", ".join(map(str, edit.theme_topics))
        return dataclasses.replace(edit, review=f"no rebuilt theme holds most of its topics ({held})")
    taken = [
        int(t)
        for t, label in zip(themes["theme_id"], themes["label"], strict=True)
        if int(t) != best[0] and same_name(str(label), edit.name or "")
    ]
    reasons = [f'theme {t} is now called "{edit.name}" too' for t in taken]
    if best_score < THEME_STILL_SAME:
        held = len(anchor & set(best[1]))
        reasons.append(
            f"theme {best[0]}'s content moved ({held} of its {len(best[1])} topics were in it): "
            "does the name still fit?"
        )
    return dataclasses.replace(edit, theme=best[0], theme_topics=best[1], review="; ".join(reasons) or None)
