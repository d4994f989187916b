"""Search in the app: by words (the map's full-text index) or by meaning (the map's own encoder).

Words: `pipeline.mapfolder.search_index` finds whole words, "phrases", prefix*, -excluded words and OR in
titles and abstracts, the words as typed first, then their other forms, best BM25 match first.
Meaning: the query is embedded with the encoder the map was built with (`app.encoder.encode_queries`,
the same one "Where does my paper fit?" uses) and the papers in view are ranked by cosine
similarity; every paper closer to the query than 99.5% of the map's pairs of papers are to each other
is a hit (`pipeline.modelling.floors`), the papers beyond them still closer than 90% are counted as
related, and when none is close the nearest few are shown as "related" or "not close". Each hit says
which kind of match it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from app.text import counted
from pipeline.mapfolder.query import Query, parse_query
from pipeline.mapfolder.search_index import WordHits
from pipeline.modelling.floors import CLOSE_PERCENTILE, RELATED_PERCENTILE, PairSimilarities, closeness
from pipeline.text import shorten

KINDS = ("words", "meaning")  # the first is the default
KIND_NAMES = {"words": "Words", "meaning": "Meaning"}
NOT_CLOSE_SHOWN = 5  # when nothing is close in meaning: the nearest this many, "related" or "not close"
SHORT_QUERY_WORDS = 2  # a search by meaning of at most this many words suggests searching by words


@dataclass(frozen=True)
class SearchResult:
    """The papers a search keeps within the filtered papers, best first, and how each matched."""

    kind: str  # "words" or "meaning"
    query: Query  # the words as parsed (also used to highlight them)
    text: str  # the search as typed (trimmed)
    rows: np.ndarray  # hits among the filtered papers, best first
    similarity: np.ndarray | None = None  # meaning: each hit's similarity to the query
    has_words: np.ndarray | None = None  # meaning: whether each hit also holds every word
    notices: tuple[str, ...] = ()
    labels: tuple[str, ...] | None = (
        None  # words: how each hit matched (`pipeline.mapfolder.search_index.WordHits`)
    )
    percentile: np.ndarray | None = None  # meaning: each hit is closer than this % of the map's pairs
    close: int | None = None  # meaning: the first `close` rows are close; the rest are the nearest, not close
    related: np.ndarray | None = None  # meaning: the papers not close but related, closest first (not listed)
    floor: float | None = (
        None  # meaning: the similarity a paper needs to be close (`pipeline.modelling.floors`)
    )

    def match_labels(self) -> list[str]:
        """One label a hit: what kind of match it is, for the papers table."""
        if self.kind == "words":
            return list(self.labels) if self.labels is not None else ["words"] * len(self.rows)
        words = self.has_words if self.has_words is not None else np.zeros(len(self.rows), dtype=bool)
        close = len(self.rows) if self.close is None else self.close
        shares = self.percentile if self.percentile is not None else np.zeros(len(self.rows))
        return [
            ("meaning + words" if w else "meaning")
            if i < close
            else ("related" if shares[i] >= RELATED_PERCENTILE else "not close")
            for i, w in enumerate(words.tolist())
        ]


def word_search(hits: WordHits, in_filter: np.ndarray, text: str) -> SearchResult:
    """The word hits among the filtered papers, in their order (as typed first, then BM25), each
    labelled with what it matched."""
    keep = in_filter[hits.rows] if len(hits.rows) else np.zeros(0, dtype=bool)
    labels = (
        np.array(hits.match_labels(), dtype=object)[keep] if len(hits.rows) else np.array([], dtype=object)
    )
    return SearchResult(
        "words", hits.query, text, hits.rows[keep], notices=hits.notices, labels=tuple(labels)
    )


def meaning_search(
    similarity: np.ndarray, in_filter: np.ndarray, word_rows: np.ndarray, text: str, pairs: PairSimilarities
) -> SearchResult:
    """Every filtered paper close in meaning to the query, closest first, and the papers beyond them
    that are related; when none is close, the nearest `NOT_CLOSE_SHOWN`, labelled "related" or "not close".

    Close means closer to the query than `CLOSE_PERCENTILE`% of the map's pairs of papers are to each
    other, related closer than `RELATED_PERCENTILE`% (`pairs`, `pipeline.modelling.floors`): floors each
    map sets by its own similarities, not fixed numbers. `similarity` is every paper's cosine similarity
    to the query, `word_rows` the papers that hold every word of it (to say which hits are also word matches).

    Examples:
        >>> from pipeline.modelling.floors import PairSimilarities
        >>> pairs = PairSimilarities(np.array([0.0, 90.0, 99.5, 100.0]), np.array([0.0, 0.3, 0.6, 0.9]), 10)
        >>> similarity = np.array([0.1, 0.7, 0.35, 0.8, 0.62])
        >>> found = meaning_search(similarity, np.array([True, True, True, False, True]), np.array([4]), "q", pairs)
        >>> found.rows.tolist(), [round(float(s), 2) for s in found.similarity], found.match_labels()
        ([1, 4], [0.7, 0.62], ['meaning', 'meaning + words'])
        >>> found.percentile.round(1).tolist(), found.related.tolist(), found.notices[0][:40]
        ([99.7, 99.5], [2], 'Search by meaning compares descriptions:')
        >>> far = meaning_search(similarity * 0.5, np.ones(5, bool), np.array([], int), "what a recipe", pairs)
        >>> far.close, far.rows.tolist(), far.match_labels()
        (0, [3, 1, 4, 2, 0], ['related', 'related', 'related', 'not close', 'not close'])
    """
    floor, related_floor = pairs.at(CLOSE_PERCENTILE), pairs.at(RELATED_PERCENTILE)
    candidates = np.flatnonzero(in_filter & (similarity >= floor))
    close = len(candidates)
    related = np.flatnonzero(in_filter & (similarity >= related_floor) & (similarity < floor))
    related = related[np.argsort(-similarity[related], kind="stable")]
    if not close:  # nothing is close: the nearest few, said to be related or not close
        candidates = np.flatnonzero(in_filter)
    order = np.argsort(-similarity[candidates], kind="stable")
    rows = candidates[order] if close else candidates[order][:NOT_CLOSE_SHOWN]
    notices = ()
    words = len(text.split())
    if words <= SHORT_QUERY_WORDS:
        holding = int(in_filter[word_rows].sum()) if len(word_rows) else 0
        notices = (
            "Search by meaning compares descriptions: for one or two words, search by Words, which finds "
            f"the {counted(holding, 'paper')} that write{'s' if holding == 1 else ''} "
            f"“{' '.join(text.split())}”, or describe what you look for in a sentence.",
        )
    return SearchResult(
        "meaning",
        parse_query(text),
        text,
        rows,
        similarity=similarity[rows].astype(np.float32),
        has_words=np.isin(rows, word_rows),
        notices=notices,
        percentile=np.asarray(pairs.percentile(similarity[rows].astype(np.float64)), dtype=np.float64),
        close=close,
        related=related,
        floor=floor,
    )


def within(result: SearchResult, keep: np.ndarray) -> SearchResult:
    """The search's hits among the papers `keep` (a bool per paper) says, as a search of just those.

    Examples:
        >>> found = SearchResult("words", parse_query("a"), "a", np.array([3, 0, 2]), labels=("x", "y", "z"))
        >>> within(found, np.array([False, True, True, True])).rows.tolist()
        [3, 2]
    """
    kept = keep[result.rows]

    def part(values):
        return None if values is None else np.asarray(values)[kept]

    return replace(
        result,
        rows=result.rows[kept],
        similarity=part(result.similarity),
        has_words=part(result.has_words),
        labels=None if result.labels is None else tuple(part(np.array(result.labels, dtype=object))),
        percentile=part(result.percentile),
        close=None if result.close is None else int(kept[: result.close].sum()),
        related=None if result.related is None else result.related[keep[result.related]],
    )


def quoted_inside(shown: str) -> str:
    """A query as shown for a sentence that puts it in “…”: a phrase's own quotes become ‘…’, and a
    query that is one phrase loses them (the sentence's quotes are enough).

    Examples:
        >>> quoted_inside('"optical flow"'), quoted_inside('graph "neural field" -human')
        ('optical flow', 'graph ‘neural field’ -human')
    """
    inner = re.sub(r'"([^"]*)"', "‘\\1’", shown)
    if inner.startswith("‘") and inner.endswith("’") and inner.count("‘") == 1:
        return inner[1:-1]
    return inner


def search_sentence(result: SearchResult | None, scope: str) -> tuple[str, str]:
    """The header's sentence about the view as (number, rest): the number is shown bold.

    `scope` is `app.filters.scope_phrase` for the filtered papers.

    Examples:
        >>> search_sentence(None, "the 60 papers of the map")
        ('', 'Showing the 60 papers of the map')
        >>> words = SearchResult("words", parse_query("video"), "video", np.arange(313))
        >>> search_sentence(words, "the 1,006 papers in the theme “Vision”")
        ('313', 'of the 1,006 papers in the theme “Vision” match the words “video”')
    """
    if result is None:
        return "", f"Showing {scope}"
    shown = quoted_inside(result.query.shown()) if result.kind == "words" else " ".join(result.text.split())
    shown = shorten(shown, 80)
    count = len(result.rows)
    if result.kind == "words":
        verb = "matches" if count == 1 else "match"
        return f"{count:,}", f"of {scope} {verb} the words “{shown}”"
    close = count if result.close is None else result.close
    related = 0 if result.related is None else len(result.related)
    if not close:
        if related:
            return "None", (
                f"of {scope} is close in meaning to “{shown}”; {related:,} "
                f"{'is' if related == 1 else 'are'} related ({closeness(RELATED_PERCENTILE)}): "
                "the nearest are listed below"
            )
        nearest = (
            f": the nearest (listed below as not close) is {closeness(float(result.percentile[0]))}"
            if result.percentile is not None and len(result.percentile)
            else ""
        )
        return "None", f"of {scope} is close in meaning to “{shown}”{nearest}"
    more = (
        f"; {related:,} more {'is' if related == 1 else 'are'} related ({closeness(RELATED_PERCENTILE)})"
        if related
        else ""
    )
    return (
        f"{close:,}",
        f"of {scope} {'is' if close == 1 else 'are'} close in meaning to “{shown}”, each "
        f"{closeness(CLOSE_PERCENTILE)}{more}",
    )
