"""Which papers the current view shows: vectorised filter and search masks over a map's papers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


def search_words(query: str) -> list[str]:
    """The distinct lower-cased words of a search, in order.

    Examples:
        >>> search_words("  Diffusion  MODELS diffusion ")
        ['diffusion', 'models']
    """
    return list(dict.fromkeys(query.lower().split()))


def search_mask(search_text: pd.Series, query: str) -> np.ndarray:
    """Papers whose lower-cased title + abstract contain every word of `query` (as plain text).

    An empty query matches everything. Words are matched as substrings, so "cluster" finds
    "clustering"; regex characters in the query have no special meaning.

    Examples:
        >>> text = pd.Series(["graph neural nets", "neural fields", "c++ (templates)"])
        >>> search_mask(text, "Neural GRAPH").tolist(), search_mask(text, "c++ (").tolist()
        ([True, False, False], [False, False, True])
    """
    mask = np.ones(len(search_text), dtype=bool)
    for word in search_words(query):
        mask &= search_text.str.contains(word, regex=False).to_numpy(dtype=bool, na_value=False)
    return mask


def filter_mask(
    topic_ids: np.ndarray,
    *,
    topics: Sequence[int] = (),
    show_unassigned: bool = True,
    filters: Mapping[str, Sequence[str]] | None = None,
    facet_text: Mapping[str, pd.Series] | None = None,
) -> np.ndarray:
    """Papers passing the topic, unassigned and metadata filters (before search).

    `topics` empty means every topic; unassigned papers follow `show_unassigned` alone, so
    choosing topics does not hide them unless asked. Metadata filters compare values as text.

    Examples:
        >>> ids = np.array([0, 1, -1, 2])
        >>> filter_mask(ids, topics=[1]).tolist(), filter_mask(ids, show_unassigned=False).tolist()
        ([False, True, True, False], [True, True, False, True])
    """
    topic_ids = np.asarray(topic_ids)
    assigned = topic_ids != -1
    mask = np.isin(topic_ids, list(topics)) if topics else assigned.copy()
    if show_unassigned:
        mask |= ~assigned
    for column, values in (filters or {}).items():
        if values and facet_text is not None and column in facet_text:
            mask &= facet_text[column].isin(list(values)).to_numpy(dtype=bool)
    return mask
