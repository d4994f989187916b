"""What changed since the previous build: lineage rows for the app, old topic links, added papers.

Pure functions over the map's tables (`lineage.parquet`, `topics.parquet`, `papers.parquet`); no
Streamlit here. Sentences are plain text and quote topic names taken from the data: render them
as text (e.g. through `app.text.markdown_literal`), never as Markdown or HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

CHANGE_COLUMNS = ["topic_id", "Topic", "Change", "Papers", "Shared with the previous map"]
# Most telling first: what disappeared or was reorganised, then what is new, then the quiet rest.
STATUS_ORDER = {"gone": 0, "split": 1, "merged": 2, "new": 3, "grown": 4, "shrunk": 5, "kept": 6}


@dataclass(frozen=True)
class SharedTopic:
    """Where a `topic=` link leads on this map: the topic to open (None: none) and what to tell the reader."""

    topic_id: int | None
    notice: str | None = None


def _names(topics: pd.DataFrame) -> dict[int, str]:
    return dict(zip(topics["topic_id"].astype(int), topics["label"].astype(str), strict=True))


def _quoted(ids: list[int], names: dict[int, str]) -> str:
    parts = [f"“{names[t]}”" if t in names else f"topic {t}" for t in ids]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _previous_names(row, names_before: dict[int, str]) -> str:
    return _quoted(list(row.previous_topic_ids), names_before)


def change_rows(lineage: pd.DataFrame | None, topics: pd.DataFrame) -> pd.DataFrame:
    """Rows of a "Changes since the previous build" table, most telling first.

    One row a topic of this map and one a previous topic that is gone: its id, its name (the
    previous name for gone topics), a sentence on what happened, its papers now and the papers
    it shares with the previous map. Empty when the map has no lineage (first build).

    Examples:
        >>> lineage = pd.DataFrame({"topic_id": [4, 9, 2], "status": ["grown", "new", "gone"],
        ...     "previous_topic_ids": [[4], [], [2]], "successor_topic_ids": [[], [], [4]],
        ...     "previous_label": ["Optimal transport", "", "Sinkhorn"], "shared_papers": [3, 0, 2]})
        >>> topics = pd.DataFrame({"topic_id": [4, 9], "label": ["Optimal transport", "Jailbreaks"],
        ...     "size": [6, 3]})
        >>> change_rows(lineage, topics)[["topic_id", "Change"]].values.tolist()
        [[2, 'Gone: its papers are now in “Optimal transport”.'], [9, 'New topic.'], [4, 'Grew: 6 papers now, 3 of them in it before.']]
    """
    if lineage is None or lineage.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    names = _names(topics)
    sizes = dict(zip(topics["topic_id"].astype(int), topics["size"].astype(int), strict=True))
    names_before = {}
    for row in lineage.itertuples(index=False):
        # A matched or gone topic's own previous name; split/merged rows list several.
        if len(row.previous_topic_ids) == 1 and "; " not in row.previous_label:
            names_before[int(row.previous_topic_ids[0])] = row.previous_label
    rows = []
    for row in lineage.itertuples(index=False):
        topic = int(row.topic_id)
        previous = [int(t) for t in row.previous_topic_ids]
        size = sizes.get(topic)
        if row.status == "gone":
            successors = [int(t) for t in row.successor_topic_ids]
            change = (
                f"Gone: its papers are now in {_quoted(successors, names)}."
                if successors
                else "Gone: its papers are no longer in the map, or no longer in one topic."
            )
        elif row.status == "kept":
            change = "Unchanged."
        elif row.status in ("grown", "shrunk"):
            verb = "Grew" if row.status == "grown" else "Shrank"
            change = f"{verb}: {size} papers now, {row.shared_papers} of them in it before."
        elif row.status == "split":
            if previous == [topic]:
                parts = [
                    int(other.topic_id)
                    for other in lineage.itertuples(index=False)
                    if other.status != "gone"
                    and int(other.topic_id) != topic
                    and topic in other.previous_topic_ids
                ]
                change = "Split: part of its papers " + (
                    f"now form {_quoted(parts, names)}." if parts else "went to other topics."
                )
            else:
                change = f"New, split from {_previous_names(row, names_before)}."
        elif row.status == "merged":
            others = [t for t in previous if t != topic]
            change = (
                f"Merged with {_quoted(others, names_before)}."
                if topic in previous
                else f"New, formed from {_previous_names(row, names_before)}."
            )
        else:
            change = "New topic."
        label = names.get(topic, row.previous_label) if row.status != "gone" else row.previous_label
        rows.append(
            {
                "topic_id": topic,
                "Topic": label,
                "Change": change,
                "Papers": size if row.status != "gone" else 0,
                "Shared with the previous map": int(row.shared_papers),
                "_order": STATUS_ORDER.get(row.status, 9),
            }
        )
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
    """
    names = _names(topics)
    if topic_id == -1 or topic_id in names:
        return SharedTopic(topic_id)
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


def follow_shared_topic(
    params: dict[str, list[str]], lineage: pd.DataFrame | None, topics: pd.DataFrame
) -> tuple[dict[str, list[str]], str | None]:
    """A link's query parameters with a `topic=` of a previous topic that is gone replaced by the
    topic its papers went to (or dropped when none), and the sentence saying so.

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
    gone = (lineage["topic_id"].astype(int) == topic_id) & (lineage["status"] == "gone")
    if not gone.any() or topic_id in set(topics["topic_id"].astype(int)):
        return params, None
    shared = resolve_shared_topic(topic_id, lineage, topics)
    followed = {key: values for key, values in params.items() if key != "topic"}
    if shared.topic_id is not None:
        followed = {
            key: ([str(shared.topic_id)] if key == "topic" else values) for key, values in params.items()
        }
    return followed, shared.notice
