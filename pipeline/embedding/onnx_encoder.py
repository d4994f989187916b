"""Fast CPU embeddings: run the int8 ONNX all-MiniLM-L6-v2 (built once per machine by `onnx_build`)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from pipeline.embedding.model import BUNDLE_META, BUNDLE_MODEL, BUNDLE_TOKENIZER
from pipeline.embedding.model import model_path as packaged_model_path
from pipeline.embedding.onnx_build import PathLike, onnx_model_file, read_json


class OnnxEncoder:
    """all-MiniLM-L6-v2 on ONNX Runtime with int8 weights: mean pooling, then L2 normalisation.

    Each text runs on its own, without padding, so its vector does not depend on the other
    texts of the batch, and no compute is spent on padding. `threads` texts run at once, each
    on one core: on a 2-core AVX2 machine that measured faster than splitting every operator
    across cores, and it keeps going at full speed when another process takes a core.

    It runs from a bundle folder (`model.onnx`, `tokenizer.json`, `meta.json`; see `onnx_build`),
    which needs only onnxruntime, tokenizers and numpy: the hosted app passes `bundle=`, the
    pipeline builds the bundle from the packaged weights on first use.

    Attributes:
        name: Model and backend, e.g. "all-MiniLM-L6-v2/onnx-int8-x86"; used in cache keys.
        model_file: The quantised ONNX model in use.
        threads: How many texts are encoded at once.
        dimensions: Length of the vectors (384).
    """

    def __init__(
        self,
        model_path: PathLike | None = None,
        *,
        cache_dir: PathLike | None = None,
        threads: int | None = None,
        max_tokens: int | None = None,
        bundle: PathLike | None = None,
    ) -> None:
        """Load (building on first use) the int8 model and the tokenizer.

        Args:
            model_path: A sentence-transformers folder; default: the packaged all-MiniLM-L6-v2.
            cache_dir: Cache root; default: `ATLAS_CACHE_DIR`, else `~/.cache/abstract-atlas`.
            threads: Texts encoded at once; default: the number of CPUs this process may use.
            max_tokens: Word pieces kept per text (with [CLS] and [SEP]); default: the model's
                `max_seq_length` (256). A budget other than the model's own is part of `name`.
            bundle: A published bundle folder to run instead (then `model_path` and `cache_dir`
                are not used and nothing is built).
        """
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if bundle is None:
            model_dir = Path(model_path) if model_path else packaged_model_path()
            _require_mean_pooling(model_dir)
            bundle = onnx_model_file(model_dir, cache_dir).parent
        folder = Path(bundle)
        meta = read_json(folder / BUNDLE_META)
        self.model_file = folder / BUNDLE_MODEL
        self.bundle = folder
        own_budget = int(meta["max_seq_length"])
        self.max_tokens = int(max_tokens or own_budget)
        if self.max_tokens < 8:
            raise ValueError(f"max_tokens must be at least 8, not {self.max_tokens}")
        suffix = "" if self.max_tokens == own_budget else f"-t{self.max_tokens}"
        self.name = f"{meta['label']}/onnx-int8-{meta['variant']}{suffix}"
        self.threads = max(1, threads or _usable_cpus())
        self.dimensions = int(meta["dimensions"])

        self._tokenizer = Tokenizer.from_file(str(folder / BUNDLE_TOKENIZER))
        # tokenizer.json itself says: truncate at 128 and pad to 128; the model uses 256, no pad.
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer.no_padding()

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # parallel across texts instead (see the class doc)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            str(self.model_file), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        # Run() is thread-safe, so the workers share one session (and one copy of the weights).
        self._pool = ThreadPoolExecutor(self.threads, "onnx-encoder") if self.threads > 1 else None

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed one batch of texts.

        Args:
            texts: The texts; longer ones are cut at `max_tokens` tokens, like sentence-transformers does.

        Returns:
            A (len(texts), 384) float32 array of unit rows, in the order of `texts`.
        """
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return vectors
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        # Longest first, so no worker is left with a long text while the others idle.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        run = self._pool.map if self._pool else map
        for row, vector in zip(order, run(self._embed_one, (ids[i] for i in order)), strict=True):
            vectors[row] = vector
        return vectors

    def close(self) -> None:
        """Stop the worker threads (they also stop when the interpreter exits)."""
        if self._pool:
            self._pool.shutdown()

    def _embed_one(self, ids: np.ndarray) -> np.ndarray:
        """Mean-pool and L2-normalise the model output for one tokenised text."""
        row = ids[None, :]
        feed = {
            "input_ids": row,
            "attention_mask": np.ones_like(row),
            "token_type_ids": np.zeros_like(row),
        }
        hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._input_names})
        vector = hidden[0][0].mean(axis=0)  # no padding, so every token counts
        return vector / max(float(np.linalg.norm(vector)), 1e-12)


def _usable_cpus() -> int:
    """CPUs this process may run on (respects affinity masks such as taskset and cgroups)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _require_mean_pooling(model_dir: Path) -> None:
    """Refuse models that pool other than by the mean, which is all this encoder does.

    Raises:
        ValueError: If `1_Pooling/config.json` asks for CLS, max or sqrt-length pooling.
    """
    path = model_dir / "1_Pooling" / "config.json"
    pooling = read_json(path) if path.exists() else {"pooling_mode_mean_tokens": True}
    modes = [key for key, on in pooling.items() if key.startswith("pooling_mode_") and on]
    if modes != ["pooling_mode_mean_tokens"]:
        raise ValueError(f"{model_dir}: OnnxEncoder only does mean pooling, not {modes}")
