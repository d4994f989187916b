"""Shared fixtures: the real seed corpus, and one real seed map built once per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"


@pytest.fixture(scope="session")
def seed_map(tmp_path_factory) -> Path:
    """A map of the real seeds, built with the real packaged model (shared by end-to-end tests)."""
    from pipeline.build import build_map

    out = tmp_path_factory.mktemp("maps") / "seeds"
    build_map([SEEDS], out, progress=False, log=lambda message: None)
    return out


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    """A private copy of the seed folder a test may add files to."""
    target = tmp_path / "seeds"
    shutil.copytree(SEEDS, target)
    return target
