"""The map's own encoder in the app: its int8 ONNX bundle on ONNX Runtime, never torch.

A map records the bundle its vectors came from (`Manifest.model.bundle` and `.sha256`,
written by `python -m pipeline build`). The app runs that very file, so a pasted abstract gets the
vector the build would have given it. Bundles are looked up by name in `ATLAS_MODELS_DIR`, the
repository's `assets/models/` (committed for hosting) and this machine's model cache.

`encode_queries` is the one way the app turns text into vectors: placement and search by meaning
both call it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import streamlit as st

from pipeline.embedding.model import BUNDLE_MODEL  # light: no model code is imported here
from pipeline.mapfolder.manifest import Manifest

REPO = Path(__file__).resolve().parent.parent
MODELS_ROOT = REPO / "assets" / "models"


class EncoderUnavailable(Exception):
    """The map's model cannot be run here; the message says why, for the page."""


def model_roots(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Where bundles are looked for, in order: `ATLAS_MODELS_DIR`, `assets/models/`, the model cache."""
    cache = Path(environ.get("ATLAS_CACHE_DIR") or Path.home() / ".cache" / "abstract-atlas")
    roots = [Path(environ["ATLAS_MODELS_DIR"])] if environ.get("ATLAS_MODELS_DIR") else []
    return [*roots, MODELS_ROOT, cache / "onnx"]


def bundle_folder(manifest: Manifest, environ: Mapping[str, str] = os.environ) -> Path:
    """The folder of the bundle a map was built with.

    Raises:
        EncoderUnavailable: If the map records no bundle, or none of `model_roots` holds it.
    """
    key = manifest.model.bundle
    if not key:
        raise EncoderUnavailable(
            "This map does not record an int8 model (it is older, or was built with another embedder): "
            "rebuild it with `python -m pipeline build` to place abstracts on it."
        )
    for root in model_roots(environ):
        if (root / key / BUNDLE_MODEL).is_file():
            return root / key
    raise EncoderUnavailable(
        f"The map's model `{key}` is missing: commit the folder assets/models/{key} that "
        "`python -m pipeline build` wrote beside the map."
    )


@st.cache_resource(show_spinner=False, max_entries=2)
def load_encoder_once(folder: str, max_tokens: int, sha256: str | None):
    """The bundle's encoder with the map's token budget, loaded on first use and then shared.

    Raises:
        EncoderUnavailable: If the model file is not the one the map was built with.
    """
    from pipeline.embedding.onnx_encoder import OnnxEncoder

    model = Path(folder) / BUNDLE_MODEL
    if sha256:
        with model.open("rb") as handle:
            if hashlib.file_digest(handle, "sha256").hexdigest() != sha256:
                raise EncoderUnavailable(
                    f"{Path(folder).name}/{BUNDLE_MODEL} is not the model this map was built with; rebuild the map."
                )
    # One query at a time: no worker threads (a hosted app may have a fraction of one CPU).
    return OnnxEncoder(bundle=folder, max_tokens=max_tokens, threads=1)


def map_encoder(manifest: Manifest):
    """The encoder (`.name`, `.encode(list[str])`) that gives a map's own vectors."""
    return load_encoder_once(str(bundle_folder(manifest)), manifest.max_tokens, manifest.model.sha256)


def encode_queries(manifest: Manifest, texts: list[str]) -> np.ndarray:
    """Unit float32 vectors of `texts` in the map's space, row i = texts[i].

    Raises:
        EncoderUnavailable: If the map's model cannot be run here (see `bundle_folder`).
    """
    return np.asarray(map_encoder(manifest).encode(list(texts)), dtype=np.float32)
