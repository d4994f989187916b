"""Topics: KMeans in a 10-D cosine UMAP, HDBSCAN for the papers that fit no topic, BERTopic's keywords, stability, names.

Measured side by side (benchmarks/QUALITY_RESULTS.md): HDBSCAN's leaf clusters on a 5-D UMAP,
reassigned, split the corpus's fields less well than KMeans on the raw vectors; KMeans in a 10-D
UMAP splits them best at every number of topics. HDBSCAN stays for what it does well: finding the
few papers that belong to no dense group (its GLOSH outlier score), which stay unassigned.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from pipeline.config import BuildConfig
from pipeline.modelling.neighbours import neighbour_graph, topic_centroids
from pipeline.naming.names import name_groups
from pipeline.naming.phrases import (
    NO_WORDS_NOTE,
    PhraseCounts,
    count_phrases,
    vectorizers_for,
)
from pipeline.naming.text_cache import paper_texts

# The clustering space: UMAP to this many dimensions (cosine, min_dist 0); KMeans cuts it into topics.
CLUSTER_DIMENSIONS = 10
# A rebuild's 10-D UMAP weighs the previous map's topics this much against the papers' own
# neighbourhoods (UMAP's categorical target_weight, 0-1); see benchmarks/REBUILD_RESULTS.md.
TARGET_WEIGHT = 0.5
# A rebuild's target for an old paper the previous map left unassigned (new papers have -1).
WAS_UNASSIGNED = -2
# A rebuild's cluster made at least this much of one previous topic's papers is that topic.
ANCHOR_SHARE = 0.5
# Topic counts tried around `topic_count_for(papers)`; the one whose re-clusterings agree best wins.
COUNT_FACTORS = (0.8, 0.9, 1.0, 1.1, 1.25)
# KMeans runs per candidate count (different seeds) whose agreement (mean pairwise ARI) is compared.
COUNT_RUNS = 3
# Candidate counts are compared on at most this many papers (a seeded sample): seconds, not minutes.
COUNT_SAMPLE = 5_000
# A paper HDBSCAN leaves out with a GLOSH outlier score of at least this is far from every dense
# group: it stays unassigned, up to `MAX_UNASSIGNED` of the papers (the most outlying first).
OUTLIER_SCORE = 0.8
MAX_UNASSIGNED = 0.03
# Unassigned means "fits no topic", not "small": this many unassigned papers (or the smallest topic
# size if smaller, never fewer than MIN_DENSE_GROUP) that are each other's nearest neighbours are a
# line of work: a topic of their own, or part of the nearest topic when they sit within its spread.
DENSE_GROUP = 8
MIN_DENSE_GROUP = 5


@dataclass
class Topics:
    """What the topic stage learned: one label per paper and one row per topic."""

    labels: np.ndarray  # topic_id per paper, -1 = unassigned
    # topic_id, label, keywords, keyword_weights, size, representative_rows, centroid
    table: pd.DataFrame
    knn: tuple  # the exact neighbour graph both UMAP runs use (see `neighbour_graph`)
    hdbscan_unassigned: int  # papers HDBSCAN found far from every dense group (left unassigned)
    reduced: np.ndarray | None = (
        None  # the 10-D UMAP reduction the topics were cut in (for `topic_stability`)
    )
    # the 10-D reduction without the previous topics as targets (stability is scored on it; the
    # same array as `reduced` on a first build; None on a rebuild with stability switched off)
    unsupervised: np.ndarray | None = None
    phrases: PhraseCounts | None = None  # candidate name phrases per paper (reused to name themes)
    notes: list[str] = field(default_factory=list)  # what a user should hear about the names
    # candidate topic count -> how well re-clusterings at that count agree (mean pairwise ARI)
    count_agreement: dict[int, float] = field(default_factory=dict)
    chosen_count: int = 0  # the number of topics KMeans cut (before small ones were dissolved)
    # seconds of the parts the build's stage table shows apart: "phrases" (reading the texts,
    # counting their phrases) and "topic names"
    timings: dict[str, float] = field(default_factory=dict)


def fit_topics(
    documents: list[str],
    embeddings: np.ndarray,
    config: BuildConfig,
    *,
    targets: np.ndarray | None = None,
    given: np.ndarray | None = None,
) -> Topics:
    """Cluster papers into topics and describe each one; `config` must be resolved.

    Names prefer phrases the topic's central papers write (`pipeline.naming.names.name_groups`).
    `targets` (a rebuild's
    previous topic per paper: -1 for a new paper, `WAS_UNASSIGNED` for an old paper the previous map
    left unassigned) makes the 5-D UMAP semi-supervised (categorical, weight `TARGET_WEIGHT`): old
    topics hold together where the new papers do not pull them apart, and papers without a target
    still form topics of their own. See `anchor_clusters` for what else a rebuild keeps.
    `given` (a topic per paper, -1 unassigned) skips the clustering: a rebuild of exactly the
    previous map's papers, vectors and options keeps its topics, and only describes them again.
    """
    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir

    BERTopic, ClassTfidfTransformer, _, HDBSCAN = import_topic_libraries(str(cache_dir()))
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction

    knn = neighbour_graph(embeddings, config.n_neighbors)
    anchored = given is None and targets is not None and (np.asarray(targets) >= 0).any()
    targets = np.asarray(targets, dtype=np.int64) if anchored else None
    reduced = cluster_space(embeddings, config, knn, targets=targets)
    # Stability is scored on the unsupervised reduction on every build, so scores compare like with
    # like (a reduction supervised by the previous topics would make re-clusterings agree trivially).
    unsupervised = (
        reduced if targets is None else (cluster_space(embeddings, config, knn) if config.stability else None)
    )
    if targets is not None:
        config = rebuild_topic_count(config, targets)
    n_topics, count_agreement = choose_topic_count(reduced, config)
    if given is not None:  # nothing changed since the previous map: its topics are the evidence
        labels = np.asarray(given, dtype=np.int64)
        outlying = labels == -1
    else:
        first_labels = partition(
            reduced, n_topics, config.min_topic_size, config.random_state, dissolve=False
        )
        clusters = first_labels if targets is None else anchor_clusters(first_labels, targets)
        outlying = outliers(reduced, config, HDBSCAN)
        labels = settle_small_clusters(
            np.where(outlying, -1, clusters), outlying, reduced, knn[0], embeddings, config.min_topic_size
        )
    labels = _renumber_by_size(labels)

    # BERTopic's c-TF-IDF keywords run once, on the labels after reassignment. A counter that finds
    # no vocabulary (Chinese, Russian, number-only abstracts) gives way to the next.
    # BERTopic's "english" mode deletes every character but ASCII letters, digits and spaces before
    # counting ("few-shot" -> "fewshot"); the vectorizer does all the tokenising, so words keep
    # their hyphens and accents as the papers write them.
    for vectorizer, note in vectorizers_for(documents):  # noqa: B007 (used after the loop)
        model = BERTopic(
            umap_model=BaseDimensionalityReduction(),  # the reduction above is UMAP's, done (or cached) once
            hdbscan_model=BaseCluster(),  # the clusters above, passed in as `y`
            vectorizer_model=vectorizer,
            ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
            top_n_words=config.top_n_words,
            calculate_probabilities=False,
            language="multilingual",
        )
        logging.getLogger("BERTopic").setLevel(logging.ERROR)  # BERTopic (re)sets its logger in __init__
        # Its representative documents go unread (`describe_topics` takes the papers nearest each
        # centroid): not worked out, a second count of every paper's words.
        model._save_representative_docs = lambda documents: None
        try:
            bertopic_ids, _ = model.fit_transform(documents, embeddings=reduced, y=labels)
        except ValueError as exc:
            if "vocabulary" not in str(exc):
                raise
            continue
        break
    # BERTopic renumbers topics by frequency; map its ids back to ours (ties may order differently).
    ours_of = dict(zip(bertopic_ids, labels.tolist(), strict=True))
    words = {ours_of[t]: pairs for t, pairs in model.get_topics().items() if t in ours_of}
    # Names: English phrases; for other corpora the same terms the keywords were counted with.
    # Each text is read once (`paper_texts`: cached by its hash), the phrases counted on the corpus.
    started = time.perf_counter()
    analyzer = None if note is None else vectorizer.build_analyzer()
    phrases = count_phrases(documents, analyzer, texts=paper_texts(documents))
    counted = time.perf_counter()
    table = describe_topics(labels, words, documents, embeddings, phrases=phrases)
    timings = {"phrases": counted - started, "topic names": time.perf_counter() - counted}
    if note == NO_WORDS_NOTE:  # numbers make poor names; a plain numbered name is honest
        table["label"] = [f"Topic {t}" for t in table["topic_id"]]
    return Topics(
        labels=labels,
        table=table,
        knn=knn,
        hdbscan_unassigned=int(outlying.sum()),
        reduced=reduced,
        unsupervised=unsupervised,
        phrases=phrases,
        notes=[note] if note else [],
        count_agreement=count_agreement,
        chosen_count=int(n_topics),
        timings=timings,
    )


def cluster_space(
    embeddings: np.ndarray, config: BuildConfig, knn: tuple, *, targets: np.ndarray | None = None
) -> np.ndarray:
    """The 10-D clustering space: cosine UMAP over the exact neighbour graph `knn` (cached by
    `pipeline.cache.cached_reduction`); `targets` (previous topic per paper, -1 none) make it
    semi-supervised (categorical, weight `TARGET_WEIGHT`). A handful of papers are their own space.
    """
    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import array_digest, cache_dir, cached_reduction
    from pipeline.modelling.layout import umap_cache_key, umap_settings

    if config.n_neighbors >= len(embeddings) / 3:
        # A handful of papers: every paper is every other's UMAP neighbour and a reduction would say
        # nothing; the vectors themselves are the clustering space (unit rows: Euclidean ~ cosine).
        return np.asarray(embeddings, dtype=np.float32)
    UMAP = import_topic_libraries(str(cache_dir()))[2]
    settings = umap_settings(
        CLUSTER_DIMENSIONS, n_neighbors=config.n_neighbors, random_state=config.random_state
    )
    key = umap_cache_key(settings, knn="exact")
    umap_targets = None
    if targets is not None:
        umap_targets = np.where(targets >= 0, targets, -1)  # UMAP's "no label" is -1
        settings = dict(settings, target_metric="categorical", target_weight=TARGET_WEIGHT)
        key = dict(key, target_weight=TARGET_WEIGHT, targets=array_digest(umap_targets))
    umap_model = UMAP(**settings, precomputed_knn=knn)
    reduced, _ = cached_reduction(
        f"umap{CLUSTER_DIMENSIONS}",
        embeddings,
        key,
        lambda: umap_model.fit_transform(embeddings, y=umap_targets),
    )
    return reduced


def anchor_clusters(labels: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """On a rebuild, clusters made mostly of one previous topic's papers become that one topic again.

    HDBSCAN's leaf clusters can cut a previous topic in two although nothing new arrived; a cluster
    whose papers are at least `ANCHOR_SHARE` old papers of one previous topic is that topic, so such
    clusters are joined. Clusters made mostly of new papers (or of several previous topics) stay as
    they are: that is where new topics form. An old paper HDBSCAN leaves out keeps its previous
    topic where that topic is still there (the clustering has no evidence it moved), and an old
    paper the previous map left unassigned (`WAS_UNASSIGNED`) stays out of the old topics; other
    left-out papers are voted in as in any build.

    Examples:
        >>> anchor_clusters(np.array([0, 0, 1, 1, 2, 2, -1, -1, 0]), np.array([7, 7, 7, 7, -1, -1, 7, 3, -2])).tolist()
        [0, 0, 0, 0, 2, 2, 0, -1, -1]
    """
    labels = np.asarray(labels).copy()
    targets = np.asarray(targets)
    home: dict[int, int] = {}  # previous topic -> the cluster its parts join
    for cluster_id in sorted(set(labels.tolist()) - {-1}):
        members = labels == cluster_id
        previous = Counter(targets[members & (targets >= 0)].tolist())
        if not previous:
            continue
        topic, count = previous.most_common(1)[0]
        if count >= ANCHOR_SHARE * members.sum():
            labels[members] = home.setdefault(topic, cluster_id)
    for topic, cluster_id in home.items():
        labels[(labels == -1) & (targets == topic)] = cluster_id
    # A paper no topic held before stays out of the old topics; it may still found or join a new one.
    labels[(targets == WAS_UNASSIGNED) & np.isin(labels, list(home.values()))] = -1
    return labels


def dense_group_size(min_topic_size: int) -> int:
    """The fewest unassigned papers that make a group (`DENSE_GROUP`, `MIN_DENSE_GROUP`).

    Examples:
        >>> dense_group_size(22), dense_group_size(6), dense_group_size(3)
        (8, 6, 5)
    """
    return max(MIN_DENSE_GROUP, min(DENSE_GROUP, min_topic_size))


def dense_groups(labels: np.ndarray, neighbours: np.ndarray, size: int) -> list[np.ndarray]:
    """Groups of unassigned papers that are each other's nearest neighbours: connected parts of the
    mutual (`size` - 1)-nearest-neighbour graph among unassigned papers (`neighbours`: each paper's
    nearest papers, itself first), keeping the papers at least half of whose neighbours are in the
    group (apart from every topic), of at least `size` papers. Each group's rows, sorted, largest first.

    Examples:
        >>> near = np.array([[0, 1, 2], [1, 0, 2], [2, 1, 0], [3, 4, 0], [4, 3, 0]])
        >>> [g.tolist() for g in dense_groups(np.array([-1, -1, -1, -1, 5]), near, 3)]
        [[0, 1, 2]]
    """
    labels = np.asarray(labels)
    loose = labels == -1
    if loose.sum() < size:
        return []
    k = min(
        size - 1, neighbours.shape[1] - 1
    )  # a group of `size` papers: each one's k nearest are the others
    near = neighbours[:, 1 : k + 1]
    parent = {int(i): int(i) for i in np.flatnonzero(loose)}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in parent:
        for j in near[i].tolist():
            if j in parent and i in near[j]:
                parent[root(i)] = root(j)
    parts: dict[int, list[int]] = {}
    for i in parent:
        parts.setdefault(root(i), []).append(i)
    groups = []
    for members in parts.values():
        # A paper joined through one mutual neighbour but whose neighbours are mostly elsewhere is not
        # of the group; what is left is a group when it is still large enough.
        members = [m for m in members if np.isin(near[m], members).mean() >= 0.5]
        if len(members) >= size:
            groups.append(np.array(sorted(members), dtype=np.int64))
    return sorted(groups, key=lambda g: (-len(g), int(g[0])))


def adopt_dense_groups(
    labels: np.ndarray, neighbours: np.ndarray, embeddings: np.ndarray, size: int
) -> np.ndarray:
    """Unassigned papers in a dense group (`dense_groups`) join the nearest topic when the group's
    centroid is as close to that topic's centroid as its typical member (the median member's
    similarity), else become a topic of their own (the next free id). The rest stay unassigned.

    Examples:
        >>> vectors = np.array([[1, 0, 0], [0.99, 0.1, 0], [0.99, 0, 0.1], [0, 1, 0], [0, 0.99, 0.1], [0.1, 0.99, 0]])
        >>> vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        >>> near = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [3, 4, 5], [4, 3, 5], [5, 3, 4]])
        >>> adopt_dense_groups(np.array([0, 0, 0, -1, -1, -1]), near, vectors, 3).tolist()
        [0, 0, 0, 1, 1, 1]
    """
    labels = np.asarray(labels).copy()
    groups = dense_groups(labels, neighbours, size)
    if not groups:
        return labels
    vectors = np.asarray(embeddings, dtype=np.float32)
    topic_ids, centroids = topic_centroids(vectors, labels)
    spread = {
        int(t): float(np.median(vectors[labels == t] @ c)) for t, c in zip(topic_ids.tolist(), centroids)
    }
    next_id = int(labels.max()) + 1
    for members in groups:
        centre = vectors[members].mean(axis=0)
        centre /= np.linalg.norm(centre) or 1.0
        if len(topic_ids):
            similarity = centroids @ centre
            nearest = int(np.argmax(similarity))
            if similarity[nearest] >= spread[int(topic_ids[nearest])]:
                labels[members] = int(topic_ids[nearest])
                continue
        labels[members] = next_id
        next_id += 1
    return labels


def settle_small_clusters(
    labels: np.ndarray,
    outlying: np.ndarray,
    reduced: np.ndarray,
    neighbours: np.ndarray,
    embeddings: np.ndarray,
    min_topic_size: int,
) -> np.ndarray:
    """Papers left at -1: those of KMeans clusters too small to be topics, and HDBSCAN's outliers.

    A dense group among them (`adopt_dense_groups`: each other's nearest neighbours, apart from
    every topic) is a topic of its own or joins its nearest topic, so a small line of work (eight
    crowd-counting papers) is never dissolved into an unrelated topic nor called unassigned. The rest
    of a small cluster's papers go to the nearest topic in the clustering space, as before; outliers
    stay unassigned.
    """
    labels = adopt_dense_groups(labels, neighbours, embeddings, dense_group_size(min_topic_size))
    loose = np.flatnonzero((labels == -1) & ~np.asarray(outlying))
    topic_ids = np.unique(labels[labels != -1])
    if len(loose) and len(topic_ids):
        points = np.asarray(reduced, dtype=np.float64)
        centres = np.stack([points[labels == t].mean(axis=0) for t in topic_ids])
        distances = ((points[loose, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        labels[loose] = topic_ids[np.argmin(distances, axis=1)]
    return labels


def partition(
    reduced: np.ndarray, n_topics: int, min_topic_size: int, seed: int, *, dissolve: bool = True
) -> np.ndarray:
    """KMeans topics of the clustering space; a cluster smaller than `min_topic_size` is dissolved
    into the nearest remaining ones (with `dissolve` False its papers are left at -1, for the
    caller to decide: see `settle_small_clusters`). One thread: the same papers give the same
    topics on any machine. From `CACHED_PARTITION_FROM` papers up, kept in the cache folder.

    Examples:
        >>> points = np.array([[0.0, 0], [0, 0.1], [0.1, 0], [5, 5], [5, 5.1], [5.1, 5], [9, 9]])
        >>> partition(points, 3, 2, 0).tolist(), partition(points, 3, 2, 0, dissolve=False).tolist()
        ([1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0, -1])
    """
    n_topics = max(1, min(n_topics, len(reduced)))
    if n_topics == 1:
        return np.zeros(len(reduced), dtype=np.int64)
    points = np.asarray(reduced, dtype=np.float64)
    if len(points) < CACHED_PARTITION_FROM:
        return _partition(points, n_topics, min_topic_size, seed, dissolve)
    from importlib.metadata import version

    from pipeline.cache import cached_reduction

    key = {"n_topics": n_topics, "min_topic_size": min_topic_size, "seed": seed, "dissolve": dissolve}
    labels, _ = cached_reduction(
        "kmeans",
        points,
        dict(key, sklearn=version("scikit-learn")),
        lambda: _partition(points, n_topics, min_topic_size, seed, dissolve),
    )
    return labels


# From this many papers up, a partition (the build's and each stability run's) is kept in the cache
# folder, keyed by the points and its settings: a rebuild of the same papers reads it (a 1,000-paper
# map's stability runs cut 900: 0.2 CPU s of its warm rebuild).
CACHED_PARTITION_FROM = 500


def _partition(
    points: np.ndarray, n_topics: int, min_topic_size: int, seed: int, dissolve: bool
) -> np.ndarray:
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        model = KMeans(n_clusters=n_topics, n_init=10, random_state=seed).fit(points)
    labels = model.labels_.astype(np.int64)
    centres = model.cluster_centers_
    if not dissolve:
        sizes = np.bincount(labels, minlength=len(centres))
        if (sizes >= min_topic_size).any():
            labels[sizes[labels] < min_topic_size] = -1
        return labels
    while True:
        sizes = np.bincount(labels, minlength=len(centres))
        small = np.flatnonzero((sizes > 0) & (sizes < min_topic_size))
        kept = np.flatnonzero(sizes >= min_topic_size)
        if not len(small) or not len(kept):
            break
        smallest = small[np.argmin(sizes[small])]
        members = np.flatnonzero(labels == smallest)
        distances = ((points[members, None, :] - centres[None, kept, :]) ** 2).sum(axis=2)
        labels[members] = kept[np.argmin(distances, axis=1)]
    return labels


def rebuild_topic_count(config: BuildConfig, targets: np.ndarray) -> BuildConfig:
    """A rebuild's topic count, not re-picked: the previous map's count plus room for new topics in
    proportion to the new papers (their share of the map times the count a map of this size aims at).

    Clusters made mostly of one previous topic's papers are joined back into it (`anchor_clusters`),
    so the extra room costs an unchanged corpus nothing, while papers of an area the previous map did
    not have get topics of their own instead of being spread over the old ones. Choosing the count
    again by re-clustering agreement could give the same papers another count, so a rebuild never
    does (`--refit` does).

    Examples:
        >>> config = BuildConfig().resolve(1_200)  # aims at 21 topics
        >>> targets = np.concatenate([np.repeat(np.arange(20), 45), np.full(300, -1)])  # 20 old topics, 25% new
        >>> rebuild_topic_count(config, targets).n_topics
        26
        >>> rebuild_topic_count(config, np.repeat(np.arange(18), 60)).n_topics  # no new paper: 18 again
        18
    """
    targets = np.asarray(targets)
    previous = len(set(targets[targets >= 0].tolist()))
    new_share = float((targets == -1).mean()) if len(targets) else 0.0
    count = previous + math.ceil(config.n_topics * new_share)
    return replace(config, n_topics=max(1, min(count, len(targets) // 3 or 1)), choose_n_topics=False)


def choose_topic_count(reduced: np.ndarray, config: BuildConfig) -> tuple[int, dict[int, float]]:
    """The number of topics: `config.n_topics` when the user gave it, else of the counts near
    `topic_count_for(papers)`, the one whose KMeans runs with other seeds agree best (mean pairwise
    ARI on a seeded sample of at most `COUNT_SAMPLE` papers; ties go to the count nearest the aim).

    Returns:
        The count, and each candidate count's agreement (for the About panel).
    """
    from itertools import combinations

    from sklearn.metrics import adjusted_rand_score

    aim = config.n_topics
    if not config.choose_n_topics or len(reduced) < 20:
        return aim, {}
    candidates = sorted({max(2, min(len(reduced) // 3, round(aim * f))) for f in COUNT_FACTORS})
    rng = np.random.default_rng(config.random_state)
    rows = np.sort(rng.choice(len(reduced), size=min(len(reduced), COUNT_SAMPLE), replace=False))
    points = np.asarray(reduced[rows], dtype=np.float64)
    agreement = {}
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    for count in candidates:
        with threadpool_limits(1):
            runs = [
                KMeans(n_clusters=count, n_init=1, random_state=config.random_state + run).fit_predict(points)
                for run in range(COUNT_RUNS)
            ]
        agreement[count] = round(
            float(np.mean([adjusted_rand_score(a, b) for a, b in combinations(runs, 2)])), 4
        )
    best = max(candidates, key=lambda c: (agreement[c], -abs(c - aim), -c))
    return best, agreement


def outliers(reduced: np.ndarray, config: BuildConfig, hdbscan_class=None) -> np.ndarray:
    """Papers far from every dense group: HDBSCAN leaves them out with a GLOSH outlier score of at
    least `OUTLIER_SCORE`; at most `MAX_UNASSIGNED` of the papers, the most outlying first."""
    if hdbscan_class is None:
        from pipeline._fastimport import import_topic_libraries
        from pipeline.cache import cache_dir

        hdbscan_class = import_topic_libraries(str(cache_dir()))[3]
    flagged = np.zeros(len(reduced), dtype=bool)
    if len(reduced) <= max(config.min_topic_size, 5):
        return flagged
    model = hdbscan_class(
        min_cluster_size=min(config.min_topic_size, len(reduced)),
        min_samples=config.min_samples,
        metric="euclidean",
        prediction_data=False,
        # Core distances in this process: HDBSCAN's 4 starts four worker processes, each importing
        # NumPy and scikit-learn (6 CPU s on 25,000 papers) for a second's work; the same distances.
        core_dist_n_jobs=1,
    ).fit(reduced)
    scores = np.nan_to_num(np.asarray(model.outlier_scores_, dtype=np.float64), nan=0.0)
    candidates = np.flatnonzero((np.asarray(model.labels_) == -1) & (scores >= OUTLIER_SCORE))
    limit = int(MAX_UNASSIGNED * len(reduced))
    chosen = candidates[np.argsort(-scores[candidates], kind="stable")[:limit]]
    flagged[chosen] = True
    return flagged


def topic_stability(
    reduced: np.ndarray,
    embeddings: np.ndarray,
    labels: np.ndarray,
    config: BuildConfig,
    *,
    runs: int = 10,
    share: float = 0.9,
) -> tuple[dict[int, float], dict]:
    """How reliably each topic comes back when the clustering is redone on 90% of the papers.

    Each run draws `share` of the papers (its own seed) and cuts their 10-D reduction into as
    many topics with KMeans (its own seed), as the build does. The reduction is the unsupervised
    one on every build (`Topics.unsupervised`): a rebuild's reduction supervised by the previous
    topics would make re-clusterings agree by construction, so scores of two builds compare; a topic's score in a run
    is the best Jaccard overlap of its members (among the drawn papers) with any cluster of the
    run, and its stability the mean over runs (Hennig's clusterwise bootstrap). UMAP is not
    refitted: it costs far more than KMeans, and it is the clustering whose choices vary. Ten
    runs keep the score of an unchanged topic within a few hundredths between rebuilds.
    1.0 means the topic came back whole every time; below about 0.5 it is a grouping of
    convenience that another run would draw differently.

    Returns:
        topic id -> stability in [0, 1], and a report: runs, method, seconds.
    """
    started = time.perf_counter()
    labels = np.asarray(labels)
    topic_ids = [int(t) for t in np.unique(labels) if t != -1]
    totals = dict.fromkeys(topic_ids, 0.0)
    drawn = dict.fromkeys(topic_ids, 0)
    rng = np.random.default_rng(config.random_state)
    size = max(2, int(round(share * len(labels))))
    n_topics = len(topic_ids)
    for run_index in range(runs):
        rows = np.sort(rng.choice(len(labels), size=size, replace=False))
        run = partition(reduced[rows], n_topics, config.min_topic_size, config.random_state + 1 + run_index)
        ours = labels[rows]
        for topic in topic_ids:
            members = ours == topic
            if not members.any():
                continue  # the draw left the whole topic out: no evidence either way
            drawn[topic] += 1
            overlap = Counter(run[members].tolist())
            overlap.pop(-1, None)
            best = 0.0
            for other, shared in overlap.items():
                union = members.sum() + (run == other).sum() - shared
                best = max(best, shared / union)
            totals[topic] += best
    scores = {topic: round(totals[topic] / max(1, drawn[topic]), 4) for topic in topic_ids}
    report = {
        "runs": runs,
        "method": f"KMeans on {share:.0%} subsamples of the unsupervised 10-D UMAP reduction; "
        "a topic's score is the mean best Jaccard match of its members",
        "seconds": round(time.perf_counter() - started, 3),
    }
    return scores, report


def _renumber_by_size(labels: np.ndarray) -> np.ndarray:
    """Topic 0 is the largest; -1 stays -1; ties broken by old id for determinism."""
    sizes = Counter(labels[labels != -1].tolist())
    order = sorted(sizes, key=lambda t: (-sizes[t], t))
    mapping = {old: new for new, old in enumerate(order)}
    mapping[-1] = -1
    return np.array([mapping[t] for t in labels.tolist()], dtype=np.int64)


def describe_topics(
    labels: np.ndarray,
    words: dict,
    documents: list[str],
    embeddings: np.ndarray,
    *,
    n_representatives: int = 3,
    phrases: PhraseCounts | None = None,
) -> pd.DataFrame:
    """One row a topic: a name, keywords with weights, size, most central papers (row indices), centroid."""
    topic_ids, centroids = topic_centroids(embeddings, labels)
    names = name_groups(
        documents, labels, dict(zip(topic_ids.tolist(), centroids)), embeddings=embeddings, counts=phrases
    )
    rows = []
    for topic_id, centroid in zip(topic_ids.tolist(), centroids):
        members = np.flatnonzero(labels == topic_id)
        # A phrase the counter made by skipping a stop word or a full stop ("models that linear" ->
        # "models linear") is not what the papers write: only phrases found as written are kept.
        written = " ".join(" ".join(documents[i].split()) for i in members).lower()
        pairs = [(w, float(s)) for w, s in words.get(topic_id, []) if w and (" " not in w or w in written)]
        closeness = np.asarray(embeddings[members], dtype=np.float32) @ centroid
        central = members[np.argsort(-closeness, kind="stable")[:n_representatives]]
        rows.append(
            {
                "topic_id": topic_id,
                "label": names[topic_id],
                "keywords": [w for w, _ in pairs],
                "keyword_weights": [round(s, 5) for _, s in pairs],
                "size": len(members),
                "representative_rows": central.tolist(),
                "centroid": centroid.astype(np.float32),
            }
        )
    columns = ["topic_id", "label", "keywords", "keyword_weights", "size", "representative_rows", "centroid"]
    return pd.DataFrame(rows, columns=columns)
