"""The map artifact folder: written whole into a temporary folder and swapped in; read back validated."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError

SCHEMA_VERSION = 2
PAPERS, TOPICS, EMBEDDINGS, MANIFEST = "papers.parquet", "topics.parquet", "embeddings.npy", "manifest.json"
LINEAGE = "lineage.parquet"  # optional: present when the build matched its topics to a previous map
THEMES = "themes.parquet"
PAPER_COLUMNS = ["doc_id", "title", "abstract", "source", "topic_id", "x", "y"]
TOPIC_COLUMNS = [
    "topic_id",
    "label",
    "keywords",
    "keyword_weights",
    "size",
    "x",
    "y",
    "representative_doc_ids",
]
# Schema 2 (issue 11): topics carry `theme_id`, `stability` and `centroid`; themes.parquet names themes.
THEME_COLUMNS = ["theme_id", "label", "keywords", "size", "topic_ids", "x", "y"]


@dataclass
class AtlasMap:
    """A loaded map: papers (row i = embeddings row i), topics, and how it was made."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    embeddings: np.ndarray
    manifest: dict
    lineage: pd.DataFrame | None = None  # see pipeline.lineage; None when there was no previous map
    themes: pd.DataFrame | None = None  # None for a map without themes.parquet


def checksum(embeddings_bytes: bytes, doc_ids: list[str]) -> str:
    """Ties embeddings.npy to papers.parquet: both the vectors and the row order of doc_ids."""
    digest = hashlib.sha256(embeddings_bytes)
    digest.update("\n".join(doc_ids).encode("utf-8"))
    return digest.hexdigest()


def _npy_bytes(embeddings: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, embeddings, allow_pickle=False)
    return buffer.getvalue()


def validate_out(out: Path) -> None:
    """Refuse an --out that is an existing file or sits in something that is not a folder."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --out is an existing file; give a folder for the map")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{out}: --out is inside {parent}, which is a file")
            break


def write_map(out: Path, atlas: AtlasMap) -> None:
    """Write all four artifacts to a sibling temporary folder, then swap it in for `out`.

    Until the final rename the previous map at `out` is untouched; a failure or interruption
    leaves only a `.tmp-*` folder, which the next build removes.
    """
    out = Path(out)
    validate_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        npy = _npy_bytes(atlas.embeddings)
        (staging / EMBEDDINGS).write_bytes(npy)
        atlas.papers.to_parquet(staging / PAPERS, index=False)
        atlas.topics.to_parquet(staging / TOPICS, index=False)
        written = [PAPERS, TOPICS, EMBEDDINGS, MANIFEST]
        if atlas.themes is not None:
            atlas.themes.to_parquet(staging / THEMES, index=False)
            written.append(THEMES)
        manifest = dict(atlas.manifest, checksum=checksum(npy, atlas.papers["doc_id"].tolist()))
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        written = [PAPERS, TOPICS, EMBEDDINGS, MANIFEST]
        if atlas.lineage is not None:
            atlas.lineage.to_parquet(staging / LINEAGE, index=False)
            written.append(LINEAGE)
        for name in written:
            with open(staging / name, "rb") as handle:
                os.fsync(handle.fileno())
        if out.exists():
            retired = out.parent / f".{out.name}.tmp-old-{os.getpid()}"
            os.replace(out, retired)
            os.replace(staging, out)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def read_manifest(folder: Path) -> dict:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise UserError(
            f"{folder}: not a map folder (no {MANIFEST}); build one with `python -m pipeline build`"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: damaged manifest ({exc})") from None


def read_map(folder: str | Path, *, verify: bool = True) -> AtlasMap:
    """Load and check a map folder; a damaged or mismatched folder is a `UserError` naming the file."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise UserError(
            f"{folder / MANIFEST}: schema_version {manifest.get('schema_version')!r} "
            f"is not {SCHEMA_VERSION}; rebuild the map"
        )
    try:
        papers = pd.read_parquet(folder / PAPERS)
        topics = pd.read_parquet(folder / TOPICS)
        npy = (folder / EMBEDDINGS).read_bytes()
        embeddings = np.load(folder / EMBEDDINGS, allow_pickle=False)
        themes = pd.read_parquet(folder / THEMES) if (folder / THEMES).exists() else None
    except FileNotFoundError as exc:
        raise UserError(f"{exc.filename}: missing from the map folder") from None
    except Exception as exc:
        raise UserError(f"{folder}: unreadable map artifact ({str(exc)[:120]})") from None
    frames = [(PAPERS, papers, PAPER_COLUMNS), (TOPICS, topics, TOPIC_COLUMNS)]
    if themes is not None:
        frames.append((THEMES, themes, THEME_COLUMNS))
    for name, frame, columns in frames:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise UserError(f"{folder / name}: missing column(s) {', '.join(missing)}")
    if len(embeddings) != len(papers):
        raise UserError(f"{folder / EMBEDDINGS}: {len(embeddings)} rows for {len(papers)} papers")
    if verify and manifest.get("checksum") != checksum(npy, papers["doc_id"].tolist()):
        raise UserError(f"{folder / EMBEDDINGS}: checksum does not match {PAPERS}; rebuild the map")
    topics["keywords"] = topics["keywords"].map(list)
    topics["keyword_weights"] = topics["keyword_weights"].map(list)
    topics["representative_doc_ids"] = topics["representative_doc_ids"].map(list)
    if "centroid" in topics.columns:
        topics["centroid"] = topics["centroid"].map(lambda c: np.asarray(c, dtype=np.float32))
    if themes is not None:
        themes["keywords"] = themes["keywords"].map(list)
        themes["topic_ids"] = themes["topic_ids"].map(lambda ids: [int(i) for i in ids])
    return AtlasMap(
        papers=papers,
        topics=topics,
        embeddings=embeddings,
        manifest=manifest,
        lineage=read_lineage(folder),
        themes=themes,
    )


def read_lineage(folder: str | Path) -> pd.DataFrame | None:
    """The map's lineage table (list columns as lists), or None for a map built without a previous one."""
    path = Path(folder) / LINEAGE
    if not path.is_file():
        return None
    try:
        lineage = pd.read_parquet(path)
    except Exception as exc:
        raise UserError(f"{path}: unreadable lineage table ({str(exc)[:120]})") from None
    for column in ("previous_topic_ids", "successor_topic_ids"):
        lineage[column] = lineage[column].map(lambda ids: [int(i) for i in ids])
    return lineage
