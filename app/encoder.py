"""The map's own encoder in the app: its int8 ONNX bundle on ONNX Runtime, never torch.

A map records the bundle its vectors came from (`Manifest.model.bundle` and `.sha256`,
written by `python -m pipeline build`). The app runs that very file, so a pasted abstract gets the
vector the build would have given it. Bundles are looked up by name in `ATLAS_MODELS_DIR`, the
repository's `assets/models/` (committed for hosting) and this machine's model cache.

`encode_queries` is the one way the app turns text into vectors: placement and search by meaning
both call it. Loading a bundle takes about a second (ONNX Runtime's import and session), so the page
starts it in the background once it has been drawn (`warm`): the first search does not wait for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Mapping
from pathlib import Path

import numpy as np

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


_LOADED: dict[tuple[str, int, str | None], object] = {}  # the bundles loaded, oldest first (two kept)
_LOADING = threading.Lock()  # one load at a time: a search waits for the warm-up's load, not a second one
_WARMED: set[tuple[str, int, str | None]] = set()


def load_encoder_once(folder: str, max_tokens: int, sha256: str | None):
    """The bundle's encoder with the map's token budget, loaded on first use and then shared by every
    session of this server (the last two bundles are kept).

    Raises:
        EncoderUnavailable: If the model file is not the one the map was built with (nothing is kept).
    """
    key = (folder, max_tokens, sha256)
    with _LOADING:
        if key not in _LOADED:
            from pipeline.embedding.onnx_encoder import OnnxEncoder

            model = Path(folder) / BUNDLE_MODEL
            if sha256:
                with model.open("rb") as handle:
                    if hashlib.file_digest(handle, "sha256").hexdigest() != sha256:
                        raise EncoderUnavailable(
                            f"{Path(folder).name}/{BUNDLE_MODEL} is not the model this map was built with; "
                            "rebuild the map."
                        )
            # One query at a time: no worker threads (a hosted app may have a fraction of one CPU).
            _LOADED[key] = OnnxEncoder(bundle=folder, max_tokens=max_tokens, threads=1)
            while len(_LOADED) > 2:
                del _LOADED[next(iter(_LOADED))]
        return _LOADED[key]


def warm(manifest: Manifest) -> threading.Thread | None:
    """Load the map's encoder in a background thread, once per bundle, so that the page's first search
    by meaning (or placement) does not wait for it; the thread, or None when there is nothing to load
    (the map records no bundle or it is missing: the search says so when asked) or it was started before.
    A load that fails here is not kept: the search that asks next raises its error to the page."""
    try:
        key = _encoder_key(manifest)
    except EncoderUnavailable:
        return None
    if key in _WARMED or key in _LOADED:  # (not under the lock: a load under way would hold the page)
        return None
    _WARMED.add(key)

    def load() -> None:
        with contextlib.suppress(Exception):  # said by the search that needs it, on the page
            load_encoder_once(*key)

    thread = threading.Thread(target=load, name="atlas-encoder-warm", daemon=True)
    thread.start()
    return thread


def _encoder_key(manifest: Manifest) -> tuple[str, int, str | None]:
    """`load_encoder_once`'s arguments for a map: its bundle's folder, token budget and checksum."""
    return str(bundle_folder(manifest)), manifest.max_tokens, manifest.model.sha256


def map_encoder(manifest: Manifest):
    """The encoder (`.name`, `.encode(list[str])`) that gives a map's own vectors."""
    return load_encoder_once(*_encoder_key(manifest))


def encode_queries(manifest: Manifest, texts: list[str]) -> np.ndarray:
    """Unit float32 vectors of `texts` in the map's space, row i = texts[i].

    Raises:
        EncoderUnavailable: If the map's model cannot be run here (see `bundle_folder`).
    """
    return np.asarray(map_encoder(manifest).encode(list(texts)), dtype=np.float32)
