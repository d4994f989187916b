"""Each paper's text read once: its `PaperText` (candidate phrases, the acronyms it writes and
defines, its words' forms) kept in the cache folder beside the embeddings (`texts.sqlite`), keyed by
the text's hash like an embedding, so a rebuild, or a build with one more file, reads only new texts.

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
from functools import cache
from pathlib import Path

from pipeline.cache import cache_dir, text_key
from pipeline.naming import phrases, sentences
from pipeline.naming.phrases import PaperText, read_text
from pipeline.naming.vocabulary import WORDS

CACHE_FILE = "texts.sqlite"


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


def paper_texts(documents: list[str], *, use_cache: bool = True) -> list[PaperText]:
    """Each document's `PaperText`, read from the cache where this text was read before (by these
    rules) and read from the text, then stored, where not."""
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
        fresh: dict[bytes, bytes] = {}
        for key, doc in zip(keys, documents):
            if key not in known:
                known[key] = read_text(doc)
                fresh[key] = pack(known[key])
        if fresh:
            text_cache.put(fresh)
    finally:
        text_cache.close()
    return [known[key] for key in keys]
