"""Token budget: speed and quality of the int8 ONNX encoder at 128, 192 and 256 word pieces.

    python benchmarks/bench_tokens.py [--budgets 128,192,256] [--datasets sample-2000,corpus-10k]
                                     [--corpus PATH] [--force]

For each dataset and budget: embed every abstract with the int8 ONNX encoder (abstracts/s, measured
in this process, with the machine's load average before and after), the mean and minimum cosine of
each vector to the same abstract's vector at the largest budget, then the topic stage exactly as
`python -m pipeline build` runs it (UMAP + HDBSCAN + reassignment, sizes resolved from the corpus):
NMI and ARI against the corpus's `field`, unassigned share, topic count. One JSON per (dataset,
budget) goes to benchmarks/results/tokens/ (a rerun skips those already there unless --force) and
benchmarks/TOKENS_RESULTS.md is rewritten from all of them.

corpus-10k needs the shared corpus (default ../shared/corpus/ml_abstracts.parquet from the repository
root, or --corpus / ATLAS_CORPUS); without it that dataset is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results" / "tokens"
REPORT = ROOT / "benchmarks" / "TOKENS_RESULTS.md"
SAMPLE_SEED = 2025
DATASETS = ("sample-2000", "corpus-10k")


def corpus_path(given: str | None) -> Path:
    return Path(given or os.environ.get("ATLAS_CORPUS") or ROOT.parent / "shared/corpus/ml_abstracts.parquet")


def dataset(name: str, corpus: Path) -> pd.DataFrame | None:
    """Documents with their `field`; corpus-10k is sampled exactly as bench_pipeline.py samples it."""
    if name == "sample-2000":
        docs = pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet")
    elif not corpus.exists():
        print(f"skipping {name}: {corpus} is not here (it is not part of a clone)", file=sys.stderr)
        return None
    else:
        full = pd.read_parquet(corpus, columns=["title", "abstract", "venue", "year", "field"])
        docs = full.sample(n=10_000, random_state=SAMPLE_SEED)
    return docs.drop_duplicates("abstract").reset_index(drop=True)


def embed(texts: list[str], budget: int) -> tuple[np.ndarray, float, list[float]]:
    """Vectors, abstracts/s and the 1-minute load average before and after (model load excluded)."""
    from pipeline.embedding.embed import encode_sorted, load_encoder

    encoder = load_encoder("onnx-int8", budget)
    encoder.encode(texts[:8])  # first-call set-up is not throughput
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    vectors = encode_sorted(texts, encoder.encode, progress=False)
    seconds = time.perf_counter() - started
    encoder.close()
    return vectors, len(texts) / seconds, [round(load_before, 2), round(os.getloadavg()[0], 2)]


def topic_quality(docs: pd.DataFrame, vectors: np.ndarray, budget: int, seed: int = 42) -> dict:
    """The build's topic stage on these vectors (UMAP seeded with `seed`), scored against `field`."""
    from pipeline.config import BuildConfig
    from pipeline.modelling.evaluate import agreement, map_quality
    from pipeline.modelling.topics import fit_topics

    documents = docs["abstract"].tolist()
    config = BuildConfig(max_tokens=budget, random_state=seed).resolve(len(documents))
    started = time.perf_counter()
    topics = fit_topics(documents, vectors, config)
    figures = map_quality(topics.labels, topics.table["keywords"].tolist(), documents)
    figures.update(agreement(topics.labels, docs["field"].tolist()))
    figures["topic_seconds"] = round(time.perf_counter() - started, 1)
    return figures


def run(name: str, docs: pd.DataFrame, budgets: list[int], work: Path, force: bool) -> None:
    texts = docs["abstract"].tolist()
    reference = max(budgets)
    vectors: dict[int, np.ndarray] = {}
    for budget in sorted(budgets, key=lambda b: b != reference):  # the reference first
        out = RESULTS / f"{name}-{budget}.json"
        stored = work / f"{name}-{budget}.npy"
        if out.exists() and stored.exists() and not force:
            vectors[budget] = np.load(stored)
            print(f"[{name} {budget}] done before", file=sys.stderr)
            continue
        print(f"[{name} {budget}] embedding {len(texts):,} abstracts...", file=sys.stderr, flush=True)
        vectors[budget], rate, load = embed(texts, budget)
        np.save(stored, vectors[budget])
        cosine = np.einsum("ij,ij->i", vectors[budget], vectors[reference])
        result = {
            "dataset": name,
            "papers": len(texts),
            "budget": budget,
            "abstracts_per_second": round(rate, 1),
            "load_average": load,
            "cosine_to_reference": {
                "reference": reference,
                "mean": round(float(cosine.mean()), 4),
                "min": round(float(cosine.min()), 4),
            },
            "quality": topic_quality(docs, vectors[budget], budget),
            "date": time.strftime("%Y-%m-%d %H:%M"),
        }
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"[{name} {budget}] {json.dumps(result)}", file=sys.stderr, flush=True)


def more_seeds(name: str, docs: pd.DataFrame, budgets: list[int], work: Path, seeds: list[int]) -> None:
    """Topic quality with other UMAP seeds on the stored vectors: how much NMI moves by chance."""
    for budget in budgets:
        out = RESULTS / f"{name}-{budget}.json"
        stored = work / f"{name}-{budget}.npy"
        if not (out.exists() and stored.exists()):
            continue
        result = json.loads(out.read_text())
        by_seed = result.setdefault("quality_by_seed", {"42": result["quality"]})
        for seed in seeds:
            if str(seed) not in by_seed:
                print(f"[{name} {budget}] topics with seed {seed}...", file=sys.stderr, flush=True)
                by_seed[str(seed)] = topic_quality(docs, np.load(stored), budget, seed)
                out.write_text(json.dumps(result, indent=2) + "\n")


def cpu_speed(texts: list[str], budgets: list[int]) -> dict[int, float]:
    """Abstracts per CPU-second on one thread: throughput that a loaded machine does not distort.

    Wall-clock abstracts/s on a shared machine depends on what else runs; CPU time spent by one
    encoding thread on the same texts does not (much).
    """
    from pipeline.embedding.onnx_encoder import OnnxEncoder

    rates = {}
    for budget in budgets:
        single = OnnxEncoder(cache_dir=None, threads=1, max_tokens=budget)
        single.encode(texts[:4])
        started = time.thread_time()
        for text in texts:
            single.encode([text])
        rates[budget] = round(len(texts) / (time.thread_time() - started), 1)
    return rates


def token_lengths(texts: list[str]) -> dict:
    from tokenizers import Tokenizer

    from pipeline.embedding.model import model_path

    tokenizer = Tokenizer.from_file(str(Path(model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    lengths = np.array([len(e.ids) for e in tokenizer.encode_batch(texts)])
    return {
        "mean": round(float(lengths.mean()), 1),
        "median": float(np.median(lengths)),
        "over_128": round(float((lengths > 128).mean()), 3),
        "over_192": round(float((lengths > 192).mean()), 3),
        "over_256": round(float((lengths > 256).mean()), 3),
    }


def render(results: list[dict], lengths: dict[str, dict], speed: dict) -> str:
    lines = [
        "# Token budget: speed and quality",
        "",
        "Produced by `python benchmarks/bench_tokens.py`. int8 ONNX encoder (the build's default embedder);",
        "each row embeds the whole dataset at that budget, then runs the build's topic stage on those",
        "vectors with sizes resolved from the corpus. NMI/ARI are against the venue-level `field` label",
        "(unassigned papers count as one group). Cosine: each abstract's vector against its own vector at",
        "256 word pieces. abstracts/s is embedding only, in one process using both cores, on a machine",
        "shared with other jobs: the 1-minute load average before and after each run is shown.",
        "",
        "Word pieces per abstract ([CLS] and [SEP] included):",
        "",
        "| dataset | mean | median | > 128 | > 192 | > 256 |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in lengths.items():
        lines.append(
            f"| {name} | {s['mean']} | {s['median']:.0f} | {s['over_128']:.0%} | {s['over_192']:.0%} | "
            f"{s['over_256']:.0%} |"
        )
    lines += [
        "",
        "| dataset | papers | budget | abstracts/s | load before→after | mean cosine to 256 | min cosine | "
        "NMI | ARI | unassigned | topics | coherence |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        q, c = r["quality"], r["cosine_to_reference"]
        lines.append(
            f"| {r['dataset']} | {r['papers']:,} | {r['budget']} | {r['abstracts_per_second']} | "
            f"{r['load_average'][0]}→{r['load_average'][1]} | {c['mean']} | {c['min']} | {q['nmi']} | "
            f"{q['ari']} | {q['unassigned_share']:.1%} | {q['topics']} | {q['coherence_npmi']} |"
        )
    seeded = [r for r in results if len(r.get("quality_by_seed", {})) > 1]
    if seeded:
        lines += [
            "",
            "The topic stage again with other UMAP seeds on the same vectors (how much NMI moves by chance):",
            "",
            "| dataset | budget | seeds | NMI per seed | NMI mean | ARI mean | unassigned mean | topics |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in seeded:
            q = r["quality_by_seed"]
            nmi = [v["nmi"] for v in q.values()]
            lines.append(
                f"| {r['dataset']} | {r['budget']} | {', '.join(q)} | {', '.join(map(str, nmi))} | "
                f"{np.mean(nmi):.4f} | {np.mean([v['ari'] for v in q.values()]):.4f} | "
                f"{np.mean([v['unassigned_share'] for v in q.values()]):.1%} | "
                f"{', '.join(str(v['topics']) for v in q.values())} |"
            )
        means = {
            (r["dataset"], r["budget"]): float(np.mean([v["nmi"] for v in r["quality_by_seed"].values()]))
            for r in seeded
        }
        reference = max(b for _, b in means)
        passing = sorted(
            b
            for b in {b for _, b in means}
            if all(means[(d, b)] >= means[(d, reference)] - 0.01 for d, bb in means if bb == reference)
        )
        drops = "; ".join(
            f"{d} {b}: {means[(d, b)] - means[(d, reference)]:+.4f}"
            for d, b in sorted(means)
            if b != reference
        )
        lines += [
            "",
            f"Mean NMI against {reference}: {drops}. Budgets within 0.01 of {reference} on every dataset: "
            f"{', '.join(map(str, passing))}; the build's default is the smallest of them "
            "(`DEFAULT_MAX_TOKENS` in pipeline/config.py).",
        ]
    if speed:
        lines += [
            "",
            "Abstracts per CPU-second, one encoding thread, the same abstracts of sample-2000 at each budget "
            "(CPU time is what a loaded machine distorts least; a build runs one such thread per core):",
            "",
            "| budget | abstracts per CPU-second | relative to 256 |",
            "|---|---|---|",
        ]
        base = speed.get("256")
        for budget, rate in speed.items():
            lines.append(
                f"| {budget} | {rate} | {rate / base:.2f}× |" if base else f"| {budget} | {rate} | – |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="128,192,256")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--corpus", help="ml_abstracts.parquet (default: ATLAS_CORPUS or ../shared/corpus/)")
    parser.add_argument("--work", type=Path, help="keep vectors here between runs (default: a temp folder)")
    parser.add_argument("--force", action="store_true", help="measure again what has results already")
    parser.add_argument("--seeds", default="", help="also score topics with these UMAP seeds, e.g. 1,2")
    parser.add_argument(
        "--cpu-speed",
        type=int,
        default=0,
        metavar="N",
        help="also measure abstracts per CPU-second on one thread over N abstracts of sample-2000",
    )
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    corpus = corpus_path(args.corpus)
    RESULTS.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-tokens-"))
    work.mkdir(parents=True, exist_ok=True)
    # Topic-stage UMAP results are cached by the pipeline: keep them out of the user's cache.
    machine = Path(os.environ.get("ATLAS_CACHE_DIR") or Path.home() / ".cache" / "abstract-atlas")
    os.environ.setdefault("NUMBA_CACHE_DIR", str(machine / "numba"))
    os.environ["ATLAS_CACHE_DIR"] = str(machine)
    lengths_file = RESULTS / "lengths.json"
    lengths = json.loads(lengths_file.read_text()) if lengths_file.exists() else {}
    for name in args.datasets.split(","):
        if name not in DATASETS:
            sys.exit(f"error: --datasets: unknown dataset {name!r} (known: {', '.join(DATASETS)})")
        docs = dataset(name, corpus)
        if docs is None:
            continue
        lengths[name] = token_lengths(docs["abstract"].tolist())
        run(name, docs, budgets, work, args.force)
        if args.seeds:
            more_seeds(name, docs, budgets, work, [int(x) for x in args.seeds.split(",")])
    speed_file = RESULTS / "cpu_speed.json"
    if args.cpu_speed:
        sample = dataset("sample-2000", corpus)["abstract"].sample(n=args.cpu_speed, random_state=SAMPLE_SEED)
        speed_file.write_text(json.dumps(cpu_speed(sample.tolist(), budgets), indent=2) + "\n")
    lengths_file.write_text(json.dumps(lengths, indent=2) + "\n")
    results = [
        json.loads(p.read_text())
        for p in sorted(
            RESULTS.glob("*-*.json"), key=lambda p: (p.stem.rsplit("-", 1)[0], int(p.stem.rsplit("-", 1)[1]))
        )
    ]
    speed = json.loads(speed_file.read_text()) if speed_file.exists() else {}
    REPORT.write_text(render(results, lengths, speed))
    print(f"wrote {REPORT}", file=sys.stderr)


if __name__ == "__main__":
    main()
