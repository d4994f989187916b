"""Place a new abstract on an existing map without refitting: weighted mean of its nearest papers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.topics import cosine_knn


@dataclass(frozen=True)
class Placement:
    """Where a new paper lands: map position, topic, and the papers it sits among (rows, best first)."""

    x: float
    y: float
    topic_id: int
    neighbour_rows: np.ndarray
    similarities: np.ndarray


def place(
    vector: np.ndarray, embeddings: np.ndarray, papers_xy: np.ndarray, topic_ids: np.ndarray, k: int = 10
) -> Placement:
    """Position a unit `vector` among the map's papers.

    The position is the similarity-weighted mean of its `k` nearest papers' coordinates (cosine on
    the stored embeddings); the topic is the one with the largest similarity-weighted vote among
    them, so a paper surrounded by one topic joins it. Unassigned neighbours (-1) vote too: a
    paper among outliers stays unassigned, as it would have in the build. Ties go to the topic
    whose voters are closest.

    Args:
        vector: (384,) or (1, 384) unit row from the map's encoder.
        embeddings: (n, 384) unit rows of the map (float16 is fine).
        papers_xy: (n, 2) map coordinates, row i = embeddings row i.
        topic_ids: (n,) topic of each paper, -1 = unassigned.
        k: neighbours consulted (capped at n).

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
    # Opposite-direction neighbours must not pull the point away; keep every weight positive.
    weights = np.clip(similarities, 1e-6, None).astype(np.float64)
    xy = np.asarray(papers_xy, dtype=np.float64)[rows]
    x, y = (weights[:, None] * xy).sum(axis=0) / weights.sum()
    neighbour_topics = np.asarray(topic_ids)[rows]
    votes: dict[int, float] = {}
    for topic, weight in zip(neighbour_topics.tolist(), weights.tolist(), strict=True):
        votes[topic] = votes.get(topic, 0.0) + weight
    topic_id = max(votes, key=lambda t: (round(votes[t], 9), max(weights[neighbour_topics == t])))
    return Placement(
        x=float(x),
        y=float(y),
        topic_id=int(topic_id),
        neighbour_rows=rows,
        similarities=similarities.astype(np.float32),
    )
