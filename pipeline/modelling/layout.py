"""2-D map coordinates for papers and a label position for each topic."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.workers import cores, failing_as, spawn_pool

# The one source of UMAP settings: constructor arguments and cache keys both derive from these.
UMAP_SETTINGS = {
    # Clustering space: 10-D, tightly packed (min_dist 0); KMeans cuts it into topics
    # (benchmarks/QUALITY_RESULTS.md: 10-D splits fields better than 5-D at every topic count).
    10: {"n_components": 10, "min_dist": 0.0, "metric": "cosine"},
    # The map: UMAP's own choice of 200 epochs past 10,000 points; its 500 below that doubles the
    # time for a picture that does not change visibly.
    2: {"n_components": 2, "min_dist": 0.1, "metric": "cosine", "n_epochs": 200},
}


# A layout started from the previous map's positions needs fewer epochs to settle, and each epoch
# more lets it drift further from where old papers were (benchmarks/REBUILD_RESULTS.md).
INIT_EPOCHS = 50
# ...and a smaller step: UMAP's own 1.0 rearranges a started layout within its first epochs.
INIT_LEARNING_RATE = 0.1
# New papers start at the similarity-weighted mean position of this many most similar old papers.
INIT_NEIGHBOURS = 10
# A layout of this many papers or more is made in a worker process while the build goes on
# (`map_coordinates_ahead`): about 11 s of a 25,000-paper sample's, for 2 CPU s of starting it.
WORKER_FROM = 10_000


def initial_positions(embeddings: np.ndarray, previous_xy: np.ndarray) -> np.ndarray | None:
    """Where a rebuild's layout starts: old papers where they were (`previous_xy`, NaN for new ones),
    new papers at the similarity-weighted mean of their most similar old papers; None without any.

    Examples:
        >>> vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.995, 0.0998]])
        >>> initial_positions(vectors, np.array([[0.0, 0.0], [4.0, 4.0], [np.nan, np.nan]]))[2].round(1).tolist()
        [0.4, 0.4]
    """
    from pipeline.modelling.neighbours import cosine_knn

    previous_xy = np.asarray(previous_xy, dtype=np.float64)
    known = ~np.isnan(previous_xy).any(axis=1)
    if known.sum() < 2:
        return None
    xy = previous_xy.copy()
    new = np.flatnonzero(~known)
    if len(new):
        k = min(INIT_NEIGHBOURS, int(known.sum()))
        neighbours, similarities = cosine_knn(
            np.ascontiguousarray(embeddings[new]), np.ascontiguousarray(embeddings[known]), k
        )
        weights = np.clip(similarities, 1e-6, None).astype(np.float64)
        xy[new] = (weights[:, :, None] * previous_xy[known][neighbours]).sum(axis=1) / weights.sum(
            axis=1, keepdims=True
        )
    return xy


def align_to(xy: np.ndarray, previous_xy: np.ndarray) -> np.ndarray:
    """`xy` moved by the affine map that best puts the old papers (rows where `previous_xy` is not
    NaN) back where they were: UMAP rescales a started layout to its own box, axis by axis, and
    that global drift is no change a reader should see.

    Examples:
        >>> old = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [np.nan, np.nan]])
        >>> (align_to(np.array([[5.0, 5.0], [7.0, 5.0], [5.0, 9.0], [7.0, 9.0]]), old).round(3) + 0.0).tolist()
        [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    """
    known = ~np.isnan(previous_xy).any(axis=1)
    if known.sum() < 3:
        return xy
    design = np.column_stack([xy, np.ones(len(xy))]).astype(np.float64)
    transform, *_ = np.linalg.lstsq(design[known], previous_xy[known].astype(np.float64), rcond=None)
    return (design @ transform).astype(np.float32)


def umap_settings(n_components: int, *, n_neighbors: int, random_state: int) -> dict:
    """The UMAP constructor arguments (all but `precomputed_knn`) for the 5-D or the 2-D space.

    Examples:
        >>> umap_settings(2, n_neighbors=15, random_state=42)["n_epochs"]
        200
    """
    return {"n_neighbors": n_neighbors, "random_state": random_state, **UMAP_SETTINGS[n_components]}


def umap_cache_key(settings: dict, *, knn: str) -> dict:
    """What a cached UMAP result is keyed by: every constructor argument and where the kNN came from."""
    return {**settings, "knn": knn}


def map_coordinates(
    embeddings: np.ndarray,
    *,
    n_neighbors: int,
    random_state: int,
    knn: tuple | None = None,
    init: np.ndarray | None = None,
) -> np.ndarray:
    """2-D UMAP of the embeddings (cosine), reusing the clustering stage's neighbour graph.

    `knn` is a `pipeline.modelling.neighbours.neighbour_graph`; without it UMAP finds the neighbours itself.
    `init` (n, 2) starts the layout from given positions (a rebuild starts from the previous map's,
    see `initial_positions`), with `INIT_EPOCHS` epochs, so old papers stay near where they were.

    Coordinates are centred and scaled to unit spread, so maps of any size share one frame.
    """
    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir, cached_reduction

    UMAP = import_topic_libraries(str(cache_dir()))[2]

    if len(embeddings) <= 3:  # UMAP needs a neighbourhood; a handful of papers sit on a line
        return np.column_stack([np.arange(len(embeddings), dtype=np.float32), np.zeros(len(embeddings))])
    settings, options, key = _umap2(n_neighbors, random_state, knn, init)
    reducer = UMAP(**settings, **options)
    coordinates, _ = cached_reduction("umap2", embeddings, key, lambda: reducer.fit_transform(embeddings))
    coordinates = coordinates.astype(np.float64)
    coordinates -= coordinates.mean(axis=0)
    coordinates /= coordinates.std() or 1.0
    return coordinates.astype(np.float32)


def _umap2(n_neighbors: int, random_state: int, knn: tuple | None, init: np.ndarray | None):
    """The 2-D UMAP's constructor settings, its other arguments and its cache key."""
    from pipeline.cache import array_digest

    options = {}
    if knn is not None and knn[0] is not None and knn[0].shape[1] >= n_neighbors:
        options["precomputed_knn"] = knn
    settings = umap_settings(2, n_neighbors=n_neighbors, random_state=random_state)
    key = umap_cache_key(settings, knn="exact" if options else "umap")
    if init is not None:
        settings = dict(settings, n_epochs=INIT_EPOCHS, learning_rate=INIT_LEARNING_RATE)
        options["init"] = np.asarray(init, dtype=np.float32)
        key = dict(
            key, n_epochs=INIT_EPOCHS, learning_rate=INIT_LEARNING_RATE, init=array_digest(options["init"])
        )
    return settings, options, key


def map_coordinates_ahead(embeddings: np.ndarray, **options) -> Callable[[], np.ndarray]:
    """`map_coordinates(embeddings, **options)` started now; returns what to call for the result.

    A layout of `WORKER_FROM` papers or more that is not in the cache runs in a worker process from
    here (UMAP's layout uses one core: the build names its topics and themes on another meanwhile);
    the same coordinates. Any other is made when asked for.
    """
    from pipeline.cache import reduction_path

    key = _umap2(options["n_neighbors"], options["random_state"], options.get("knn"), options.get("init"))[2]
    if len(embeddings) < WORKER_FROM or cores() < 2 or reduction_path("umap2", embeddings, key).exists():
        return lambda: map_coordinates(embeddings, **options)
    pool = spawn_pool(1)
    layout = pool.submit(map_coordinates, embeddings, **options)
    pool.shutdown(wait=False)

    def result() -> np.ndarray:
        with failing_as("laying out the map"):
            return layout.result()

    return result


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
