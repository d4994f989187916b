"""Build the int8 ONNX all-MiniLM-L6-v2 once per machine: export, fuse, quantise, check, publish.

What it publishes is a *bundle*, a folder the app can run without torch or the packaged weights:
`model.onnx` (int8, word-embedding table included, about 23 MB), `tokenizer.json` and `meta.json`
(label, dimensions, token budget, how it was made). Its folder name (the cache key) covers the model
files, the recipe, the onnxruntime version and the CPU variant; a map records it, and
`publish_bundle` copies a bundle into the repository's `assets/models/` for hosting.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.embedding.model import BUNDLE_META, BUNDLE_MODEL, BUNDLE_TOKENIZER, MODEL_LABEL
from pipeline.embedding.model import model_path as packaged_model_path

# Bump when the export or quantisation steps change: it is part of the cache key, so every
# machine rebuilds instead of reusing a model made the old way.
RECIPE_VERSION = 3
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# Files whose content decides the exported model (and so the cache key).
KEY_FILES = ("config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json")
BUILD_MESSAGE = "preparing the int8 ONNX model (once per machine)..."
# The files of a bundle (see the module doc); `model.onnx` is written last, so its presence means whole.
BUNDLE_FILES = (BUNDLE_META, BUNDLE_TOKENIZER, BUNDLE_MODEL)
# Maps under the repository's assets/maps/ share their models in assets/models/ (committed for hosting).
REPO = Path(__file__).resolve().parents[2]
REPO_MAPS = REPO / "assets" / "maps"
REPO_MODELS = REPO / "assets" / "models"

PathLike = str | Path


def quantisation_variant() -> str:
    """Name the int8 settings for this CPU: "x86" on every x86 CPU, "generic" elsewhere (ARM...).

    x86 CPUs with and without VNNI get the same settings (7-bit weights, which AVX2's 16-bit
    sums need), so the same abstracts embed to the same int8 model's vectors on either kind of
    machine and a map built on one is rebuilt identically on the other; VNNI runs them as fast.
    """
    machine = platform.machine().lower()
    return "x86" if machine in ("x86_64", "amd64", "i386", "i686", "x86") else "generic"


def quantisation_settings(variant: str) -> dict[str, Any]:
    """The `quantize_dynamic` settings for a variant, also recorded next to the model.

    Args:
        variant: A name from `quantisation_variant()`.

    Returns:
        Plain-JSON settings: weight type, per-channel and reduce-range flags, quantised op types.
    """
    return {
        # Activations are quantised to uint8 at run time; int8 weights make the U8S8 kernels,
        # the fastest ones on x86 (measured 10-15% faster than uint8 weights on AVX2).
        "weight_type": "QInt8",
        # One scale per output channel: per-tensor scales lost too much (cosine 0.94 vs 0.993).
        "per_channel": True,
        # Without VNNI, x86 multiplies u8 x s8 pairs into saturating 16-bit sums, so weights use
        # 7 bits on every x86 CPU (VNNI's 32-bit sums would allow 8, at the cost of maps that
        # differ between machines); ARM kernels have no such limit.
        "reduce_range": variant == "x86",
        # Not "EmbedLayerNormalization": int8 embedding tables save memory, not time, and cost
        # agreement with the fp32 model.
        "op_types": ["MatMul", "Attention"],
    }


def onnx_model_file(model_path: PathLike | None = None, cache_dir: PathLike | None = None) -> Path:
    """Return the int8 ONNX model for this machine, exporting and quantising it on first use.

    The model lives under `<cache>/onnx/<key>/`, where the key covers the model files, the
    onnxruntime version and the quantisation variant. The finished file appears in one
    `os.replace`, so an interrupted export never leaves a broken model, and a lock makes
    concurrent first uses build it only once.

    Args:
        model_path: A sentence-transformers folder; default: the packaged all-MiniLM-L6-v2.
        cache_dir: Cache root; default: `ATLAS_CACHE_DIR`, else `~/.cache/abstract-atlas`.

    Returns:
        Path of the quantised `.onnx` file.
    """
    model_dir = Path(model_path) if model_path else packaged_model_path()
    root = _cache_root(cache_dir)
    variant = quantisation_variant()
    folder = root / "onnx" / _cache_key(model_dir, root, variant)
    target = folder / BUNDLE_MODEL
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with _build_lock(folder):
        if not target.exists() and not _copy_shipped(folder):  # another process may have made it meanwhile
            print(BUILD_MESSAGE, file=sys.stderr, flush=True)
            _build(model_dir, target, variant)
    return target


def _copy_shipped(folder: Path) -> bool:
    """Take the bundle the repository ships under `assets/models/<key>/` when its key is this
    machine's (the same model files, onnxruntime and recipe: the export is deterministic, so it is the
    very file a build here would make); the model file last, so it appears only whole. False when none
    ships: then the model is built here (a minute and about 1.3 GB at its peak)."""
    shipped = REPO_MODELS / folder.name
    if not all((shipped / name).is_file() for name in BUNDLE_FILES):
        return False
    for name in (BUNDLE_META, BUNDLE_TOKENIZER, BUNDLE_MODEL):
        partial = folder / f".{name}.{os.getpid()}.partial"
        shutil.copyfile(shipped / name, partial)
        os.replace(partial, folder / name)
    return True


def map_bundle(out: PathLike, log=None) -> dict[str, str]:
    """The bundle a map's vectors come from, as the manifest records it (`model.bundle`, `model.sha256`).

    Builds the bundle if this machine has none yet. For a map under the repository's
    `assets/maps/`, the bundle is also published to `assets/models/` (if not there already), where
    the hosted app finds it: commit it with the map.

    Args:
        out: The map folder being written.
        log: Called with one line when a bundle is published.
    """
    cache_dir = _cache_root(None)
    folder = onnx_model_file(packaged_model_path(), cache_dir).parent
    digest = _file_digest(folder / BUNDLE_MODEL, cache_dir)
    published = REPO_MODELS / folder.name
    if Path(out).resolve().parent == REPO_MAPS.resolve():
        if not (published / BUNDLE_MODEL).is_file():
            publish_bundle(folder, REPO_MODELS)
            if log:
                log(
                    f"int8 model for hosting written to {published.relative_to(REPO)}: commit it with the map"
                )
        elif _file_digest(published / BUNDLE_MODEL, cache_dir) != digest:
            # Same recipe and versions, other bytes (another machine's export): the map's own wins.
            publish_bundle(folder, REPO_MODELS, replace=True)
            if log:
                log(
                    f"replaced {published.relative_to(REPO)} with this build's int8 model: commit it, and "
                    "rebuild the other maps that use it"
                )
    return {"bundle": folder.name, "sha256": digest}


def publish_bundle(bundle: PathLike, models_dir: PathLike, *, replace: bool = False) -> Path:
    """Copy a bundle folder to `models_dir/<its name>/` unless a whole copy is there already.

    The copy is made in a temporary folder beside it and renamed into place, so a reader never
    sees half a bundle. With `replace`, an existing copy is swapped out for this one.

    Returns:
        The published folder.
    """
    source = Path(bundle)
    target = Path(models_dir) / source.name
    if (target / BUNDLE_MODEL).is_file() and not replace:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{source.name}."))
    try:
        for name in BUNDLE_FILES:
            (scratch / name).write_bytes((source / name).read_bytes())
        scratch.chmod(0o755)  # mkdtemp makes it private; a model is not secret
        if target.exists():  # replace: move the old copy aside first (a folder cannot be replaced whole)
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{source.name}.old."))
            os.replace(target, old / "bundle")
            os.replace(scratch, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(scratch, target)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        if not (target / BUNDLE_MODEL).is_file():  # else another build published it first
            raise
    return target


def _build(model_dir: Path, target: Path, variant: str) -> None:
    """Export the fp32 model to ONNX, fuse BERT operators, quantise, then publish atomically."""
    settings = quantisation_settings(variant)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        fp32 = Path(scratch) / "fp32.onnx"
        fused = Path(scratch) / "fused.onnx"
        int8 = Path(scratch) / "int8.onnx"
        with _quiet():
            versions = _export_fp32(model_dir, fp32)
            _fuse(model_dir, fp32, fused)
            _quantise(fused, int8, settings)
            _shrink_word_embeddings(int8)
            agreement = _check(fp32, int8)
        config = read_json(model_dir / "config.json")
        meta = {
            "label": MODEL_LABEL if _is_packaged(model_dir) else model_dir.name,
            "dimensions": int(config["hidden_size"]),
            "max_seq_length": _max_seq_length(model_dir),
            "pooling": "mean",
            "variant": variant,
            "settings": settings,
            "recipe": RECIPE_VERSION,
            "cpu_vnni": bool(_cpu_flags() & {"avx512_vnni", "avx_vnni"}),
            "machine": platform.machine(),
            "self_check_cosine": agreement,
            **versions,
        }
        (target.parent / BUNDLE_META).write_text(json.dumps(meta, indent=2) + "\n")
        (target.parent / BUNDLE_TOKENIZER).write_bytes((model_dir / "tokenizer.json").read_bytes())
        os.replace(int8, target)  # same folder, so atomic: readers see no model or a whole one


def _export_fp32(model_dir: Path, out: Path) -> dict[str, str]:
    """Export the BERT body (token vectors) to ONNX with dynamic batch and sequence axes."""
    # Local files only: nothing here may reach for the Hugging Face hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import onnxruntime
    import torch
    import transformers
    from torch import Tensor
    from transformers import BertModel

    # Eager attention exports the plain softmax pattern that onnxruntime's BERT fusion
    # recognises; the SDPA export stays unfused (4x the nodes, slower).
    bert = BertModel.from_pretrained(
        str(model_dir), local_files_only=True, add_pooling_layer=False, attn_implementation="eager"
    ).eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self, body: torch.nn.Module) -> None:
            super().__init__()
            self.body = body

        def forward(self, ids: Tensor, mask: Tensor, types: Tensor) -> Tensor:
            out = self.body(input_ids=ids, attention_mask=mask, token_type_ids=types)
            return out.last_hidden_state

    example = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUT_NAMES, "last_hidden_state")}
    with torch.no_grad():
        # The TorchScript exporter needs no extra packages and takes a couple of seconds.
        torch.onnx.export(
            TokenVectors(bert),
            (example, (example > 0).long(), torch.zeros_like(example)),
            str(out),
            input_names=list(INPUT_NAMES),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnxruntime": onnxruntime.__version__,
    }


def _fuse(model_dir: Path, source: Path, out: Path) -> None:
    """Fuse attention, GELU and layer norms into onnxruntime's BERT kernels."""
    from onnxruntime.transformers.optimizer import optimize_model

    config = read_json(model_dir / "config.json")
    # opt_level 0: only the Python fusions; the session applies onnxruntime's own at load time.
    fused = optimize_model(
        str(source),
        model_type="bert",
        num_heads=int(config["num_attention_heads"]),
        hidden_size=int(config["hidden_size"]),
        opt_level=0,
    )
    fused.save_model_to_file(str(out))


def _quantise(source: Path, out: Path, settings: dict[str, Any]) -> None:
    """Quantise the weights to int8; activations are quantised on the fly."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(out),
        weight_type=getattr(QuantType, settings["weight_type"]),
        per_channel=settings["per_channel"],
        reduce_range=settings["reduce_range"],
        op_types_to_quantize=settings["op_types"],
        # Shape inference cannot type the outputs of the fused (com.microsoft) ops: all float.
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def _shrink_word_embeddings(path: Path) -> None:
    """Store the word-embedding table (30,522 x 384) as int8 rows with one fp32 scale each.

    In fp32 the table alone is 47 MB of the model's 58; in int8 the whole model is about 23 MB,
    small enough to commit for hosting. A Cast and a Mul rebuild the fp32 table, and onnxruntime
    folds them into a constant when it loads the model, so encoding runs as fast as before.
    Symmetric per-row scales keep each word's vector to within half a step of 1/127 of its
    largest value (measured agreement with sentence-transformers fp32 on 200 abstracts: the
    same as with the fp32 table, mean cosine 0.9937).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    node = next(n for n in model.graph.node if n.op_type == "EmbedLayerNormalization")
    name = node.input[2]  # EmbedLayerNormalization(input_ids, segment_ids, word_embedding, ...)
    initializer = next(i for i in model.graph.initializer if i.name == name)
    table = numpy_helper.to_array(initializer).astype(np.float32)
    scale = np.abs(table).max(axis=1, keepdims=True) / 127
    scale[scale == 0] = 1.0
    quantised = np.clip(np.rint(table / scale), -127, 127).astype(np.int8)
    model.graph.initializer.remove(initializer)
    model.graph.initializer.extend(
        [numpy_helper.from_array(quantised, f"{name}_int8"), numpy_helper.from_array(scale, f"{name}_scale")]
    )
    at = list(model.graph.node).index(node)
    model.graph.node.insert(at, helper.make_node("Mul", [f"{name}_float", f"{name}_scale"], [name]))
    model.graph.node.insert(
        at, helper.make_node("Cast", [f"{name}_int8"], [f"{name}_float"], to=TensorProto.FLOAT)
    )
    onnx.save(model, str(path))


def _check(fp32: Path, int8: Path) -> float:
    """Refuse to publish a model whose vectors stray from the fp32 export.

    Returns:
        Cosine between the two mean-pooled vectors of a fixed sentence.

    Raises:
        RuntimeError: If the cosine is below 0.95, a sign of a broken export.
    """
    import onnxruntime as ort

    ids = np.array([[101, 2057, 16755, 1037, 3722, 2944, 2005, 2312, 4435, 6630, 1012, 102]])
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
    vectors = []
    for path in (fp32, int8):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        vector = session.run(None, {k: v for k, v in feed.items() if k in names})[0][0].mean(0)
        vectors.append(vector / np.linalg.norm(vector))
    cosine = float(vectors[0] @ vectors[1])
    if not cosine >= 0.95:
        raise RuntimeError(f"int8 ONNX export disagrees with fp32 (cosine {cosine:.3f})")
    return round(cosine, 5)


def _cache_key(model_dir: Path, root: Path, variant: str) -> str:
    """Folder name covering the model files, the onnxruntime version and the variant."""
    import onnxruntime

    digest = hashlib.sha256(f"recipe {RECIPE_VERSION} variant {variant}".encode())
    digest.update(json.dumps(quantisation_settings(variant), sort_keys=True).encode())
    for name in KEY_FILES:
        path = model_dir / name
        if path.exists():
            digest.update(f"\0{name}\0{_file_digest(path, root)}".encode())
    return f"{variant}-ort{onnxruntime.__version__}-{digest.hexdigest()[:16]}"


def _file_digest(path: Path, root: Path) -> str:
    """SHA-256 of a file, remembered by path, size and mtime so warm starts skip re-reading it.

    Hashing the 90 MB weights takes about 0.3 s; the memo keeps a second construction fast.
    """
    stat = path.stat()
    if stat.st_size < 1 << 20:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    memo_file = root / "onnx" / "file-digests.json"
    stamp = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    try:
        memo = json.loads(memo_file.read_text())
    except (OSError, ValueError):
        memo = {}
    if stamp in memo:
        return memo[stamp]
    with path.open("rb") as handle:
        memo[stamp] = hashlib.file_digest(handle, "sha256").hexdigest()
    with contextlib.suppress(OSError):  # a read-only cache only costs the re-hash next time
        memo_file.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(memo_file, json.dumps(memo, indent=1, sort_keys=True))
    return memo[stamp]


def _write_atomic(path: Path, text: str) -> None:
    """Write a text file through a temporary file in the same folder and `os.replace`."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; the cache is not secret
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder (POSIX); elsewhere, builds may just race safely."""
    try:
        import fcntl
    except ImportError:  # Windows: two builds both finish with an atomic replace
        yield
        return
    with (folder / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Hide the exporters' warnings and advice, which are meant for their own developers."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # onnxruntime.quantization logs through the root logger
    transformers_logging = None
    with contextlib.suppress(ImportError):
        from transformers.utils import logging as transformers_logging
    if transformers_logging:
        verbosity = transformers_logging.get_verbosity()
        bars = transformers_logging.is_progress_bar_enabled()
        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)
        if transformers_logging:
            transformers_logging.set_verbosity(verbosity)
            if bars:
                transformers_logging.enable_progress_bar()


def _cpu_flags() -> set[str]:
    """CPU feature flags from /proc/cpuinfo (empty where it does not exist)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((row for row in text.splitlines() if row.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def _cache_root(cache_dir: PathLike | None) -> Path:
    """The cache root: the argument, else `ATLAS_CACHE_DIR`, else `~/.cache/abstract-atlas`."""
    if cache_dir:
        return Path(cache_dir)
    return Path(os.environ.get("ATLAS_CACHE_DIR") or Path.home() / ".cache" / "abstract-atlas")


def _is_packaged(model_dir: Path) -> bool:
    """Whether `model_dir` is the packaged all-MiniLM-L6-v2 (which names the encoder)."""
    try:
        return model_dir.resolve() == packaged_model_path().resolve()
    except ImportError:  # a custom model on a machine without the package
        return False


def _max_seq_length(model_dir: Path) -> int:
    """The model's `max_seq_length` (256 for all-MiniLM-L6-v2)."""
    path = model_dir / "sentence_bert_config.json"
    return int(read_json(path).get("max_seq_length", 256)) if path.exists() else 256


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())
