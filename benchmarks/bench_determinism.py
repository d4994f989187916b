"""What the CPU-independent numeric code paths cost: builds with them and with each library's own pick.

    python benchmarks/bench_determinism.py [--papers 1000] [--runs 2]

The pipeline pins NumPy's loops (AVX2), OpenBLAS's kernels (Haswell) and Numba's target (generic
x86-64) so that AVX2 and AVX-512 machines build the same map (pipeline/__init__.py). This builds the
same papers (the first N of benchmarks/data/sample_2000.parquet) alternately with the pins and with
the host's own choice (`NUMBA_CPU_NAME=host`, no OpenBLAS or NumPy override), in one run, and
reports each stage's seconds from the manifests. What is warm: the embeddings (a cache filled
before the first run, so both settings embed nothing) and Numba's compiled kernels (a first
untimed build per setting compiles them); what is cold: every UMAP, KMeans, HDBSCAN and layout
(each run has its own reduction cache). Writes benchmarks/DETERMINISM_RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "DETERMINISM_RESULTS.md"
SETTINGS = {
    "same on every CPU (default)": {},
    "host's own pick": {"NUMBA_CPU_NAME": "host", "OPENBLAS_CORETYPE": "", "NPY_DISABLE_CPU_FEATURES": ""},
}
STAGES = ("topics", "stability", "themes", "layout", "total")


def build(inputs: Path, out: Path, cache: Path, extra: dict) -> dict:
    env = dict(os.environ, ATLAS_CACHE_DIR=str(cache), NUMBA_CACHE_DIR=str(cache / f"numba-{len(extra)}"))
    for name, value in extra.items():
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    if (
        "OPENBLAS_CORETYPE" in extra
    ):  # a variable set empty would still be "set" for the pipeline's setdefault
        env["OPENBLAS_CORETYPE"] = subprocess.run(
            [
                sys.executable,
                "-c",
                "import threadpoolctl, numpy; print(threadpoolctl.threadpool_info()[0]['architecture'])",
            ],
            capture_output=True,
            text=True,
            env={k: v for k, v in env.items() if k != "OPENBLAS_CORETYPE"},
        ).stdout.strip()
        env["NPY_DISABLE_CPU_FEATURES"] = "AVX512_SPR"  # nothing this kind of machine has: NumPy's own pick
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "build",
            str(inputs),
            "--out",
            str(out),
            "--quiet",
            "--no-previous",
        ],
        check=True,
        env=env,
        cwd=ROOT,
        capture_output=True,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    timings = manifest["timings_seconds"]
    return {"numeric": manifest["numeric"], **{s: float(timings.get(s, 0.0)) for s in STAGES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    import pandas as pd

    work = Path(tempfile.mkdtemp(prefix="bench-determinism-"))
    inputs = work / "papers.csv"
    pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet").head(args.papers).to_csv(
        inputs, index=False
    )
    warm = work / "warm-cache"
    build(inputs, work / "warm-map", warm, {})  # fills the embedding cache (and prepares the model)
    results: dict[str, list[dict]] = {name: [] for name in SETTINGS}
    for extra in SETTINGS.values():  # untimed: Numba compiles this setting's kernels once
        cache = work / f"compile-{len(extra)}"
        shutil.copytree(warm, cache)
        build(inputs, work / "compile-map", cache, extra)
        shutil.copytree(cache / f"numba-{len(extra)}", warm / f"numba-{len(extra)}", dirs_exist_ok=True)
    for run in range(args.runs):
        for name, extra in SETTINGS.items():
            cache = work / f"run-{run}-{len(extra)}"
            cache.mkdir()
            shutil.copy(warm / "embeddings.sqlite", cache / "embeddings.sqlite")
            for sub in ("onnx", f"numba-{len(extra)}"):
                if (warm / sub).exists():
                    shutil.copytree(warm / sub, cache / sub)
            results[name].append(build(inputs, work / f"map-{run}-{len(extra)}", cache, extra))
            print(name, run, results[name][-1], flush=True)
    lines = [
        f"# The cost of the same map on every CPU kind (`python benchmarks/bench_determinism.py --papers {args.papers} --runs {args.runs}`)",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.papers:,} papers, {args.runs} runs a setting, alternated; "
        "embeddings and Numba's kernels warm, every reduction and clustering cold (see the script's docstring). "
        "Median seconds per stage from the manifests.",
        "",
        "| setting | numeric code | " + " | ".join(STAGES) + " |",
        "|---|---|" + "---|" * len(STAGES),
    ]
    for name, runs in results.items():
        numeric = runs[0]["numeric"]
        code = f"Numba {numeric['numba_cpu']}, OpenBLAS {'/'.join(numeric['openblas'])}, NumPy {numeric['numpy_simd']}"
        lines.append(
            f"| {name} | {code} | "
            + " | ".join(f"{statistics.median(r[s] for r in runs):.1f}" for s in STAGES)
            + " |"
        )
    base = statistics.median(r["total"] for r in results["host's own pick"])
    pinned = statistics.median(r["total"] for r in results["same on every CPU (default)"])
    lines += [
        "",
        f"Whole build (embeddings warm): {pinned:.1f} s pinned against {base:.1f} s, {pinned / base - 1:+.0%}.",
        "",
    ]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
