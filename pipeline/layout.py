"""2-D map coordinates for papers and a label position for each topic."""

from __future__ import annotations

import numpy as np
import pandas as pd


def map_coordinates(
    embeddings: np.ndarray, *, n_neighbors: int, random_state: int, knn: tuple | None = None
) -> np.ndarray:
    """2-D UMAP of the embeddings (cosine), reusing the clustering stage's neighbour graph.

    `knn` is a `pipeline.topics.neighbour_graph`; without it UMAP finds the neighbours itself.

    Coordinates are centred and scaled to unit spread, so maps of any size share one frame.
    """
    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir, cached_reduction

    UMAP = import_topic_libraries(str(cache_dir()))[2]

    if len(embeddings) <= 3:  # UMAP needs a neighbourhood; a handful of papers sit on a line
        return np.column_stack([np.arange(len(embeddings), dtype=np.float32), np.zeros(len(embeddings))])
    options = {}
    if knn is not None and knn[0] is not None and knn[0].shape[1] >= n_neighbors:
        options["precomputed_knn"] = knn
    reducer = UMAP(
        n_neighbors=n_neighbors,
        n_components=2,
        min_dist=0.1,
        metric="cosine",
        random_state=random_state,
        # UMAP's own choice past 10,000 points; its 500 below that doubles the time for a
        # picture that does not change visibly.
        n_epochs=200,
        **options,
    )
    params = {
        "n_neighbors": n_neighbors,
        "n_components": 2,
        "min_dist": 0.1,
        "seed": random_state,
        "epochs": 200,
        "knn": "exact" if options else "umap",
    }
    coordinates, _ = cached_reduction("umap2", embeddings, params, lambda: reducer.fit_transform(embeddings))
    coordinates = coordinates.astype(np.float64)
    coordinates -= coordinates.mean(axis=0)
    coordinates /= coordinates.std() or 1.0
    return coordinates.astype(np.float32)


def label_positions(coordinates: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
    """Where each topic's name sits: the member closest to the topic's median point.

    Snapping to a real member keeps a label on its cluster even when the cluster is curved.
    """
    rows = []
    for topic_id in sorted(t for t in set(labels.tolist()) if t != -1):
        points = coordinates[labels == topic_id]
        median = np.median(points, axis=0)
        anchor = points[np.argmin(((points - median) ** 2).sum(axis=1))]
        rows.append({"topic_id": topic_id, "x": float(anchor[0]), "y": float(anchor[1])})
    return pd.DataFrame(rows, columns=["topic_id", "x", "y"])


def theme_label_positions(
    coordinates: np.ndarray, labels: np.ndarray, theme_of: dict[int, int]
) -> pd.DataFrame:
    """Where each theme's name sits: the member closest to the median point of the theme's papers.

    `theme_of` maps topic id -> theme id; unassigned papers belong to no theme.
    """
    themes = np.array([theme_of.get(int(t), -1) for t in np.asarray(labels).tolist()], dtype=np.int64)
    return label_positions(coordinates, themes).rename(columns={"topic_id": "theme_id"})
