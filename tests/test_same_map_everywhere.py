"""The same inputs give the same map on every machine: AVX2 and AVX-512 VNNI builds of the seeds agree.

The reference (`tests/fixtures/seed_reference.json`) was written from a fresh build on one CPU kind
(`python -m tests.seed_reference write` after `make map`); CI runs on either kind, so a machine of
the other kind checks it on every run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import pipeline
from tests.seed_reference import REFERENCE, ROOT, SEED_MAP, differences, reference_of


def test_numeric_libraries_run_the_same_code_on_every_cpu_kind():
    target = pipeline.numeric_target()
    assert target["same_on_every_cpu"], target
    # A fresh process that imports the pipeline first gets the same (what `python -m pipeline` does).
    code = "import pipeline, json; print(json.dumps(pipeline.numeric_target()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout)["same_on_every_cpu"], out.stdout


def test_numpy_loaded_first_is_reported_not_hidden():
    code = "import numpy, pipeline, json; print(json.dumps(pipeline.numeric_target()))"
    env = {k: v for k, v in __import__("os").environ.items() if k not in pipeline.SAME_ON_EVERY_CPU}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    )
    target = json.loads(out.stdout)
    # NumPy picked its kernels before the pipeline spoke: OpenBLAS is then the host's own choice.
    assert target["openblas"], target
    if target["openblas"] != ["Haswell"] or target["numpy_simd"] not in ("X86_V3", "X86_V2"):
        assert not target["same_on_every_cpu"], target


@pytest.mark.slow
def test_a_rebuild_of_the_seeds_gives_the_committed_map_on_every_machine(tmp_path):
    """`make map` on a fresh clone: the seeds rebuilt afresh (--no-previous) into the committed map's
    folder give that very map, whatever the CPU kind: the build starts from the vectors the map stores
    and every later step runs the same code everywhere."""
    folder = tmp_path / "seeds-map"
    shutil.copytree(SEED_MAP, folder)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "build",
            "seeds",
            "--out",
            str(folder),
            "--no-previous",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "57 of them are the vectors the map being rebuilt stores" in result.stderr
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert differences(expected, reference_of(folder)) == []
    assert differences(reference_of(SEED_MAP), reference_of(folder)) == []  # the committed map itself
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["numeric"]["same_on_every_cpu"], manifest["numeric"]


@pytest.mark.slow
def test_a_build_from_the_text_alone_is_the_reference_map_where_the_encoder_agrees(seed_map):
    """A build with no map to start from embeds every abstract. The int8 encoder's last bits differ
    between CPU kinds (dynamic quantisation rounds activations, so a 1e-7 difference can move one by
    a step): the vectors always agree to cosine 0.99, and where they are the same so is the whole map."""
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))
    actual = reference_of(seed_map)
    mine = np.load(seed_map / "embeddings.npy").astype(np.float32)
    ours = np.load(SEED_MAP / "embeddings.npy").astype(np.float32)
    order = pd.read_parquet(seed_map / "papers.parquet")["doc_id"].tolist()
    theirs = pd.read_parquet(SEED_MAP / "papers.parquet")["doc_id"].tolist()
    cosines = (mine * ours[[theirs.index(d) for d in order]]).sum(axis=1)
    assert cosines.min() > 0.99, cosines.min()
    if actual["vectors_sha256"] != expected["vectors_sha256"]:
        pytest.skip(f"this CPU kind's int8 kernels give other last bits (lowest cosine {cosines.min():.4f})")
    assert differences(expected, actual) == []


def test_the_committed_seed_map_matches_its_reference_and_was_built_fresh():
    """The committed seed map and its reference are written together (`make map`, then `python -m
    tests.seed_reference write`): neither is updated without the other, and the map's manifest says it
    is a fresh build, not a rebuild. That a fresh build gives this map is the slow
    `test_a_rebuild_of_the_seeds_gives_the_committed_map_on_every_machine`'s to check."""
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert differences(expected, reference_of(SEED_MAP)) == []
    manifest = json.loads((SEED_MAP / "manifest.json").read_text())
    assert manifest["lineage"]["previous"] is None, (
        "the committed seed map must be a fresh build, not a rebuild"
    )
