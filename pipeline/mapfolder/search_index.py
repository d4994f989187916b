"""Full-text search over a map's titles and abstracts: an SQLite FTS5 index written with the map.

The index is `search.sqlite` in the map folder (`pipeline.mapfolder.files.SEARCH_INDEX`), one file with these tables:

    words   FTS5, contentless: every paper's title and abstract as whole words as written (unicode61
            tokens, case and diacritics folded, no stems: "pose" is never the one inside "propose");
            rowid = the paper's row in papers.parquet. BM25 ranks hits, a title word weighing more.
    terms   fts5vocab over `words`: every distinct word of the map, where a query finds the word forms
            of what was typed (`pipeline.mapfolder.query.forms_among`: "ranking" for "rank", never "transform"
            for "transformer").
    grams   FTS5 trigram, with content: only the runs of scripts written without spaces (Chinese,
            Japanese, Thai, ...) of the papers that have any, searched as substrings.
    meta    the index version, the tokenizer, a fingerprint of the papers it was built from and a
            digest of its own rows (`contents`), so a row forged over a paper's row id is caught.

Queries never reach FTS5 as typed: `pipeline.mapfolder.query.parse_query` reads words, "quoted phrases",
prefix*, -excluded words, OR and NOT, and says what it read differently from how it was typed. Papers
holding every word as typed come first, then those holding other forms of them (`WordHits.exact`).
Index version 1 (Porter stems in `words`) is not read: a map with one, without an index, or with one
that no longer matches its papers, gets one built in the cache folder (`index_for`), never in the map
folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import sqlite3
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.mapfolder.files import SEARCH_INDEX
from pipeline.mapfolder.query import (
    EXACT_TOKENIZER,
    MARK_CLOSE,
    MARK_OPEN,
    MAX_PHRASE_FORMS,
    SPACELESS_RUN,
    Query,
    Term,
    forms_among,
    parse_query,
    tokens,
    vocabulary_prefix,
)

INDEX_VERSION = 3  # 2: words as written (no Porter stems in the index), word forms chosen per query;
# 3: a digest of its own rows in meta (`contents`), checked on open
WORD_TOKENIZER = EXACT_TOKENIZER
TITLE_WEIGHT = 4.0  # a word in the title counts as much for BM25 as four in the abstract
BATCH = 2_000  # papers inserted per statement batch
RANK_ALL = 12_000  # hits ranked by BM25 over title and abstract; see `SearchIndex._ranked`
_MARK_OPEN, _MARK_CLOSE = MARK_OPEN, MARK_CLOSE
_NONE = np.zeros(0, dtype=np.int64)
# Words are marked in a text's first 100,000 characters (an abstract is a few thousand): a hostile one
# of a million, every word a hit, took a minute; past it the text is shown unmarked.
HIGHLIGHT_CHARACTERS = 100_000


@dataclass(frozen=True)
class WordHits:
    """Papers matching a query, best first (as typed before other word forms, then BM25), notices to
    show with them, and how each matched."""

    rows: np.ndarray  # int64 rows of papers.parquet, best match first
    query: Query = field(default_factory=Query)
    notices: tuple[str, ...] = ()
    exact: np.ndarray | None = None  # bool per row: every word found as typed (not another form of it)
    labels: tuple[str, ...] | None = None  # per row: "exact word", "word form", "phrase", "prefix", ...

    def match_labels(self) -> list[str]:
        """What each hit matched, for the papers table's Match column."""
        if self.labels is not None:
            return list(self.labels)
        return ["words"] * len(self.rows)


def paper_fingerprint(papers: pd.DataFrame, rows: int | None = None) -> str:
    """A digest of the first `rows` papers' doc_id, title and abstract, in order (all by default): the
    SHA-256 of every paper's `doc_id \x1f title \x1f abstract \x1e` in UTF-8, one after another.

    The records are joined by Arrow and hashed from its buffer (a Python loop over a million papers
    took 8 s at every load of the map), 20,000 papers at a time: the joined copy of every title and
    abstract would otherwise double the text's memory while the map loads (180 MB at 81,646 papers).
    """
    head = papers if rows is None else papers.iloc[:rows]
    digest = hashlib.sha256()
    for start in range(0, len(head), FINGERPRINT_ROWS):
        _hash_records(digest, head.iloc[start : start + FINGERPRINT_ROWS])
    return digest.hexdigest()


FINGERPRINT_ROWS = 20_000


def _hash_records(digest, part: pd.DataFrame) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    doc_id, title, abstract = (
        pa.array(values, type=pa.large_string())
        for values in (
            part["doc_id"].astype(str),
            *(part[c].fillna("").astype(str) for c in ("title", "abstract")),
        )
    )
    text = lambda value: pa.scalar(value, type=pa.large_string())  # noqa: E731
    record = pc.binary_join_element_wise(doc_id, title, abstract, text("\x1f"))
    record = pc.binary_join_element_wise(record, text(""), text("\x1e"))  # each record ends in \x1e
    for chunk in record.chunks if isinstance(record, pa.ChunkedArray) else [record]:
        if not len(chunk):
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64)[
            chunk.offset : chunk.offset + len(chunk) + 1
        ]
        digest.update(memoryview(chunk.buffers()[2])[int(offsets[0]) : int(offsets[-1])])


def _texts(values: pd.Series) -> list[str]:
    return values.fillna("").astype(str).tolist()


def _clean(text: str) -> str:
    return text.replace(_MARK_OPEN, " ").replace(_MARK_CLOSE, " ")


def _word_text(text: str) -> str:
    """Text for the word table: the runs of scripts without spaces become spaces (the trigram table
    has them), so a Japanese sentence is not one long token; every other character keeps its place."""
    return SPACELESS_RUN.sub(lambda run: " " * len(run.group()), _clean(text))  # same length: highlights


def _create(connection: sqlite3.Connection) -> None:
    try:
        connection.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(x)")
    except sqlite3.OperationalError:
        from pipeline import UserError

        raise UserError(
            f"this Python's SQLite {sqlite3.sqlite_version} has no FTS5 full-text search, which maps need "
            "for their search index; use a Python build with FTS5 (python.org, Debian and conda builds have it)"
        ) from None
    connection.executescript(
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE VIRTUAL TABLE words USING fts5(
            title, abstract, tokenize = '{WORD_TOKENIZER}', content = '');
        CREATE VIRTUAL TABLE terms USING fts5vocab(words, 'row');
        CREATE VIRTUAL TABLE grams USING fts5(text, tokenize = 'trigram');
        """
    )


def _insert(connection: sqlite3.Connection, papers: pd.DataFrame, first_row: int) -> None:
    titles, abstracts = _texts(papers["title"]), _texts(papers["abstract"])
    for start in range(0, len(titles), BATCH):
        rows = range(first_row + start, first_row + min(start + BATCH, len(titles)))
        chunk = list(zip(rows, titles[start : start + BATCH], abstracts[start : start + BATCH], strict=True))
        connection.executemany(
            "INSERT INTO words (rowid, title, abstract) VALUES (?, ?, ?)",
            [(row, _word_text(title), _word_text(abstract)) for row, title, abstract in chunk],
        )
        connection.executemany(
            "INSERT INTO grams (rowid, text) VALUES (?, ?)",
            [
                (row, " ".join(runs))
                for row, title, abstract in chunk
                if (runs := SPACELESS_RUN.findall(f"{title}\n{abstract}"))
            ],
        )


def _set_meta(connection: sqlite3.Connection, papers: pd.DataFrame) -> None:
    connection.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [
            ("version", str(INDEX_VERSION)),
            ("tokenizer", WORD_TOKENIZER),
            ("papers", str(len(papers))),
            ("fingerprint", paper_fingerprint(papers)),
        ],
    )


# The tables FTS5 keeps an index in (`words` is contentless: no text table of its own): what the
# index's `contents` digest covers, so a row forged over a paper's own row id is caught on open.
SHADOW_TABLES = (
    "words_data", "words_idx", "words_docsize", "grams_data", "grams_idx", "grams_content", "grams_docsize",
)  # fmt: skip


def contents_digest(connection: sqlite3.Connection) -> str:
    """A SHA-256 of every row of the index's own tables (`SHADOW_TABLES`), in row order."""
    digest = hashlib.sha256()
    for table in SHADOW_TABLES:
        digest.update(table.encode() + b"\0")
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1"):  # noqa: S608 (our names)
            digest.update(repr(row).encode() + b"\n")
    return digest.hexdigest()


def read_meta(path: Path) -> dict[str, str]:
    """The index's meta table, or {} when `path` is not a readable index."""
    try:
        with contextlib.closing(_connect(path)) as connection:
            return dict(connection.execute("SELECT key, value FROM meta"))
    except sqlite3.Error:
        return {}


def _matches(meta: dict[str, str], papers: pd.DataFrame, fingerprint: str) -> bool:
    return (
        meta.get("version") == str(INDEX_VERSION)
        and meta.get("tokenizer") == WORD_TOKENIZER
        and meta.get("papers") == str(len(papers))
        and meta.get("fingerprint") == fingerprint
    )


def write_index(path: Path, papers: pd.DataFrame) -> None:
    """Write the index of `papers` to `path` (a new file), whole.

    Never copied from a previous map's index: a damaged one whose meta table still matches (rows
    forged into it, a table dropped) would otherwise be carried into every later map.
    """
    path = Path(path)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        with connection:
            _create(connection)
            _insert(connection, papers, 0)
            _set_meta(connection, papers)
        connection.execute("INSERT INTO words (words) VALUES ('optimize')")
        connection.execute("INSERT INTO grams (grams) VALUES ('optimize')")
        connection.execute("INSERT INTO meta VALUES ('contents', ?)", (contents_digest(connection),))
        connection.commit()
        connection.execute("VACUUM")


def verify_index(path: Path, papers: pd.DataFrame, fingerprint: str | None = None) -> str | None:
    """Why the index at `path` cannot be trusted for `papers`, or None when it can.

    Its meta table must match the papers, and its tables must hold one word row a paper, rows
    0..n-1, and no substring row past them (a few indexed look-ups, not a scan): rows added to it by
    hand or a dropped table are caught; a missing file is "missing".
    """
    if not Path(path).is_file():
        return "missing"
    meta = read_meta(path)
    if not meta:  # garbage in its place, or a file that is no index: damage, said like any other
        return "damaged (not a readable index)"
    if not _matches(meta, papers, fingerprint or paper_fingerprint(papers)):
        return "built from other papers"
    try:
        with contextlib.closing(_connect(path)) as connection:
            count, low, high = connection.execute(
                "SELECT count(*), min(id), max(id) FROM words_docsize"
            ).fetchone()
            (grams,) = connection.execute("SELECT max(id) FROM grams_content").fetchone()
            contents = contents_digest(connection)
    except sqlite3.Error as exc:
        return f"damaged ({str(exc)[:60]})"
    n = len(papers)
    if count != n or (n and (low != 0 or high != n - 1)) or (grams is not None and not 0 <= grams < n):
        return f"damaged (it holds {count:,} rows for {n:,} papers)"
    if contents != meta.get("contents"):
        return "damaged (its rows are not the ones written for these papers)"
    return None


def _connect(path: Path | str) -> sqlite3.Connection:
    """A read-only connection that never writes beside the file (no journal, no lock file)."""
    uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


class SearchIndex:
    """A map's word index, opened read-only; safe to share between threads (one query at a time)."""

    def __init__(self, path: Path | str, n: int) -> None:
        self.path = Path(path)
        self.n = n
        self._connection = _connect(self.path)
        self._lock = threading.Lock()
        self._forms: dict[str, list[str]] = {}

    def close(self) -> None:
        self._connection.close()

    def search(self, text: str | Query, labels: bool = True) -> WordHits:
        """Papers matching `text` (`pipeline.mapfolder.query.parse_query`, or a query parsed already),
        best first; never raises on what was typed. `labels=False`: without their Match labels (each
        term costs a lookup), for a search that labels its papers itself (`app.search.fused_search`)."""
        query = text if isinstance(text, Query) else parse_query(text)
        if query.empty:
            return WordHits(np.arange(0, dtype=np.int64), query, query.notices)
        try:
            with self._lock:
                rows, exact = self._rows(query)
                labels = self._labels(query, rows, exact) if labels else None
        except sqlite3.Error as exc:  # a query form FTS5 still refuses: a notice, never an error page
            notice = f"This search could not be run ({str(exc)[:80]}); try fewer or simpler words."
            return WordHits(np.arange(0, dtype=np.int64), query, (*query.notices, notice))
        return WordHits(rows, query, query.notices, exact=exact, labels=labels)

    def word_papers(self, words: list[str], most: int) -> dict[str, np.ndarray | None]:
        """For each word, the rows of the papers writing it in any of its forms; None for a word in more
        than `most` papers (too common to say what a paper is about: not fetched)."""
        with self._lock:
            forms = {word: self.forms(word) for word in words}
            every = sorted({f for spellings in forms.values() for f in spellings})
            marks = ",".join("?" * len(every))
            docs = dict(
                self._connection.execute(f"SELECT term, doc FROM terms WHERE term IN ({marks})", every)
            )
            found: dict[str, np.ndarray | None] = {}
            for word, spellings in forms.items():
                count = sum(docs.get(f, 0) for f in spellings)  # papers writing any of them, or more
                if count > most or not count:
                    found[word] = None if count else _NONE
                else:
                    found[word] = self._plain(
                        " OR ".join('"' + f.replace('"', '""') + '"' for f in spellings)
                    )
        return found

    def title_papers(self, words: list[str]) -> dict[str, np.ndarray]:
        """For each word, the rows of the papers writing it, in any of its forms, in their title."""
        with self._lock:
            return {
                word: self._plain(
                    "title : ("
                    + " OR ".join('"' + f.replace('"', '""') + '"' for f in self.forms(word))
                    + ")"
                )
                for word in words
            }

    def phrase_papers(self, phrases: list[str]) -> dict[str, np.ndarray]:
        """For each phrase (words separated by spaces), the rows of the papers writing it, its words
        in any of their forms, next to each other and in that order."""
        with self._lock:
            return {phrase: self._plain(self._expressions(Term(phrase))[1]) for phrase in phrases}

    # ------------------------------------------------------------ how one term is searched
    def forms(self, word: str) -> list[str]:
        """The map's words that are `word` or a form of it (`pipeline.mapfolder.query.forms_among`), as typed first."""
        if word not in self._forms:
            prefix = vocabulary_prefix(word)
            found = self._connection.execute(
                "SELECT term FROM terms WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ?",
                (prefix, prefix + "\U0010ffff", len(word) - 4, len(word) + 5),  # no form is further off
            )
            self._forms[word] = forms_among(word, [word, *(t for (t,) in found)])
        return self._forms[word]

    def _expressions(self, term: Term) -> tuple[str, str]:
        """(as typed, any form) FTS5 expressions of a word term: quoted words only."""
        if term.prefix:
            return term.fts(), term.fts()
        words = tokens(term.text)
        quote = lambda text: '"' + text.replace('"', '""') + '"'  # noqa: E731
        typed = quote(" ".join(words))
        spellings = []
        for combination in itertools.product(*(self.forms(w) for w in words)):
            spellings.append(quote(" ".join(combination)))
            if len(spellings) >= MAX_PHRASE_FORMS:
                break
        return typed, "(" + " OR ".join(dict.fromkeys([typed, *spellings])) + ")"

    def _term_rows(self, term: Term, any_form: bool) -> np.ndarray:
        if term.spaceless:
            return self._gram_rows(term.text)
        return self._plain(self._expressions(term)[1 if any_form else 0])

    def _gram_rows(self, gram: str) -> np.ndarray:
        # Three characters or more: the trigram index; fewer (a two-character Chinese word) match
        # no trigram, so those scan the table, which holds only these scripts' runs.
        sql, value = (
            ("SELECT rowid FROM grams WHERE text LIKE ? ORDER BY rowid", f"%{gram}%")
            if len(gram) >= 3
            else ("SELECT rowid FROM grams WHERE instr(text, ?) > 0 ORDER BY rowid", gram)
        )
        found = self._connection.execute(sql, (value,)).fetchall()
        return np.array([r for (r,) in found], dtype=np.int64)

    # ------------------------------------------------------------ the whole query
    def _rows(self, query: Query) -> tuple[np.ndarray, np.ndarray]:
        """Rows matching `query`, exact hits first, and each row's exactness."""
        word_groups = [g for g in query.groups if not any(t.spaceless for t in g)]
        other_groups = [g for g in query.groups if any(t.spaceless for t in g)]
        negative = " OR ".join(self._expressions(t)[1] for t in query.excluded if not t.spaceless)
        excluded = [self._gram_rows(t.text) for t in query.excluded if t.spaceless]

        def positive(any_form: bool) -> str:
            return " AND ".join(
                "(" + " OR ".join(self._expressions(t)[1 if any_form else 0] for t in g) + ")"
                for g in word_groups
            )

        def tier(expression: str, minus: str) -> np.ndarray:
            if expression:
                ranked = self._ranked(expression, minus)
            else:
                ranked = np.arange(self.n, dtype=np.int64)
                if minus:
                    ranked = np.setdiff1d(ranked, self._plain(minus), assume_unique=True)
            for group in other_groups:
                ranked = ranked[np.isin(ranked, np.concatenate([self._term_rows(t, True) for t in group]))]
            for rows in excluded:
                ranked = ranked[~np.isin(ranked, rows)]
            return ranked[ranked < self.n]

        exact_rows = tier(positive(False), negative)
        rows = exact_rows
        # Then the papers holding some word only in another form (none when no word of the query has
        # another form on this map): ranked on their own, the first tier left out inside FTS5.
        spellings = [self._expressions(t) for t in (*query.terms, *query.excluded) if not t.spaceless]
        if word_groups and not all(any_form in (typed, f"({typed})") for typed, any_form in spellings):
            minus = " OR ".join(f"({e})" for e in (positive(False), negative) if e)
            rows = np.concatenate([exact_rows, tier(positive(True), minus)])
        exact = np.zeros(len(rows), dtype=bool)
        exact[: len(exact_rows)] = True
        return rows, exact

    def _labels(self, query: Query, rows: np.ndarray, exact: np.ndarray) -> tuple[str, ...]:
        """What each row matched: for every term it holds, "exact word", "word form", "phrase",
        "phrase (word forms)", "prefix" or "substring"; "without the excluded words" for a query of
        exclusions only. `exact` says which rows hold every term as typed (one term: that is all)."""
        if not query.terms:
            return ("without the excluded words",) * len(rows)
        terms = query.terms[:8]  # enough to say how a row matched; each term costs a lookup
        codes = np.zeros((len(rows), len(terms)), dtype=np.int8)  # 0 not held, 1 as typed, 2 another form
        names = []
        for column, term in enumerate(terms):
            if term.spaceless or term.prefix:
                names.append(("substring", "substring") if term.spaceless else ("prefix", "prefix"))
                holds = (
                    np.ones(len(rows), bool)
                    if len(terms) == 1
                    else np.isin(rows, self._term_rows(term, True))
                )
                codes[holds, column] = 1
                continue
            names.append(("phrase", "phrase (word forms)") if term.phrase else ("exact word", "word form"))
            if len(terms) == 1:
                typed, holds = exact, np.ones(len(rows), dtype=bool)
            else:
                typed = np.isin(rows, self._term_rows(term, False))
                holds = typed | np.isin(rows, self._term_rows(term, True))
            codes[holds, column] = np.where(typed[holds], 1, 2)
        key = (codes.astype(np.int64) * (3 ** np.arange(len(terms), dtype=np.int64))).sum(axis=1)
        keys, inverse = np.unique(key, return_inverse=True)  # one label per kind of row, not per row
        shown = []
        for value in keys.tolist():
            kind = [(value // 3**c) % 3 for c in range(len(terms))]
            parts = [names[c][code - 1] for c, code in enumerate(kind) if code]
            shown.append(" + ".join(dict.fromkeys(parts)) or "words")
        return tuple(shown[i] for i in np.asarray(inverse).reshape(-1).tolist())

    def _ranked(self, positive: str, negative: str = "") -> np.ndarray:
        """Rows matching an FTS5 expression (and not `negative`), best first.

        BM25 costs a few microseconds a hit; for a query found in more than `RANK_ALL` papers
        ("model" is in half of a machine-learning corpus) the papers holding it in their title come
        first, ranked by BM25 while they are at most `RANK_ALL` too (else in map order), then the
        others in map order. That keeps such a query to tens of milliseconds at 80,000 papers
        instead of hundreds (benchmarks/SEARCH_RESULTS.md).
        """
        unless = f" NOT ({negative})" if negative else ""
        expression = f"({positive}){unless}"
        everything = self._plain(expression)
        if len(everything) <= RANK_ALL:
            return self._bm25(expression)
        title = f"title : ({positive}){unless}"
        in_title = self._plain(title)
        in_title = self._bm25(title) if len(in_title) <= RANK_ALL else in_title
        others = np.setdiff1d(everything, in_title, assume_unique=True)
        return np.concatenate([in_title, others])

    def _plain(self, expression: str) -> np.ndarray:
        """Matching rows in map order, read as one string: four times faster than row by row for the
        tens of thousands of papers a common word is in."""
        (joined,) = self._connection.execute(
            "SELECT group_concat(rowid) FROM words WHERE words MATCH ?", (expression,)
        ).fetchone()
        return np.sort(np.fromstring(joined or "", dtype=np.int64, sep=","))

    def _bm25(self, expression: str) -> np.ndarray:
        found = self._connection.execute(
            f"SELECT rowid FROM words WHERE words MATCH ? ORDER BY bm25(words, {TITLE_WEIGHT}, 1.0)",
            (expression,),
        )
        return np.fromiter((r for (r,) in found), dtype=np.int64)


def highlight(text: str, query: Query) -> list[tuple[str, bool]]:
    """`text` cut into (piece, matched) pieces: the words and substrings `query` matches in it.

    Uses the index's own tokenizer (an FTS5 table of one row in memory) and the same word forms
    (`pipeline.mapfolder.query.forms_among` over the text's own words), so what is highlighted is exactly what
    the search matched: "poses" for pose, never the "pose" inside "propose", never "transform" for
    "transformer". Excluded words are not marked.

    Examples:
        >>> highlight("We propose pose-aware ranking.", parse_query("pose rank"))
        [('We propose ', False), ('pose', True), ('-aware ', False), ('ranking', True), ('.', False)]
        >>> [p for p, hit in highlight("A Radon transform; transformers.", parse_query("transformer")) if hit]
        ['transformers']
    """
    text = str(text)
    if query.empty or not text:
        return [(text, False)] if text else []
    marked = [False] * len(text)
    clean = _clean(text[:HIGHLIGHT_CHARACTERS])  # SQLite's highlight grows faster than the text it marks
    written = [] if all(t.spaceless for t in query.terms) else tokens(_word_text(clean))
    quote = lambda words: '"' + " ".join(words).replace('"', '""') + '"'  # noqa: E731
    words: list[str] = []
    for term in query.terms:
        if term.spaceless:
            continue
        if term.prefix:
            words.append(term.fts())
            continue
        forms = [forms_among(w, [w, *written]) for w in tokens(term.text)]
        words.extend(quote(c) for c in itertools.islice(itertools.product(*forms), MAX_PHRASE_FORMS))
    if words:
        with contextlib.closing(sqlite3.connect(":memory:")) as connection:
            connection.execute(f"CREATE VIRTUAL TABLE one USING fts5(body, tokenize = '{WORD_TOKENIZER}')")
            connection.execute("INSERT INTO one (rowid, body) VALUES (1, ?)", (_word_text(clean),))
            try:
                found = connection.execute(
                    "SELECT highlight(one, 0, ?, ?) FROM one WHERE one MATCH ?",
                    (_MARK_OPEN, _MARK_CLOSE, " OR ".join(words)),
                ).fetchone()
            except sqlite3.Error:
                found = None
        if found:
            position, inside = 0, False
            for char in found[0]:
                if char == _MARK_OPEN:
                    inside = True
                elif char == _MARK_CLOSE:
                    inside = False
                else:
                    marked[position] = inside
                    position += 1
    lowered = text.lower()
    for term in query.terms:
        if term.spaceless:
            start = lowered.find(term.text.lower())
            while start != -1:
                marked[start : start + len(term.text)] = [True] * len(term.text)
                start = lowered.find(term.text.lower(), start + 1)
    pieces: list[tuple[str, bool]] = []
    start = 0
    for flag, run in itertools.groupby(marked):
        end = start + sum(1 for _ in run)
        pieces.append((text[start:end], flag))
        start = end
    return pieces


# ---------------------------------------------------------------- the index a map is searched with
def cache_folder() -> Path:
    from pipeline.cache import cache_dir

    return cache_dir() / "search"


def index_for(
    folder: Path | str, papers: pd.DataFrame, *, log=None, fingerprint: str | None = None
) -> SearchIndex:
    """The map's search index: its own `search.sqlite` when it matches `papers`, else one built once
    in the cache folder (older maps, or a map folder we may not write), else one in memory.

    `fingerprint`: `paper_fingerprint(papers)` when the caller knows it (hashing a million abstracts
    takes 3 s). Never writes into the map folder.
    """
    own = Path(folder) / SEARCH_INDEX
    fingerprint = fingerprint or paper_fingerprint(papers)
    problem = verify_index(own, papers, fingerprint)
    if problem is None:
        return SearchIndex(own, len(papers))
    cached = cache_folder() / f"{fingerprint[:32]}-v{INDEX_VERSION}.sqlite"
    if problem.startswith("damaged") and log:  # garbage, or damage behind a meta table that matches
        log(f"{own}: the search index is {problem}; searching with one built afresh until the map is rebuilt")
    if verify_index(cached, papers, fingerprint) is None:
        return SearchIndex(cached, len(papers))
    if log:
        log(f"{folder}: building its search index in {cached.parent}")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=f".{cached.name}.", dir=cached.parent)
        os.close(handle)
        os.unlink(partial)
        try:
            write_index(Path(partial), papers)
            os.replace(partial, cached)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)
        return SearchIndex(cached, len(papers))
    except OSError:  # no writable cache: a private copy in a temporary file, removed at exit
        return _temporary_index(papers)


def _temporary_index(papers: pd.DataFrame) -> SearchIndex:
    import atexit

    handle, name = tempfile.mkstemp(suffix=".sqlite", prefix="atlas-search-")
    os.close(handle)
    os.unlink(name)
    write_index(Path(name), papers)
    atexit.register(lambda: Path(name).unlink(missing_ok=True))
    return SearchIndex(name, len(papers))
