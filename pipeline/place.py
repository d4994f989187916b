"""Place a new abstract on an existing map without refitting: among the papers it is most like."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.topics import cosine_knn

# How sharply the nearest papers outweigh the rest: a neighbour `TEMPERATURE` less similar than
# the nearest counts 1/e as much. all-MiniLM similarities between papers of one topic spread over
# about 0.3-0.7, so 0.03 lets a paper at 0.6 outvote three at 0.5 (e^-3.3 each): the evidence of
# the closest papers decides, not the size of the topic around them. Chosen by leave-one-out on
# the seed map and a 2,000-abstract sample (benchmarks/PLACEMENT_RESULTS.md).
TEMPERATURE = 0.03
NEIGHBOURS = 10
# A paper "fits" a topic when it is at least as close to the topic's centroid as the topic's least
# typical members are: this share of members sits below the threshold.
TYPICAL_QUANTILE = 0.05


@dataclass(frozen=True)
class TopicProfile:
    """Each topic's unit centroid and how close its least typical members sit to it."""

    topic_ids: np.ndarray  # (t,)
    centroids: np.ndarray  # (t, d) unit rows
    typical: np.ndarray  # (t,) the TYPICAL_QUANTILE of member-centroid similarity (leave-one-out)


@dataclass(frozen=True)
class Placement:
    """Where a new paper lands: map position, topic, and the papers it sits among (rows, best first).

    `centroid_similarity` is the paper's similarity to its topic's centroid and `fits` whether that
    reaches the topic's typical range (None when no profile was given or the paper is unassigned).
    """

    x: float
    y: float
    topic_id: int
    neighbour_rows: np.ndarray
    similarities: np.ndarray
    centroid_similarity: float | None = None
    fits: bool | None = None


def topic_profile(embeddings: np.ndarray, topic_ids: np.ndarray) -> TopicProfile:
    """Centroids and typical member similarity of every topic (-1 excluded) of a map.

    A member's similarity is to the centroid of the topic's *other* members: a new paper is not
    part of the centroid it is compared with, and in a topic of three a member's own third of
    the centroid would otherwise set a bar no newcomer reaches.

    Examples:
        >>> vectors = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
        >>> profile = topic_profile(vectors, np.array([3, 3, 5]))
        >>> profile.topic_ids.tolist(), np.round(profile.centroids.astype(float), 3).tolist()
        ([3, 5], [[0.949, 0.316], [0.0, 1.0]])
        >>> round(float(profile.typical[0]), 3)  # each of the two members against the other
        0.8
    """
    vectors = np.asarray(embeddings, dtype=np.float32)
    labels = np.asarray(topic_ids)
    ids = np.array(sorted(set(labels.tolist()) - {-1}), dtype=np.int64)
    centroids = np.zeros((len(ids), vectors.shape[1]), dtype=np.float32)
    typical = np.zeros(len(ids), dtype=np.float32)
    for row, topic in enumerate(ids):
        members = vectors[labels == topic]
        total = members.sum(axis=0)
        centroids[row] = total / (np.linalg.norm(total) or 1.0)
        if len(members) == 1:
            typical[row] = 1.0  # nothing to compare with: only a duplicate fits a lone paper
            continue
        others = total[None, :] - members
        others /= np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1e-12)
        typical[row] = np.quantile(np.einsum("ij,ij->i", members, others), TYPICAL_QUANTILE)
    return TopicProfile(topic_ids=ids, centroids=centroids, typical=typical)


def evidence_weights(similarities: np.ndarray, temperature: float = TEMPERATURE) -> np.ndarray:
    """Softmax weights of neighbours by similarity: the nearest paper weighs 1, others less.

    Examples:
        >>> evidence_weights(np.array([0.6, 0.45, 0.44, 0.44]), 0.03).round(4).tolist()
        [1.0, 0.0067, 0.0048, 0.0048]
    """
    similarities = np.asarray(similarities, dtype=np.float64)
    return np.exp((similarities - similarities.max()) / temperature)


def place(
    vector: np.ndarray,
    embeddings: np.ndarray,
    papers_xy: np.ndarray,
    topic_ids: np.ndarray,
    k: int = NEIGHBOURS,
    *,
    profile: TopicProfile | None = None,
    temperature: float = TEMPERATURE,
) -> Placement:
    """Position a unit `vector` among the map's papers it is most like.

    The topic is the one whose papers among the `k` nearest carry the most evidence, each
    neighbour weighted by `evidence_weights` (a softmax of similarity): the closest papers decide,
    so a small topic whose papers are clearly nearest wins over a big topic with many
    middling neighbours. Unassigned neighbours (-1) vote too: a paper among outliers stays
    unassigned, as it would have in the build. The position is the same weighted mean of the
    chosen topic's neighbours' coordinates, so the pin sits in that topic's cluster, on top of
    the papers it is most like rather than between clusters.

    Args:
        vector: (d,) or (1, d) unit row from the map's encoder.
        embeddings: (n, d) unit rows of the map (float16 is fine).
        papers_xy: (n, 2) map coordinates, row i = embeddings row i.
        topic_ids: (n,) topic of each paper, -1 = unassigned.
        k: neighbours consulted (capped at n).
        profile: the map's `topic_profile`, to say how well the paper fits its topic.
        temperature: softmax temperature of the neighbour weights.

    Examples:
        >>> corpus = np.eye(3, dtype=np.float32)[[0, 0, 1, 2]]
        >>> xy = np.array([[0, 0], [2, 0], [10, 10], [-10, 5]], dtype=np.float32)
        >>> spot = place(np.array([1, 0, 0], np.float32), corpus, xy, np.array([4, 4, 7, 8]), k=2)
        >>> (spot.x, spot.y, spot.topic_id, spot.neighbour_rows.tolist())
        (1.0, 0.0, 4, [0, 1])
    """
    if len(embeddings) == 0:
        raise ValueError("cannot place a paper on an empty map")
    query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
    corpus = np.asarray(embeddings, dtype=np.float32)
    rows, similarities = cosine_knn(query, corpus, k)
    rows, similarities = rows[0], similarities[0]
    weights = evidence_weights(similarities, temperature)
    neighbour_topics = np.asarray(topic_ids)[rows]
    votes: dict[int, float] = {}
    for topic, weight in zip(neighbour_topics.tolist(), weights.tolist(), strict=True):
        votes[topic] = votes.get(topic, 0.0) + weight
    # Ties go to the topic holding the single closest paper.
    topic_id = max(votes, key=lambda t: (round(votes[t], 9), weights[neighbour_topics == t].max()))
    home = neighbour_topics == topic_id
    xy = np.asarray(papers_xy, dtype=np.float64)[rows[home]]
    x, y = (weights[home, None] * xy).sum(axis=0) / weights[home].sum()
    centroid_similarity, fits = None, None
    if profile is not None and topic_id != -1 and topic_id in profile.topic_ids:
        row = int(np.flatnonzero(profile.topic_ids == topic_id)[0])
        centroid_similarity = float(query[0] @ profile.centroids[row])
        fits = centroid_similarity >= float(profile.typical[row])
    return Placement(
        x=float(x),
        y=float(y),
        topic_id=int(topic_id),
        neighbour_rows=rows,
        similarities=similarities.astype(np.float32),
        centroid_similarity=centroid_similarity,
        fits=fits,
    )
