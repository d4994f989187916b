"""Search in the app: by words (the map's full-text index) or by meaning (the map's own encoder).

Words: `pipeline.search_index` finds whole words, "phrases" and prefix* in titles and abstracts,
every term required, best BM25 match first. Meaning: the query is embedded with the encoder the map
was built with (`app.encoder.encode_queries`, the same one "Where does my paper fit?" uses) and the
papers in view are ranked by cosine similarity; the closest `meaning_limit(n)` that reach
`MEANING_FLOOR` are the hits. Each hit says which kind of match it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.search_index import Query, WordHits, parse_query

KINDS = ("words", "meaning")  # the first is the default
KIND_NAMES = {"words": "Words", "meaning": "Meaning"}
# Cosine similarity below which a paper is not "close in meaning" to a query. Measured on the seed map
# with all-MiniLM-L6-v2: unrelated queries ("a sourdough recipe", "football match results") reach
# 0.12 at most; "keeping language models from saying harmful things" finds the LLM-safety papers at
# 0.40-0.43, while the next unrelated papers sit near 0.28.
MEANING_FLOOR = 0.3


def meaning_limit(n: int) -> int:
    """How many papers a search by meaning lists at most: 2% of the map, between 10 and 200.

    Examples:
        >>> meaning_limit(57), meaning_limit(5_000), meaning_limit(81_646)
        (10, 100, 200)
    """
    return int(min(200, max(10, n // 50)))


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
    labels: tuple[str, ...] | None = None  # words: how each hit matched (`pipeline.search_index.WordHits`)

    def match_labels(self) -> list[str]:
        """One label a hit: what kind of match it is, for the papers table."""
        if self.kind == "words":
            return list(self.labels) if self.labels is not None else ["words"] * len(self.rows)
        words = self.has_words if self.has_words is not None else np.zeros(len(self.rows), dtype=bool)
        return ["meaning + words" if w else "meaning" for w in words.tolist()]


def word_search(hits: WordHits, in_filter: np.ndarray, text: str) -> SearchResult:
    """The word hits among the filtered papers, in their order (as typed first, then BM25), each
    labelled with what it matched."""
    keep = in_filter[hits.rows] if len(hits.rows) else np.zeros(0, dtype=bool)
    labels = np.array(hits.match_labels(), dtype=object)[keep] if len(hits.rows) else np.array([], dtype=object)
    return SearchResult("words", hits.query, text, hits.rows[keep], notices=hits.notices, labels=tuple(labels))


def meaning_search(
    similarity: np.ndarray, in_filter: np.ndarray, word_rows: np.ndarray, text: str
) -> SearchResult:
    """The filtered papers closest in meaning: at most `meaning_limit(n)`, none below `MEANING_FLOOR`.

    `similarity` is every paper's cosine similarity to the query, `word_rows` the papers that hold
    every word of it (to say which hits are also word matches).

    Examples:
        >>> similarity = np.array([0.1, 0.5, 0.35, 0.8])
        >>> found = meaning_search(similarity, np.array([True, True, True, False]), np.array([2]), "q")
        >>> found.rows.tolist(), [round(float(s), 2) for s in found.similarity], found.match_labels()
        ([1, 2], [0.5, 0.35], ['meaning', 'meaning + words'])
    """
    candidates = np.flatnonzero(in_filter & (similarity >= MEANING_FLOOR))
    order = np.argsort(-similarity[candidates], kind="stable")[: meaning_limit(len(similarity))]
    rows = candidates[order]
    return SearchResult(
        "meaning",
        parse_query(text),
        text,
        rows,
        similarity=similarity[rows].astype(np.float32),
        has_words=np.isin(rows, word_rows),
    )


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
    shown = result.query.shown() if result.kind == "words" else " ".join(result.text.split())
    shown = shown if len(shown) <= 80 else shown[:79] + "…"
    count = len(result.rows)
    if result.kind == "words":
        verb = "matches" if count == 1 else "match"
        return f"{count:,}", f"of {scope} {verb} the words “{shown}”"
    if not count:
        return (
            "None",
            f"of {scope} is close in meaning to “{shown}” (similarity {MEANING_FLOOR:.2f} or more)",
        )
    low = float(result.similarity.min())
    return (
        f"{count:,}",
        f"of {scope} {'is' if count == 1 else 'are'} closest in meaning to “{shown}” "
        f"(similarity {low:.2f} or more)",
    )
