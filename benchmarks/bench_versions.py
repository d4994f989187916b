"""A cold build of the same abstracts by an earlier commit of this repository and by this checkout, side by side.

    python benchmarks/bench_versions.py --ref 72341db [--papers 1000] [--runs 2]

"Cold" is a machine that has built before: the int8 model is prepared and each version's Numba
kernels are compiled (an untimed first build per version), but none of these abstracts is embedded
and no UMAP result is cached (every timed build gets an empty embedding and reduction cache). The two
versions alternate; the earlier one runs from a `git worktree` of `--ref` with the same virtualenv.
Writes benchmarks/VERSIONS_RESULTS.md.
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
RESULTS = ROOT / "benchmarks" / "VERSIONS_RESULTS.md"


def build(checkout: Path, inputs: Path, out: Path, cache: Path, numba: Path) -> tuple[float, dict]:
    env = dict(os.environ, ATLAS_CACHE_DIR=str(cache), NUMBA_CACHE_DIR=str(numba))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pipeline", "build", str(inputs), "--out", str(out), "--quiet"],
        check=True,
        env=env,
        cwd=checkout,
        capture_output=True,
    )
    seconds = time.perf_counter() - started
    manifest = json.loads((out / "manifest.json").read_text())
    return seconds, manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", required=True)
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    import pandas as pd

    work = Path(tempfile.mkdtemp(prefix="bench-versions-"))
    earlier = work / "earlier"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(earlier), args.ref],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    inputs = work / "papers.csv"
    pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet").head(args.papers).to_csv(
        inputs, index=False
    )
    versions = {f"{args.ref} (before)": earlier, "this checkout": ROOT}
    models = work / "onnx"
    try:
        for name, checkout in versions.items():  # untimed: prepares the model once, compiles the kernels
            cache = work / f"warmup-{len(name)}"
            build(checkout, inputs, work / f"warm-map-{len(name)}", cache, work / f"numba-{len(name)}")
            if (cache / "onnx").exists() and not models.exists():
                shutil.copytree(cache / "onnx", models)
        rows: dict[str, list[tuple[float, dict]]] = {name: [] for name in versions}
        for run in range(args.runs):
            for name, checkout in versions.items():
                cache = work / f"run-{run}-{len(name)}"
                cache.mkdir()
                shutil.copytree(models, cache / "onnx")
                rows[name].append(
                    build(
                        checkout, inputs, work / f"map-{run}-{len(name)}", cache, work / f"numba-{len(name)}"
                    )
                )
                print(name, run, round(rows[name][-1][0], 1), flush=True)
        lines = [
            f"# A cold build, before and after (`python benchmarks/bench_versions.py --ref {args.ref} --papers {args.papers} --runs {args.runs}`)",
            "",
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.papers:,} abstracts (benchmarks/data/sample_2000.parquet), "
            f"{args.runs} runs a version, alternated, one machine; load average {os.getloadavg()[0]:.1f} at the end. "
            "Model prepared and Numba kernels compiled; no abstract embedded, no UMAP cached.",
            "",
            "| version | whole build, median s | embed | topics | stability | themes | layout | topics / themes / unassigned |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, results in rows.items():
            seconds = statistics.median(r[0] for r in results)
            manifest = results[0][1]
            stages = [
                statistics.median(r[1]["timings_seconds"].get(s, 0.0) for r in results)
                for s in ("embed", "topics", "stability", "themes", "layout")
            ]
            lines.append(
                f"| {name} | {seconds:.1f} | "
                + " | ".join(f"{v:.1f}" for v in stages)
                + f" | {manifest['topics']} / {manifest.get('themes')} / {manifest['unassigned']} |"
            )
        before, after = (statistics.median(r[0] for r in results) for results in rows.values())
        lines += ["", f"This checkout takes {after / before - 1:+.0%} of the earlier commit's time.", ""]
        RESULTS.write_text("\n".join(lines), encoding="utf-8")
        print("\n".join(lines))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(earlier)], cwd=ROOT, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
