"""The same inputs give the same map on every machine: AVX2 and AVX-512 VNNI builds of the seeds agree.

The reference (`tests/fixtures/seed_reference.json`) was written from a fresh build on one CPU kind;
CI runs on either kind, so a machine of the other kind checks it on every run.
"""

from __future__ import annotations

import json
import subprocess
import sys

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
def test_a_fresh_seed_build_is_the_reference_map(seed_map):
    manifest = json.loads((seed_map / "manifest.json").read_text())
    assert manifest["numeric"]["same_on_every_cpu"], manifest["numeric"]
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert differences(expected, reference_of(seed_map)) == []


def test_the_committed_seed_map_is_what_a_fresh_build_gives():
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert differences(expected, reference_of(SEED_MAP)) == []
    manifest = json.loads((SEED_MAP / "manifest.json").read_text())
    assert manifest["lineage"]["previous"] is None, (
        "the committed seed map must be a fresh build, not a rebuild"
    )
