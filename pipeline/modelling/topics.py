"""Topics: UMAP (5-D, cosine) + HDBSCAN through BERTopic, outlier reassignment, stability, names."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from pipeline.config import BuildConfig
from pipeline.modelling.neighbours import cosine_knn, neighbour_graph, reassign_outliers, topic_centroids
from pipeline.naming.names import (
    ABSTRACT_STOP_WORDS,
    NO_WORDS_NOTE,
    PhraseCounts,
    count_phrases,
    name_groups,
    vectorizer_for,
    vectorizers_for,
)

# A rebuild's 5-D UMAP weighs the previous map's topics this much against the papers' own
# neighbourhoods (UMAP's categorical target_weight, 0-1); see benchmarks/REBUILD_RESULTS.md.
TARGET_WEIGHT = 0.5
# A rebuild's target for an old paper the previous map left unassigned (new papers have -1).
WAS_UNASSIGNED = -2
# A rebuild's cluster made at least this much of one previous topic's papers is that topic.
ANCHOR_SHARE = 0.5
# Min topic sizes tried around the chosen one to show whether the map sits on a parameter cliff.
CLIFF_FACTORS = (0.8, 0.9, 1.1, 1.25)

# Older imports (`from pipeline.topics import cosine_knn`) keep working.
__all__ = [
    "ABSTRACT_STOP_WORDS",
    "Topics",
    "cosine_knn",
    "describe_topics",
    "fit_topics",
    "neighbour_graph",
    "reassign_outliers",
    "topic_stability",
    "vectorizer_for",
]


@dataclass
class Topics:
    """What the topic stage learned: one label per paper and one row per topic."""

    labels: np.ndarray  # topic_id per paper, -1 = unassigned
    # topic_id, label, keywords, keyword_weights, size, representative_rows, centroid
    table: pd.DataFrame
    knn: tuple  # the exact neighbour graph both UMAP runs use (see `neighbour_graph`)
    hdbscan_unassigned: int  # papers HDBSCAN left out before reassignment
    reduced: np.ndarray | None = None  # the 5-D UMAP reduction HDBSCAN ran on (for `topic_stability`)
    phrases: PhraseCounts | None = None  # candidate name phrases per paper (reused to name themes)
    notes: list[str] = field(default_factory=list)  # what a user should hear about the names
    cliffs: dict[int, int] = field(default_factory=dict)  # min topic size -> HDBSCAN clusters, nearby sizes


def fit_topics(
    documents: list[str],
    embeddings: np.ndarray,
    config: BuildConfig,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    targets: np.ndarray | None = None,
) -> Topics:
    """Cluster papers into topics and describe each one; `config` must be resolved.

    `encode` (texts -> unit embeddings, the map's encoder) lets naming prefer phrases close to a
    topic's centroid; without it names come from the text statistics alone. `targets` (a rebuild's
    previous topic per paper: -1 for a new paper, `WAS_UNASSIGNED` for an old paper the previous map
    left unassigned) makes the 5-D UMAP semi-supervised (categorical, weight `TARGET_WEIGHT`): old
    topics hold together where the new papers do not pull them apart, and papers without a target
    still form topics of their own. See `anchor_clusters` for what else a rebuild keeps.
    """
    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir, cached_reduction

    BERTopic, ClassTfidfTransformer, UMAP, HDBSCAN = import_topic_libraries(str(cache_dir()))
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction

    from pipeline.modelling.layout import array_digest, umap_cache_key, umap_settings

    knn = neighbour_graph(embeddings, config.n_neighbors)
    settings = umap_settings(5, n_neighbors=config.n_neighbors, random_state=config.random_state)
    key = umap_cache_key(settings, knn="exact")
    if targets is not None and (np.asarray(targets) >= 0).any():
        targets = np.asarray(targets, dtype=np.int64)
        umap_targets = np.where(targets >= 0, targets, -1)  # UMAP's "no label" is -1
        settings = dict(settings, target_metric="categorical", target_weight=TARGET_WEIGHT)
        key = dict(key, target_weight=TARGET_WEIGHT, targets=array_digest(umap_targets))
    else:
        targets = umap_targets = None
    umap_model = UMAP(**settings, precomputed_knn=knn)
    reduced, _ = cached_reduction(
        "umap5", embeddings, key, lambda: umap_model.fit_transform(embeddings, y=umap_targets)
    )
    first_labels = cluster(reduced, config, HDBSCAN)
    cliffs = topic_counts_nearby(reduced, config, HDBSCAN, chosen_labels=first_labels)
    clusters = first_labels if targets is None else anchor_clusters(first_labels, targets)
    labels = reassign_outliers(embeddings, clusters, k=config.reassign_neighbors)
    if targets is not None:  # left out before and left out again: no evidence it belongs anywhere now
        labels[(clusters == -1) & (targets == WAS_UNASSIGNED)] = -1
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
    phrases = count_phrases(documents, None if note is None else vectorizer.build_analyzer())
    table = describe_topics(labels, words, documents, embeddings, encode=encode, phrases=phrases)
    if note == NO_WORDS_NOTE:  # numbers make poor names; a plain numbered name is honest
        table["label"] = [f"Topic {t}" for t in table["topic_id"]]
    return Topics(
        labels=labels,
        table=table,
        knn=knn,
        hdbscan_unassigned=int((first_labels == -1).sum()),
        reduced=reduced,
        phrases=phrases,
        notes=[note] if note else [],
        cliffs=cliffs,
    )


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


def topic_counts_nearby(
    reduced: np.ndarray, config: BuildConfig, hdbscan_class=None, *, chosen_labels: np.ndarray | None = None
) -> dict[int, int]:
    """How many topics HDBSCAN finds at the chosen min topic size and at sizes around it.

    A map on a parameter cliff (a peer's users saw 53 clusters fall to 3 when the size went from
    150 to 160) shows it here: the counts at neighbouring sizes differ sharply from the map's own.
    """
    chosen = config.min_topic_size
    sizes = sorted({max(2, round(chosen * f)) for f in CLIFF_FACTORS} | {chosen})
    counts = {}
    for size in sizes:
        if size > len(reduced):
            continue
        if size == chosen and chosen_labels is not None:  # the build's own clustering: not run twice
            labels = chosen_labels
        else:
            labels = cluster(reduced, replace(config, min_topic_size=size), hdbscan_class)
        counts[int(size)] = int(len(set(labels.tolist()) - {-1}))
    return counts


def cluster(reduced: np.ndarray, config: BuildConfig, hdbscan_class=None) -> np.ndarray:
    """HDBSCAN's clusters of the 5-D reduction (-1 = left out), or one cluster when it finds none."""
    if hdbscan_class is None:
        from pipeline._fastimport import import_topic_libraries
        from pipeline.cache import cache_dir

        hdbscan_class = import_topic_libraries(str(cache_dir()))[3]
    model = hdbscan_class(
        min_cluster_size=min(config.min_topic_size, len(reduced)),
        min_samples=config.min_samples,
        metric="euclidean",
        cluster_selection_method="leaf",
        prediction_data=False,
    )
    labels = np.asarray(model.fit(reduced).labels_)
    if (labels == -1).all():
        # Too few or too uniform papers for any cluster: one topic is the honest map.
        labels = np.zeros(len(reduced), dtype=int)
    return labels


def topic_stability(
    reduced: np.ndarray,
    embeddings: np.ndarray,
    labels: np.ndarray,
    config: BuildConfig,
    *,
    runs: int = 5,
    share: float = 0.9,
) -> tuple[dict[int, float], dict]:
    """How reliably each topic comes back when the clustering is redone on 90% of the papers.

    Each run draws `share` of the papers (its own seed), clusters their 5-D reduction with the
    build's HDBSCAN settings and reassigns outliers as the build does; a topic's score in a run
    is the best Jaccard overlap of its members (among the drawn papers) with any cluster of the
    run, and its stability the mean over runs (Hennig's clusterwise bootstrap). UMAP is not
    refitted: it costs far more than HDBSCAN, and it is the clustering whose choices vary.
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
    for _ in range(runs):
        rows = np.sort(rng.choice(len(labels), size=size, replace=False))
        run = cluster(reduced[rows], config)
        run = reassign_outliers(embeddings[rows], run, k=config.reassign_neighbors)
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
        "method": f"HDBSCAN + outlier reassignment on {share:.0%} subsamples of the 5-D UMAP reduction; "
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
    encode: Callable[[list[str]], np.ndarray] | None = None,
    phrases: PhraseCounts | None = None,
) -> pd.DataFrame:
    """One row a topic: a name, keywords with weights, size, most central papers (row indices), centroid."""
    topic_ids, centroids = topic_centroids(embeddings, labels)
    names = name_groups(
        documents, labels, dict(zip(topic_ids.tolist(), centroids)), encode=encode, counts=phrases
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
