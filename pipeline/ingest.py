"""Read abstract files (seed .txt, CSV/TSV, JSONL, Parquet) into one papers table with stable ids."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline import UserError

SUPPORTED = (".txt", ".csv", ".tsv", ".jsonl", ".parquet")
MAX_TITLE = 90
# Columns the pipeline owns; input columns with these names are renamed so nothing is lost.
RESERVED = ("doc_id", "topic_id", "x", "y", "topic", "topic_keywords")
# Header words that only say "this is a list": "ICML 2025 Papers" and "ICML 2025 论文列表" are one collection.
_HEADER_NOISE = re.compile(
    r"\s*(accepted\s+)?(papers?|abstracts?|paper\s+list|list\s+of\s+papers|论文列表|论文|文章列表|摘要)\s*$",
    re.IGNORECASE,
)


@dataclass
class Corpus:
    """The ingested papers plus what a user should hear about how they were read."""

    papers: pd.DataFrame
    notes: list[str]


def normalise_text(text: str) -> str:
    """Unicode NFKC with runs of whitespace collapsed: the form ids and de-duplication use."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def doc_id_for(text: str) -> str:
    """Stable 16-hex-digit id of an abstract, independent of file, order and whitespace."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()[:16]


def collection_name(header: str) -> str:
    """Name of a seed file's collection, with list words removed ("ICML 2025 论文列表" -> "ICML 2025")."""
    name = _HEADER_NOISE.sub("", normalise_text(header)).strip(" :-–—")
    return name or normalise_text(header)


_VERB = re.compile(r"\b(?:we|this paper|this work)\s+(?:propose|introduce|present|develop)s?\s+", re.I)
_CALLED = re.compile(r"\b(?:called|named|dubbed|termed)\s+", re.I)
_ARTICLE = re.compile(
    r"^(?:a|an|the)\s+(?:novel\s+|new\s+)?(?:\w+\s+){0,3}?(?:framework|method|model|approach|algorithm|benchmark|system),?\s+",
    re.I,
)
_NAME_END = re.compile(r",|;|:|\.\s|\.$|\s(?:which|that|to|for|as|with|where|in)\s|\s[-–—]\s")


# A sentence ends at ". " after a word, a bracket or a formula, but not inside "e.g. " or "et al. ".
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]$])(?<!e\.g)(?<!i\.e)(?<!\bal)(?<!\bvs)(?<!etc)(?<!\bcf)\.\s")


def _strip_markup(text: str) -> str:
    return re.sub(r"\*{1,2}|__|`", "", text)


def _method_name(abstract: str) -> tuple[str, str] | None:
    """The name a paper gives its method ("MuLan", "SafetyAnalyst") and the text after it."""
    for pattern in (_VERB, _CALLED):
        for match in pattern.finditer(abstract):
            rest = _strip_markup(abstract[match.end() :])
            rest = _ARTICLE.sub("", rest, count=1)
            end = _NAME_END.search(rest)
            name = rest[: end.start() if end else len(rest)].strip()
            # A name is short and looks like one: an inner capital (MuLan, D-Fusion, PAN+SR)
            # or an acronym in brackets ("Vulnerability-Aware Alignment (VAA)").
            if not name or len(name) > 70 or not name[0].isupper() and name[0] not in "$\\":
                continue
            if re.search(r"\w-?[A-Z]|\([A-Z][\w-]*\)|^[A-Z]{2,}", name):
                after = rest[len(name) :].lstrip(" ,;:.-–—")
                return name, after
    return None


def _shorten(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-–—(") + "…"


def derive_title(abstract: str) -> str:
    """A short readable display title (<= 90 characters) for an abstract that came without one.

    The method's name where the abstract introduces one, followed by what it is; otherwise the
    abstract's first sentence, cut at a word near 90 characters. (Its first clause alone is often
    an opening like "Despite remarkable advances" that names nothing.)

    Examples:
        >>> derive_title("Models fail. Here we introduce MuLan, a lightweight adapter for text.")
        'MuLan: a lightweight adapter for text'
        >>> derive_title("Despite remarkable advances, multi-view clustering methods still fail on incomplete views.")
        'Despite remarkable advances, multi-view clustering methods still fail on incomplete views'
    """
    text = normalise_text(abstract)
    named = _method_name(text)
    if named:
        name, after = named
        what = re.split(r";\s", _SENTENCE_END.split(after, maxsplit=1)[0], maxsplit=1)[0].rstrip(".")
        if len(name) + 2 >= MAX_TITLE or not what:
            return _shorten(name, MAX_TITLE)
        relative = re.match(r"(?:which|that)\s+", what)
        if relative:  # "SMAAT, which improves ..." reads best as "SMAAT improves ..."
            return _shorten(name + " " + what[relative.end() :], MAX_TITLE)
        return name + ": " + _shorten(what, MAX_TITLE - len(name) - 2)
    first_sentence = _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")
    return _shorten(_strip_markup(first_sentence), MAX_TITLE)


def _read_text(path: Path) -> str:
    """File contents as text, refusing empty, whitespace-only, binary and non-UTF-8 files."""
    data = path.read_bytes()
    if not data:
        raise UserError(f"{path}: file is empty")
    if b"\x00" in data[:8192]:
        raise UserError(f"{path}: looks like binary data, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UserError(
            f"{path}: line {line}, column {column}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from None
    if not text.strip():
        raise UserError(f"{path}: contains only whitespace")
    return text


def read_seed_text(path: Path) -> pd.DataFrame:
    """A seed file: an optional one-line header naming the collection, then one abstract a paragraph."""
    text = _read_text(path).replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    collection = None
    first = text.strip().split("\n", 1)[0].strip()
    # The header is a single short line standing alone above the abstracts.
    if paragraphs[0] == first.strip() and len(first) <= 120:
        collection = collection_name(paragraphs.pop(0))
    if not paragraphs:
        raise UserError(f"{path}: has a header line but no abstracts below it")
    papers = pd.DataFrame({"abstract": paragraphs})
    if collection:
        papers["collection"] = collection
    return papers


def _table_from_frame(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Find the abstract (and title) columns case-insensitively; keep every other column."""
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    if "abstract" not in by_lower:
        found = ", ".join(map(str, frame.columns[:12])) or "none"
        raise UserError(f"{path}: no 'abstract' column (columns found: {found})")
    renames = {by_lower["abstract"]: "abstract"}
    if "title" in by_lower:
        renames[by_lower["title"]] = "title"
    frame = frame.rename(columns=renames)
    frame = frame.rename(columns={c: f"input_{c}" for c in frame.columns if c in RESERVED})
    frame.columns = [str(c) for c in frame.columns]
    return frame


def read_delimited(path: Path) -> pd.DataFrame:
    text = _read_text(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, csv.Error) as exc:
        raise UserError(f"{path}: not valid {'TSV' if delimiter == chr(9) else 'CSV'}: {exc}") from None
    return _table_from_frame(frame, path)


def read_jsonl(path: Path) -> pd.DataFrame:
    rows = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{path}: line {number}, column {exc.colno}: malformed JSON ({exc.msg})"
            ) from None
        if not isinstance(row, dict):
            raise UserError(f"{path}: line {number}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return _table_from_frame(pd.DataFrame(rows), path)


def read_parquet(path: Path) -> pd.DataFrame:
    if path.stat().st_size == 0:
        raise UserError(f"{path}: file is empty")
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for damaged files
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: not a readable Parquet file ({reason})") from None
    return _table_from_frame(frame, path)


READERS = {
    ".txt": read_seed_text,
    ".csv": read_delimited,
    ".tsv": read_delimited,
    ".jsonl": read_jsonl,
    ".parquet": read_parquet,
}


def expand_inputs(inputs: list[str | Path]) -> list[Path]:
    """Files named directly plus the supported files found (recursively, sorted) in folders."""
    files: list[Path] = []
    for raw in inputs:
        path = Path(raw)
        if not path.exists():
            raise UserError(f"{path}: no such file or folder")
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in SUPPORTED and not p.name.startswith(".")
            )
            if not found:
                raise UserError(f"{path}: folder has no supported files ({', '.join(SUPPORTED)})")
            files.extend(found)
        elif path.suffix.lower() not in SUPPORTED:
            raise UserError(
                f"{path}: unsupported file type '{path.suffix or '(none)'}' "
                f"(supported: {', '.join(SUPPORTED)})"
            )
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def read_file(path: Path) -> pd.DataFrame:
    """One input file as a table with `abstract`, `source` and any other columns it had."""
    table = READERS[path.suffix.lower()](path)
    table["abstract"] = table["abstract"].map(lambda v: "" if v is None or v != v else str(v).strip())
    table = table[table["abstract"] != ""]
    if table.empty:
        raise UserError(f"{path}: no abstracts (every 'abstract' value is empty)")
    table = table.reset_index(drop=True)
    table.insert(0, "source", path.name)
    return table


def ingest(inputs: list[str | Path]) -> Corpus:
    """Read every input into one papers table: doc_id, title, abstract, source, metadata.

    Identical abstracts (after whitespace and Unicode normalisation) are merged, keeping the first.
    """
    files = expand_inputs(inputs)
    notes: list[str] = []
    tables = []
    for path in files:
        table = read_file(path)
        tables.append(table)
    papers = pd.concat(tables, ignore_index=True, sort=False)
    papers.insert(0, "doc_id", papers["abstract"].map(doc_id_for))
    duplicates = papers["doc_id"].duplicated()
    if duplicates.any():
        notes.append(f"merged {int(duplicates.sum())} duplicate abstract(s)")
        papers = papers[~duplicates].reset_index(drop=True)
    if "title" not in papers.columns:
        papers["title"] = ""
    titles = papers["title"].map(lambda v: "" if v is None or v != v else normalise_text(str(v)))
    missing = titles == ""
    titles[missing] = papers.loc[missing, "abstract"].map(derive_title)
    papers["title"] = titles
    metadata = [c for c in papers.columns if c not in ("doc_id", "title", "abstract", "source")]
    papers = papers[["doc_id", "title", "abstract", "source", *metadata]]
    for column in metadata:  # mixed-type columns break Parquet; keep numbers numeric where they are
        if papers[column].dtype == object or pd.api.types.is_string_dtype(papers[column]):
            converted = pd.to_numeric(papers[column], errors="coerce")
            if converted.notna().sum() == papers[column].replace("", None).notna().sum():
                papers[column] = converted
            else:
                papers[column] = papers[column].map(lambda v: "" if v is None or v != v else str(v))
    notes.insert(0, f"read {len(papers):,} abstracts from {len(files)} file(s)")
    return Corpus(papers=papers, notes=notes)
