"""Shared fixtures: a private cache and home for every test, the real seed corpus, one real seed map."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import pipeline  # noqa: F401  (first: it picks the numeric code paths NumPy and Numba load with)

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
# The exported ONNX model and Numba's compiled kernels take a minute to make; tests share them
# across sessions in a folder of the system's temporary directory (never the user's own cache).
TEST_CACHE = Path(tempfile.gettempdir()) / f"abstract-atlas-test-cache-{os.getuid()}"


@pytest.fixture(scope="session", autouse=True)
def hermetic_environment(tmp_path_factory):
    """Point the cache and HOME at temporary folders, for this process and every subprocess it starts."""
    home = tmp_path_factory.mktemp("home")
    saved = {name: os.environ.get(name) for name in ("ATLAS_CACHE_DIR", "HOME", "NUMBA_CACHE_DIR")}
    TEST_CACHE.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        ATLAS_CACHE_DIR=str(TEST_CACHE), HOME=str(home), NUMBA_CACHE_DIR=str(TEST_CACHE / "numba")
    )
    yield home
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def seed_map(tmp_path_factory) -> Path:
    """A map of the real seeds, built with the real packaged model (shared by end-to-end tests)."""
    from pipeline.commands.build import build_map

    out = tmp_path_factory.mktemp("maps") / "seeds"
    build_map([SEEDS], out, progress=False, log=lambda message: None)
    return out


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    """A private copy of the seed folder a test may add files to."""
    target = tmp_path / "seeds"
    shutil.copytree(SEEDS, target)
    return target


@pytest.fixture(autouse=True)
def fresh_encoder_cache():
    """AppTests run in this process and share Streamlit's caches: a fake encoder one test puts in
    `load_encoder_once` must not answer another test's placement."""
    yield
    from app.encoder import load_encoder_once

    load_encoder_once.clear()
