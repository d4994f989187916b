"""Neighbour search on unit embeddings: exact cosine kNN, UMAP's neighbour graph, topic centroids, outlier reassignment."""

from __future__ import annotations

from collections import Counter

import numpy as np

# Corpus rows widened to float32 at a time by `cosine_to` (1.5 MB at 384-d: stays in cache).
SCORE_ROWS = 1_024


def cosine_to(corpus: np.ndarray, query: np.ndarray, chunk: int = SCORE_ROWS) -> np.ndarray:
    """Every corpus row's dot product with `query` (cosine for unit rows), in float32.

    The corpus may be float16 or a memory map of it: it is read `chunk` rows at a time, so a pass
    never holds a float32 copy of the whole corpus (1.5 GB at a million 384-d papers).

    Examples:
        >>> cosine_to(np.eye(3, dtype=np.float16), np.array([0.0, 1.0, 0.0]), chunk=2).tolist()
        [0.0, 1.0, 0.0]
    """
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    out = np.empty(len(corpus), dtype=np.float32)
    half = corpus.dtype == np.float16
    buffer = np.empty((min(chunk, len(corpus)), corpus.shape[1]), dtype=np.uint32) if half else None
    for start in range(0, len(corpus), chunk):
        rows = corpus[start : start + chunk]
        wide = (
            _widen(rows.view(np.uint16), buffer[: len(rows)]) if half else np.asarray(rows, dtype=np.float32)
        )
        out[start : start + len(rows)] = wide @ query
    return out


def _widen(half: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """The float32 values of finite float16 bit patterns `half`, written into the uint32 array `bits`.

    Exactly `half.view(float16).astype(float32)`, subnormals included, about five times faster than
    numpy's own cast (which dominated a click's nearest-papers scan: 0.85 s of 1.28 s at a million
    papers). The sign moves to bit 31, exponent and mantissa three bits right of the float32 places
    (an arithmetic shift; the sign it smears into bits 28-30 is masked off), and multiplying by
    2**112 rebiases the exponent (15 to 127) and scales subnormals into range. Infinities and NaNs
    would come out finite: embeddings have none.

    Examples:
        >>> half = np.array([0.0, -0.0, 1.0, -0.99951, 6e-08, -6.1e-05, 65504.0], dtype=np.float16)
        >>> bits = np.empty(half.shape, dtype=np.uint32)
        >>> bool((_widen(half.view(np.uint16), bits) == half.astype(np.float32)).all())
        True
    """
    np.left_shift(half, 16, out=bits, dtype=np.uint32)
    signed = bits.view(np.int32)
    np.right_shift(signed, 3, out=signed)
    np.bitwise_and(bits, 0x8FFFE000, out=bits)
    values = bits.view(np.float32)
    values *= np.float32(2.0**112)
    return values


# From this many scores (queries x corpus rows) up, a neighbour search is kept in the cache folder.
CACHED_FROM = 2**22


def cosine_knn(queries: np.ndarray, corpus: np.ndarray, k: int, chunk: int | None = None):
    """Indices and cosine similarities of the k most similar corpus rows (rows are unit vectors).

    Exact, by matrix products in blocks of `chunk` query rows (default: blocks of about 32 million
    scores, 128 MB), most similar first. A large search is kept in the cache folder, keyed by both
    arrays' values (`pipeline.cache.cached_reduction`): a rebuild of the same papers reads it.
    """
    k = min(k, len(corpus))
    chunk = chunk or max(1, 2**25 // max(1, len(corpus)))
    if len(queries) * len(corpus) < CACHED_FROM:
        return _cosine_knn(queries, corpus, k, chunk)
    from pipeline.cache import array_digest, cached_reduction

    def packed() -> np.ndarray:  # one array: indices and similarities, both exact in float64
        indices, similarities = _cosine_knn(queries, corpus, k, chunk)
        return np.hstack([indices.astype(np.float64), similarities.astype(np.float64)])

    both, _ = cached_reduction(
        "knn", queries, {"k": k, "chunk": chunk, "corpus": array_digest(corpus)}, packed
    )
    return both[:, :k].astype(np.int64), both[:, k:].astype(np.float32)


def _cosine_knn(queries: np.ndarray, corpus: np.ndarray, k: int, chunk: int):
    indices = np.empty((len(queries), k), dtype=np.int64)
    similarities = np.empty((len(queries), k), dtype=np.float32)
    # One block of scores, written again for each block, and a selection over a few rows at a time
    # (its index array 16 MB at most): a fresh block each time was paged in anew, the system's time
    # as much as the search's own (81,646 papers: 20 CPU s). The same products and the same choices.
    scores = np.empty((min(chunk, len(queries)), len(corpus)), dtype=np.result_type(queries, corpus))
    rows = max(1, 2**21 // max(1, len(corpus)))
    for start in range(0, len(queries), chunk):
        block = queries[start : start + chunk]
        negated = np.negative(np.matmul(block, corpus.T, out=scores[: len(block)]), out=scores[: len(block)])
        for first in range(0, len(block), rows):
            part = negated[first : first + rows]
            top = np.argpartition(part, k - 1, axis=1)[:, :k]
            top_scores = -np.take_along_axis(part, top, axis=1)
            order = np.argsort(-top_scores, axis=1, kind="stable")
            done = slice(start + first, start + first + len(part))
            indices[done] = np.take_along_axis(top, order, axis=1)
            similarities[done] = np.take_along_axis(top_scores, order, axis=1)
    return indices, similarities


def neighbour_graph(embeddings: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, None]:
    """Exact k-nearest-neighbour graph in UMAP's `precomputed_knn` form (cosine distances).

    Each paper is its own first neighbour at distance 0, as UMAP expects. Below 4,096 points
    UMAP would compute all pairwise distances through a per-pair Python call (about 8 s for 2,000
    papers); above, an approximate NN-descent. Blocked matrix products are exact and take about
    a second for 10,000 papers. No search index: nothing here calls `UMAP.transform`.

    Examples:
        >>> indices, distances, _ = neighbour_graph(np.eye(3, dtype=np.float32), 2)
        >>> indices[:, 0].tolist(), distances[:, 0].tolist()
        ([0, 1, 2], [0.0, 0.0, 0.0])
    """
    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    indices, similarities = cosine_knn(vectors, vectors, k)
    rows = np.arange(len(vectors))
    # Exact duplicates can tie with the paper itself: put the paper first.
    misplaced = indices[:, 0] != rows
    for row in np.flatnonzero(misplaced):
        others = indices[row] != row
        indices[row] = np.concatenate([[row], indices[row][others][: k - 1]])
        similarities[row] = np.concatenate([[1.0], similarities[row][others][: k - 1]])
    distances = np.clip(1.0 - similarities, 0.0, 2.0)
    distances[:, 0] = 0.0
    return indices, distances.astype(np.float32), None


def reassign_outliers(embeddings: np.ndarray, labels: np.ndarray, *, k: int = 15) -> np.ndarray:
    """Give papers HDBSCAN left out (-1) the topic their nearest assigned papers point to.

    A paper moves to the topic that wins the similarity-weighted vote of its k nearest assigned
    neighbours (cosine) when that topic holds at least a third of the vote, or when the paper is
    closer to the topic's centroid than the topic's least typical 5% of members. Papers with
    neither kind of evidence stay unassigned. Votes come from each paper's own neighbourhood,
    so reassignment spreads papers over the topics around them instead of filling one catch-all.

    Examples:
        >>> vectors = np.eye(3, dtype=np.float32)[[0, 0, 1, 1, 0]]
        >>> reassign_outliers(vectors, np.array([0, 0, 1, 1, -1]), k=2).tolist()
        [0, 0, 1, 1, 0]
    """
    labels = labels.copy()
    outliers = np.flatnonzero(labels == -1)
    assigned = np.flatnonzero(labels != -1)
    if not len(outliers) or not len(assigned):
        return labels
    topic_ids, centroids = topic_centroids(embeddings, labels)
    position = {t: i for i, t in enumerate(topic_ids)}
    member_similarity = np.einsum(
        "ij,ij->i", embeddings[assigned], centroids[[position[t] for t in labels[assigned]]]
    )
    typical = {t: np.quantile(member_similarity[labels[assigned] == t], 0.05) for t in topic_ids}
    neighbours, similarity = cosine_knn(embeddings[outliers], embeddings[assigned], k)
    neighbour_topics = labels[assigned][neighbours]
    weights = np.clip(similarity, 1e-6, None)
    for row, paper in enumerate(outliers):
        votes: Counter = Counter()
        for topic, weight in zip(neighbour_topics[row], weights[row]):
            votes[topic] += weight
        topic, vote = votes.most_common(1)[0]
        share = vote / weights[row].sum()
        centroid_similarity = float(embeddings[paper] @ centroids[position[topic]])
        if share >= 1 / 3 or centroid_similarity >= typical[topic]:
            labels[paper] = topic
    return labels


def topic_centroids(embeddings: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The topic ids (ascending, -1 left out) and each topic's unit-normalised mean embedding.

    Computed once per build and stored with the topics (`centroid`), so the app and placement
    need not recompute them.

    Examples:
        >>> ids, centroids = topic_centroids(np.eye(2, dtype=np.float32)[[0, 0, 1]], np.array([3, 3, -1]))
        >>> ids.tolist(), centroids.tolist()
        ([3], [[1.0, 0.0]])
    """
    labels = np.asarray(labels)
    topic_ids = np.unique(labels[labels != -1])
    vectors = np.asarray(embeddings, dtype=np.float32)
    if not len(topic_ids):
        return topic_ids, np.zeros((0, vectors.shape[1]), dtype=np.float32)
    position = np.searchsorted(topic_ids, labels[labels != -1])
    sums = np.zeros((len(topic_ids), vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, position, vectors[labels != -1])
    sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return topic_ids, sums.astype(np.float32)
