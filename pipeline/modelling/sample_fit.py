"""Fit topics and the 2-D map on a seeded sample of a large corpus, then assign and place the rest.

UMAP and HDBSCAN cost grows faster than the corpus (and their memory with it); a sample of tens of
thousands of papers already shows every topic big enough to name. The rest join the topic their
nearest sample papers vote for (the same vote that reassigns HDBSCAN's outliers) and sit at the
similarity-weighted mean of those papers' map positions (as `pipeline.modelling.place` puts an added paper).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from pipeline.config import BuildConfig
from pipeline.modelling.neighbours import cosine_knn, reassign_outliers, topic_centroids
from pipeline.modelling.topics import MAX_UNASSIGNED, WAS_UNASSIGNED, Topics, fit_topics

# Neighbours whose positions average into a placed paper's map position.
PLACE_NEIGHBOURS = 10


@dataclass
class SampleFit:
    """Topics for every paper, the sample they were fitted on, and what placing the rest needs."""

    topics: Topics  # labels and sizes for every paper; knn covers the sample rows only
    sample_rows: np.ndarray  # sorted row indices of the fitted sample
    rest_rows: np.ndarray  # the other rows, assigned and placed
    rest_neighbours: np.ndarray  # (len(rest), k) positions in `sample_rows`, most similar first
    rest_similarities: np.ndarray  # (len(rest), k) cosine similarities

    @classmethod
    def of_all(cls, topics: Topics) -> SampleFit:
        """A fit on every paper: the "sample" is the whole corpus and nothing is left to place."""
        n_papers = len(topics.labels)
        nothing = np.empty((0, PLACE_NEIGHBOURS))
        return cls(
            topics, np.arange(n_papers), np.empty(0, dtype=np.int64), nothing.astype(np.int64), nothing
        )


def sample_rows(n_papers: int, size: int, seed: int) -> np.ndarray:
    """A seeded uniform sample of `size` row indices, sorted (all rows when `size` >= `n_papers`).

    Examples:
        >>> sample_rows(10, 4, 42).tolist() == sample_rows(10, 4, 42).tolist()
        True
        >>> sample_rows(3, 5, 0).tolist()
        [0, 1, 2]
    """
    if size >= n_papers:
        return np.arange(n_papers)
    return np.sort(np.random.default_rng(seed).choice(n_papers, size=size, replace=False))


def assign_rest(
    embeddings: np.ndarray,
    rows: np.ndarray,
    sample_labels: np.ndarray,
    *,
    k: int,
    targets: np.ndarray | None = None,
) -> np.ndarray:
    """Topic of every paper: the sample keeps its labels, the rest are voted in like outliers.

    Every paper outside the sample starts unassigned and goes through `reassign_outliers` against
    the sample's assigned papers: it joins a topic when that topic holds a third of its neighbours'
    similarity-weighted vote or it is as close to the topic's centroid as the topic's own members.
    On a rebuild (`targets`: previous topic per paper), an old paper outside the sample keeps its
    previous topic where the sample found that topic again (see `previous_homes`).
    """
    labels = np.full(len(embeddings), -1, dtype=np.int64)
    labels[rows] = sample_labels
    rest = np.setdiff1d(np.arange(len(embeddings)), rows, assume_unique=True)
    if targets is None:
        return within_unassigned_share(embeddings, reassign_outliers(embeddings, labels, k=k), rest)
    targets = np.asarray(targets)
    for previous, label in previous_homes(sample_labels, targets[rows]).items():
        labels[rest[targets[rest] == previous]] = label
    labels = within_unassigned_share(embeddings, reassign_outliers(embeddings, labels, k=k), rest)
    labels[rest[targets[rest] == WAS_UNASSIGNED]] = -1  # unassigned before, and the sample did not see it
    return labels


def within_unassigned_share(embeddings: np.ndarray, labels: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """At most `MAX_UNASSIGNED` of the map unassigned, as on a map fitted on all its papers: papers
    outside the sample whose neighbours' votes were split stay unassigned only while they are the
    least typical of their nearest topic (lowest cosine to its centroid), within what the sample's
    own unassigned papers leave of the share; the rest join the topic whose centroid is nearest.

    Examples:
        >>> vectors = np.eye(2, dtype=np.float32)[[0] * 40 + [1] * 40 + [0, 1] * 5]
        >>> labels = np.array([0] * 40 + [1] * 40 + [-1] * 10)  # 10 of 90 unassigned; 3% is 2
        >>> after = within_unassigned_share(vectors, labels, np.arange(80, 90))
        >>> int((after == -1).sum()), sorted(set(after[80:].tolist()))
        (2, [-1, 0, 1])
    """
    labels = labels.copy()
    loose = rest[labels[rest] == -1]
    budget = int(MAX_UNASSIGNED * len(labels)) - int((np.delete(labels, rest) == -1).sum())
    if len(loose) <= max(budget, 0) or not (labels != -1).any():
        return labels
    topic_ids, centroids = topic_centroids(embeddings, labels)
    similarity = np.asarray(embeddings[loose], dtype=np.float32) @ centroids.T
    nearest, closeness = np.argmax(similarity, axis=1), similarity.max(axis=1)
    joining = np.argsort(-closeness, kind="stable")[: len(loose) - max(budget, 0)]  # the most typical join
    labels[loose[joining]] = topic_ids[nearest[joining]]
    return labels


def previous_homes(labels: np.ndarray, targets: np.ndarray) -> dict[int, int]:
    """Previous topic -> the topic that is clearly it again: the topic holding most of the previous
    topic's papers, whose old papers are in turn mostly that previous topic's.

    Examples:
        >>> previous_homes(np.array([0, 0, 0, 1, 1, 1]), np.array([7, 7, 8, 8, 8, -1]))
        {7: 0, 8: 1}
    """
    labels, targets = np.asarray(labels), np.asarray(targets)
    homes = {}
    for previous in sorted(t for t in set(targets.tolist()) if t >= 0):
        held = Counter(labels[(targets == previous) & (labels != -1)].tolist())
        if not held:
            continue
        label = held.most_common(1)[0][0]
        old_in_label = Counter(targets[(labels == label) & (targets >= 0)].tolist())
        if old_in_label.most_common(1)[0][0] == previous:
            homes[int(previous)] = int(label)
    return homes


def fit_on_sample(
    documents: list[str],
    embeddings: np.ndarray,
    config: BuildConfig,
    *,
    targets: np.ndarray | None = None,
    given: np.ndarray | None = None,
) -> SampleFit:
    """Fit topics on `config.fit_sample` papers and assign the rest (`targets`, `given`: see
    `fit_topics`; with `given` every paper keeps its given topic, the sample's and the rest's).

    `config` must be resolved for the whole corpus. The smallest topic and HDBSCAN's `min_samples`
    shrink with the sample's share of the corpus, so the sample finds the topics the whole corpus
    would (a topic of 300 papers in 80,000 is one of about 75 in a sample of 20,000). Names and
    keywords come from the sample's documents; sizes and centroids count every paper; topic 0 is
    the largest. The result's `reduced` and `phrases` cover the sample rows only.
    """
    n_papers = len(documents)
    rows = sample_rows(n_papers, config.fit_sample, config.random_state)
    share = len(rows) / n_papers
    sample_config = replace(
        config,
        min_topic_size=max(2, round(config.min_topic_size * share)),
        min_samples=max(1, round(config.min_samples * share)),
        n_neighbors=min(config.n_neighbors, len(rows) - 1),
    )
    fitted = fit_topics(
        [documents[i] for i in rows],
        embeddings[rows],
        sample_config,
        targets=None if targets is None else np.asarray(targets)[rows],
        given=None if given is None else np.asarray(given)[rows],
    )
    if given is None:
        labels = assign_rest(embeddings, rows, fitted.labels, k=config.reassign_neighbors, targets=targets)
    else:  # the sample's topics under their fitted ids; the rest keep theirs too
        fitted_id = dict(zip(np.asarray(given)[rows].tolist(), fitted.labels.tolist(), strict=True))
        labels = np.array([fitted_id.get(t, -1) for t in np.asarray(given).tolist()], dtype=np.int64)
    rest = np.setdiff1d(np.arange(n_papers), rows, assume_unique=True)
    neighbours, similarities = cosine_knn(
        np.ascontiguousarray(embeddings[rest]), np.ascontiguousarray(embeddings[rows]), PLACE_NEIGHBOURS
    )
    # Sizes over every paper may order the topics differently from the sample: renumber.
    counts = np.bincount(labels[labels != -1], minlength=len(fitted.table))
    order = sorted(fitted.table["topic_id"], key=lambda t: (-counts[t], t))
    new_id = {old: new for new, old in enumerate(order)}
    table = fitted.table.copy()
    table["size"] = [int(counts[t]) for t in table["topic_id"]]
    table["representative_rows"] = table["representative_rows"].map(lambda r: rows[r].tolist())
    table["topic_id"] = table["topic_id"].map(new_id)
    table = table.sort_values("topic_id").reset_index(drop=True)
    labels = np.array([new_id.get(t, -1) for t in labels.tolist()], dtype=np.int64)
    # HDBSCAN saw only the sample: scale its outlier count to the corpus (an estimate).
    outliers = round(fitted.hdbscan_unassigned / share)
    topic_ids, centroids = topic_centroids(embeddings, labels)
    centroid_of = dict(zip(topic_ids.tolist(), centroids))
    table["centroid"] = table["topic_id"].map(lambda t: centroid_of[t].astype(np.float32))
    topics = Topics(
        labels=labels,
        table=table,
        knn=fitted.knn,
        hdbscan_unassigned=outliers,
        reduced=fitted.reduced,
        unsupervised=fitted.unsupervised,
        phrases=fitted.phrases,
        notes=fitted.notes,
        count_agreement=fitted.count_agreement,
        chosen_count=fitted.chosen_count,
        timings=fitted.timings,
    )
    return SampleFit(topics, rows, rest, neighbours, similarities)


def place_rest(fit: SampleFit, sample_xy: np.ndarray) -> np.ndarray:
    """2-D positions of all papers: the sample's own, the rest at their neighbours' weighted mean."""
    coordinates = np.zeros((len(fit.sample_rows) + len(fit.rest_rows), 2), dtype=np.float32)
    coordinates[fit.sample_rows] = sample_xy
    if len(fit.rest_rows):
        weights = np.clip(fit.rest_similarities, 1e-6, None).astype(np.float64)
        points = sample_xy[fit.rest_neighbours].astype(np.float64)  # (rest, k, 2)
        placed = (weights[:, :, None] * points).sum(axis=1) / weights.sum(axis=1, keepdims=True)
        coordinates[fit.rest_rows] = placed
    return coordinates
