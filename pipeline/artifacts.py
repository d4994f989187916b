"""The map artifact folder: written whole into a temporary folder and swapped in; read back validated."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError
from pipeline.curation import CURATION, Edit, apply_edits, read_curation, write_curation

SCHEMA_VERSION = 2
PAPERS, TOPICS, EMBEDDINGS, MANIFEST = "papers.parquet", "topics.parquet", "embeddings.npy", "manifest.json"
LINEAGE = "lineage.parquet"  # optional: present when the build matched its topics to a previous map
THEMES = "themes.parquet"
# Everything a build writes into a map folder; anything else there is the user's. CURATION holds
# a person's edits (pipeline/curation.py), carried by every writer.
MAP_FILES = frozenset({PAPERS, TOPICS, EMBEDDINGS, MANIFEST, THEMES, LINEAGE, CURATION})
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
    edits: list[Edit] | None = None  # curation.json: a person's edits, written back by every writer


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


def holds_a_map(folder: Path) -> bool:
    """Whether `folder` holds a map we wrote: a manifest.json that is a JSON object with a schema_version."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "schema_version" in manifest


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_out(out: Path, inputs: list[str | Path] = ()) -> None:
    """Refuse an --out whose replacement would destroy anything the user did not hand us as output.

    --out may be new, an empty folder, or a folder holding a map; never an input, a folder
    that contains an input, or any other folder (a folder of notes would lose its notes).
    """
    out = Path(out)
    validate_out(out)
    target = out.resolve()
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
    if entries and not holds_a_map(out):
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise UserError(
            f"{out}: --out is a folder that is not a map (it holds {shown}); "
            "give a new or empty folder, or a map folder to replace"
        )
    foreign = [name for name in entries if name not in MAP_FILES]
    if entries and foreign:  # a map folder the user keeps their own files in: replacing it would lose them
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UserError(
            f"{out}: --out holds a map and files that are not part of it ({shown}); "
            "move them out first, or give another folder"
        )


# ---- one writer per map folder, staging folders, and a swap that never leaves --out missing ----

_held: dict[Path, tuple[int, int]] = {}  # lock path -> (file descriptor, nesting depth) in this process


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


@contextlib.contextmanager
def out_lock(out: Path):
    """Hold the lock of map folder `out` (`.<name>.lock` next to it) or fail at once.

    A second build into the same folder fails fast with the first build's pid rather than
    waiting behind it: the user learns at once, and can wait or pick another folder. Re-entrant
    within one process, so `build` can lock before its work and `write_map` again around the swap.
    """
    out = Path(out)
    created = [p for p in [out.parent, *out.parent.parents] if not p.exists()]  # made here, for the lock
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except PermissionError:
        raise UserError(f"{out}: cannot create the folder for --out (permission denied)") from None
    path = (out.parent / f".{out.name}.lock").resolve()
    if path in _held:
        fd, depth = _held[path]
        _held[path] = (fd, depth + 1)
        try:
            yield
        finally:
            fd, depth = _held[path]
            _held[path] = (fd, depth - 1)
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except PermissionError:
        raise UserError(f"{out}: cannot write next to --out in {out.parent} (permission denied)") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise UserError(
            f"{out}: another build is writing this map (pid {owner}); wait for it to finish"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _held[path] = (fd, 1)
    try:
        yield
    finally:
        fd, depth = _held[path]
        if depth > 1:
            _held[path] = (fd, depth - 1)
        else:
            del _held[path]
            os.ftruncate(fd, 0)
            if created and [p.name for p in out.parent.iterdir()] == [path.name]:
                # A failed build into a new folder leaves nothing: not even the folders made for its lock.
                path.unlink()
                for folder in created:
                    with contextlib.suppress(OSError):
                        folder.rmdir()
            os.close(fd)  # closing releases the lock; otherwise the file stays (deleting it would race)


def _owner_pid(name: str) -> int | None:
    """The pid in a staging or backup folder's name (`.map.tmp-<pid>-<random>`, `.map.old-<pid>`)."""
    match = re.search(r"\.(?:tmp|old)-(\d+)(?:-|$)", name)
    return int(match.group(1)) if match else None


def _leftovers(out: Path, kind: str) -> list[Path]:
    return sorted(out.parent.glob(f".{glob.escape(out.name)}.{kind}-*"))


def recover(out: Path) -> list[str]:
    """Undo what a killed build left next to `out`; call with the lock held. Returns notices.

    A build killed between the two renames of a swap leaves the previous map in `.<name>.old-<pid>`
    and nothing at `out`: it is put back. Staging and backup folders of dead builds are removed;
    a live process's are left alone.
    """
    notes = []
    backups = [p for p in _leftovers(out, "old") if not _pid_alive(_owner_pid(p.name) or os.getpid())]
    if not out.exists() and backups:
        latest = max(backups, key=lambda p: p.stat().st_mtime)
        os.replace(latest, out)
        backups.remove(latest)
        notes.append(f"{out}: restored the previous map, which an interrupted build had left aside")
    for stale in backups + _leftovers(out, "tmp"):
        pid = _owner_pid(stale.name)
        if pid is not None and pid != os.getpid() and not _pid_alive(pid):
            shutil.rmtree(stale, ignore_errors=True)
    return notes


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if result == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.EOPNOTSUPP):
        return False
    raise OSError(error, os.strerror(error), str(a))


def swap_in(staging: Path, out: Path) -> None:
    """Put the finished `staging` folder at `out` so that `out` always holds a whole map.

    Where the system can exchange two folders atomically, it does; elsewhere the old map is
    renamed aside to `.<name>.old-<pid>` first, and `recover` puts it back if we die in between.
    """
    if not out.exists():
        os.replace(staging, out)
    elif _exchange(staging, out):
        shutil.rmtree(staging, ignore_errors=True)  # now the old map
    else:
        backup = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, backup)
        os.replace(staging, out)
        shutil.rmtree(backup, ignore_errors=True)


def write_map(out: Path, atlas: AtlasMap, *, log: Callable[[str], None] | None = None) -> None:
    """Write all four artifacts to a sibling staging folder, then swap it in for `out`.

    Until the swap the previous map at `out` is untouched; a failure or interruption leaves only
    a `.<name>.tmp-<pid>-*` folder, which the next build into `out` removes once its owner is gone.
    """
    out = Path(out)
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
            if atlas.edits:
                write_curation(staging, atlas.edits)
            manifest = dict(atlas.manifest, checksum=checksum(npy, atlas.papers["doc_id"].tolist()))
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
            for name in os.listdir(staging):
                with open(staging / name, "rb") as handle:
                    os.fsync(handle.fileno())
            swap_in(staging, out)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def read_manifest(folder: Path) -> dict:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        if not Path(folder).exists() and _leftovers(Path(folder), "old"):
            raise UserError(
                f"{folder}: missing; an interrupted build left the previous map aside, and the next "
                f"`python -m pipeline build ... --out {folder}` puts it back"
            )
        raise UserError(
            f"{folder}: not a map folder (no {MANIFEST}); build one with `python -m pipeline build`"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: damaged manifest ({exc})") from None
    except PermissionError:
        raise UserError(f"{path}: cannot read the file (permission denied)") from None
    if not isinstance(manifest, dict):
        raise UserError(
            f"{path}: damaged manifest (a JSON {type(manifest).__name__}, not a JSON object); rebuild the map"
        )
    return manifest


def read_map(folder: str | Path, *, verify: bool = True, curated: bool = True) -> AtlasMap:
    """Load and check a map folder; a damaged or mismatched folder is a `UserError` naming the file.

    With `curated` (the default, for the app and exports) the map's edits are applied to its tables;
    a writer that rewrites the tables (`add`) reads them as built (`curated=False`). Either way
    `edits` holds the edits, which `write_map` writes back.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    edits = read_curation(folder)
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise UserError(
            f"{folder / MANIFEST}: schema_version {manifest.get('schema_version')!r} "
            f"is not {SCHEMA_VERSION}; rebuild the map"
        )
    for name in (PAPERS, TOPICS, EMBEDDINGS):
        if not (folder / name).is_file():
            raise UserError(
                f"{folder / name} is missing: the map folder is incomplete; "
                f"rebuild it with python -m pipeline build INPUT... --out {folder}"
            )
    try:
        papers = pd.read_parquet(folder / PAPERS)
        topics = pd.read_parquet(folder / TOPICS)
        npy = (folder / EMBEDDINGS).read_bytes()
        embeddings = np.load(folder / EMBEDDINGS, allow_pickle=False)
        themes = pd.read_parquet(folder / THEMES) if (folder / THEMES).exists() else None
    except FileNotFoundError as exc:  # removed while we read
        missing = Path(exc.filename or folder)
        raise UserError(
            f"{missing} is missing: the map folder is incomplete; "
            f"rebuild it with python -m pipeline build INPUT... --out {folder}"
        ) from None
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
    if curated and edits:
        view = apply_edits(papers, topics, themes, edits)
        papers, topics, themes = view.papers, view.topics, view.themes
        manifest = dict(
            manifest,
            topics=len(topics),
            themes=len(themes) if themes is not None else manifest.get("themes"),
            unassigned=int((papers["topic_id"] == -1).sum()),
            curation={"edits": len(edits), "applied": list(view.applied), "review": list(view.review)},
        )
    return AtlasMap(
        papers=papers,
        topics=topics,
        embeddings=embeddings,
        manifest=manifest,
        lineage=read_lineage(folder),
        themes=themes,
        edits=edits,
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
