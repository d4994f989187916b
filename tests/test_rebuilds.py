"""Rebuilds that keep what still holds: settings carried, old papers stay put, `--refit` for a clean
slate, and the neighbouring min-topic-size counts reported in the manifest."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from pipeline.artifacts import read_map
from pipeline.build import build_map
from pipeline.config import BuildConfig
from tests.helpers import ROOT, SEEDS, quiet

EXTRA = ROOT / "tests" / "fixtures" / "extra_abstracts.csv"


def moved(before, after) -> np.ndarray:
    """Displacement of each old paper as a share of the old map's bounding-box diagonal."""
    old = before.papers.set_index("doc_id")[["x", "y"]]
    new = after.papers.set_index("doc_id").loc[old.index, ["x", "y"]]
    extent = np.linalg.norm(old.max().to_numpy() - old.min().to_numpy())
    return np.linalg.norm(new.to_numpy() - old.to_numpy(), axis=1) / extent


@pytest.fixture(scope="module")
def rebuilds(seed_map, tmp_path_factory):
    """The seeds plus four abstracts, rebuilt on the seed map by default and with --refit."""
    folder = tmp_path_factory.mktemp("rebuilds")
    config = BuildConfig(min_topic_size=None, stability=False)
    carried = build_map(
        [SEEDS, EXTRA], folder / "carried", config, previous=seed_map, progress=False, log=quiet
    )
    refitted = build_map(
        [SEEDS, EXTRA], folder / "refit", config, previous=seed_map, refit=True, progress=False, log=quiet
    )
    return read_map(seed_map), carried, refitted


def test_a_rebuild_carries_the_previous_settings_and_refit_does_not(rebuilds):
    before, carried, refitted = rebuilds
    assert carried.manifest["lineage"]["refit"] is False
    settings = carried.manifest["lineage"]["carried_settings"]
    assert settings["min_topic_size"] == before.manifest["config"]["min_topic_size"]
    assert carried.manifest["config"]["min_topic_size"] == before.manifest["config"]["min_topic_size"]
    assert refitted.manifest["lineage"] == {
        **refitted.manifest["lineage"],
        "refit": True,
        "carried_settings": {},
    }


def test_old_papers_stay_put_on_a_rebuild_and_move_on_a_refit(rebuilds):
    before, carried, refitted = rebuilds
    kept = moved(before, carried)
    assert np.median(kept) < 0.08
    assert np.median(kept) < np.median(moved(before, refitted)) / 2
    # old papers keep their topic ids at least as well as a fresh fit does
    old = before.papers.set_index("doc_id")["topic_id"]

    def same(after) -> float:
        return float((after.papers.set_index("doc_id").loc[old.index, "topic_id"] == old).mean())

    assert same(carried) >= max(0.8, same(refitted))


def test_the_manifest_reports_topic_counts_at_neighbouring_min_topic_sizes(rebuilds):
    _, _, fresh = rebuilds
    counts = fresh.manifest["quality"]["topics_at_nearby_min_topic_size"]
    chosen = fresh.manifest["config"]["min_topic_size"]
    assert str(chosen) in counts and len(counts) >= 3
    assert counts[str(chosen)] == fresh.manifest["topics"]  # a fresh fit's topics are HDBSCAN's clusters
    assert all(int(size) >= 2 and count >= 1 for size, count in counts.items())


def test_refit_is_a_documented_build_option(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "build", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert "--refit" in result.stdout and "afresh" in result.stdout


def test_a_rebuild_into_the_same_folder_uses_the_map_there(seed_map, tmp_path):
    out = tmp_path / "map"
    shutil.copytree(seed_map, out)
    before = read_map(out)
    after = build_map([SEEDS], out, progress=False, log=quiet)
    assert after.manifest["lineage"]["refit"] is False
    assert after.papers["topic_id"].tolist() == before.papers["topic_id"].tolist()
    assert np.median(moved(before, read_map(out))) < 0.08


def test_old_papers_outside_a_fit_sample_keep_their_previous_topic_where_the_sample_found_it():
    from pipeline.sample_fit import assign_rest

    # Two directions; papers 0-3 are the sample. Paper 4 (old, previously topic 7) points between
    # the two topics but leans towards topic 1's direction: a vote alone would put it in topic 1.
    vectors = np.array([[1, 0], [1, 0.05], [0, 1], [0.05, 1], [0.6, 0.8], [0.1, 1]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = np.array([0, 1, 2, 3])
    sample_labels = np.array([0, 0, 1, 1])
    targets = np.array([7, 7, 9, 9, 7, -1])  # paper 5 is new
    voted = assign_rest(vectors, rows, sample_labels, k=2)
    kept = assign_rest(vectors, rows, sample_labels, k=2, targets=targets)
    assert voted[4] == 1 and kept[4] == 0  # topic 0 is topic 7 again, so the old paper stays with it
    assert kept[5] == voted[5] == 1  # a new paper is voted in as always
