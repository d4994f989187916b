"""What changed since the previous build: lineage rows for the app, old topic links, added papers.

Pure functions over the map's tables (`lineage.parquet`, `topics.parquet`, `papers.parquet`); no
Streamlit here. Sentences are plain text and quote topic names taken from the data: render them
as text (e.g. through `app.text.markdown_literal`), never as Markdown or HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from pipeline.text import and_list

CHANGE_COLUMNS = ["topic_id", "Topic", "Change", "Papers", "Shared with the previous map"]
# Most telling first: what disappeared or was reorganised, then what is new, then the quiet rest.
STATUS_ORDER = {"gone": 0, "split": 1, "merged": 2, "new": 3, "grown": 4, "shrunk": 5, "kept": 6}


@dataclass(frozen=True)
class SharedTopic:
    """Where a `topic=` link leads on this map: the topic to open (None: none) and what to tell the reader."""

    topic_id: int | None
    notice: str | None = None


@dataclass(frozen=True)
class TopicEdits:
    """What a curator's merges and hides (`curation.json`, as applied) did to the topics the build made.

    The lineage tells the build's story, of topics as built; the page shows the curated map, where a
    merged or hidden topic is no longer a topic. `moves` holds each applied merge or hide in order,
    `built` each topic's name (renames applied) and size as built, for the topics the story names.
    """

    moves: tuple[tuple[int, str, int], ...] = ()  # (topic, "merge" or "hide", into; -1: unassigned)
    built: dict[int, tuple[str, int]] = field(default_factory=dict)

    def into(self, topic: int) -> int | None:
        """Where an edit moved the topic's papers (-1: unassigned); None when no edit moved them."""
        return next((into for moved, _, into in self.moves if moved == topic), None)

    def home(self, topic: int) -> int | None:
        """The topic of the curated map that holds the topic's papers now (-1: unassigned), following
        edits that merged a topic into one merged further; None when no edit moved them."""
        into = self.into(topic)
        seen = {topic}
        while (
            into is not None and into != -1 and (further := self.into(into)) is not None and into not in seen
        ):
            seen.add(into)
            into = further
        return into

    def action(self, topic: int) -> str | None:
        return next((action for moved, action, _ in self.moves if moved == topic), None)

    def incoming(self, topic: int) -> list[int]:
        """The topics an edit moved straight into `topic`, in the order of the edits."""
        return [moved for moved, _, into in self.moves if into == topic]

    def carried(self, topic: int) -> int:
        """The papers the topic held when an edit moved it: as built, plus what edits moved into it."""
        own = self.built.get(topic, ("", 0))[1]
        return own + sum(self.carried(t) for t in self.incoming(topic) if t != topic)


def _names(topics: pd.DataFrame) -> dict[int, str]:
    return dict(zip(topics["topic_id"].astype(int), topics["label"].astype(str), strict=True))


def _quoted(ids: list[int], names: dict[int, str]) -> str:
    return and_list(f"“{names[t]}”" if t in names else f"topic {t}" for t in ids)


def _before(lineage: pd.DataFrame) -> tuple[dict[int, str], dict[int, int]]:
    """Each previous topic's name and size on the previous map, as the lineage recorded them.

    `previous_label` lists the names of `previous_topic_ids` in order, joined by "; " (a name that
    itself holds "; " is read only from a row naming that topic alone); `previous_sizes`, where
    the map has it, their sizes.
    """
    names: dict[int, str] = {}
    sizes: dict[int, int] = {}
    has_sizes = "previous_sizes" in lineage.columns
    for row in lineage.itertuples(index=False):
        ids = [int(t) for t in row.previous_topic_ids]
        labels = [row.previous_label] if len(ids) == 1 else str(row.previous_label).split("; ")
        if len(labels) == len(ids):
            for topic, label in zip(ids, labels):
                if len(ids) == 1 or topic not in names:
                    names[topic] = label
        if has_sizes and row.previous_sizes is not None and len(row.previous_sizes) == len(ids):
            sizes.update(zip(ids, (int(n) for n in row.previous_sizes)))
    return names, sizes


def _with_sizes(ids: list[int], names: dict[int, str], sizes: dict[int, int]) -> str:
    return and_list(
        (f"“{names[t]}”" if t in names else f"topic {t}") + (f" ({sizes[t]:,} papers)" if t in sizes else "")
        for t in ids
    )


@dataclass(frozen=True)
class _Story:
    """What a change sentence is told from: the map as shown, its topics as built, the previous map."""

    lineage: pd.DataFrame
    shown: dict[int, int]  # papers of each topic on the page (curated)
    names: dict[int, str]  # this map's names; a topic an edit merged or hid, by its built name
    sizes: dict[int, int]  # papers of each topic as built
    names_before: dict[int, str]
    sizes_before: dict[int, int]
    merged_into: dict[int, int]  # a previous topic the build merged into another -> that topic
    edits: TopicEdits

    @classmethod
    def of(cls, lineage: pd.DataFrame, topics: pd.DataFrame, edits: TopicEdits) -> _Story:
        shown = dict(zip(topics["topic_id"].astype(int), topics["size"].astype(int), strict=True))
        built_names = {topic: name for topic, (name, _) in edits.built.items() if topic not in shown}
        merged_into = {
            int(t): int(row.topic_id)
            for row in lineage.itertuples(index=False)
            if row.status == "merged"
            for t in row.previous_topic_ids
            if int(t) != int(row.topic_id)
        }
        return cls(
            lineage=lineage,
            shown=shown,
            names=built_names | _names(topics),
            sizes=shown | {topic: size for topic, (_, size) in edits.built.items()},
            names_before=(before := _before(lineage))[0],
            sizes_before=before[1],
            merged_into=merged_into,
            edits=edits,
        )

    def renamed(self, topic: int) -> str | None:
        """The topic's previous name when it kept its id under another name."""
        old = self.names_before.get(topic)
        return old if old is not None and topic in self.names and old != self.names[topic] else None


def _gone_change(row, story: _Story) -> str:
    topic = int(row.topic_id)
    successors = [int(t) for t in row.successor_topic_ids]
    target = story.merged_into.get(topic)
    if target is not None and target in story.names:
        until_now = f", until now “{story.renamed(target)}”" if story.renamed(target) else ""
        change = f"Merged into “{story.names[target]}” (topic {target}{until_now})."
    elif successors:
        change = f"Gone: its papers are now in {_quoted(successors, story.names)}."
    else:
        change = "Gone: its papers are no longer in the map, or no longer in one topic."
    for successor in dict.fromkeys([*([target] if target is not None else []), *successors]):
        if story.edits.into(successor) is not None:  # the build put its papers in a topic an edit moved
            name = story.names.get(successor, f"topic {successor}")
            change += f" “{name}” was then {_edit_fate(successor, story.edits, story.names)}."
    return change


def _kept_change(row, story: _Story, was: str | None) -> str:
    return f"Renamed from “{was}”; same papers." if was else "Unchanged."


def _resized_change(row, story: _Story, was: str | None) -> str:
    topic = int(row.topic_id)
    verb = "Grew" if row.status == "grown" else "Shrank"
    before, size = story.sizes_before.get(topic), story.sizes.get(topic, 0)
    change = (
        f"{verb} from {before:,} to {size:,} papers ({row.shared_papers:,} of them in it before)."
        if before is not None
        else f"{verb}: {size:,} papers now, {row.shared_papers:,} of them in it before."
    )
    return f"Renamed from “{was}”. {change}" if was else change


def _split_change(row, story: _Story, was: str | None) -> str:
    topic = int(row.topic_id)
    previous = [int(t) for t in row.previous_topic_ids]
    if previous != [topic]:
        return f"New, split from {_quoted(previous, story.names_before)}."
    parts = [
        int(other.topic_id)
        for other in story.lineage.itertuples(index=False)
        if other.status != "gone" and int(other.topic_id) != topic and topic in other.previous_topic_ids
    ]
    change = "Split: part of its papers " + (
        f"now form {_quoted(parts, story.names)}." if parts else "went to other topics."
    )
    return f"Renamed from “{was}”. {change}" if was else change


def _merged_change(row, story: _Story, was: str | None) -> str:
    topic = int(row.topic_id)
    previous = [int(t) for t in row.previous_topic_ids]
    if topic not in previous:
        return f"New, formed from {_with_sizes(previous, story.names_before, story.sizes_before)}."
    others = _with_sizes([t for t in previous if t != topic], story.names_before, story.sizes_before)
    own = f"Was {_with_sizes([topic], story.names_before, story.sizes_before)}; " if was else ""
    change = f"{own}{others} merged into it: {story.sizes.get(topic, 0):,} papers now."
    return change[0].upper() + change[1:]


def _new_change(row, story: _Story, was: str | None) -> str:
    return "New topic."


# The build's sentence on a topic of this build, by lineage status (gone topics: `_gone_change`).
BUILD_CHANGE = {
    "kept": _kept_change,
    "grown": _resized_change,
    "shrunk": _resized_change,
    "split": _split_change,
    "merged": _merged_change,
}


def _change(row, story: _Story) -> str:
    """The sentence of one lineage row: what the build did, then what the curator's edits did."""
    if row.status == "gone":
        return _gone_change(row, story)
    topic = int(row.topic_id)
    was = story.renamed(topic) if topic in [int(t) for t in row.previous_topic_ids] else None
    change = BUILD_CHANGE.get(row.status, _new_change)(row, story, was)
    if story.edits.into(topic) is not None:
        return f"{change} Then {_edit_fate(topic, story.edits, story.names)}."
    return change + _edit_arrivals(topic, story.edits, story.names, story.shown.get(topic, 0))


def _edit_fate(topic: int, edits: TopicEdits, names: dict[int, str]) -> str:
    """What an edit did to a topic it merged or hid, e.g. 'merged into “X” (topic 4) by an edit'."""
    home = edits.home(topic)
    where = f"“{names[home]}” (topic {home})" if home in names else f"topic {home}"
    if edits.action(topic) == "merge":
        if home == -1:
            into = edits.into(topic)
            return f"merged into topic {into} by an edit, which an edit hid: its papers are unassigned"
        return f"merged into {where} by an edit"
    if home == -1:
        return "hidden by an edit: its papers are unassigned"
    return f"hidden by an edit: its papers are now in {where}"


def _edit_arrivals(topic: int, edits: TopicEdits, names: dict[int, str], size: int) -> str:
    """What edits moved into a topic of the curated map, e.g. ' Then “X” (4 papers) merged into it by an
    edit: 17 papers now.'; "" when none did."""
    incoming = edits.incoming(topic)
    if not incoming:
        return ""
    listed = _with_sizes(incoming, names, {t: edits.carried(t) for t in incoming})
    by = "by an edit" if len(incoming) == 1 else "by edits"
    if all(edits.action(t) == "merge" for t in incoming):
        return f" Then {listed} merged into it {by}: {size:,} papers now."
    return (
        f" Then {'an edit' if len(incoming) == 1 else 'edits'} moved {listed} into it: {size:,} papers now."
    )


def change_rows(
    lineage: pd.DataFrame | None, topics: pd.DataFrame, edits: TopicEdits | None = None
) -> pd.DataFrame:
    """Rows of a "Changes since the previous build" table, most telling first.

    One row a topic of this map and one a previous topic that is gone: its id, its name (the
    previous name for gone topics), a sentence on what happened, its papers now and the papers
    it shares with the previous map. Every previous topic is named: a topic that kept its id under
    a new name says what it was called, a merge names every topic that went into it, and a gone
    topic says which topic it merged into. Empty when the map has no lineage (first build).

    `topics` is the map as shown (curated); `edits` what merges and hides changed since the build:
    a topic an edit merged or hid keeps the build's sentence, then says where the edit put its papers,
    and holds 0 papers; a topic an edit moved papers into says so and how many it holds now.

    Examples:
        >>> lineage = pd.DataFrame({"topic_id": [4, 9, 2], "status": ["grown", "new", "gone"],
        ...     "previous_topic_ids": [[4], [], [2]], "successor_topic_ids": [[], [], [4]],
        ...     "previous_label": ["Optimal transport", "", "Sinkhorn"], "shared_papers": [3, 0, 2],
        ...     "previous_sizes": [[4], [], [2]]})
        >>> topics = pd.DataFrame({"topic_id": [4, 9], "label": ["Optimal transport", "Jailbreaks"],
        ...     "size": [6, 3]})
        >>> change_rows(lineage, topics)[["topic_id", "Change"]].values.tolist()
        [[2, 'Gone: its papers are now in “Optimal transport”.'], [9, 'New topic.'], [4, 'Grew from 4 to 6 papers (3 of them in it before).']]
        >>> merge = pd.DataFrame({"topic_id": [9, 3], "status": ["merged", "gone"],
        ...     "previous_topic_ids": [[9, 3], [3]], "successor_topic_ids": [[], [9]],
        ...     "previous_label": ["Segmentation; Object detection", "Object detection"],
        ...     "shared_papers": [280, 140], "previous_sizes": [[150, 140], [140]]})
        >>> for row in change_rows(merge, pd.DataFrame({"topic_id": [9], "label": ["Object detection"],
        ...         "size": [290]})).itertuples():
        ...     print(row.topic_id, row.Topic, "|", row.Change)
        3 Object detection | Merged into “Object detection” (topic 9, until now “Segmentation”).
        9 Object detection | Was “Segmentation” (150 papers); “Object detection” (140 papers) merged into it: 290 papers now.
    """
    if lineage is None or lineage.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    story = _Story.of(lineage, topics, edits or TopicEdits())
    rows = [
        {
            "topic_id": int(row.topic_id),
            "Topic": row.previous_label
            if row.status == "gone"
            else story.names.get(int(row.topic_id), row.previous_label),
            "Change": _change(row, story),
            "Papers": 0 if row.status == "gone" else story.shown.get(int(row.topic_id), 0),
            "Shared with the previous map": int(row.shared_papers),
            "_order": STATUS_ORDER.get(row.status, 9),
        }
        for row in lineage.itertuples(index=False)
    ]
    table = pd.DataFrame(rows).sort_values(["_order", "topic_id"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)[CHANGE_COLUMNS]


def resolve_shared_topic(topic_id: int, lineage: pd.DataFrame | None, topics: pd.DataFrame) -> SharedTopic:
    """The topic a shared `topic=` link opens on this map, and what to say when it changed.

    A topic of this map opens as it is. A previous topic that is gone opens the topic most of its
    papers went to, saying so; without successors nothing opens and the notice says why. An id
    this map and its lineage do not know is reported as such. The lineage reaches one build back.

    Examples:
        >>> lineage = pd.DataFrame({"topic_id": [4, 2], "status": ["merged", "gone"],
        ...     "previous_topic_ids": [[4, 2], [2]], "successor_topic_ids": [[], [4]],
        ...     "previous_label": ["Optimal transport; Sinkhorn", "Sinkhorn"], "shared_papers": [5, 2]})
        >>> topics = pd.DataFrame({"topic_id": [4], "label": ["Optimal transport"]})
        >>> resolve_shared_topic(4, lineage, topics)
        SharedTopic(topic_id=4, notice=None)
        >>> resolve_shared_topic(2, lineage, topics).topic_id
        4
        >>> print(resolve_shared_topic(2, lineage, topics).notice)
        Topic 2 (“Sinkhorn”) from this link is gone since the map was rebuilt: its papers are now in “Optimal transport”, shown here.
        >>> print(resolve_shared_topic(7, None, topics).notice)
        Topic 7 from this link is not a topic of this map.
        >>> renamed = pd.DataFrame({"topic_id": [4], "status": ["merged"], "previous_topic_ids": [[4, 2]],
        ...     "successor_topic_ids": [[]], "previous_label": ["Sinkhorn; Optimal transport"],
        ...     "shared_papers": [5]})
        >>> print(resolve_shared_topic(4, renamed, topics).notice)
        Topic 4 from this link was “Sinkhorn” before the map was rebuilt; it is now “Optimal transport” (“Optimal transport” merged into it).
    """
    names = _names(topics)
    if topic_id == -1:
        return SharedTopic(topic_id)
    if topic_id in names:
        return SharedTopic(topic_id, _renamed_notice(topic_id, lineage, names))
    gone = None
    if lineage is not None and not lineage.empty:
        matches = lineage[(lineage["topic_id"].astype(int) == topic_id) & (lineage["status"] == "gone")]
        gone = None if matches.empty else matches.iloc[0]
    if gone is None:
        return SharedTopic(None, f"Topic {topic_id} from this link is not a topic of this map.")
    was = f"Topic {topic_id} (“{gone['previous_label']}”) from this link is gone since the map was rebuilt"
    successors = [int(t) for t in gone["successor_topic_ids"] if int(t) in names]
    if not successors:
        return SharedTopic(None, f"{was}: its papers are no longer in one topic.")
    also = f"; some went to {_quoted(successors[1:], names)}" if len(successors) > 1 else ""
    return SharedTopic(
        successors[0], f"{was}: its papers are now in {_quoted(successors[:1], names)}, shown here{also}."
    )


def _renamed_notice(topic_id: int, lineage: pd.DataFrame | None, names: dict[int, str]) -> str | None:
    """What to tell a reader whose link opens a topic that kept its id under another name, else None."""
    if lineage is None or lineage.empty:
        return None
    rows = lineage[(lineage["topic_id"].astype(int) == topic_id) & (lineage["status"] != "gone")]
    if rows.empty or topic_id not in rows.iloc[0]["previous_topic_ids"]:
        return None
    names_before, _ = _before(lineage)
    old = names_before.get(topic_id)
    if old is None or old == names[topic_id]:
        return None
    others = [int(t) for t in rows.iloc[0]["previous_topic_ids"] if int(t) != topic_id]
    merged = f" ({_quoted(others, names_before)} merged into it)" if others else ""
    return (
        f"Topic {topic_id} from this link was “{old}” before the map was rebuilt; "
        f"it is now “{names[topic_id]}”{merged}."
    )


def follow_shared_topic(
    params: dict[str, list[str]], lineage: pd.DataFrame | None, topics: pd.DataFrame
) -> tuple[dict[str, list[str]], str | None]:
    """A link's query parameters with a `topic=` of a previous topic that is gone replaced by the
    topic its papers went to (or dropped when none), and the sentence saying so; a link to a topic
    that kept its id under a new name opens it, with a sentence giving both names.

    Any other `topic=` (this map's, malformed, or unknown to the lineage too) is left for
    `app.state.parse_view` to accept or report.

    Examples:
        >>> lineage = pd.DataFrame({"topic_id": [4, 2], "status": ["merged", "gone"],
        ...     "previous_topic_ids": [[4, 2], [2]], "successor_topic_ids": [[], [4]],
        ...     "previous_label": ["OT; Sinkhorn", "Sinkhorn"], "shared_papers": [5, 2]})
        >>> topics = pd.DataFrame({"topic_id": [4], "label": ["OT"]})
        >>> follow_shared_topic({"topic": ["2"], "q": ["x"]}, lineage, topics)[0]
        {'topic': ['4'], 'q': ['x']}
        >>> follow_shared_topic({"topic": ["9"]}, lineage, topics)
        ({'topic': ['9']}, None)
    """
    raw = (params.get("topic") or [""])[-1].strip()
    try:
        topic_id = int(raw)
    except ValueError:
        return params, None
    if lineage is None or lineage.empty:
        return params, None
    shared = resolve_shared_topic(topic_id, lineage, topics)
    if topic_id in set(topics["topic_id"].astype(int)):
        return params, shared.notice  # opens as it is; the notice says when it was renamed
    gone = (lineage["topic_id"].astype(int) == topic_id) & (lineage["status"] == "gone")
    if not gone.any():
        return params, None
    followed = {key: values for key, values in params.items() if key != "topic"}
    if shared.topic_id is not None:
        followed = {
            key: ([str(shared.topic_id)] if key == "topic" else values) for key, values in params.items()
        }
    return followed, shared.notice
