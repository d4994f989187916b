"""The map artifact folder: written whole into a temporary folder and swapped in; read back validated."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UnreadableOutput, UserError
from pipeline.mapfolder.curation import TEMPORARY as CURATION_TEMPORARY
from pipeline.mapfolder.curation import (
    CuratedView,
    Edit,
    apply_edits,
    read_curation,
    shared_name,
    write_curation,
)
from pipeline.mapfolder.files import (
    BUILT_COLUMNS,
    CURATION,
    EMBEDDINGS,
    LINEAGE,
    LINEAGE_COLUMNS,
    MANIFEST,
    MAP_FILES,
    MAX_TOPIC_ID,
    PAPER_COLUMNS,
    PAPERS,
    SCHEMA_VERSION,
    SEARCH_INDEX,
    THEME_COLUMNS,
    THEMES,
    TOPIC_COLUMNS,
    TOPICS,
    holds_a_map,
)
from pipeline.mapfolder.lock import map_path, out_lock, recover, swap_in
from pipeline.mapfolder.manifest import CurationBlock, Manifest, read_manifest
from pipeline.mapfolder.search_index import write_index
from pipeline.mapfolder.table_checks import (
    check_papers,
    check_references,
    check_themes,
    check_topics,
    read_embeddings,
)


@dataclass
class AtlasMap:
    """A loaded map: papers (row i = embeddings row i), topics, and how it was made."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    embeddings: np.ndarray
    manifest: Manifest
    lineage: pd.DataFrame | None = None  # see pipeline.modelling.lineage; None when there was no previous map
    themes: pd.DataFrame | None = None  # None for a map without themes.parquet
    edits: list[Edit] | None = None  # curation.json: a person's edits, written back by every writer


# Text a numeric column of a map holds for "no value" (a JSONL "n/a" year), read as missing there.
MISSING_TOKENS = frozenset({"", "n/a", "na", "nan", "none", "null", "-", "?", "unknown"})


def concat_papers(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Rows of `second` after `first`, each column one type Parquet can write, numbers kept whole.

    A column only one side has is missing on the other; whole numbers stay whole numbers where a
    side has gaps (nullable Int64, so `year` stays 2015, not 2015.0); a column that is numbers on
    one side and text on the other becomes numbers when the text reads as numbers or "n/a", else
    text (2025 as "2025"). Booleans stay booleans, missing as False.

    Examples:
        >>> concat_papers(pd.DataFrame({"year": [2015]}), pd.DataFrame({"year": ["n/a"]}))["year"].tolist()
        [2015, <NA>]
        >>> concat_papers(pd.DataFrame({"venue": ["ICML"]}), pd.DataFrame({"venue": [2025]}))["venue"].tolist()
        ['ICML', '2025']
    """
    columns = list(dict.fromkeys([*first.columns, *second.columns]))
    return pd.DataFrame(
        {
            column: _one_type(
                first[column] if column in first else pd.Series([None] * len(first), dtype=object),
                second[column] if column in second else pd.Series([None] * len(second), dtype=object),
            )
            for column in columns
        }
    )


def _one_type(a: pd.Series, b: pd.Series) -> pd.Series:
    both = pd.concat([a.astype(object), b.astype(object)], ignore_index=True)
    present = both[
        both.map(lambda v: v is not None and v is not pd.NA and not (isinstance(v, float) and v != v))
    ]
    if present.map(lambda v: isinstance(v, (bool, np.bool_))).all() and len(present):
        return both.map(lambda v: bool(v) if isinstance(v, (bool, np.bool_)) else False).astype(bool)
    is_number = present.map(
        lambda v: isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    )
    if is_number.any():  # a numeric column on one side at least: text that reads as a number joins it
        numbers = pd.to_numeric(
            present.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce"
        )
        text = present[~is_number].map(str).str.strip().str.lower()
        if (
            numbers.notna() | (~is_number & text.reindex(present.index, fill_value="").isin(MISSING_TOKENS))
        ).all():
            values = pd.to_numeric(
                both.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce"
            )
            finite = values.dropna()
            if a.dtype.kind == "f":  # the map's own floats (x, y, scores) stay floats of their width
                return values.astype(a.dtype)
            if (finite == finite.round()).all() and (finite.abs() < 2**62).all():
                return values.astype("Int64") if values.isna().any() else values.astype(np.int64)
            return values.astype(np.float64)
    if not len(present) and a.dtype != object:
        return both.astype(a.dtype) if not both.isna().any() else both
    return both.map(_as_text)


def _as_text(value: object) -> object:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple, np.ndarray, dict)):
        return value
    return str(value)


def added_mask(papers: pd.DataFrame) -> np.ndarray:
    """Papers placed by `python -m pipeline add` since the last full build (all False when the map
    has no `added` column).

    Examples:
        >>> added_mask(pd.DataFrame({"added": [True, None, False]})).tolist()
        [True, False, False]
        >>> added_mask(pd.DataFrame({"doc_id": ["a"]})).tolist()
        [False]
    """
    if "added" not in papers.columns:
        return np.zeros(len(papers), dtype=bool)
    return papers["added"].fillna(False).astype(bool).to_numpy()


def via_add_mask(papers: pd.DataFrame) -> np.ndarray:
    """Papers that came into the map through `add`, before or since the last build: a rebuild keeps them.

    Maps from before `via_add` existed know only those added since their last build.
    """
    if "via_add" not in papers.columns:
        return added_mask(papers)
    return papers["via_add"].fillna(False).astype(bool).to_numpy() | added_mask(papers)


def checksum(embeddings_bytes: bytes, doc_ids: list[str]) -> str:
    """Ties embeddings.npy to papers.parquet: both the vectors and the row order of doc_ids."""
    digest = hashlib.sha256(embeddings_bytes)
    digest.update("\n".join(doc_ids).encode("utf-8"))
    return digest.hexdigest()


ABSTRACTS_BATCH = 20_000  # papers read at a time when the abstracts are copied out for memory-mapping


def _papers_with_mapped_abstracts(path: Path) -> pd.DataFrame:
    """papers.parquet with its `abstract` column read from an uncompressed Arrow copy of it in the cache
    folder (written once per papers.parquet, 20,000 abstracts at a time), memory-mapped: a paper's
    abstract is read from disk when it is shown or searched, and the map's memory stays its own.

    The same table `pd.read_parquet` gives; read whole where the cache cannot be written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.cache import cache_dir

    source = pq.ParquetFile(path)
    names = source.schema_arrow.names
    if "abstract" not in names:
        return pd.read_parquet(path)
    stat = path.stat()
    key = hashlib.blake2b(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode(), digest_size=12)
    cached = cache_dir() / "abstracts" / f"{key.hexdigest()}.arrow"
    schema = pa.schema([("abstract", pa.large_string())])
    if not cached.is_file():
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            handle, partial = tempfile.mkstemp(prefix=f".{cached.name}.", dir=cached.parent)
            try:
                with os.fdopen(handle, "wb") as out, pa.ipc.new_file(out, schema) as writer:
                    for batch in source.iter_batches(batch_size=ABSTRACTS_BATCH, columns=["abstract"]):
                        column = batch.column(0).cast(pa.large_string())
                        writer.write_batch(pa.record_batch([column], schema=schema))
                os.replace(partial, cached)
            finally:
                Path(partial).unlink(missing_ok=True)
        except OSError:  # no writable cache: the whole table in memory
            return pd.read_parquet(path)
    abstracts = pa.ipc.open_file(pa.memory_map(str(cached))).read_all().column(0)
    if len(abstracts) != source.metadata.num_rows:  # not ours after all: read afresh
        cached.unlink(missing_ok=True)
        return pd.read_parquet(path)
    papers = pd.read_parquet(path, columns=[c for c in names if c != "abstract"])
    papers.insert(names.index("abstract"), "abstract", abstracts.to_pandas())  # no copy: Arrow's buffers
    return papers


FILE_CHUNK = 1 << 24  # bytes hashed at a time: a file of any size is hashed in 16 MB of memory


def file_digest(path: Path, digest=None, chunk: int = FILE_CHUNK):
    """`digest` (a new SHA-256 by default) updated with a file's bytes, read in 16 MB chunks, never
    the file whole in memory (`checksum`'s first part; a build's input fingerprint)."""
    digest = digest if digest is not None else hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest


def _checksum_from(digest, doc_ids: list[str]) -> str:
    """`checksum` of embeddings bytes already hashed into `digest` (`file_digest`)."""
    digest.update("\n".join(doc_ids).encode("utf-8"))
    return digest.hexdigest()


def _npy_bytes(embeddings: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, embeddings, allow_pickle=False)
    return buffer.getvalue()


def validate_out(out: Path) -> None:
    """Refuse an --out that is an existing file, sits in something that is not a folder, or is (or
    lies inside) a name a map writer owns (`check_not_build_owned`)."""
    from pipeline.mapfolder.safe_output import check_name_length, check_not_build_owned

    check_name_length(out)
    check_not_build_owned(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --out is an existing file; give a folder for the map")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{out}: --out is inside {parent}, which is a file")
            break


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_out(out: Path, inputs: list[str | Path] = ()) -> None:
    """Refuse an --out whose replacement would destroy anything the user did not hand us as output.

    --out may be new, an empty folder, or a folder holding a map (a damaged one too: only a map's
    files, its manifest unreadable); never an input, a folder that contains an input, or any other
    folder (a folder of notes would lose its notes).
    """
    out = Path(out)
    validate_out(out)
    target = out.resolve()
    for parent in target.parents:  # a map inside a map would be a stranger in the outer one
        if holds_a_map(parent):
            raise UserError(f"{out}: --out is inside the map folder {parent}; give a folder outside any map")
    for raw in inputs:
        source = Path(raw).resolve()
        if out.exists() and _inside(source, target):
            what = "is" if source == target else "contains"
            raise UserError(
                f"{out}: --out {what} the input {raw}; replacing it would delete it; give another folder"
            )
    if not out.is_dir():
        return
    try:
        entries = sorted(p.name for p in out.iterdir())
    except PermissionError:
        raise UserError(f"{out}: cannot read the --out folder (permission denied)") from None
    damaged = MANIFEST in entries and set(entries) <= MAP_FILES  # a map whose manifest may not read
    if entries and not damaged and not holds_a_map(out):
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise UserError(
            f"{out}: --out is a folder that is not a map (it holds {shown}); "
            "give a new or empty folder, or a map folder to replace"
        )
    foreign = [name for name in entries if name not in MAP_FILES and not CURATION_TEMPORARY.match(name)]
    if entries and foreign:  # a map folder the user keeps their own files in: replacing it would lose them
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UserError(
            f"{out}: --out holds a map and files that are not part of it ({shown}); "
            "move them out first, or give another folder"
        )


def write_map(out: Path, atlas: AtlasMap, *, log: Callable[[str], None] | None = None) -> None:
    """Write all artifacts to a sibling staging folder, then swap it in for `out`.

    The search index is written too, built whole (never copied from the previous map's, which
    may be damaged). Until the swap the previous map at `out` is untouched; a failure or interruption leaves only
    a `.<name>.tmp-<pid>-*` folder, which the next build into `out` removes once its owner is gone.
    """
    out = map_path(out)  # `.` from inside the map: staging goes beside it, not into it
    check_out(out)
    with out_lock(out):
        for note in recover(out):
            if log:
                log(note)
        check_out(out)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
        try:
            npy = _npy_bytes(atlas.embeddings)
            (staging / EMBEDDINGS).write_bytes(npy)
            atlas.papers.to_parquet(staging / PAPERS, index=False)
            atlas.topics.to_parquet(staging / TOPICS, index=False)
            for name, table in ((THEMES, atlas.themes), (LINEAGE, atlas.lineage)):
                if table is not None:
                    table.to_parquet(staging / name, index=False)
            write_index(staging / SEARCH_INDEX, atlas.papers)  # whole: never carries a damaged index
            if atlas.edits:
                write_curation(staging, atlas.edits)
            manifest = replace(atlas.manifest, checksum=checksum(npy, atlas.papers["doc_id"].tolist()))
            (staging / MANIFEST).write_text(
                json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n"
            )
            for name in os.listdir(staging):
                with open(staging / name, "rb") as handle:
                    os.fsync(handle.fileno())
            read_back(staging, out)
            swap_in(staging, out)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def read_back(staging: Path, out: Path) -> None:
    """Read the map in `staging` as every reader will (`read_map`: checksum, table checks, curation
    applied) before it replaces `out`; a refusal is `UnreadableOutput` and `out` stays as it was."""
    try:
        read_map(staging)
    except UserError as exc:
        said = str(exc).replace(str(staging), str(out))
        raise UnreadableOutput(
            f"{out}: the map just written would not be readable ({said}); the previous map is untouched. "
            "This is a bug: please report it"
        ) from None


def read_map(
    folder: str | Path, *, verify: bool = True, curated: bool = True, memory_map: bool = False
) -> AtlasMap:
    """Load and check a map folder; a damaged or mismatched folder is a `UserError` naming the file.

    With `curated` (the default, for the app and exports) the map's edits are applied to its tables;
    a writer that rewrites the tables (`add`) reads them as built (`curated=False`). Either way
    `edits` holds the edits, which `write_map` writes back.

    With `memory_map` the embeddings are a read-only `np.memmap` of embeddings.npy, as stored (float16
    for a built map), and the abstracts a memory-mapped Arrow column (`_papers_with_mapped_abstracts`):
    pages the kernel reads on use and may drop, never the process's own memory (a million abstracts are
    1 GB). The checksum is hashed from the file in chunks either way, never from a copy held whole.
    """
    folder = Path(folder)
    manifest = read_manifest(folder, schema=SCHEMA_VERSION)  # each field of its JSON type, or refused
    edits = read_curation(folder)
    for name in (PAPERS, TOPICS, EMBEDDINGS):
        if not (folder / name).is_file():
            raise UserError(
                f"{folder / name} is missing: the map folder is incomplete; "
                f"rebuild it with python -m pipeline build INPUT... --out {folder}"
            )
    try:
        papers = (
            _papers_with_mapped_abstracts(folder / PAPERS) if memory_map else pd.read_parquet(folder / PAPERS)
        )
        topics = pd.read_parquet(folder / TOPICS)
        npy_digest = file_digest(folder / EMBEDDINGS) if verify else None
        embeddings = read_embeddings(folder / EMBEDDINGS, len(papers), memory_map=memory_map)
        themes = pd.read_parquet(folder / THEMES) if (folder / THEMES).exists() else None
    except FileNotFoundError as exc:  # removed while we read
        missing = Path(exc.filename or folder)
        raise UserError(
            f"{missing} is missing: the map folder is incomplete; "
            f"rebuild it with python -m pipeline build INPUT... --out {folder}"
        ) from None
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"{folder}: unreadable map artifact ({str(exc)[:120]})") from None
    frames = [(PAPERS, papers, PAPER_COLUMNS), (TOPICS, topics, TOPIC_COLUMNS)]
    if themes is not None:
        frames.append((THEMES, themes, THEME_COLUMNS))
    for name, frame, columns in frames:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise UserError(f"{folder / name}: missing column(s) {', '.join(missing)}")
    check_papers(papers, folder / PAPERS)  # types and ranges: a clear refusal, never a traceback later
    check_topics(topics, folder / TOPICS)
    if themes is not None:
        check_themes(themes, folder / THEMES)
    check_references(papers, topics, themes, folder)  # each table's ids name rows the others hold
    if verify and manifest.checksum != _checksum_from(npy_digest, papers["doc_id"].tolist()):
        raise UserError(f"{folder / EMBEDDINGS}: checksum does not match {PAPERS}; rebuild the map")
    topics["keywords"] = topics["keywords"].map(list)
    topics["keyword_weights"] = topics["keyword_weights"].map(list)
    topics["representative_doc_ids"] = topics["representative_doc_ids"].map(list)
    if "centroid" in topics.columns:
        topics["centroid"] = topics["centroid"].map(lambda c: np.asarray(c, dtype=np.float32))
    if themes is not None:
        themes["keywords"] = themes["keywords"].map(list)
        themes["topic_ids"] = themes["topic_ids"].map(lambda ids: [int(i) for i in ids])
    atlas = AtlasMap(
        papers=papers,
        topics=topics,
        embeddings=embeddings,
        manifest=manifest,
        lineage=read_lineage(folder),
        themes=themes,
        edits=edits,
    )
    return curated_view(atlas, folder) if curated else atlas


def curated_view(atlas: AtlasMap, folder: Path | None = None) -> AtlasMap:
    """The map as its curator sees it (`apply_edits`: renames, merges, hidden topics), the one view
    every reader answers from: the app, exports, and `add`'s verdicts (it stores the built tables).
    The map itself when it has no edits. Edits that would give two topics (or themes) one name, e.g.
    two renames to "Same" written by hand, are a `UserError` naming the edit file (in `folder`)."""
    if not atlas.edits:
        return atlas
    view = _edited(CuratedView(atlas.papers, atlas.topics, atlas.themes), atlas.edits, folder)
    manifest = replace(
        atlas.manifest,
        topics=len(view.topics),
        themes=len(view.themes) if view.themes is not None else atlas.manifest.themes,
        unassigned=int((view.papers["topic_id"] == -1).sum()),
        curation=CurationBlock(edits=len(atlas.edits), applied=list(view.applied), review=list(view.review)),
    )
    return replace(atlas, papers=view.papers, topics=view.topics, themes=view.themes, manifest=manifest)


def _edited(built: CuratedView, edits: list[Edit], folder: Path | None) -> CuratedView:
    """`built` with `edits` applied; edits that give two topics (or themes) one name are refused."""
    view = apply_edits(built.papers, built.topics, built.themes, edits)
    clash = shared_name(view)
    if clash and not shared_name(built):
        raise UserError(
            f"{Path(folder) / CURATION if folder is not None else CURATION}: damaged edit file ({clash}); "
            "fix it or remove it to drop the edits"
        )
    return view


def check_edits(folder: Path, edits: list[Edit]) -> None:
    """Refuse `edits` (the map in `folder`'s, carried by a rebuild) as every reader of that map does,
    before a build does any work: renames giving two topics or themes one name. A map too damaged to
    read its tables is left to the rebuild's own notes."""
    if not edits:
        return
    try:
        papers = pd.read_parquet(folder / PAPERS, columns=["topic_id"]).astype({"topic_id": np.int64})
        topics = pd.read_parquet(folder / TOPICS)
        themes = pd.read_parquet(folder / THEMES) if (folder / THEMES).is_file() else None
        check_topics(topics, folder / TOPICS)
        if themes is not None:
            check_themes(themes, folder / THEMES)
    except Exception:  # noqa: BLE001 - any damage: the rebuild notes it (or refuses --previous) itself
        return
    _edited(CuratedView(papers, topics, themes), edits, folder)


def read_added_papers(folder: str | Path) -> pd.DataFrame:
    """The papers `add` placed on the map in `folder` (before or since its last build) as input rows
    for a rebuild (without `BUILT_COLUMNS`); empty when `folder` holds no map or none were added."""
    path = Path(folder) / PAPERS
    if not (Path(folder) / MANIFEST).is_file() or not path.is_file():
        return pd.DataFrame({"doc_id": pd.Series([], dtype=object)})
    try:
        papers = pd.read_parquet(path)
        chosen = papers[via_add_mask(papers)]
        chosen["doc_id"].astype(str)
    except Exception as exc:
        raise UserError(f"{path}: unreadable ({str(exc)[:120]})") from None
    return chosen.drop(columns=[c for c in BUILT_COLUMNS if c in chosen.columns]).reset_index(drop=True)


def read_lineage(folder: str | Path) -> pd.DataFrame | None:
    """The map's lineage table (list columns as lists), or None for a map built without a previous one.

    A table missing a column or holding ids that are not whole numbers is a `UserError` naming it.
    """
    path = Path(folder) / LINEAGE
    if not path.is_file():
        return None
    try:
        lineage = pd.read_parquet(path)
    except Exception as exc:
        raise UserError(f"{path}: unreadable lineage table ({str(exc)[:120]})") from None
    missing = [c for c in LINEAGE_COLUMNS if c not in lineage.columns and c != "previous_sizes"]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)}; rebuild the map")
    try:
        lineage["topic_id"] = [_whole(t) for t in lineage["topic_id"]]
        for column in ("previous_topic_ids", "successor_topic_ids", "previous_sizes"):
            if column in lineage.columns:  # previous_sizes: maps built since issue 21
                lineage[column] = lineage[column].map(lambda ids: [_whole(i) for i in ids])
        lineage["topic_id"] = lineage["topic_id"].astype(np.int64)
    except (TypeError, ValueError, OverflowError):
        raise UserError(f"{path}: topic ids that are not whole numbers; rebuild the map") from None
    return lineage


def _whole(value: object) -> int:
    """A topic id as an int; text, fractions, missing values and bools are refused (ValueError)."""
    if isinstance(value, bool | str | bytes) or value is None:
        raise ValueError(value)
    number = float(value)
    if not number.is_integer() or abs(number) > MAX_TOPIC_ID:
        raise ValueError(value)
    return int(number)
