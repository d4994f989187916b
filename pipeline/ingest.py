"""Read abstract files (seed .txt, CSV/TSV, JSONL, Parquet) into one papers table with stable ids."""

from __future__ import annotations

import csv
import decimal
import hashlib
import io
import itertools
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError
from pipeline.mapfolder import bounded_json
from pipeline.naming.sentences import first_sentence
from pipeline.text import shorten

SUPPORTED = (".txt", ".csv", ".tsv", ".jsonl", ".parquet")
MAX_TITLE = 90
# Columns the pipeline owns; input columns with these names are renamed so nothing is lost.
RESERVED = (
    "doc_id",
    "source",
    "topic_id",
    "x",
    "y",
    "added",
    "via_add",
    "theme_id",
    "theme",
    "topic",
    "topic_keywords",
)
# How far past "we propose" a method's name and description may reach: bounds the work per match,
# so deriving a title stays linear in the abstract's length.
_NAME_WINDOW = 400
# Header words that only say "this is a list": "ICML 2025 Papers" and "ICML 2025 论文列表" are one collection.
_HEADER_NOISE = re.compile(
    r"(?<!\s)\s*(accepted\s+)?(papers?|abstracts?|paper\s+list|list\s+of\s+papers|论文列表|论文|文章列表|摘要)\s*$",
    re.IGNORECASE,
)


@dataclass
class Corpus:
    """The ingested papers plus what a user should hear about how they were read."""

    papers: pd.DataFrame
    notes: list[str]


def normalise_text(text: str) -> str:
    """Unicode NFKC with runs of whitespace collapsed: the key ids and de-duplication use, never
    what is stored or shown ("Du²Net" stays "Du²Net"; see `one_line`)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def one_line(text: str) -> str:
    """Text as written, with runs of whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


def doc_id_for(text: str) -> str:
    """Stable 16-hex-digit id of an abstract, independent of file, order and whitespace."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()[:16]


def collection_name(header: str) -> str:
    """Name of a seed file's collection, with list words removed ("ICML 2025 论文列表" -> "ICML 2025")."""
    name = _HEADER_NOISE.sub("", one_line(header)).strip(" :-–—")
    return name or one_line(header)


_VERB = re.compile(r"\b(?:we|this paper|this work)\s+(?:propose|introduce|present|develop)s?\s+", re.I)
_CALLED = re.compile(r"\b(?:called|named|dubbed|termed)\s+", re.I)
_ARTICLE = re.compile(
    r"^(?:a|an|the)\s+(?:novel\s+|new\s+)?(?:\w+\s+){0,3}?(?:framework|method|model|approach|algorithm|benchmark|system),?\s+",
    re.I,
)
_NAME_END = re.compile(r",|;|:|\.\s|\.$|\s(?:which|that|to|for|as|with|where|in)\s|\s[-–—]\s")


def _strip_markup(text: str) -> str:
    return re.sub(r"\*{1,2}|__|`", "", text)


def _method_name(abstract: str) -> tuple[str, str] | None:
    """The name a paper gives its method ("MuLan", "SafetyAnalyst") and the text after it."""
    for pattern in (_VERB, _CALLED):
        # The first few mentions are where a paper names its method; later ones add work, not names.
        for match in itertools.islice(pattern.finditer(abstract), 20):
            rest = _strip_markup(abstract[match.end() : match.end() + _NAME_WINDOW])
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
    text = one_line(abstract)
    named = _method_name(text)
    if named:
        name, after = named
        what = re.split(r";\s", first_sentence(after), maxsplit=1)[0].rstrip(".。")
        if len(name) + 2 >= MAX_TITLE or not what:
            return shorten(name, MAX_TITLE, at_word=True)
        relative = re.match(r"(?:which|that)\s+", what)
        if relative:  # "SMAAT, which improves ..." reads best as "SMAAT improves ..."
            return shorten(name + " " + what[relative.end() :], MAX_TITLE, at_word=True)
        return name + ": " + shorten(what, MAX_TITLE - len(name) - 2, at_word=True)
    return shorten(_strip_markup(first_sentence(text).rstrip(".。")), MAX_TITLE, at_word=True)


def read_bytes(path: Path) -> bytes:
    """A file's bytes; a file we may not read is a `UserError` naming it, not a traceback."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from None


def unreadable(path: Path, exc: OSError) -> UserError:
    """The one `error:` line for an input file the system would not let us read."""
    if isinstance(exc, PermissionError):
        return UserError(f"{path}: cannot read the file (permission denied)")
    if isinstance(exc, IsADirectoryError):
        return UserError(f"{path}: is a folder, not a file")
    return UserError(f"{path}: cannot read the file ({exc.strerror or exc})")


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


def _looks_like_utf16(data: bytes) -> bool:
    """Text saved as UTF-16 without a byte-order mark: every other byte is NUL (for Latin text)."""
    head = data[:4096]
    if len(head) < 4:
        return False
    even, odd = head[0::2], head[1::2]
    return max(even.count(0) / len(even), odd.count(0) / len(odd)) > 0.4 and min(
        even.count(0), odd.count(0)
    ) < 0.05 * len(odd)


def decode_text(data: bytes, path: Path) -> str:
    """Bytes as text: UTF-8 (with or without BOM), or UTF-16 when it says so with a BOM."""
    if data.startswith(_UTF32_BOMS):
        raise UserError(f"{path}: UTF-32 text; save it as UTF-8")
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise UserError(f"{path}: starts like UTF-16 text but is damaged; save it as UTF-8") from None
    if b"\x00" in data[:8192]:
        if _looks_like_utf16(data):
            raise UserError(f"{path}: UTF-16 text without a byte-order mark; save it as UTF-8")
        raise UserError(f"{path}: looks like binary data, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UserError(
            f"{path}: line {line}, column {column}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from None


def _read_text(path: Path) -> str:
    """File contents as text, refusing empty, whitespace-only, binary and non-UTF-8 files (binary
    ones from their first 8 KB, before the rest is read: a 3 GB binary file is never read whole)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        raise unreadable(path, exc) from None
    if b"\x00" in head and not head.startswith(_UTF16_BOMS):
        decode_text(head, path)  # refuses it: binary data, or UTF-16 without a byte-order mark
    data = read_bytes(path)
    if not data:
        raise UserError(f"{path}: file is empty")
    text = decode_text(data, path)
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
    for wanted in ("abstract", "title", "keywords"):
        same = [str(c) for c in frame.columns if str(c).strip().lower() == wanted]
        if len(same) > 1:
            raise UserError(f"{path}: more than one {wanted!r} column ({', '.join(same)}); keep one")
    if "abstract" not in by_lower:
        found = ", ".join(map(str, frame.columns[:12])) or "none"
        raise UserError(f"{path}: no 'abstract' column (columns found: {found})")
    renames = {by_lower["abstract"]: "abstract"}
    for wanted in ("title", "keywords"):
        if wanted in by_lower:
            renames[by_lower[wanted]] = wanted
    frame = frame.rename(columns=renames)
    frame.columns = [str(c) for c in frame.columns]
    taken = set(frame.columns)
    renamed = {}
    for column in [c for c in frame.columns if c in RESERVED]:
        new = f"input_{column}"
        while new in taken:  # `source` and `input_source` both (a re-read export): input_input_source
            new = f"input_{new}"
        renamed[column] = new
        taken.add(new)
    return frame.rename(columns=renamed)


def read_delimited(path: Path) -> pd.DataFrame:
    text = _read_text(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:  # pandas renames a repeated header ("abstract.1"): the header as written is checked first
        header = next(csv.reader(io.StringIO(text), delimiter=delimiter), [])
    except csv.Error:
        header = []
    for wanted in ("abstract", "title"):
        same = [c for c in header if c.strip().lower() == wanted]
        if len(same) > 1:
            raise UserError(f"{path}: more than one {wanted!r} column ({', '.join(same)}); keep one")
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, csv.Error) as exc:
        raise UserError(f"{path}: not valid {'TSV' if delimiter == chr(9) else 'CSV'}: {exc}") from None
    return _table_from_frame(frame, path)


# Internal column: where each row came from ("line 3", "row 7"), for error messages.
WHERE = "\0where"


def read_jsonl(path: Path) -> pd.DataFrame:
    rows, where = [], []
    # JSON Lines ends a line at \n only: `splitlines` would also split at U+2028 and other
    # separators JSON allows raw inside a string.
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            row = bounded_json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{path}: line {number}, column {exc.colno}: malformed JSON ({exc.msg})"
            ) from None
        except ValueError as exc:  # nested too deep, a number too long or too large
            raise UserError(f"{path}: line {number}: refused JSON ({exc})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}: line {number}: expected a JSON object, got {type(row).__name__}")
        if "\\u" in line:  # an escape may have made a lone surrogate: refused before any table holds it
            _refuse_surrogates(row, f"{path}: line {number}")
        rows.append(row)
        where.append(f"line {number}")
    frame = _table_from_frame(pd.DataFrame(rows), path)
    frame[WHERE] = where
    return frame


def _check_readable(path: Path) -> None:
    try:
        with open(path, "rb"):
            pass
    except PermissionError:
        raise UserError(f"{path}: cannot read the file (permission denied)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def read_parquet(path: Path) -> pd.DataFrame:
    _check_readable(path)
    if path.stat().st_size == 0:
        raise UserError(f"{path}: file is empty")
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for damaged files
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: not a readable Parquet file ({reason})") from None
    frame = _table_from_frame(frame, path)
    frame[WHERE] = [f"row {i}" for i in range(1, len(frame) + 1)]
    return frame


READERS = {
    ".txt": read_seed_text,
    ".csv": read_delimited,
    ".tsv": read_delimited,
    ".jsonl": read_jsonl,
    ".parquet": read_parquet,
}


def is_map_folder(folder: Path) -> bool:
    """A folder `python -m pipeline build` wrote (`pipeline.mapfolder.store.holds_a_map`): its own
    papers.parquet is output, not input."""
    from pipeline.mapfolder.files import PAPERS, holds_a_map

    return holds_a_map(folder) and (folder / PAPERS).is_file()


def check_regular_file(path: Path) -> None:
    """Refuse an input that is not a regular file (a named pipe, a device such as /dev/zero, a
    socket): reading one may never end, or never stop growing."""
    from pipeline.mapfolder.safe_output import file_kind

    try:
        mode = path.stat().st_mode
    except PermissionError:
        raise UserError(f"{path}: cannot read the file (permission denied)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    kind = file_kind(mode)
    if kind:
        raise UserError(f"{path}: is {kind}, not a file; give abstract files")


def _walk_error(error: OSError) -> None:
    reason = "permission denied" if isinstance(error, PermissionError) else (error.strerror or str(error))
    raise UserError(f"{error.filename}: cannot read the folder ({reason})")


def _files_in(folder: Path, skipped_maps: list[Path]) -> list[Path]:
    """Supported files below `folder`, leaving out hidden files and folders and map folders inside it."""
    found = []
    for root, dirs, names in os.walk(folder, onerror=_walk_error):
        here = Path(root)
        if here != folder and is_map_folder(here):
            skipped_maps.append(here)
            dirs.clear()
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # staging folders, .git, ...
        found.extend(
            here / name
            for name in names
            if not name.startswith(".") and Path(name).suffix.lower() in SUPPORTED
        )
    return sorted(found)


def find_inputs(inputs: list[str | Path]) -> tuple[list[Path], list[str]]:
    """Files named directly plus the supported files found (recursively, sorted) in folders,
    with notes on what was left out: map folders inside input folders are output, not input."""
    files: list[Path] = []
    skipped_maps: list[Path] = []
    for raw in inputs:
        path = Path(raw)
        if not path.exists():
            raise UserError(f"{path}: no such file or folder")
        if path.is_dir() and is_map_folder(path):
            raise UserError(
                f"{path}: is a map folder (its files are a map's output, not abstracts); "
                "give the files the map was built from, or export its papers with `python -m pipeline export`"
            )
        if path.is_dir():
            found = _files_in(path, skipped_maps)
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
    for path in files:
        check_regular_file(path)
    notes = []
    if skipped_maps:
        names = ", ".join(str(p) for p in dict.fromkeys(skipped_maps))
        notes.append(
            f"skipped {len(set(skipped_maps))} map folder(s) inside the inputs (a map is output, not input): {names}"
        )
    return list(dict.fromkeys(files)), notes


def expand_inputs(inputs: list[str | Path]) -> list[Path]:
    """The input files `find_inputs` reads, without its notes."""
    return find_inputs(inputs)[0]


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "JSON object"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "list"
    return type(value).__name__


def abstract_text(value: object, path: Path, where: str | None) -> str:
    """One abstract cell as text; a list, object or undecodable bytes is a `UserError` naming the row.

    Lists are refused rather than joined: a list of sentences, of paragraphs or of alternative
    language versions would each need a different join, and a guessed one corrupts silently.
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return value.strip()
    at = f"{path}: {where}" if where else str(path)
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8").strip()
        except UnicodeDecodeError:
            raise UserError(
                f"{at}: 'abstract' is bytes that are not UTF-8 text; store it as UTF-8 text"
            ) from None
    if value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, (dict, list, tuple, np.ndarray, bool, np.bool_)):
        raise UserError(f"{at}: 'abstract' is a {_kind(value)}, not text; give each abstract as one string")
    # A number (or a date) in a typed format (JSON, Parquet) is not an abstract: the column is not the
    # abstracts. A CSV cell is text whatever it holds.
    what = "number" if isinstance(value, (int, float, np.number, decimal.Decimal)) else type(value).__name__
    raise UserError(
        f"{at}: 'abstract' is a {what} ({shorten(str(value), 40)}), not text; give each abstract as text"
    )


def check_keywords(value: object, path: Path, where: str | None) -> None:
    """A `keywords` cell is text ("diffusion models; image editing"), a list of texts, or empty: its
    words are name candidates (`pipeline.commands.build.naming_texts`). Anything else (a number, an
    object, true/false) is a `UserError` naming the file and row."""
    at = f"{path}: {where}" if where else str(path)
    if value is None or isinstance(value, str) or (isinstance(value, float) and value != value):
        return
    if isinstance(value, (list, tuple, np.ndarray)) and all(isinstance(v, str) or v is None for v in value):
        return
    raise UserError(
        f"{at}: 'keywords' is a {_kind(value)}, not text; give each paper's keywords as text "
        '("diffusion models; image editing") or a list of texts'
    )


def cell_text(value: object, separator: str = "; ") -> object:
    """A metadata cell Parquet and spreadsheets can hold: lists joined by `separator`, objects as JSON,
    bytes decoded; anything else unchanged."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return separator.join(str(cell_text(item, separator)) for item in value if item is not None)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def _has_nested(column: pd.Series) -> bool:
    return (
        column.dtype == object
        and column.map(lambda v: isinstance(v, (list, tuple, dict, np.ndarray, bytes))).any()
    )


def read_file(path: Path) -> pd.DataFrame:
    """One input file as a table with `abstract`, `source` and any other columns it had."""
    table = READERS[path.suffix.lower()](path)
    where = table.pop(WHERE).tolist() if WHERE in table.columns else [None] * len(table)
    table = _checked_text(table, path, where)
    table["abstract"] = [abstract_text(v, path, w) for v, w in zip(table["abstract"], where)]
    if "keywords" in table.columns:
        for value, at in zip(table["keywords"], where):
            check_keywords(value, path, at)
    table = table[table["abstract"] != ""]
    if table.empty:
        raise UserError(f"{path}: no abstracts (every 'abstract' value is empty)")
    table = table.reset_index(drop=True)
    for column in table.columns:
        if column != "abstract" and _has_nested(table[column]):
            separator = " " if column == "title" else "; "
            table[column] = [cell_text(v, separator) for v in table[column]]
    table.insert(0, "source", path.name)
    return table


# A lone surrogate (JSON's "\ud800" escape) is no character: no file, index or page can hold it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_surrogates(values: dict, at: str) -> None:
    """A `UserError` at `at` ("papers.jsonl: line 4") naming the first of `values` (column -> cell)
    that holds a lone surrogate, in its text or in a list or object of text."""
    for name, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        found = None if text.isascii() else _SURROGATE.search(f"{name}\n{text}")
        if found:
            escape = found.group(0).encode("unicode_escape").decode()
            raise UserError(
                f"{at}: {name!r} holds a lone surrogate ({escape}), not text; fix that escape in the file"
            )


def _checked_text(table: pd.DataFrame, path: Path, where: list[str | None]) -> pd.DataFrame:
    """The input's text checked once, for every format and column: a lone surrogate is a `UserError`
    naming the file, row and column (JSON Lines are checked as they are read, `read_jsonl`);
    categorical columns become plain values (an empty title in one is then derived like any other)."""
    for name in list(table.columns):
        column = table[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            table[name] = column = column.astype(object).where(column.notna(), None)
        if column.dtype == object or pd.api.types.is_string_dtype(column):
            for row, value in enumerate(column):
                if isinstance(value, (list, dict)) or (isinstance(value, str) and not value.isascii()):
                    _refuse_surrogates({name: value}, f"{path}: {where[row] or f'paper {row + 1}'}")
    return table


def ingest(inputs: list[str | Path]) -> Corpus:
    """Read every input into one papers table: doc_id, title, abstract, source, metadata.

    Identical abstracts (after whitespace and Unicode normalisation) are merged, keeping the first.
    """
    files, notes = find_inputs(inputs)
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
    titles = papers["title"].map(lambda v: "" if v is None or v != v else one_line(str(v)))
    missing = titles == ""
    titles[missing] = papers.loc[missing, "abstract"].map(derive_title)
    papers["title"] = titles
    metadata = [c for c in papers.columns if c not in ("doc_id", "title", "abstract", "source")]
    papers = papers[["doc_id", "title", "abstract", "source", *metadata]]
    for column in metadata:  # mixed-type columns break Parquet; keep numbers numeric where they are
        if column == "keywords":  # words, whatever they look like ("3D; 2024")
            papers[column] = papers[column].map(lambda v: "" if v is None or v != v else str(v))
        elif papers[column].dtype == object or pd.api.types.is_string_dtype(papers[column]):
            converted = pd.to_numeric(papers[column], errors="coerce")
            if converted.notna().sum() == papers[column].replace("", None).notna().sum():
                papers[column] = converted
            else:
                papers[column] = papers[column].map(lambda v: "" if v is None or v != v else str(v))
    notes.insert(0, f"read {len(papers):,} abstracts from {len(files)} file(s)")
    return Corpus(papers=papers, notes=notes)
