"""Embed abstracts with the packaged all-MiniLM-L6-v2 model, strictly offline, through an on-disk cache."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from pipeline.cache import cache_dir, text_key
from pipeline.config import DEFAULT_MAX_TOKENS
from pipeline.embedding.model import DIMENSIONS, MODEL_NAME, model_path, token_suffix

# Never let transformers or sentence-transformers reach for the Hugging Face hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

BATCH_SIZE = 32


class TorchEncoder:
    """The reference fp32 sentence-transformers encoder."""

    def __init__(self, max_tokens: int | None = None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        torch.set_num_threads(len(os.sched_getaffinity(0)))
        self.model = SentenceTransformer(str(model_path()), device="cpu", local_files_only=True)
        if max_tokens:
            self.model.max_seq_length = max_tokens
        self.max_tokens = int(self.model.max_seq_length)
        self.name = f"all-MiniLM-L6-v2/torch-fp32{token_suffix(self.max_tokens)}"

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(texts, batch_size=len(texts), normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)


def load_encoder(embedder: str = "onnx-int8", max_tokens: int | None = None):
    """An encoder with `.name` and `.encode(list[str]) -> (n, 384) float32 unit rows`.

    `max_tokens` defaults to the build's default, so vectors match a map built with defaults;
    pass a map's `Manifest.max_tokens` to match that map.
    """
    max_tokens = max_tokens or DEFAULT_MAX_TOKENS
    if embedder == "torch-fp32":
        return TorchEncoder(max_tokens)
    return _onnx_encoder(model_path(), cache_dir(), max_tokens)


@lru_cache(maxsize=2)
def _onnx_encoder(model: Path, cache: Path, max_tokens: int):
    """The int8 encoder, loaded once per process and cache folder: a build embeds its abstracts, then
    the phrases its names are chosen among, call by call (0.2 CPU s a load)."""
    from pipeline.embedding.onnx_encoder import OnnxEncoder

    return OnnxEncoder(model, cache_dir=cache, max_tokens=max_tokens)


def cache_name_for(embedder: str, max_tokens: int | None = None) -> str:
    """The embedding cache's name for vectors of this embedder and token budget, loading nothing."""
    max_tokens = max_tokens or DEFAULT_MAX_TOKENS
    name = f"{MODEL_NAME}/{embedder}"
    # int8 kernels differ by CPU and recipe: never mix their vectors.
    if embedder == "onnx-int8":
        from pipeline.embedding.onnx_build import RECIPE_VERSION, quantisation_variant

        name += f"-{quantisation_variant()}-r{RECIPE_VERSION}"
    return name + token_suffix(max_tokens)


class EmbeddingCache:
    """Vectors keyed by (encoder name, text hash) in one SQLite file: safe across processes."""

    def __init__(self, path: Path, encoder_name: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path, timeout=60)
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key BLOB, vector BLOB, PRIMARY KEY (model, key))"
        )
        self.encoder_name = encoder_name

    def get(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = self.connection.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({','.join('?' * len(chunk))})",
                [self.encoder_name, *chunk],
            )
            found.update((key, np.frombuffer(blob, dtype=np.float32)) for key, blob in rows)
        return found

    def put(self, keys: list[bytes], vectors: np.ndarray) -> None:
        with self.connection:
            self.connection.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(self.encoder_name, k, v.astype(np.float32).tobytes()) for k, v in zip(keys, vectors)],
            )

    def close(self) -> None:
        self.connection.close()


def sort_batches(texts: list[str], batch_size: int = BATCH_SIZE) -> list[list[int]]:
    """Row indices in batches of similar length (less padding), shortest first.

    A local build and a Ray job cut the same batches, so batch-dependent encoders agree too.

    Examples:
        >>> sort_batches(["ccc", "a", "bb"], 2)
        [[1, 2], [0]]
    """
    order = np.argsort([len(t) for t in texts], kind="stable")
    return [order[start : start + batch_size].tolist() for start in range(0, len(texts), batch_size)]


def encode_sorted(
    texts: list[str],
    encode: Callable[[list[str]], np.ndarray],
    *,
    batch_size: int = BATCH_SIZE,
    on_batch: Callable[[list[int], np.ndarray], None] | None = None,
    progress: bool = True,
) -> np.ndarray:
    """Encode in batches of similar length (less padding), returning rows in the input order."""
    from tqdm import tqdm

    vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    with tqdm(
        total=len(texts),
        unit=" abstracts",
        desc="embedding",
        disable=not progress,
        delay=2,
        mininterval=1,
        file=sys.stderr,
        dynamic_ncols=True,
    ) as bar:
        for rows in sort_batches(texts, batch_size):
            batch = encode([texts[i] for i in rows])
            vectors[rows] = batch
            if on_batch:
                on_batch(rows, batch)
            bar.update(len(rows))
    return vectors


def embed_texts(
    texts: list[str],
    *,
    embedder: str = "onnx-int8",
    max_tokens: int | None = None,
    use_cache: bool = True,
    progress: bool = True,
    encoder=None,
    compute: Callable[[list[str], Callable[[list[int], np.ndarray], None]], np.ndarray] | None = None,
    known: dict[bytes, np.ndarray] | None = None,
) -> tuple[np.ndarray, dict]:
    """Unit-length embeddings for `texts`, computing only those not already in the cache.

    `known` (text key -> vector, e.g. the vectors a map being rebuilt stores) comes before the
    cache: int8 kernels differ in their last bits between CPU kinds, so a rebuild on another
    machine reuses the map's own vectors rather than embedding the same texts again.

    `compute(texts, on_batch)`, when given, embeds the missing texts instead of a local encoder
    (the Ray path); it must return rows in the order of `texts` and may report batches.

    Returns:
        The (n, 384) float32 matrix and a small report: encoder name, cached and computed counts,
        abstracts/s for the computed ones (per second of embedding, the model's loading or one-time
        preparation not counted: that is `model_seconds`).
    """
    import time

    # Keyed without loading anything (a warm build never loads a model); a caller's own encoder
    # is keyed by its own name.
    cache_name = encoder.name if encoder else cache_name_for(embedder, max_tokens)
    keys = [text_key(t) for t in texts]
    cache = EmbeddingCache(cache_dir() / "embeddings.sqlite", cache_name) if use_cache else None
    known = known or {}
    cached = {k: known[k] for k in dict.fromkeys(keys) if k in known}
    if cache:
        cached.update(cache.get([k for k in dict.fromkeys(keys) if k not in cached]))
    missing = list(dict.fromkeys(k for k in keys if k not in cached))
    computed_seconds = model_seconds = 0.0
    if missing:
        by_key = {k: t for k, t in zip(keys, texts)}
        todo = [by_key[k] for k in missing]
        # Loading the model (the first time: preparing it) is not embedding: timed apart.
        if compute is None and encoder is None:
            loading = time.perf_counter()
            encoder = load_encoder(embedder, max_tokens)
            model_seconds = time.perf_counter() - loading
        started = time.perf_counter()

        def store(rows: list[int], batch: np.ndarray) -> None:
            if cache:  # written batch by batch, so an interrupted build keeps its progress
                cache.put([missing[i] for i in rows], batch)

        if compute is not None:
            fresh = compute(todo, store)
        else:
            encoder = encoder or load_encoder(embedder, max_tokens)
            fresh = encode_sorted(todo, encoder.encode, on_batch=store, progress=progress)
        computed_seconds = time.perf_counter() - started
        cached.update(zip(missing, fresh))
    if cache:
        cache.close()
    matrix = np.stack([cached[k] for k in keys]) if keys else np.zeros((0, DIMENSIONS), np.float32)
    report = {
        # the name its vectors are cached under, whether computed or read back: a map built cold names
        # the encoder as one built warm does (its stored vectors reused on a rebuild, the shipped
        # research-area vectors used: `pipeline.naming.areas.shipped_vectors`)
        "encoder": cache_name,
        "cached": len(texts) - len(missing),
        "from_map": sum(1 for k in keys if k in known),
        "computed": len(missing),
        # abstracts embedded per second of embedding: cached vectors and the model's loading not counted
        "abstracts_per_second": round(len(missing) / computed_seconds, 1) if computed_seconds else None,
        "model_seconds": round(model_seconds, 2),
    }
    return matrix.astype(np.float32), report
