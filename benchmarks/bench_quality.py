"""How well the map's topics split a field the way its people do, side by side with two baselines.

(The theme level above the topics, cohesion and NMI against Ward and KMeans at the same count, is
measured by `benchmarks/bench_themes.py`, which reruns the theme stage on built maps in seconds.)

Needs the shared corpus (../shared/corpus/ml_abstracts.parquet; exits when it is absent). On three
maps of it, in one run, with the same vectors (the build's int8 encoder, float16 as stored):
- **Abstract Atlas**: the build's own topics (`pipeline.modelling.topics.fit_topics`: KMeans in a 10-D
  cosine UMAP, the number of topics chosen by the build, never from the labels);
- **previous build**: HDBSCAN leaf clusters on a 5-D UMAP with outliers reassigned (the partition
  before this round), at its own count;
- **KMeans on the raw vectors** and **KMeans in the 10-D UMAP space**, each told the true number
  of classes, and each also at the build's own number of topics (same count, so only the method differs).
NMI (arithmetic) and ARI against `field` (a venue-level label, coarse and noisy: see the corpus's
README). A partition into more groups than there are classes loses NMI for that alone, so the
"same count" columns are the method's comparison and the "true count" ones the issue's bar.

    python benchmarks/bench_quality.py            # writes benchmarks/QUALITY_RESULTS.md
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402  (first: the numeric code paths)
from benchmarks.common import CORPUS, balanced_set, corpus_missing, random_set  # noqa: E402

RESULTS = ROOT / "benchmarks" / "QUALITY_RESULTS.md"


def datasets(corpus):
    import pandas as pd

    yield (
        "sample-2000 (committed sample)",
        pd.read_parquet(ROOT / "benchmarks" / "data" / "sample_2000.parquet"),
    )
    yield "random-4000 (seed 7)", random_set(corpus, 4000, seed=7)
    yield "balanced-3000 (600 a field, 5 fields)", balanced_set(corpus)


def main() -> int:
    if corpus_missing():
        return 2
    os.environ.setdefault("ATLAS_CACHE_DIR", str(Path.home() / ".cache" / "abstract-atlas"))
    import numpy as np
    import pandas as pd
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir
    from pipeline.config import BuildConfig
    from pipeline.embedding.embed import embed_texts, load_encoder
    from pipeline.modelling.neighbours import neighbour_graph, reassign_outliers
    from pipeline.modelling.themes import fit_themes
    from pipeline.modelling.topics import fit_topics
    from pipeline.naming.areas import area_votes

    encoder = load_encoder()

    _, _, UMAP, HDBSCAN = import_topic_libraries(str(cache_dir()))
    corpus = pd.read_parquet(CORPUS)
    lines = [
        "# Topic quality against the corpus's fields (`python benchmarks/bench_quality.py`)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, one process, same vectors for every method. "
        "NMI / ARI against `field`; k = number of groups. `numeric`: " + str(pipeline.numeric_target()),
        "",
        "| map | papers | classes | Abstract Atlas topics (k) | Atlas themes (k) | previous build, HDBSCAN (k) | "
        "KMeans raw, true k | KMeans UMAP-10, true k | KMeans raw, same k | KMeans UMAP-10, same k | unassigned |",
        "|---|---:|---:|---|---|---|---|---|---|---|---:|",
    ]

    def score(truth, labels):
        return f"{normalized_mutual_info_score(truth, labels):.3f} / {adjusted_rand_score(truth, labels):.3f}"

    for name, frame in datasets(corpus):
        frame = frame.reset_index(drop=True)
        truth = frame["field"].astype(str).to_numpy()
        k_true = len(set(truth))
        vectors, _ = embed_texts(frame["abstract"].tolist(), progress=False)
        vectors = vectors.astype(np.float16).astype(np.float32)
        config = BuildConfig(stability=False).resolve(len(frame))
        started = time.perf_counter()
        topics = fit_topics(frame["abstract"].tolist(), vectors, config)
        ours_seconds = time.perf_counter() - started
        ours = topics.labels
        k = len(set(ours.tolist()) - {-1})
        _, theme_of = fit_themes(
            frame["abstract"].tolist(),
            vectors,
            ours,
            topics.table,
            phrases=topics.phrases,
            votes=area_votes(vectors, encoder.encode),
        )
        theme_labels = np.array([theme_of.get(int(t), -1) for t in ours])
        n_themes = len(set(theme_of.values()))
        reduced = topics.reduced
        # The previous partition: HDBSCAN leaf clusters on a 5-D UMAP, outliers reassigned.
        knn = neighbour_graph(vectors, config.n_neighbors)
        five = UMAP(
            n_components=5,
            n_neighbors=config.n_neighbors,
            min_dist=0.0,
            metric="cosine",
            random_state=config.random_state,
            precomputed_knn=knn,
        ).fit_transform(vectors)
        leaf = (
            HDBSCAN(
                min_cluster_size=config.min_topic_size,
                min_samples=config.min_samples,
                cluster_selection_method="leaf",
            )
            .fit(five)
            .labels_
        )
        previous = reassign_outliers(vectors, np.asarray(leaf), k=config.reassign_neighbors)
        k_previous = len(set(previous.tolist()) - {-1})

        def kmeans(points, count):
            return KMeans(n_clusters=count, n_init=10, random_state=0).fit_predict(points)

        row = [
            name,
            f"{len(frame):,}",
            str(k_true),
            f"**{score(truth, ours)}** ({k})",
            f"{score(truth, theme_labels)} ({n_themes})",
            f"{score(truth, previous)} ({k_previous})",
            score(truth, kmeans(vectors, k_true)),
            score(truth, kmeans(reduced, k_true)),
            score(truth, kmeans(vectors, k)),
            score(truth, kmeans(reduced, k)),
            f"{(ours == -1).mean():.1%}",
        ]
        lines.append("| " + " | ".join(row) + " |")
        print(lines[-1], f"(topics in {ours_seconds:.1f} s)", flush=True)
    lines += [
        "",
        "Read: at the same number of groups the build's topics (KMeans in the 10-D UMAP) are compared with",
        "KMeans on the raw vectors (the method's gain) and the previous HDBSCAN partition; the true-k columns",
        "cut the corpus into as many groups as it has fields (6 or 5), far fewer than a reader's topics.",
    ]
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
