"""Speed and quality of our build against stock BERTopic, side by side in one run.

    python benchmarks/bench_pipeline.py [--datasets seeds,sample-1000,sample-2000,corpus-10k,corpus-full]
                                        [--first-ever seeds,sample-1000] [--also-max-tokens 128]

For each dataset, in child processes of this one (each measured with /usr/bin/time -v):
ours first-ever (for --first-ever datasets: nothing cached at all, so the int8 ONNX export and the
Numba JIT compilation are included), ours cold (a machine that has built before: the ONNX model and
JIT cache present, but none of these abstracts embedded), ours warm (the same build again: embeddings,
the text cache and UMAP results from the cache), optionally ours cold at another --max-tokens
(--also-max-tokens, on the corpus datasets), and stock BERTopic (defaults, same packaged model, same documents).
Results go to benchmarks/results/<dataset>.json and benchmarks/RESULTS.md is rewritten from all of them.
The corpus datasets need the shared corpus (--corpus, ATLAS_CORPUS, or ../shared/corpus/ml_abstracts.parquet
from the repository root) and are skipped without it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.ingest import doc_id_for, ingest  # noqa: E402
from pipeline.modelling.evaluate import agreement, map_quality  # noqa: E402

CORPUS = Path(os.environ.get("ATLAS_CORPUS") or ROOT.parent / "shared" / "corpus" / "ml_abstracts.parquet")
RESULTS = ROOT / "benchmarks" / "results"
SAMPLE_SEED = 2025
DATASETS = ("seeds", "sample-1000", "sample-2000", "corpus-10k", "corpus-full")


def dataset(name: str) -> pd.DataFrame | None:
    """The documents (abstract, title, field when known) of a benchmark dataset, or None if absent."""
    if name == "seeds":
        return ingest([ROOT / "seeds"]).papers[["title", "abstract"]]
    if name.startswith("sample-"):  # sample-1000: a fixed half of the committed 2,000
        sample = pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet")
        size = int(name.removeprefix("sample-"))
        return sample if size == len(sample) else sample.sample(n=size, random_state=SAMPLE_SEED)
    if not CORPUS.exists():
        print(f"skipping {name}: {CORPUS} is not here (it is not part of a clone)", file=sys.stderr)
        return None
    corpus = pd.read_parquet(CORPUS, columns=["title", "abstract", "venue", "year", "field"])
    if name == "corpus-10k":
        return corpus.sample(n=10_000, random_state=SAMPLE_SEED).reset_index(drop=True)
    return corpus


def timed(command: list[str], env: dict | None = None) -> dict:
    """Run a child under /usr/bin/time -v: wall seconds, CPU seconds (user + system: on a busy
    machine, far closer than wall seconds to what a quiet one takes) and peak resident memory."""
    started = time.perf_counter()
    result = subprocess.run(
        ["/usr/bin/time", "-v", *command], cwd=ROOT, env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1))
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", result.stderr))
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 1), "peak_mb": round(peak_kb / 1024, 1)}


def machine_cache() -> Path:
    return Path(os.environ.get("ATLAS_CACHE_DIR") or Path.home() / ".cache" / "abstract-atlas")


def run_ours(docs_file: Path, out: Path, cache: Path, name: str, extra: tuple[str, ...] = ()) -> dict:
    env = dict(os.environ, ATLAS_CACHE_DIR=str(cache), NUMBA_CACHE_DIR=str(machine_cache() / "numba"))
    build = [sys.executable, "-m", "pipeline", "build", str(docs_file), "--out", str(out), "--quiet", *extra]
    run = timed([*build, "--name", f"Benchmark: {name}"], env)
    run["load_average"] = round(os.getloadavg()[0], 1)
    manifest = json.loads((out / "manifest.json").read_text())
    run["stages"] = manifest["timings_seconds"]
    run["embedding"] = manifest["embedding"]
    run["max_tokens"] = manifest["config"].get("max_tokens", 256)
    return run


def fresh_cache(parent: Path, *, machine_warm: bool) -> Path:
    """An empty embedding cache; with `machine_warm`, the machine's ONNX model is shared."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=parent))
    onnx = machine_cache() / "onnx"
    if machine_warm and onnx.exists():
        (cache / "onnx").symlink_to(onnx)
    return cache


def quality_of(labels: np.ndarray, topic_words: list[list[str]], documents: list[str], truth) -> dict:
    figures = map_quality(labels, topic_words, documents)
    if truth is not None:
        figures.update(agreement(labels, truth))
    return figures


def bench(
    name: str,
    *,
    stock_up_to: int,
    fresh_machine: bool,
    keep_maps: Path | None = None,
    also_max_tokens: int | None = None,
) -> dict | None:
    docs = dataset(name)
    if docs is None:
        return None
    work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    try:
        docs = docs.drop_duplicates("abstract").reset_index(drop=True)
        docs_file = work / "docs.parquet"
        docs.to_parquet(docs_file, index=False)
        print(f"[{name}] {len(docs):,} abstracts", file=sys.stderr, flush=True)
        result = {
            "dataset": name,
            "papers": len(docs),
            "date": time.strftime("%Y-%m-%d"),
            "load_average_at_start": [round(x, 1) for x in os.getloadavg()],
            "runs": {},
        }
        if fresh_machine:  # nothing cached at all: what a brand-new machine pays once
            empty = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
            env = dict(os.environ, ATLAS_CACHE_DIR=str(empty), NUMBA_CACHE_DIR=str(empty / "numba"))
            run = timed(
                [
                    sys.executable,
                    "-m",
                    "pipeline",
                    "build",
                    str(docs_file),
                    "--out",
                    str(work / "first"),
                    "--quiet",
                ],
                env,
            )
            manifest = json.loads((work / "first" / "manifest.json").read_text())
            run["stages"] = manifest["timings_seconds"]
            run["max_tokens"] = manifest["config"].get("max_tokens", 256)
            run["load_average"] = round(os.getloadavg()[0], 1)
            result["runs"]["ours_first_on_machine"] = run
            print(
                f"[{name}] ours, first build on a new machine: {run['seconds']} s",
                file=sys.stderr,
                flush=True,
            )
        cache = fresh_cache(work, machine_warm=True)
        result["runs"]["ours_cold"] = run_ours(docs_file, work / "ours", cache, name)
        print(f"[{name}] ours cold: {result['runs']['ours_cold']['seconds']} s", file=sys.stderr, flush=True)
        result["runs"]["ours_warm"] = run_ours(docs_file, work / "ours", cache, name)
        print(f"[{name}] ours warm: {result['runs']['ours_warm']['seconds']} s", file=sys.stderr, flush=True)
        if also_max_tokens:
            other = fresh_cache(work, machine_warm=True)
            key = f"ours_cold_t{also_max_tokens}"
            result["runs"][key] = run_ours(
                docs_file, work / "other", other, name, ("--max-tokens", str(also_max_tokens))
            )
            print(
                f"[{name}] ours cold, {also_max_tokens} tokens: {result['runs'][key]['seconds']} s",
                file=sys.stderr,
            )

        papers = pd.read_parquet(work / "ours" / "papers.parquet")
        topics = pd.read_parquet(work / "ours" / "topics.parquet")
        truth_by_id = dict(zip(docs["abstract"].map(doc_id_for), docs["field"])) if "field" in docs else None
        truth = papers["doc_id"].map(truth_by_id).tolist() if truth_by_id else None
        result["quality"] = {
            "ours": quality_of(
                papers["topic_id"].to_numpy(),
                topics["keywords"].map(list).tolist(),
                papers["abstract"].tolist(),
                truth,
            )
        }
        if keep_maps:  # the app benchmark opens these maps
            shutil.rmtree(keep_maps / name, ignore_errors=True)
            shutil.copytree(work / "ours", keep_maps / name)
        result["topic_names"] = topics["label"].tolist()
        result["topic_sizes"] = topics["size"].tolist()

        if len(docs) <= stock_up_to:
            run = timed([sys.executable, "benchmarks/stock_bertopic.py", str(docs_file), str(work)])
            baseline = json.loads((work / "stock.json").read_text())
            run["stages"] = baseline["timings_seconds"]
            result["runs"]["stock"] = run
            print(f"[{name}] stock BERTopic: {run['seconds']} s", file=sys.stderr, flush=True)
            labels = np.array(baseline["labels"])
            words = [baseline["topic_words"][k] for k in sorted(baseline["topic_words"], key=int)]
            stock_truth = docs["field"].tolist() if "field" in docs else None
            result["quality"]["stock"] = quality_of(labels, words, docs["abstract"].tolist(), stock_truth)
            result["stock_topic_names"] = list(baseline["topic_names"].values())[:30]
            # Agreement of our (int8) vectors with stock's fp32 vectors for the same texts.
            ours_vectors = np.load(work / "ours" / "embeddings.npy").astype(np.float32)
            row_of = {doc_id: i for i, doc_id in enumerate(papers["doc_id"])}
            stock_vectors = np.load(work / "stock_embeddings.npy")
            rows = [row_of[doc_id_for(t)] for t in docs["abstract"]]
            cosine = np.einsum("ij,ij->i", ours_vectors[rows], stock_vectors) / (
                np.linalg.norm(ours_vectors[rows], axis=1) * np.linalg.norm(stock_vectors, axis=1)
            )
            result["embedding_agreement"] = {
                "mean_cosine": round(float(cosine.mean()), 4),
                "min_cosine": round(float(cosine.min()), 4),
            }
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    flags = Path("/proc/cpuinfo").read_text()
    isa = "AVX-512 VNNI" if "avx512_vnni" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    memory = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) / 1024**2
    return f"{cpu}, {len(os.sched_getaffinity(0))} cores ({isa}), {memory:.0f} GB RAM, Python {platform.python_version()}"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}×" if a and b else "–"


def render(results: list[dict]) -> str:
    lines = [
        "# Benchmark results",
        "",
        "Produced by `make bench` (`python benchmarks/bench_pipeline.py`); every row of a table comes from",
        "one run of that script, ours and stock BERTopic as sibling processes on the same machine.",
        "",
        f"Machine: {machine()}.",
        "",
        "- **ours first-ever**: nothing cached at all, as on a brand-new machine: the int8 ONNX export "
        "(once per machine) and the Numba JIT compilation are included;",
        "- **ours cold**: a machine that has built a map before (ONNX model and JIT cache present), "
        "abstracts it has never embedded;",
        "- **ours warm**: the same build again: the embeddings, each abstract's phrases, acronyms and word "
        "forms (the text cache) *and* the UMAP results come from the cache (a rebuild with another topic "
        "size or seed reuses the embeddings and the text cache only);",
        "- **stock**: `BERTopic(embedding_model=SentenceTransformer(all-MiniLM-L6-v2))`, all defaults, fp32 torch.",
        "",
        "The machine is shared with other jobs: each row gives the 1-minute load average when it ran "
        "(2 cores: a load of 2 is a full machine; above that every process runs proportionally slower).",
        "",
        "## Speed",
        "",
        "| dataset | date | load | papers | stock s | ours first-ever s | ours cold s | speed-up (cold) | ours warm s | "
        "CPU s stock / cold / warm | embed abstracts/s stock → ours | peak MB stock / ours |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        runs = r["runs"]
        stock, cold, warm = runs.get("stock", {}), runs["ours_cold"], runs["ours_warm"]
        stock_rate = round(r["papers"] / stock["stages"]["embed"], 1) if stock else None
        ours_rate = cold["embedding"].get("abstracts_per_second")
        first = runs.get("ours_first_on_machine", {})
        load = r.get("load_average_at_start", ["–"])[0]
        lines.append(
            f"| {r['dataset']} | {r.get('date', '–')} | {load} | {r['papers']:,} | {stock.get('seconds', '–')} | "
            f"{first.get('seconds', '–')} | {cold['seconds']} | "
            f"{ratio(stock.get('seconds'), cold['seconds'])} | {warm['seconds']} | "
            f"{' / '.join(str(run.get('cpu_seconds', '–')) for run in (stock, cold, warm))} | {stock_rate or '–'} → {ours_rate} "
            f"({ratio(ours_rate, stock_rate)}) | {stock.get('peak_mb', '–')} / {cold['peak_mb']} |"
        )
    lines += [f"\n*{r['dataset']}*: {r['note']}" for r in results if r.get("note")]
    without_stock = [r["dataset"] for r in results if "stock" not in r["runs"]]
    if without_stock:
        lines += [
            "",
            f"Stock BERTopic was not run on {', '.join(without_stock)} (`--stock-up-to`, default 10,000 "
            "papers): its fp32 embedding alone runs at about 15 abstracts/s here, 90 minutes for 81,671.",
        ]
    lines += [
        "",
        "Stages of our builds (seconds; embed abstracts/s is the embedding stage alone):",
        "",
        "| dataset | date | build | max tokens | load after | ingest | embed | embed abstracts/s | topics | "
        "layout | evaluate | total in-process | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for key, run in r["runs"].items():
            if not key.startswith("ours") or key == "ours_warm" or "stages" not in run:
                continue
            s = run["stages"]
            # Builds before --max-tokens existed all embedded 256 word pieces.
            tokens = run.get("max_tokens", 256)
            rate = round(r["papers"] / s["embed"], 1) if s.get("embed") else "–"
            lines.append(
                f"| {r['dataset']} | {r.get('date', '–')} | {key.removeprefix('ours_').split('_t')[0].replace('_', ' ')} | "
                f"{tokens} | {run.get('load_average', '–')} | {s['ingest']} | {s['embed']} | {rate} | {s['topics']} | {s['layout']} | {s['evaluate']} | "
                f"{s['total']} | {run['peak_mb']} |"
            )
    lines += [
        "",
        "## Quality",
        "",
        "NMI/ARI against the corpus's venue-level `field` label (coarse and noisy; unassigned papers count "
        "as one group); coherence is the mean NPMI of each topic's top-10 words over the corpus.",
        "",
        "| dataset | method | topics | unassigned | largest topic | NMI | ARI | coherence | diversity |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for method, q in r["quality"].items():
            lines.append(
                f"| {r['dataset']} | {method} | {q['topics']} | {q['unassigned_share']:.1%} | "
                f"{q['largest_topic_share']:.1%} | {q.get('nmi', '–')} | {q.get('ari', '–')} | "
                f"{q['coherence_npmi']} | {q['diversity']} |"
            )
    agreement_rows = [r for r in results if "embedding_agreement" in r]
    if agreement_rows:
        lines += [
            "",
            "## Embedding agreement (ours int8 ONNX vs stock fp32 torch, same texts)",
            "",
            "| dataset | mean cosine | min cosine |",
            "|---|---|---|",
        ]
        lines += [
            f"| {r['dataset']} | {r['embedding_agreement']['mean_cosine']} | "
            f"{r['embedding_agreement']['min_cosine']} |"
            for r in agreement_rows
        ]
    for r in results:
        names = [f"{n} ({s})" for n, s in zip(r["topic_names"], r["topic_sizes"])]
        lines += [
            "",
            f"## Topic names, {r['dataset']} (ours, first 25 by size)",
            "",
            ", ".join(names[:25]) + ".",
        ]
        if r.get("stock_topic_names"):
            lines += ["", f"Stock BERTopic's names for comparison: {', '.join(r['stock_topic_names'][:12])}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument(
        "--stock-up-to",
        type=int,
        default=10_000,
        help="run stock BERTopic only up to this many papers (fp32 embedding of all 81,671 "
        "abstracts alone takes about 90 minutes on 2 cores)",
    )
    parser.add_argument(
        "--keep-maps",
        type=Path,
        metavar="DIR",
        default=ROOT / "benchmarks" / "maps",
        help="keep our map of each dataset in DIR/<dataset>, for benchmarks/bench_app.py "
        "(default: benchmarks/maps, not committed)",
    )
    parser.add_argument(
        "--first-ever",
        default="seeds,sample-1000",
        help="datasets also built with nothing cached at all (ONNX export and JIT included)",
    )
    parser.add_argument(
        "--also-max-tokens",
        type=int,
        metavar="N",
        help="on the corpus datasets, also a cold build with --max-tokens N (stages side by side)",
    )
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in args.datasets.split(","):
        if name not in DATASETS:
            sys.exit(f"error: --datasets: unknown dataset {name!r} (known: {', '.join(DATASETS)})")
        result = bench(
            name,
            stock_up_to=args.stock_up_to,
            fresh_machine=name in args.first_ever.split(","),
            keep_maps=args.keep_maps,
            also_max_tokens=args.also_max_tokens if name.startswith("corpus") else None,
        )
        if result:
            (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    results = [
        json.loads((RESULTS / f"{n}.json").read_text()) for n in DATASETS if (RESULTS / f"{n}.json").exists()
    ]
    (ROOT / "benchmarks" / "RESULTS.md").write_text(render(results))
    print(f"wrote {ROOT / 'benchmarks' / 'RESULTS.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
