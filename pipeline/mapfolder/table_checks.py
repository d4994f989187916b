"""One check of every map table's types and ranges on read (`pipeline.mapfolder.store.read_map` calls it).

A map folder may have been damaged by hand, by a disk, or by another program: a null keyword list,
a null doc id, coordinates stored as text, a 1-D embeddings file, a topic id of 2**40 (the app sizes
arrays by the largest id) or -5. Each is refused here with one `UserError` naming the file and the
column, before anything downstream turns it into a traceback or a huge allocation. Text columns
stored as Parquet categoricals or Arrow strings come back as plain Python strings.

Checks on the papers table are vectorised (maps of a million papers); the topic and theme tables are
small and checked cell by cell.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import UserError
from pipeline.embedding.model import DIMENSIONS
from pipeline.mapfolder.curation import shown_name
from pipeline.mapfolder.files import MAX_TOPIC_ID
from pipeline.mapfolder.safe_output import file_kind

UNASSIGNED = -1
# A layout's coordinates are tens at most; a million is damage (3.3e38 overflows the layout's squares).
MAX_COORDINATE = 1e6


def _refuse(path: Path, column: str, what: str) -> UserError:
    return UserError(f"{path}: column {column!r} {what}; rebuild the map")


def _text(frame: pd.DataFrame, column: str, path: Path, *, nulls: bool = False) -> None:
    """A text column as Python strings (categoricals and Arrow strings converted); no nulls unless
    `nulls` (then they become "")."""
    values = frame[column]
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    missing = values.isna().to_numpy()
    if missing.any():
        if not nulls:
            row = int(np.flatnonzero(missing)[0])
            raise _refuse(path, column, f"has an empty (null) value in row {row + 1}")
        values = values.where(~missing, "")
    if isinstance(values.dtype, pd.StringDtype):  # Arrow-backed text stays as it is: no Python strings made
        frame[column] = values
        return
    if values.dtype != object or (len(values) and pd.api.types.infer_dtype(values, skipna=False) != "string"):
        kinds = sorted({type(v).__name__ for v in values if not isinstance(v, str)}) or [str(values.dtype)]
        raise _refuse(path, column, f"holds {', '.join(kinds)} where text belongs")
    frame[column] = values


def _names(frame: pd.DataFrame, word: str, ids: str) -> None:
    """Names as a page can show them: a line break or an invisible character taken out, a name with
    nothing visible (or reading as "Unassigned") shown as "Topic 4" (`curation.shown_name`)."""
    frame["label"] = [
        shown_name(label, f"{word} {int(i)}") for i, label in zip(frame[ids], frame["label"], strict=True)
    ]


def _whole(frame: pd.DataFrame, column: str, path: Path, low: int, high: int) -> None:
    values = frame[column]
    if not pd.api.types.is_integer_dtype(values) or pd.api.types.is_bool_dtype(values):
        if pd.api.types.is_float_dtype(values) and values.notna().all() and (values == values.round()).all():
            pass  # whole numbers stored as floats: accepted as the numbers they are
        else:
            raise _refuse(path, column, f"holds {values.dtype} values where whole numbers belong")
    if values.isna().any():
        raise _refuse(path, column, "has an empty (null) value")
    numbers = values.to_numpy(dtype=np.float64) if values.dtype.kind == "f" else values.to_numpy(np.int64)
    if len(numbers) and (numbers.min() < low or numbers.max() > high):
        bad = numbers[(numbers < low) | (numbers > high)][0]
        raise _refuse(path, column, f"holds {int(bad)}, outside {low}..{high}")
    frame[column] = numbers.astype(np.int64)


def _coordinates(frame: pd.DataFrame, path: Path, columns: tuple[str, ...] = ("x", "y")) -> None:
    for column in columns:
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            raise _refuse(path, column, f"holds {values.dtype} values where numbers belong")
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.isfinite(numbers).all():
            raise _refuse(path, column, "holds an empty, infinite or NaN coordinate")
        if len(numbers) and np.abs(numbers).max() > MAX_COORDINATE:
            raise _refuse(
                path, column, f"holds {numbers[np.abs(numbers).argmax()]:g}, outside ±{MAX_COORDINATE:g}"
            )


def _lists(frame: pd.DataFrame, column: str, path: Path, kind: type | tuple[type, ...]) -> None:
    """Every cell a list (or array) of `kind`; nulls refused."""
    for row, cell in enumerate(frame[column].tolist(), 1):
        if cell is None or not isinstance(cell, list | tuple | np.ndarray):
            raise _refuse(path, column, f"holds {type(cell).__name__} in row {row}, not a list")
        if isinstance(cell, np.ndarray) and cell.dtype.kind in ("f", "i", "u") and kind is not str:
            if cell.ndim != 1 or (cell.dtype.kind == "f" and kind is _INTS):
                raise _refuse(
                    path, column, f"holds {cell.dtype} values in row {row} where whole numbers belong"
                )
            continue  # a numeric array (a centroid, weights): no need to look at each number
        for item in cell:
            if isinstance(item, bool | np.bool_) or not isinstance(item, kind):
                raise _refuse(
                    path, column, f"holds {type(item).__name__} in row {row} where {_name(kind)} belong"
                )


def _name(kind: type | tuple[type, ...]) -> str:
    return "text" if kind is str else "numbers"


_INTS = (int, np.integer)
_NUMBERS = (int, float, np.integer, np.floating)


def check_papers(papers: pd.DataFrame, path: Path) -> None:
    for column in ("doc_id", "title", "abstract", "source"):
        _text(papers, column, path, nulls=column != "doc_id")
    duplicated = papers["doc_id"].duplicated()
    if duplicated.any():
        shown = papers["doc_id"][duplicated].iloc[0]
        raise _refuse(path, "doc_id", f"holds {shown!r} twice")
    _whole(papers, "topic_id", path, UNASSIGNED, MAX_TOPIC_ID)
    _coordinates(papers, path)
    for column in papers.columns:  # metadata stored as categoricals: plain values, as written
        if isinstance(papers[column].dtype, pd.CategoricalDtype):
            papers[column] = papers[column].astype(object)


def check_topics(topics: pd.DataFrame, path: Path) -> None:
    _whole(topics, "topic_id", path, 0, MAX_TOPIC_ID)
    if topics["topic_id"].duplicated().any():
        raise _refuse(
            path,
            "topic_id",
            f"holds {int(topics['topic_id'][topics['topic_id'].duplicated()].iloc[0])} twice",
        )
    _text(topics, "label", path)
    _names(topics, "Topic", "topic_id")
    _lists(topics, "keywords", path, str)
    _lists(topics, "keyword_weights", path, _NUMBERS)
    _lists(topics, "representative_doc_ids", path, str)
    _whole(topics, "size", path, 0, 2**62)
    _coordinates(topics, path)
    if "theme_id" in topics.columns and topics["theme_id"].notna().all():
        _whole(topics, "theme_id", path, UNASSIGNED, MAX_TOPIC_ID)
    if "stability" in topics.columns:
        stability = topics["stability"]
        numbers = pd.to_numeric(stability, errors="coerce")
        if pd.api.types.is_bool_dtype(stability) or (numbers.isna() & stability.notna()).any():
            raise _refuse(path, "stability", f"holds {stability.dtype} values where numbers belong")
    if "centroid" in topics.columns:
        _centroids(topics, path)


def _centroids(topics: pd.DataFrame, path: Path) -> None:
    """Every centroid a finite vector of the model's width, like the papers' vectors."""
    _lists(topics, "centroid", path, _NUMBERS)
    for row, cell in enumerate(topics["centroid"].tolist(), 1):
        vector = np.asarray(cell, dtype=np.float64)
        if vector.shape != (DIMENSIONS,) or not np.isfinite(vector).all():
            said = f"{len(vector)} numbers" if vector.shape != (DIMENSIONS,) else "an infinite or NaN number"
            raise _refuse(path, "centroid", f"holds {said} in row {row}, not a vector of {DIMENSIONS}")


def check_themes(themes: pd.DataFrame, path: Path) -> None:
    _whole(themes, "theme_id", path, 0, MAX_TOPIC_ID)
    _text(themes, "label", path)
    _names(themes, "Theme", "theme_id")
    _lists(themes, "keywords", path, str)
    _lists(themes, "topic_ids", path, _INTS)
    if any(not 0 <= int(t) <= MAX_TOPIC_ID for ids in themes["topic_ids"] for t in ids):
        raise _refuse(path, "topic_ids", f"holds a topic id outside 0..{MAX_TOPIC_ID}")
    _whole(themes, "size", path, 0, 2**62)
    _coordinates(themes, path)


def check_references(
    papers: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame | None, folder: Path
) -> None:
    """What one table says of another holds: each paper's topic is a row of topics.parquet (or -1),
    each topic has one weight a keyword, each theme's topics and each topic's theme exist. Damage of
    this kind reads as valid table by table ("Placed in Topic 0" for a topic that is gone)."""
    known = topics["topic_id"].to_numpy(dtype=np.int64)
    labels = papers["topic_id"].to_numpy(dtype=np.int64)
    stray = ~np.isin(labels, known) & (labels != UNASSIGNED)
    if stray.any():
        row = int(np.flatnonzero(stray)[0])
        raise _refuse(
            folder / "papers.parquet",
            "topic_id",
            f"holds {int(labels[row])} in row {row + 1}, a topic topics.parquet does not hold",
        )
    for row, (words, weights) in enumerate(
        zip(topics["keywords"], topics["keyword_weights"], strict=True), 1
    ):
        if len(words) != len(weights):
            raise _refuse(
                folder / "topics.parquet",
                "keyword_weights",
                f"holds {len(weights)} weights for {len(words)} keywords in row {row}",
            )
    if themes is None:
        return
    theme_ids = set(themes["theme_id"].tolist())
    topic_ids = set(known.tolist())
    for row, ids in enumerate(themes["topic_ids"], 1):
        gone = [int(t) for t in ids if int(t) not in topic_ids]
        if gone:
            raise _refuse(
                folder / "themes.parquet",
                "topic_ids",
                f"holds topic {gone[0]} in row {row}, which is not a topic",
            )
    if "theme_id" in topics.columns and topics["theme_id"].notna().all():
        stray_themes = [
            int(t) for t in topics["theme_id"] if int(t) != UNASSIGNED and int(t) not in theme_ids
        ]
        if stray_themes:
            raise _refuse(
                folder / "topics.parquet",
                "theme_id",
                f"holds {stray_themes[0]}, a theme themes.parquet does not hold",
            )


def check_previous(papers: pd.DataFrame, topics: pd.DataFrame, folder: Path) -> None:
    """The columns a rebuild reads from its previous map (`pipeline.modelling.lineage.read_previous`)."""
    path = folder / "papers.parquet"
    _text(papers, "doc_id", path)
    _whole(papers, "topic_id", path, UNASSIGNED, MAX_TOPIC_ID)
    _coordinates(papers, path, tuple(c for c in ("x", "y") if c in papers.columns))
    path = folder / "topics.parquet"
    _whole(topics, "topic_id", path, 0, MAX_TOPIC_ID)
    _text(topics, "label", path)
    _names(topics, "Topic", "topic_id")
    for column in ("keywords", "representative_doc_ids"):
        if column in topics.columns:
            _lists(topics, column, path, str)
    if "centroid" in topics.columns:
        _centroids(topics, path)


VECTOR_ROWS_AT_A_TIME = 1 << 16  # rows checked at once for NaN: memory stays small on a million papers


def check_embeddings(embeddings: np.ndarray, papers: int, path: Path) -> None:
    """One row a paper, each a finite vector of the packaged model's width (`DIMENSIONS`)."""
    if embeddings.ndim != 2:
        raise UserError(
            f"{path}: a {embeddings.ndim}-D array of shape {embeddings.shape}, not one row a paper; rebuild the map"
        )
    if embeddings.dtype.kind != "f":
        raise UserError(f"{path}: holds {embeddings.dtype} values, not floats; rebuild the map")
    if len(embeddings) != papers:
        raise UserError(f"{path}: {len(embeddings)} rows for {papers} papers; rebuild the map")
    if embeddings.shape[1] != DIMENSIONS:
        raise UserError(
            f"{path}: vectors of {embeddings.shape[1]} numbers, not the model's {DIMENSIONS}; rebuild the map"
        )
    for start in range(0, len(embeddings), VECTOR_ROWS_AT_A_TIME):
        finite = np.isfinite(embeddings[start : start + VECTOR_ROWS_AT_A_TIME]).all(axis=1)
        if not finite.all():
            row = start + int(np.flatnonzero(~finite)[0])
            raise UserError(f"{path}: row {row + 1} holds an infinite or NaN number; rebuild the map")


def read_embeddings(path: Path, papers: int, *, memory_map: bool = False) -> np.ndarray:
    """embeddings.npy as every reader takes it, a first read or a rebuild's: a plain file (a named
    pipe or a device is refused, never waited on or read without end) that NumPy reads whole (an
    empty or cut file is damage), holding one finite vector a paper (`check_embeddings`).
    A `UserError` naming the file otherwise; a missing file is `FileNotFoundError`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(errno.ENOENT, "missing", str(path)) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc}); rebuild the map") from None
    kind = file_kind(os.fstat(fd).st_mode)
    if kind:
        os.close(fd)
        raise UserError(f"{path}: is {kind}, not a file; rebuild the map")
    with open(fd, "rb") as handle:
        try:
            embeddings = np.load(
                path if memory_map else handle, allow_pickle=False, mmap_mode="r" if memory_map else None
            )
        except (EOFError, OSError, ValueError) as exc:
            raise UserError(
                f"{path}: damaged, not a whole NumPy array ({str(exc)[:80]}); rebuild the map"
            ) from None
    check_embeddings(embeddings, papers, path)
    return embeddings
