"""What a cheaper reduction would save a cold 1,000-abstract build, and what it would cost the topics.

    python benchmarks/bench_cold_options.py        # writes benchmarks/COLD_OPTIONS_RESULTS.md

Measured, not shipped (issue 67): the build's topic stage and 2-D layout (`fit_topics`, then
`map_coordinates`), CPU seconds of this process, on the same stored-precision vectors, with
- **as built**: KMeans in a 10-D UMAP of 500 epochs (UMAP's own choice below 10,000 papers), a 2-D map of 200;
- **10-D at 200 / 100 epochs**: the same with fewer epochs of the 10-D fit;
- **one fit**: no 10-D fit: KMeans cuts the 2-D map itself.
Topics are compared with the venue-level `field` label (NMI, ARI; unassigned papers one group) on
sample-1000 (`bench_pipeline.py`'s) and on the balanced set (600 papers of each of 5 fields,
`benchmarks/common.py`; needs the shared corpus, else left out). Vectors come from the machine's
embedding cache (embedded once if missing); every reduction is fitted afresh in an empty cache folder
(so each option also reads its texts: the same for all). Libraries are imported before any is timed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.common import CORPUS, balanced_set  # noqa: E402

RESULTS = ROOT / "benchmarks" / "COLD_OPTIONS_RESULTS.md"
OPTIONS = ("as built", "10-D at 200 epochs", "10-D at 100 epochs", "one fit (KMeans in the 2-D map)")


def datasets():
    import pandas as pd

    sample = pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet")
    yield "sample-1000", sample.sample(n=1000, random_state=2025).drop_duplicates("abstract")
    if CORPUS.exists():
        corpus = pd.read_parquet(CORPUS, columns=["title", "abstract", "field"])
        yield "balanced-3000", balanced_set(corpus).drop_duplicates("abstract")


def run(option: str, texts: list[str], vectors, truth: list) -> dict:
    import numpy as np

    from pipeline.config import BuildConfig
    from pipeline.modelling import layout, topics
    from pipeline.modelling.evaluate import agreement

    config = BuildConfig().resolve(len(texts))
    settings = dict(layout.UMAP_SETTINGS[10])
    space = topics.cluster_space
    epochs = {"10-D at 200 epochs": 200, "10-D at 100 epochs": 100}.get(option)
    if epochs:
        layout.UMAP_SETTINGS[10] = dict(settings, n_epochs=epochs)
    if option.startswith("one fit"):
        topics.cluster_space = lambda embeddings, config, knn, targets=None: layout.map_coordinates(
            embeddings, n_neighbors=config.n_neighbors, random_state=config.random_state, knn=knn
        )
    try:
        started, cpu = time.perf_counter(), time.process_time()
        fit = topics.fit_topics(texts, vectors, config)
        layout.map_coordinates(
            vectors, n_neighbors=config.n_neighbors, random_state=config.random_state, knn=fit.knn
        )
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    finally:
        layout.UMAP_SETTINGS[10], topics.cluster_space = settings, space
    return {
        "topics": int(len(np.unique(fit.labels[fit.labels >= 0]))),
        "seconds": round(seconds, 2),
        "cpu": round(cpu_seconds, 2),
        **agreement(fit.labels, truth),
    }


def main() -> None:
    import numpy as np

    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir
    from pipeline.embedding.embed import embed_texts

    started_load = os.getloadavg()[0]
    import_topic_libraries(str(cache_dir()))  # imported before any option is timed, as a build does ahead
    rows = [
        "| dataset | option | topics | topic stage + layout, CPU s (wall s) | NMI | ARI |",
        "|---|---|---|---|---|---|",
    ]
    for name, docs in datasets():
        texts = docs["abstract"].astype(str).tolist()
        vectors, _ = embed_texts(texts, progress=False)  # the machine's cache
        vectors = vectors.astype(np.float16).astype(np.float32)  # as the build fits them
        for option in OPTIONS:
            with tempfile.TemporaryDirectory() as empty:  # every reduction fitted afresh
                saved = os.environ.get("ATLAS_CACHE_DIR")
                os.environ["ATLAS_CACHE_DIR"] = empty
                try:
                    result = run(option, texts, vectors, docs["field"].tolist())
                finally:
                    os.environ.pop("ATLAS_CACHE_DIR") if saved is None else os.environ.update(
                        ATLAS_CACHE_DIR=saved
                    )
            print(name, option, result, file=sys.stderr, flush=True)
            rows.append(
                f"| {name} | {option} | {result['topics']} | {result['cpu']} ({result['seconds']}) | "
                f"{result['nmi']} | {result['ari']} |"
            )
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    RESULTS.write_text(
        "# A cheaper reduction for a cold build: measured, not shipped\n\n"
        + (__doc__ or "").split("\n\n", 2)[2].strip()
        + f"\n\n`python benchmarks/bench_cold_options.py`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"commit {commit.stdout.strip() or '?'}, 1-minute load {started_load:.1f} at the start "
        f"(2 cores shared with other jobs: CPU seconds are the steadier figure).\n\n" + "\n".join(rows) + "\n"
    )
    print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
