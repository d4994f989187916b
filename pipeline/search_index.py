"""Full-text search over a map's titles and abstracts: an SQLite FTS5 index written with the map.

The index is `search.sqlite` in the map folder (`pipeline.artifacts.SEARCH_INDEX`), one file with three tables:

    words   FTS5, contentless: every paper's title and abstract as whole words (unicode61 tokens,
            diacritics folded, porter stems, so "rank" finds "ranking" but "pose" never "propose");
            rowid = the paper's row in papers.parquet. BM25 ranks hits, a title word weighing more.
    grams   FTS5 trigram, with content: only the runs of scripts written without spaces (Chinese,
            Japanese, Thai, ...) of the papers that have any, searched as substrings.
    meta    the index version, the tokenizer and a fingerprint of the papers it was built from.

Queries never reach FTS5 as typed: `parse_query` turns any text into quoted terms (whole words,
"quoted phrases", prefix*), all of which must match, and says what it ignored. A map without an
index, or with one that no longer matches its papers, gets one built in the cache folder
(`index_for`), never in the map folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import sqlite3
import tempfile
import threading
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

INDEX_VERSION = 1
WORD_TOKENIZER = "porter unicode61 remove_diacritics 2"
TITLE_WEIGHT = 4.0  # a word in the title counts as much for BM25 as four in the abstract
MAX_TERMS = 32  # words and phrases used from one query; the rest is ignored with a notice
MAX_QUERY_CHARS = 2_000  # characters of a query read at all (a pasted page is cut, not scanned)
BATCH = 2_000  # papers inserted per statement batch
RANK_ALL = 12_000  # hits ranked by BM25 over title and abstract; see `SearchIndex._ranked`

# Scripts written without spaces between words: a run of these is one "word" to unicode61, so they
# go to the trigram table instead, searched as substrings (Han, Hiragana, Katakana, Thai, Lao,
# Myanmar, Khmer, Tibetan).
_SPACELESS = (
    "\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
SPACELESS_RUN = re.compile(f"[{_SPACELESS}]+")
_QUERY_PIECE = re.compile(r'"([^"]*)(?:"|$)|([^\s"]+)')
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"  # highlight() markers; removed from the text beforehand


def has_word_characters(text: str) -> bool:
    """Whether unicode61 finds a token in `text`: a letter, a digit or a private-use character.

    Examples:
        >>> has_word_characters("NEAR("), has_word_characters("*"), has_word_characters("🙂 -")
        (True, False, False)
    """
    return any(unicodedata.category(c)[0] in "LN" or unicodedata.category(c) == "Co" for c in text)


@dataclass(frozen=True)
class Term:
    """One thing a query asks for: whole words (a phrase when several), as a prefix, or a substring."""

    text: str
    prefix: bool = False
    spaceless: bool = False  # a run of a script without spaces: matched as a substring

    def fts(self) -> str:
        """The term as an FTS5 string: quoted, so no character of it is an operator."""
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + " *" if self.prefix else quoted

    def shown(self) -> str:
        text = f'"{self.text}"' if " " in self.text.strip() else self.text
        return text + "*" if self.prefix else text


@dataclass(frozen=True)
class Query:
    """A parsed search: the terms every hit must match, and notices about what was left out."""

    terms: tuple[Term, ...] = ()
    notices: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms

    def shown(self) -> str:
        """The query as it is searched, for headers: 'graph "neural field" rank*'."""
        return " ".join(term.shown() for term in self.terms)


def parse_query(text: str) -> Query:
    """Read any text as a search: whole words, "quoted phrases" and prefix*; all must match.

    Nothing typed is an operator: AND, OR, NOT, NEAR(, a leading - and a lone * are words or
    nothing. An unclosed quote runs to the end. Pieces with no letter or digit (emoji, "*", "-")
    are left out with a notice; so is everything past `MAX_TERMS` terms.

    Examples:
        >>> query = parse_query('Pose "neural field" rank* NEAR( -x 🙂 "open')
        >>> query.shown()
        'Pose "neural field" rank* NEAR( -x open'
        >>> query.notices
        ("Left out '🙂': it has no letters or digits to search for.",)
        >>> [t.fts() for t in parse_query('say "hi" 扩散模型 BERT模型').terms]
        ['"say"', '"hi"', '"扩散模型"', '"模型"', '"BERT"']
    """
    text = str(text or "")
    notices: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        notices.append(f"Only the first {MAX_QUERY_CHARS:,} characters of the search were used.")
    text = text.replace(_MARK_OPEN, " ").replace(_MARK_CLOSE, " ")
    terms: list[Term] = []
    left_out: list[str] = []
    for match in _QUERY_PIECE.finditer(text):
        phrase, bare = match.group(1), match.group(2)
        piece = " ".join((phrase if phrase is not None else bare).split())
        prefix = False
        if bare is not None:
            prefix = piece.endswith("*") and has_word_characters(piece.rstrip("*"))
            piece = piece.strip("*") if prefix or not has_word_characters(piece) else piece
        if not has_word_characters(piece):
            if piece.strip():
                left_out.append(piece)
            continue
        for spaceless in SPACELESS_RUN.findall(piece):
            terms.append(Term(spaceless, spaceless=True))
        rest = " ".join(SPACELESS_RUN.sub(" ", piece).split())
        if has_word_characters(rest):
            ends_spaceless = bool(SPACELESS_RUN.search(piece[-1:]))
            terms.append(Term(rest, prefix=prefix and not ends_spaceless))
    if left_out:
        shown = ", ".join(repr(p if len(p) <= 20 else p[:19] + "…") for p in dict.fromkeys(left_out))
        notices.append(f"Left out {shown}: it has no letters or digits to search for.")
    unique = list(dict.fromkeys(terms))
    if len(unique) > MAX_TERMS:
        notices.append(f"Only the first {MAX_TERMS} words and phrases of the search were used.")
        unique = unique[:MAX_TERMS]
    return Query(tuple(unique), tuple(notices))


@dataclass(frozen=True)
class WordHits:
    """Papers matching a query, best first (BM25), and notices to show with them."""

    rows: np.ndarray  # int64 rows of papers.parquet, best match first
    query: Query = field(default_factory=Query)
    notices: tuple[str, ...] = ()


def paper_fingerprint(papers: pd.DataFrame, rows: int | None = None) -> str:
    """A digest of the first `rows` papers' doc_id, title and abstract, in order (all by default): the
    SHA-256 of every paper's `doc_id \x1f title \x1f abstract \x1e` in UTF-8, one after another.

    The records are joined by Arrow and hashed from its buffer: a Python loop over a million papers
    took 8 s at every load of the map.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    head = papers if rows is None else papers.iloc[:rows]
    doc_id, title, abstract = (
        pa.array(values, type=pa.large_string())
        for values in (
            head["doc_id"].astype(str),
            *(head[c].fillna("").astype(str) for c in ("title", "abstract")),
        )
    )
    text = lambda value: pa.scalar(value, type=pa.large_string())  # noqa: E731
    record = pc.binary_join_element_wise(doc_id, title, abstract, text("\x1f"))
    record = pc.binary_join_element_wise(record, text(""), text("\x1e"))  # each record ends in \x1e
    digest = hashlib.sha256()
    for chunk in record.chunks if isinstance(record, pa.ChunkedArray) else [record]:
        if not len(chunk):
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64)[
            chunk.offset : chunk.offset + len(chunk) + 1
        ]
        data = memoryview(chunk.buffers()[2])
        for start in range(int(offsets[0]), int(offsets[-1]), 1 << 26):  # the records' bytes, 64 MB at a time
            digest.update(data[start : min(start + (1 << 26), int(offsets[-1]))])
    return digest.hexdigest()


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
    if not meta:
        return "unreadable"
    if not _matches(meta, papers, fingerprint or paper_fingerprint(papers)):
        return "built from other papers"
    try:
        with contextlib.closing(_connect(path)) as connection:
            count, low, high = connection.execute(
                "SELECT count(*), min(id), max(id) FROM words_docsize"
            ).fetchone()
            (grams,) = connection.execute("SELECT max(id) FROM grams_content").fetchone()
    except sqlite3.Error as exc:
        return f"damaged ({str(exc)[:60]})"
    n = len(papers)
    if count != n or (n and (low != 0 or high != n - 1)) or (grams is not None and not 0 <= grams < n):
        return f"damaged (it holds {count:,} rows for {n:,} papers)"
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

    def close(self) -> None:
        self._connection.close()

    def search(self, text: str) -> WordHits:
        """Papers matching every term of `text`, best first; never raises on what was typed."""
        query = parse_query(text)
        if query.empty:
            return WordHits(np.arange(0, dtype=np.int64), query, query.notices)
        words = [t.fts() for t in query.terms if not t.spaceless]
        grams = [t.text for t in query.terms if t.spaceless]
        try:
            with self._lock:
                rows = self._rows(words, grams)
        except sqlite3.Error as exc:  # a query form FTS5 still refuses: a notice, never an error page
            notice = f"This search could not be run ({str(exc)[:80]}); try fewer or simpler words."
            return WordHits(np.arange(0, dtype=np.int64), query, (*query.notices, notice))
        return WordHits(rows, query, query.notices)

    def _rows(self, words: list[str], grams: list[str]) -> np.ndarray:
        ranked: np.ndarray | None = None
        if words:
            ranked = self._ranked(" AND ".join(words))
        for gram in grams:
            # Three characters or more: the trigram index; fewer (a two-character Chinese word) match
            # no trigram, so those scan the table, which holds only these scripts' runs.
            sql, value = (
                ("SELECT rowid FROM grams WHERE text LIKE ? ORDER BY rowid", f"%{gram}%")
                if len(gram) >= 3
                else ("SELECT rowid FROM grams WHERE instr(text, ?) > 0 ORDER BY rowid", gram)
            )
            found = self._connection.execute(sql, (value,)).fetchall()
            rows = np.array([r for (r,) in found], dtype=np.int64)
            ranked = rows if ranked is None else ranked[np.isin(ranked, rows)]
        return ranked[ranked < self.n] if ranked is not None else np.arange(0, dtype=np.int64)

    def _ranked(self, expression: str) -> np.ndarray:
        """Rows matching an FTS5 expression, best first.

        BM25 costs a few microseconds a hit; for a query found in more than `RANK_ALL` papers
        ("model" is in half of a machine-learning corpus) the papers holding it in their title come
        first, ranked by BM25 while they are at most `RANK_ALL` too (else in map order), then the
        others in map order. That keeps such a query to tens of milliseconds at 80,000 papers
        instead of hundreds (benchmarks/SEARCH_RESULTS.md).
        """
        everything = self._plain(expression)
        if len(everything) <= RANK_ALL:
            return self._bm25(expression)
        title = f"title : ({expression})"
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

    Uses the index's own tokenizer (an FTS5 table of one row in memory), so what is highlighted
    is exactly what the search matched: "poses" for pose, never the "pose" inside "propose".

    Examples:
        >>> highlight("We propose pose-aware ranking.", parse_query("pose rank"))
        [('We propose ', False), ('pose', True), ('-aware ', False), ('ranking', True), ('.', False)]
    """
    text = str(text)
    if query.empty or not text:
        return [(text, False)] if text else []
    marked = [False] * len(text)
    words = [t.fts() for t in query.terms if not t.spaceless]
    if words:
        clean = _clean(text)
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


def index_for(folder: Path | str, papers: pd.DataFrame, *, log=None) -> SearchIndex:
    """The map's search index: its own `search.sqlite` when it matches `papers`, else one built once
    in the cache folder (older maps, or a map folder we may not write), else one in memory.

    Never writes into the map folder.
    """
    from pipeline.artifacts import SEARCH_INDEX

    own = Path(folder) / SEARCH_INDEX
    fingerprint = paper_fingerprint(papers)
    problem = verify_index(own, papers, fingerprint)
    if problem is None:
        return SearchIndex(own, len(papers))
    cached = cache_folder() / f"{fingerprint[:32]}-v{INDEX_VERSION}.sqlite"
    if problem != "missing" and own.is_file() and _matches(read_meta(own), papers, fingerprint) and log:
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
