"""The on-disk cache folder, the key of a text in its caches, and a cache of UMAP results keyed by
their exact inputs."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline import numeric_target


def cache_dir() -> Path:
    """`ATLAS_CACHE_DIR`, else `~/.cache/abstract-atlas`."""
    return Path(os.environ.get("ATLAS_CACHE_DIR") or Path.home() / ".cache" / "abstract-atlas")


def text_key(text: str) -> bytes:
    """A text's key in the caches of what is worked out from it (its embedding, its phrases)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def array_digest(array: np.ndarray) -> str:
    """A short hash of an array's values, for cache keys."""
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def reduction_path(kind: str, embeddings: np.ndarray, params: dict) -> Path:
    """Where `cached_reduction` keeps its result for these exact embeddings and parameters."""
    from importlib.metadata import version

    digest = hashlib.sha256(np.ascontiguousarray(embeddings).tobytes())
    digest.update(
        json.dumps(
            {"kind": kind, "umap": version("umap-learn"), "numeric": numeric_target(), **params},
            sort_keys=True,
        ).encode()
    )
    return cache_dir() / "reductions" / f"{kind}-{digest.hexdigest()[:32]}.npy"


def cached_reduction(
    kind: str, embeddings: np.ndarray, params: dict, compute: Callable[[], np.ndarray]
) -> tuple[np.ndarray, bool]:
    """`compute()`'s result for these exact embeddings and parameters, from disk when seen before.

    UMAP with a fixed seed is a pure function of its input, so a rebuild of the same corpus (to
    try another topic size, say) needs no second fit. Returns the array and whether it was cached.
    """
    path = reduction_path(kind, embeddings, params)
    if path.exists():
        try:
            return np.load(path, allow_pickle=False), True
        except (OSError, ValueError):  # a damaged entry is recomputed, never trusted
            pass
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    with open(partial, "wb") as handle:
        np.save(handle, result, allow_pickle=False)
    os.replace(partial, path)
    return result, False
