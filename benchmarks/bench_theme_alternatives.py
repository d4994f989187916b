"""The floor of the theme level's NMI: other nested groupings of the same topics, side by side.

    python benchmarks/bench_theme_alternatives.py [MAP ...]     # default: random-4000 balanced-5field random-5000

Reads the maps `bench_themes.py` built under /work/bench-maps (run it first) and groups each map's
own topics, at the map's theme count (`theme_count`), in ways the build could have chosen: Ward with
topics weighing their papers or one each, on the paper vectors or in the build's 10-D UMAP; a
grouping voted from KMeans in the 10-D UMAP (each topic to the cluster holding most of its papers).
For each: cohesion (papers' cosine silhouette by theme on a seeded sample, the build's measure) and
NMI against the corpus `field`. docs/benchmarks.md quotes the figures: the groupings that reach
KMeans-in-UMAP's NMI hold together less well than Ward's on the vectors.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.bench_themes import MAPS_DIR, BuiltMap, cluster_space, read_built  # noqa: E402

DEFAULT_MAPS = ("random-4000", "balanced-5field", "random-5000")


def alternatives(name: str) -> list[tuple[str, float, float, int]]:
    """(grouping, cohesion, NMI, groups) for the map called `name`."""
    import numpy as np
    import pandas as pd
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    from pipeline.modelling.themes import _silhouette, cut_tree, theme_count, ward_merges

    papers, topics, themes, vectors, manifest = read_built(MAPS_DIR / name)
    reduced = cluster_space(BuiltMap(name, papers, topics, themes, {}, vectors, manifest))
    field = pd.read_parquet(MAPS_DIR / f"{name}.parquet")["field"].to_numpy()
    index = {t: i for i, t in enumerate(topics["topic_id"].tolist())}
    rows = np.array([index.get(int(t), -1) for t in papers["topic_id"]])
    topic_rows = [np.flatnonzero(rows == i) for i in range(len(index))]
    sizes = np.array([len(r) for r in topic_rows], dtype=np.float64)
    count = theme_count(len(index))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def scored(label: str, groups: list[list[int]]) -> tuple[str, float, float, int]:
        theme = np.full(len(papers), -1)
        for g, members in enumerate(groups):
            for t in members:
                theme[topic_rows[t]] = g
        kept = theme >= 0
        cohesion = _silhouette(unit, [np.concatenate([topic_rows[t] for t in g]) for g in groups], 0)
        return label, cohesion, normalized_mutual_info_score(field[kept], theme[kept]), len(groups)

    results = []
    for space, points in (("vectors", unit), ("10-D UMAP", reduced)):
        centroids = np.stack([points[r].mean(axis=0) for r in topic_rows])
        if space == "vectors":
            centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        for weighing, weights in (("papers", sizes), ("one", np.ones(len(sizes)))):
            cut = cut_tree(ward_merges(centroids, weights), len(sizes), count, sizes)
            results.append(scored(f"Ward on {space}, a topic weighs {weighing}", cut))
    clusters = KMeans(count, n_init=10, random_state=0).fit_predict(reduced)
    voted: dict[int, list[int]] = {}
    for t, r in enumerate(topic_rows):
        voted.setdefault(int(np.bincount(clusters[r]).argmax()), []).append(t)
    results.append(scored("voted from KMeans in the 10-D UMAP", list(voted.values())))
    return results


def main(argv: list[str]) -> int:
    for name in argv or DEFAULT_MAPS:
        if not (MAPS_DIR / name / "manifest.json").is_file():
            print(f"error: {MAPS_DIR / name}: no map; run benchmarks/bench_themes.py first", file=sys.stderr)
            return 2
        print(f"\n{name}\n| grouping | groups | cohesion | NMI vs field |\n|---|---:|---:|---:|")
        for label, cohesion, nmi, groups in alternatives(name):
            print(f"| {label} | {groups} | {cohesion:.3f} | {nmi:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
