"""Which papers the current view shows: vectorised filter and search masks over a map's papers."""

from __future__ import annotations

from bisect import bisect_right
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


class SearchText:
    """Every paper's lower-cased text in one UTF-8 buffer, searched with `bytes.find` (C speed).

    A word is found by scanning the buffer and, at each hit, jumping to the next paper: the Python
    loop runs once per matching paper, not once per paper, which makes a search over 80,000
    abstracts about four times faster than `Series.str.contains`. Papers are separated by a NUL byte,
    which no typed word contains, so a word never matches across two papers.
    """

    def __init__(self, texts: pd.Series) -> None:
        lowered = texts.fillna("").astype(str).str.lower().tolist()
        encoded = [t.encode("utf-8") for t in lowered]
        self.n = len(encoded)
        self.buffer = b"\0".join(encoded)
        lengths = np.fromiter((len(e) + 1 for e in encoded), dtype=np.int64, count=self.n)
        self.starts = (np.cumsum(lengths) - lengths).tolist()  # byte offset where each paper begins

    def word_mask(self, word: str) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        needle, buffer, starts = word.encode("utf-8"), self.buffer, self.starts
        position = buffer.find(needle)
        while position != -1:
            row = bisect_right(starts, position) - 1
            mask[row] = True
            if row + 1 >= self.n:
                break
            position = buffer.find(needle, starts[row + 1])
        return mask

    def mask(self, query: str) -> np.ndarray:
        mask = np.ones(self.n, dtype=bool)
        for number, word in enumerate(sorted(search_words(query), key=len, reverse=True)):
            candidates = np.flatnonzero(mask)
            if number and len(candidates) < self.n // 8:  # few papers left: look inside those alone
                needle, buffer, starts = word.encode("utf-8"), self.buffer, self.starts
                ends = starts[1:] + [len(buffer) + 1]
                for row in candidates.tolist():
                    mask[row] = buffer.find(needle, starts[row], ends[row] - 1) != -1
            else:
                mask &= self.word_mask(word)
        return mask


def search_mask(search_text: pd.Series | SearchText, query: str) -> np.ndarray:
    """Papers whose lower-cased title + abstract contain every word of `query` (as plain text).

    An empty query matches everything. Words are matched as substrings, so "cluster" finds
    "clustering"; regex characters in the query have no special meaning.

    Examples:
        >>> text = pd.Series(["graph neural nets", "neural fields", "c++ (templates)"])
        >>> search_mask(text, "Neural GRAPH").tolist(), search_mask(text, "c++ (").tolist()
        ([True, False, False], [False, False, True])
    """
    index = search_text if isinstance(search_text, SearchText) else SearchText(search_text)
    return index.mask(query)


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
