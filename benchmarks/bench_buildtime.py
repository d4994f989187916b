"""Where a build's time goes: each run's stage table (the manifest's `timings_seconds`), wall
seconds and peak memory, with the machine's load beside each figure.

    python benchmarks/bench_buildtime.py --dataset corpus-5000 --runs cold,warm
    python benchmarks/bench_buildtime.py --dataset corpus-full --runs first-ever,warm --cache DIR

Runs, each a `python -m pipeline build` child under /usr/bin/time -v, into a new folder each time (no
previous map: nothing is kept from one run to the next but the cache):

- **first-ever**: the cache folder (`ATLAS_CACHE_DIR`, and Numba's cache inside it) empty: the int8
  ONNX export, the JIT compilation, every embedding and every abstract's text read once are included;
- **vectors-only**: the cache folder holds every embedding (`embeddings.sqlite`) and nothing else: a
  first-ever build but for its embedding (JIT compilation and every abstract's text read included);
- **cold**: the machine's ONNX model and JIT cache present, these abstracts never embedded nor read;
- **warm**: the same abstracts again, into a new folder: every embedding and every abstract's
  `PaperText` come from the cache (and the UMAP results, for the same vectors and settings).

`--cache DIR` keeps the cache folder (default: a new temporary one); runs go in the order given.
Results go to benchmarks/results/buildtime-<dataset>.json, and benchmarks/BUILDTIME_RESULTS.md is
rewritten from every such file. The corpus datasets need the shared corpus (see bench_pipeline.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pipeline import CORPUS, RESULTS, SAMPLE_SEED, machine, timed  # noqa: E402

DATASETS = ("corpus-5000", "corpus-full")
RUNS = ("first-ever", "vectors-only", "cold", "warm")
# Stages that name: reading the texts and counting their phrases, topic names, themes (grouped and
# named), topic names told apart within their themes.
NAMING = ("phrases", "topic names", "themes", "sibling names")


def corpus_documents(name: str):
    """The distinct abstracts of the shared corpus, or a seeded sample of them."""
    import pandas as pd

    if not CORPUS.exists():
        sys.exit(f"error: {CORPUS} is not here (it is not part of a clone); set ATLAS_CORPUS")
    corpus = pd.read_parquet(CORPUS, columns=["title", "abstract", "venue", "year", "field"])
    corpus = corpus.drop_duplicates("abstract").reset_index(drop=True)
    if name == "corpus-full":
        return corpus
    return corpus.sample(n=int(name.removeprefix("corpus-")), random_state=SAMPLE_SEED).reset_index(drop=True)


def load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def build(docs_file: Path, out: Path, cache: Path, name: str) -> dict:
    """One build in a child process: wall seconds, peak memory, its stage table, the loads around it."""
    env = dict(os.environ, ATLAS_CACHE_DIR=str(cache), NUMBA_CACHE_DIR=str(cache / "numba"))
    command = [sys.executable, "-m", "pipeline", "build", str(docs_file), "--out", str(out), "--quiet"]
    before = load()
    run = timed([*command, "--name", f"Benchmark: {name}"], env)  # with its CPU seconds
    manifest = json.loads((out / "manifest.json").read_text())
    stages = manifest["timings_seconds"]
    return {
        **run,
        "load_before": before,
        "load_after": load(),
        "stages": stages,
        "embedding": manifest["embedding"],
        "naming_seconds": round(sum(stages.get(s, 0.0) for s in NAMING), 2),
        "all_but_embedding_seconds": round(run["seconds"] - stages.get("embed", 0.0), 2),
    }


def bench(name: str, runs: list[str], cache: Path | None) -> dict:
    docs = corpus_documents(name)
    work = Path(tempfile.mkdtemp(prefix=f"buildtime-{name}-"))
    try:
        docs_file = work / "docs.parquet"
        docs.to_parquet(docs_file, index=False)
        result = {
            "dataset": name,
            "papers": len(docs),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        result["machine"] = machine()
        result["runs"] = {}
        if cache is None:
            cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
        for number, kind in enumerate(runs):
            if kind == "first-ever" and any(cache.iterdir()):
                sys.exit(f"error: --runs first-ever needs an empty cache folder; {cache} is not")
            if kind == "vectors-only" and {p.name for p in cache.iterdir()} != {"embeddings.sqlite"}:
                sys.exit(
                    f"error: --runs vectors-only needs a cache folder of embeddings.sqlite alone; {cache} is not"
                )
            for part in ("onnx", "numba") if kind == "cold" else ():  # the machine's, made before
                if not (cache / part).exists():
                    (cache / part).symlink_to(Path.home() / ".cache" / "abstract-atlas" / part)
            result["runs"][kind] = build(docs_file, work / f"map-{number}", cache, name)
            print(f"[{name}] {kind}: {result['runs'][kind]['seconds']} s", file=sys.stderr, flush=True)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def render(results: list[dict]) -> str:
    lines = [
        "# Build time by stage",
        "",
        "Produced by `python benchmarks/bench_buildtime.py` (commands below each table); each build a child",
        "process into a new folder, timed with /usr/bin/time -v. Stage seconds are the manifest's",
        "`timings_seconds` (what the build prints last); *naming* is phrases + topic names + themes +",
        "sibling names. The machine's 2 cores are shared with other jobs: each run gives the 1-, 5- and",
        "15-minute load averages before it and after it (a load of 2 is a full machine), and the CPU",
        "seconds (user + system) the build used, which a busy machine inflates far less than wall seconds.",
    ]
    for r in results:
        stages = list(dict.fromkeys(s for run in r["runs"].values() for s in run["stages"] if s != "total"))
        lines += [
            "",
            f"## {r['dataset']}: {r['papers']:,} abstracts, {r['date']}",
            "",
            f"Machine: {r['machine']}.",
        ]
        if not r["runs"]:
            lines += ["", r.get("note", "")]
            continue
        lines += [
            "",
            "| run | wall s | CPU s | all but embedding s | naming s (share of wall) | peak MB | load before → after | "
            + " | ".join(stages)
            + " |",
            "|---" * (7 + len(stages)) + "|",
        ]
        for kind, run in r["runs"].items():
            share = run["naming_seconds"] / run["seconds"] if run["seconds"] else 0
            cells = [str(run["stages"].get(s, "–")) for s in stages]
            lines.append(
                f"| {kind} | {run['seconds']} | {run.get('cpu_seconds', '–')} | {run['all_but_embedding_seconds']} | "
                f"{run['naming_seconds']} ({share:.0%}) | {run['peak_mb']:,.0f} | "
                f"{' / '.join(map(str, run['load_before']))} → {' / '.join(map(str, run['load_after']))} | "
                + " | ".join(cells)
                + " |"
            )
        commands = dict.fromkeys(run.get("command", "") for run in r["runs"].values())
        lines += ["", "Commands:", "", *(f"- `{c}`" for c in commands if c)]
        if r.get("note"):
            lines += ["", r["note"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=DATASETS, required=True)
    parser.add_argument("--runs", default="cold,warm", help=f"comma-separated, in order: {', '.join(RUNS)}")
    parser.add_argument("--cache", type=Path, help="the cache folder to use and keep (default: a new one)")
    args = parser.parse_args()
    runs = args.runs.split(",")
    if unknown := [r for r in runs if r not in RUNS]:
        sys.exit(f"error: --runs: unknown {unknown} (known: {', '.join(RUNS)})")
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    result = bench(args.dataset, runs, args.cache)
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    for run in result["runs"].values():
        run["command"] = command
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"buildtime-{args.dataset}.json"
    if path.exists():  # runs of other kinds on the same dataset are kept beside these
        previous = json.loads(path.read_text())
        result["runs"] = {
            **{k: v for k, v in previous["runs"].items() if k not in result["runs"]},
            **result["runs"],
        }
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    results = [json.loads(p.read_text()) for d in DATASETS if (p := RESULTS / f"buildtime-{d}.json").exists()]
    (ROOT / "benchmarks" / "BUILDTIME_RESULTS.md").write_text(render(results))
    print(f"wrote {ROOT / 'benchmarks' / 'BUILDTIME_RESULTS.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
