"""Search in the app: one ranked list from what a search writes and what it means.

A search is matched two ways over the whole map, and the two rankings fused into one list
(reciprocal rank fusion, `RRF_K`; benchmarks/SEARCH_QUALITY.md measured it against a calibrated score):

- **words** (`pipeline.mapfolder.search_index`): the papers holding every word (as typed first, then
  other forms, best BM25 match first), then those writing several of the search's rarer words
  and related in meaning (`some_words`), or two of its words next to each other as one of the map's
  own phrases ("draft model", `collocated`);
- **meaning**: the search embedded with the encoder the map was built with (`app.encoder.encode_queries`)
  and every paper ranked by cosine similarity.

A paper is listed only on evidence of its own, which its Match label says: it writes every word
("writes “speculative decoding”"), writes several of them ("writes “judges”, “raters”", "writes “draft
model”"), or is close in meaning: closer to the search than `CLOSE_PERCENTILE`% of the map's pairs of
papers are to each other (`pipeline.modelling.floors`, a floor each map sets by its own similarities)
and writing one of its words that say something, where the map writes any. A search nothing on the
map is about lists nothing. Quotes, OR, prefixes and -exclusions keep their exact meaning: every listed
paper satisfies them; a search of nothing but them is ranked by its words alone, as before. The view
(filters, an opened topic) keeps the hits it holds, in the same order (`within`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from pipeline.mapfolder.query import Query, tokens
from pipeline.mapfolder.search_index import SearchIndex, WordHits
from pipeline.modelling.floors import CLOSE_PERCENTILE, PairSimilarities, closeness
from pipeline.text import shorten

RRF_K = 60  # reciprocal rank fusion: a paper's score is the sum of 1 / (RRF_K + its rank) in each ranking
MEANING_RANKED = 1_000  # the papers nearest in meaning that the fusion ranks (past them, no meaning rank)
COMMON_SHARE = 0.25  # a word in more than this share of the map's papers says nothing about a paper alone
SOME_SHARE = 0.4  # "writes several of its words": at least this share of the search's words, by rarity
IDF_CAP = math.log(50)  # ... a word counting as much as one in 1 in 50 of the map's papers at most
SOME_PERCENTILE = 85.0  # ... and closer in meaning than this share of the map's pairs (SEARCH_QUALITY.md)
SOME_WORDS = 3  # ... and only for searches of at least this many such words (fewer: every word)
TITLE_BONUS = 0.5  # ... a word written in the title counting this much more than one in the abstract alone
# Two of its words typed next to each other ("draft model") are evidence alone where a paper writes them so,
PHRASE_SHARE = 1 / 50  # ... for a phrase in at most this share of the map's papers
COLLOCATION = 0.2  # ... and in at least this share of the papers writing its rarer word (a phrase of the map)
SHOWN_WORDS = 3  # a Match label names at most this many of the words a paper writes
# Words that ask rather than describe: never evidence of what a paper is about.
QUESTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "at",
        "by",
        "from",
        "with",
        "without",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "and",
        "or",
        "but",
        "not",
        "nor",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "that",
        "which",
        "what",
        "whose",
        "who",
        "whom",
        "how",
        "why",
        "when",
        "where",
        "whether",
        "this",
        "these",
        "those",
        "their",
        "its",
        "it",
        "they",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "as",
        "than",
        "then",
        "there",
        "here",
        "such",
        "any",
        "some",
        "all",
        "each",
        "every",
        "more",
        "most",
        "less",
        "very",
        "up",
        "out",
        "using",
        "use",
        "used",
        "via",
        "based",
        "paper",
        "papers",
    ]
)


@dataclass(frozen=True)
class SearchResult:
    """The papers a search lists, best first, and each one's evidence."""

    query: Query  # the words as parsed (also used to highlight them)
    text: str  # the search as typed (trimmed)
    rows: np.ndarray  # the listed papers, best first
    labels: tuple[str, ...]  # per row: its evidence, for the Match column
    every_word: np.ndarray  # bool per row: writes every word (a word search's hit)
    some: tuple[str, ...] = ()  # per row: the words it writes, for a paper listed for several of them ("")
    close: np.ndarray | None = None  # bool per row: close in meaning (None: matched by words alone)
    percentile: np.ndarray | None = None  # per row: closer to the search than this % of the map's pairs
    similarity: np.ndarray | None = None  # per row: cosine similarity to the search
    nearest: float | None = None  # the percentile of the map's paper nearest in meaning
    notices: tuple[str, ...] = ()

    @property
    def fused(self) -> bool:
        """Whether meaning was searched too (not for a search of operators alone, or without the encoder)."""
        return self.close is not None

    def match_labels(self) -> list[str]:
        """One label a hit: its evidence, for the papers table."""
        return list(self.labels)


def word_search(hits: WordHits, text: str) -> SearchResult:
    """A search by its words alone (a search of operators only, or without the map's encoder): the
    word hits in their order, labelled with what they matched.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> found = word_search(WordHits(np.array([3, 1]), parse_query('"a b"'), labels=("phrase",) * 2), '"a b"')
        >>> found.rows.tolist(), found.labels, found.fused
        ([3, 1], ('phrase', 'phrase'), False)
    """
    labels = tuple(hits.match_labels())
    return SearchResult(
        hits.query, text, hits.rows, labels, np.ones(len(hits.rows), dtype=bool), notices=hits.notices
    )


def content_words(query: Query) -> list[str]:
    """The plain words of a search that can say what a paper is about, in the order typed, each once.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> content_words(parse_query('Evaluating whether LLM judges agree "with humans" -survey'))
        ['evaluating', 'llm', 'judges', 'agree']
    """
    return search_words(query)[0]


def search_words(query: Query) -> tuple[list[str], list[str]]:
    """A search's content words (`content_words`) and its phrases: each two of them typed next to
    each other, in the order typed.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> search_words(parse_query("speeding up LLM inference with a small draft model"))
        (['speeding', 'llm', 'inference', 'small', 'draft', 'model'], ['llm inference', 'small draft', 'draft model'])
    """
    words = tokens(" ".join(term.text for term in query.free))  # one call: the tokenizer costs a statement
    kept = [w if len(w) > 1 and w not in QUESTION_WORDS else "" for w in words]
    pairs = [f"{a} {b}" for a, b in zip(kept, kept[1:], strict=False) if a and b and a != b]
    return list(dict.fromkeys(w for w in kept if w)), list(dict.fromkeys(pairs))


def meaning_text(query: Query) -> str:
    """What a search is embedded as: its words and phrases, without operators and excluded words.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> meaning_text(parse_query('draft models "speculative decoding" -survey'))
        'draft models speculative decoding'
    """
    return " ".join(term.text for term in query.terms)


def some_words(
    found: dict[str, np.ndarray | None], n: int, titled: dict[str, np.ndarray] | None = None
) -> np.ndarray:
    """Each paper's share of the search's words it writes, each word weighted by its rarity on the map
    (inverse document frequency) and counting `TITLE_BONUS` more where the paper's title writes it.
    `found` holds, for each word, the papers writing it (None: a word in more than `COMMON_SHARE` of the
    papers, left out), `titled` those writing it in their title; zero for searches of fewer than
    `SOME_WORDS` words or with fewer than two left."""
    share = np.zeros(n, dtype=np.float64)
    held = {w: rows for w, rows in found.items() if rows is not None}
    if len(found) < SOME_WORDS or len(held) < 2:
        return share
    weights = {w: min(math.log((n + 1) / (len(rows) + 0.5)), IDF_CAP) for w, rows in held.items()}
    count = np.zeros(n, dtype=np.int16)
    for word, rows in held.items():
        share[rows] += weights[word]
        share[(titled or {}).get(word, rows[:0])] += TITLE_BONUS * weights[word]
        count[rows] += 1
    share /= (1 + TITLE_BONUS) * sum(weights.values())
    share[count < 2] = 0.0  # one word is no evidence of a question of several
    return share


def collocated(index: SearchIndex, phrases: list[str], found: dict[str, np.ndarray | None], n: int) -> dict:
    """The search's phrases that are the map's own (`PHRASE_SHARE`, `COLLOCATION`: "draft model" is,
    "teaching language" of "teaching language models" is not), each with the papers writing it."""
    counts = {w: len(rows) for w, rows in found.items() if rows is not None and len(rows)}
    asked = {
        p: min(counts[w] for w in p.split() if w in counts) for p in phrases if counts.keys() & p.split()
    }
    asked = {
        p: most for p, most in asked.items() if COLLOCATION * most <= PHRASE_SHARE * n
    }  # else it can't be
    return {
        phrase: rows
        for phrase, rows in (index.phrase_papers(list(asked)).items() if asked else ())
        if 0 < len(rows) <= PHRASE_SHARE * n and len(rows) >= COLLOCATION * asked[phrase]
    }


def fused_search(
    index: SearchIndex, hits: WordHits, similarity: np.ndarray, pairs: PairSimilarities, text: str
) -> SearchResult:
    """The papers of the whole map with evidence for the search, fused best first (see the module).

    `hits` are the search's word hits (`SearchIndex.search`), `similarity` every paper's cosine
    similarity to it (`meaning_text`, embedded), `pairs` the map's pair similarities.
    """
    query, n = hits.query, len(similarity)
    allowed = np.ones(n, dtype=bool)
    if not query.filters.empty:  # the operators, exactly: every listed paper satisfies them
        allowed[:] = False
        allowed[index.search(query.filters).rows] = True
    every = np.zeros(n, dtype=bool)
    every[hits.rows] = True
    words, phrases = search_words(query)
    found = index.word_papers(words, int(COMMON_SHARE * n)) if words else {}
    held = {w: rows for w, rows in found.items() if rows is not None}
    share = some_words(found, n, index.title_papers(list(held)) if len(found) >= SOME_WORDS else None)
    written = {**collocated(index, phrases, found, n), **held}  # what a paper can be listed as writing
    holds = {}  # per phrase and word, the papers writing it
    for key, papers in written.items():
        holds[key] = np.zeros(n, dtype=bool)
        holds[key][papers] = True
    phrase = np.logical_or.reduce([holds[k] for k in written if " " in k], initial=False)
    related = similarity >= pairs.at(SOME_PERCENTILE)
    some = ((share >= SOME_SHARE) & related | phrase) & allowed & ~every
    close = (similarity >= pairs.at(CLOSE_PERCENTILE)) & allowed
    # Papers writing one of its words that say something.
    writes = np.logical_or.reduce([holds[w] for w in held], initial=False)
    if writes.any():  # close in meaning but writing none of them, where others do: not listed
        close &= writes | every | some
    # The papers writing every word first, in the word search's order (words as typed, then BM25); then
    # the rest by reciprocal rank fusion of two rankings: by the share of the words written, and by
    # meaning over the whole map.
    score = np.zeros(n, dtype=np.float64)
    by_share = np.flatnonzero((share > 0) & ~every)
    by_share = by_share[np.lexsort((-similarity[by_share], -share[by_share]))]
    score[by_share] += 1.0 / (RRF_K + 1 + np.arange(len(by_share)))
    nearest = np.argpartition(-similarity, min(MEANING_RANKED, n - 1))[:MEANING_RANKED] if n else similarity
    nearest = nearest[np.argsort(-similarity[nearest], kind="stable")]
    score[nearest] += 1.0 / (RRF_K + 1 + np.arange(len(nearest)))
    rest = np.flatnonzero((some | close) & ~every)
    rows = np.concatenate([hits.rows, rest[np.lexsort((rest, -similarity[rest], -score[rest]))]])
    percentile = np.asarray(pairs.percentile(similarity[rows].astype(np.float64)), dtype=np.float64)
    listed_for = tuple(  # the phrases and words each paper listed for some of them writes
        ", ".join(_unrepeated([k for k, mask in holds.items() if mask[row]])) if some[row] else ""
        for row in rows.tolist()
    )
    said: dict[tuple[bool, str, bool], str] = {}  # one label a kind of evidence, not a paper
    labels = tuple(
        said.setdefault(key, _label(query, *key))
        for key in zip(every[rows].tolist(), listed_for, close[rows].tolist(), strict=True)
    )
    return SearchResult(
        query,
        text,
        rows,
        labels,
        every[rows],
        some=listed_for,
        close=close[rows],
        percentile=percentile,
        similarity=similarity[rows].astype(np.float32),
        nearest=float(pairs.percentile(float(similarity.max()))) if n else None,
        notices=hits.notices,
    )


def _unrepeated(keys: list[str]) -> list[str]:
    """Phrases and words, less the words a phrase among them already says.

    Examples:
        >>> _unrepeated(["draft model", "inference", "draft"])
        ['draft model', 'inference']
    """
    said = {w for k in keys if " " in k for w in k.split()}
    return [k for k in keys if " " in k or k not in said]


def _label(query: Query, every: bool, some: str, close: bool) -> str:
    """A paper's evidence, as the Match column says it: "writes “…”" (every word), "writes “a”, “b”"
    (several of the words) and "close in meaning", joined with " + "."""
    parts = []
    if every:
        parts.append(f"writes “{shorten(' '.join(t.shown() for t in query.terms), 40)}”")
    elif some:
        words = some.split(", ")
        parts.append(
            "writes " + ", ".join(f"“{w}”" for w in words)
            if len(words) <= SHOWN_WORDS
            else f"writes {len(words)} of its words"
        )
    if close:
        parts.append("close in meaning")
    return " + ".join(parts)


def within(result: SearchResult, keep: np.ndarray) -> SearchResult:
    """The search's hits among the papers `keep` (a bool per paper) says, in the same order.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> found = word_search(WordHits(np.array([3, 0, 2]), parse_query("a"), labels=("x", "y", "z")), "a")
        >>> within(found, np.array([False, True, True, True])).rows.tolist()
        [3, 2]
    """
    kept = keep[result.rows]

    def part(values):
        return None if values is None else np.asarray(values)[kept]

    return replace(
        result,
        rows=result.rows[kept],
        labels=tuple(np.array(result.labels, dtype=object)[kept].tolist()),
        every_word=result.every_word[kept],
        some=tuple(np.array(result.some, dtype=object)[kept].tolist()) if result.some else (),
        close=part(result.close),
        percentile=part(result.percentile),
        similarity=part(result.similarity),
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


def search_facts(result: SearchResult) -> dict:
    """What the header's sentence quotes of a search, whatever the view keeps of its hits: the search
    as shown (`shown`), whether meaning was searched too (`fused`), the clause saying how near the
    nearest paper is where none is close (`nearest`, else ""), and what "close" means here (`close`).
    The browser writes the sentence from these and the hits' evidence (js/view.js `sentence`).

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> search_facts(word_search(WordHits(np.arange(2), parse_query('"optical flow"')), '"optical flow"'))["shown"]
        'optical flow'
    """
    typed = quoted_inside(result.query.shown()) if not result.fused else " ".join(result.text.split())
    nearest = (
        f": the nearest in meaning is {closeness(result.nearest).replace('than', 'than only', 1)}"
        if result.fused and result.nearest is not None and result.nearest < CLOSE_PERCENTILE
        else ""
    )
    return {
        "shown": shorten(typed, 80),
        "fused": result.fused,
        "nearest": nearest,
        "close": closeness(CLOSE_PERCENTILE),
    }


def search_evidence(result: SearchResult) -> np.ndarray:
    """Each hit's evidence as the header's sentence counts it, a byte a hit: 1 writes every word, 2
    writes several of them, 4 close in meaning (js/view.js `sentence`). (Vectorised: a Python loop over a
    million-paper map's 300,000 hits took half a second of each search.)"""
    n = len(result.rows)
    some = np.array([bool(words) for words in result.some], dtype=bool) if result.some else np.zeros(n, bool)
    close = np.zeros(n, dtype=bool) if result.close is None else np.asarray(result.close, dtype=bool)
    return np.asarray(result.every_word, dtype=bool) + 2 * some.astype(np.uint8) + 4 * close.astype(np.uint8)


def search_sentence(result: SearchResult | None, scope: str) -> tuple[str, str]:
    """The header's sentence about the view as (number, rest): the number is shown bold. It counts
    exactly the papers listed, in the words of their Match labels.

    `scope` is `app.filters.scope_phrase` for the filtered papers.

    Examples:
        >>> from pipeline.mapfolder.query import parse_query
        >>> search_sentence(None, "the 60 papers of the map")
        ('', 'Showing the 60 papers of the map')
        >>> words = word_search(WordHits(np.arange(313), parse_query("video")), "video")
        >>> search_sentence(words, "the 1,006 papers in the theme “Vision”")
        ('313', 'of the 1,006 papers in the theme “Vision” match the words “video”')
        >>> both = replace(words, rows=np.arange(3), every_word=np.array([1, 1, 0], bool), some=("", "", "a, b"),
        ...     close=np.array([1, 0, 0], bool), percentile=np.array([99.0, 40.0, 60.0]))
        >>> search_sentence(both, "the 60 papers of the map")[1]
        'of the 60 papers of the map match “video”: 2 write “video”, 1 writes several of its words, 1 is close in meaning (closer than 97% of pairs on this map), 1 of them both'
        >>> search_sentence(replace(both, rows=np.arange(0), nearest=9.5), "the 60 papers of the map")
        ('None', 'of the 60 papers of the map writes “video” or is close in meaning to it: the nearest in meaning is closer than only 9% of pairs on this map')
    """
    if result is None:
        return "", f"Showing {scope}"
    facts = search_facts(result)
    shown = facts["shown"]
    count = len(result.rows)
    if not result.fused:
        verb = "matches" if count == 1 else "match"
        return f"{count:,}", f"of {scope} {verb} the words “{shown}”"
    if not count:
        return "None", f"of {scope} writes “{shown}” or is close in meaning to it{facts['nearest']}"
    evidence = np.asarray(search_evidence(result), dtype=np.int64)  # the browser counts the same bits
    every, some, near = (int(((evidence & bit) > 0).sum()) for bit in (1, 2, 4))
    both = int((((evidence & 4) > 0) & ((evidence & 3) > 0)).sum())

    def verb(k: int, one: str, many: str) -> str:
        return f"{k:,} {one if k == 1 else many}"

    parts = [
        verb(every, f"writes “{shown}”", f"write “{shown}”") if every else "",
        verb(some, "writes several of its words", "write several of its words") if some else "",
        verb(near, "is", "are") + f" close in meaning ({facts['close']})" if near else "",
        f"{both:,} of them both" if both else "",
    ]
    verb_all = "matches" if count == 1 else "match"
    return f"{count:,}", f"of {scope} {verb_all} “{shown}”: " + ", ".join(p for p in parts if p)
