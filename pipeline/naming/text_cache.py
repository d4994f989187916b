"""Each paper's text read once: its `PaperText` (candidate phrases, the acronyms it writes and
defines, its words' forms) kept in the cache folder beside the embeddings (`texts.sqlite`), keyed by
the text's hash like an embedding, so a rebuild, or a build with one more file, reads only new texts.
A build starts reading its texts in a thread before it embeds its abstracts (`reading_ahead`): the
embedding runs in ONNX Runtime's threads, outside Python's lock, and a large corpus's reading (in
worker processes) goes on while the topics' UMAP leaves a core free.

An entry is also keyed by the rules that read it (the digest of this module, `phrases.py`,
`sentences.py` and the word lists): a change to any of them reads every text again. An entry carries
the digest of its body: one that does not match (truncated, altered) is read again from the text,
never trusted.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from pipeline.cache import cache_dir, text_key
from pipeline.naming import phrases, sentences
from pipeline.naming.phrases import PaperText, read_text
from pipeline.naming.vocabulary import WORDS
from pipeline.workers import cores, failing_as, spawn_pool

CACHE_FILE = "texts.sqlite"
# New texts beyond this many are read by worker processes, one per core (a first build of a large
# corpus: tens of thousands of texts); fewer are read here, starting workers would cost more.
PARALLEL_ABOVE = 4_000


@cache
def rules_digest() -> str:
    """The digest of everything an entry depends on: `read_text`'s code and word lists, and how an
    entry is packed."""
    digest = hashlib.sha256()
    code = [Path(__file__), Path(phrases.__file__), Path(sentences.__file__)]
    for path in [*code, *sorted(WORDS.glob("*.txt"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:32]


DIGEST_SIZE = 16


def pack(paper: PaperText) -> bytes:
    """An entry as stored: the digest of the compressed JSON of the `PaperText`'s fields, then it."""
    fields = [paper.phrases, paper.acronyms, paper.definitions, paper.forms]
    body = zlib.compress(json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode(), 1)
    return hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest() + body


def unpack(entry: bytes) -> PaperText | None:
    """The `PaperText` of a stored entry; None when it is not as `pack` wrote it (truncated,
    altered, not ours): its digest says so.

    Examples:
        >>> paper = read_text("Optimal transport (OT) maps.")
        >>> unpack(pack(paper)) == paper, unpack(pack(paper)[:-3]), unpack(b"garbage")
        (True, None, None)
    """
    digest, body = entry[:DIGEST_SIZE], entry[DIGEST_SIZE:]
    if hashlib.blake2b(body, digest_size=DIGEST_SIZE).digest() != digest:
        return None
    try:
        plain, written, definitions, forms = json.loads(zlib.decompress(body))
        return PaperText(
            phrases=tuple(plain),
            acronyms=tuple(written),
            definitions=tuple(map(tuple, definitions)),
            forms=tuple(map(tuple, forms)),
        )
    except (zlib.error, ValueError, TypeError):  # JSON errors are ValueErrors; so is unpacking
        return None


class TextCache:
    """Entries keyed by (rules digest, text hash) in one SQLite file: safe across processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path, timeout=60)
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS texts (rules TEXT, key BLOB, entry BLOB, PRIMARY KEY (rules, key))"
        )
        self.rules = rules_digest()

    def get(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = self.connection.execute(
                f"SELECT key, entry FROM texts WHERE rules = ? AND key IN ({','.join('?' * len(chunk))})",
                [self.rules, *chunk],
            )
            found.update(rows)
        return found

    def put(self, entries: dict[bytes, bytes]) -> None:
        with self.connection:
            self.connection.executemany(
                "INSERT OR REPLACE INTO texts VALUES (?, ?, ?)",
                [(self.rules, key, entry) for key, entry in entries.items()],
            )

    def close(self) -> None:
        self.connection.close()


def packed(text: str) -> bytes:
    """A text's `PaperText` as the cache stores it."""
    return pack(read_text(text))


def read_packed(documents: list[str]) -> list[bytes]:
    """`packed` of each document, in order: in worker processes, one per core, when there are more
    than `PARALLEL_ABOVE` (the same bytes either way: `read_text` reads one text alone)."""
    workers = min(cores(), 8)
    if len(documents) <= PARALLEL_ABOVE or workers < 2:
        return [packed(doc) for doc in documents]
    with spawn_pool(workers) as pool, failing_as("reading the abstracts' phrases"):
        return list(pool.map(packed, documents, chunksize=250))


_AHEAD: list[tuple[list[str], Future]] = []


@contextmanager
def reading_ahead(documents: list[str]) -> Iterator[None]:
    """Within it, `paper_texts(documents)` takes what a thread started reading here (the same
    entries): the build starts it before it embeds its abstracts, so the reading overlaps the
    embedding (and, for a large corpus read in worker processes, the topics' UMAP fit)."""
    with ThreadPoolExecutor(1, thread_name_prefix="reading-ahead") as thread:
        _AHEAD.append((documents, thread.submit(_paper_texts, documents)))
        try:
            yield
        finally:
            _AHEAD.pop()


def paper_texts(documents: list[str], *, use_cache: bool = True) -> list[PaperText]:
    """Each document's `PaperText`, read from the cache where this text was read before (by these
    rules) and read from the text, then stored, where not."""
    for ahead, reading in _AHEAD:
        if use_cache and ahead == documents:
            return reading.result()
    return _paper_texts(documents, use_cache=use_cache)


def _paper_texts(documents: list[str], *, use_cache: bool = True) -> list[PaperText]:
    keys = [text_key(doc) for doc in documents]
    if not use_cache:
        return [read_text(doc) for doc in documents]
    text_cache = TextCache(cache_dir() / CACHE_FILE)
    try:
        known: dict[bytes, PaperText] = {}
        for key, entry in text_cache.get(list(dict.fromkeys(keys))).items():
            paper = unpack(entry)
            if paper is not None:  # a damaged entry is read again from the text, and replaced
                known[key] = paper
        new = {key: doc for key, doc in zip(keys, documents) if key not in known}
        fresh = dict(zip(new, read_packed(list(new.values()))))
        known.update((key, unpack(entry)) for key, entry in fresh.items())
        if fresh:
            text_cache.put(fresh)
    finally:
        text_cache.close()
    return [known[key] for key in keys]
