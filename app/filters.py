"""Which papers the current view shows, exactly, and the sentence that says what the page counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from app.text import counted

UNASSIGNED = -1


def chosen_topics(topics: Sequence[int], within: Sequence[int] | None) -> tuple[int, ...] | None:
    """The topics a view keeps: the chosen ones inside the chosen themes; None when neither is chosen.

    `within` is the topics of the chosen themes (None: no theme chosen). Unassigned (-1) is kept
    only when chosen itself: it belongs to no theme.

    Examples:
        >>> chosen_topics([], None), chosen_topics([], [0, 2]), chosen_topics([2, 5, -1], [0, 2])
        (None, (0, 2), (2, -1))
    """
    if not topics and within is None:
        return None
    if not topics:
        return tuple(within)
    inside = None if within is None else set(within)
    return tuple(t for t in topics if inside is None or t in inside or t == UNASSIGNED)


def filter_mask(
    topic_ids: np.ndarray,
    *,
    topics: Sequence[int] | None = None,
    show_unassigned: bool = True,
    filters: Mapping[str, Sequence[str]] | None = None,
    facet_text: Mapping[str, pd.Series] | None = None,
) -> np.ndarray:
    """Papers passing the topic and metadata filters (before search).

    `topics` (from `chosen_topics`) keeps exactly those topics' papers, unassigned ones only when
    -1 is among them; None keeps every topic, with unassigned papers when `show_unassigned`.
    Metadata filters compare values as text.

    Examples:
        >>> ids = np.array([0, 1, -1, 2])
        >>> filter_mask(ids, topics=(1,)).tolist(), filter_mask(ids, topics=(1, -1)).tolist()
        ([False, True, False, False], [False, True, True, False])
        >>> filter_mask(ids).tolist(), filter_mask(ids, show_unassigned=False).tolist()
        ([True, True, True, True], [True, True, False, True])
    """
    topic_ids = np.asarray(topic_ids)
    if topics is not None:
        mask = np.isin(topic_ids, list(topics))
    else:
        mask = np.ones(len(topic_ids), dtype=bool) if show_unassigned else topic_ids != UNASSIGNED
    for column, values in (filters or {}).items():
        if values and facet_text is not None and column in facet_text:
            mask &= facet_text[column].isin(list(values)).to_numpy(dtype=bool)
    return mask


def scope_phrase(
    count: int,
    *,
    topics: Sequence[int] = (),
    topic_names: Mapping[int, str] | None = None,
    theme_names: Sequence[str] = (),
    show_unassigned: bool = True,
    filters: Mapping[str, Sequence[str]] | None = None,
    added_only: bool = False,
) -> str:
    """What the filtered papers are, as the object of a sentence ("the 1,006 papers in the theme “Vision”").

    `topics` are the topics the reader chose (inside the chosen themes), `theme_names` the chosen
    themes; chosen topics are named rather than their themes.

    Examples:
        >>> scope_phrase(5000)
        'the 5,000 papers of the map'
        >>> scope_phrase(461, topics=(3,), topic_names={3: "Pose"})
        'the 461 papers in the topic “Pose”'
        >>> scope_phrase(1006, theme_names=["Vision"])
        'the 1,006 papers in the theme “Vision”'
        >>> scope_phrase(30, topics=(1, -1), filters={"year": ["2023", "2024"]})
        'the 30 papers in Topic 1 and the unassigned papers with year 2023 or 2024'
    """
    names = topic_names or {}
    named = [t for t in topics if t != UNASSIGNED]
    if topics:
        if len(named) == 1:
            where = f"in the topic “{names.get(named[0], f'Topic {named[0]}')}”"
            where = where if named[0] in names else f"in Topic {named[0]}"
        else:
            where = f"in {len(named):,} topics" if named else ""
        if UNASSIGNED in topics:
            where = f"{where} and the unassigned papers" if where else "that no topic claimed"
    elif theme_names:
        where = (
            f"in the theme “{theme_names[0]}”" if len(theme_names) == 1 else f"in {len(theme_names):,} themes"
        )
    else:
        where = "of the map" if show_unassigned else "in a topic"
    parts = [f"the {counted(count, 'paper')} {where}"]
    for column, values in (filters or {}).items():
        if values:
            parts.append(f"with {column.replace('_', ' ')} {' or '.join(map(str, values))}")
    if added_only:
        parts.append("added since the last build")
    return " ".join(parts)
