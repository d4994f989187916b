"""Place a new abstract on an existing map without refitting: among the papers it is most like."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.modelling.floors import (
    PLACEMENT_PERCENTILE,
    RELATED_PERCENTILE,
    PairSimilarities,
    pair_similarities,
)
from pipeline.modelling.neighbours import cosine_to

# The topic is decided by two kinds of evidence, added with equal weight:
# - the vote of the NEIGHBOURS nearest papers, each weighted by a softmax of its similarity with
#   VOTE_TEMPERATURE (gentle: the ten nearest all count, the closest a bit more), as a share;
# - how much closer the paper is to one topic's centroid than to the others': a softmax of
#   centroid similarity with CENTROID_TEMPERATURE, which lets a small topic win on content
#   where a neighbour vote alone could not (three papers never outvote ten).
# Leave-one-out on the seed map and a 2,000-abstract sample chose these over votes alone, centroids
# alone and sharper or flatter weights (benchmarks/PLACEMENT_RESULTS.md).
NEIGHBOURS = 10
VOTE_TEMPERATURE = 0.2
CENTROID_TEMPERATURE = 0.05
CENTROID_WEIGHT = 1.0
# Where the pin goes: the weighted mean of the chosen topic's nearest papers, weighted sharply
# (a paper this much less similar than the closest counts 1/e as much), so it sits on the papers
# it is most like instead of between clusters.
POSITION_TEMPERATURE = 0.03
POSITION_PAPERS = 5
# A paper "fits" a topic when it is at least as close to the topic's centroid as the topic's least
# typical members are (this share of members sits below the threshold), AND its nearest paper of the
# topic is as close as the topic's own papers are to their nearest fellow member (the same share
# below), AND that nearest paper is closer than PLACEMENT_PERCENTILE% of the map's pairs of papers
# (`pipeline.modelling.floors`: an absolute floor, for maps whose topics are so wide that anything is typical).
# It is "at the edge" when it is within some topic's centroid range with a paper of it closer than
# RELATED_PERCENTILE% of pairs (what search by meaning calls related), else "outside every topic",
# and then it is unassigned: no topic is claimed for it.
TYPICAL_QUANTILE = 0.05
CLOSE_SAMPLE = 300  # members of a big topic whose nearest fellow member is measured (seeded)
# The shortest text placed: the app and `pipeline add` refuse shorter ones with the same words.
MIN_WORDS = 5
# The verdicts on a placed paper (`verdict`), worded as `pipeline add` prints them.
FITS, EDGE, OUTSIDE = "fits", "at the edge", "outside every topic"


@dataclass(frozen=True)
class TopicProfile:
    """Each topic's unit centroid and how close its least typical members sit to it."""

    topic_ids: np.ndarray  # (t,)
    centroids: np.ndarray  # (t, d) unit rows
    typical: np.ndarray  # (t,) the TYPICAL_QUANTILE of member-centroid similarity (leave-one-out)
    close: np.ndarray | None = None  # (t,) the TYPICAL_QUANTILE of members' nearest fellow member similarity
    fit_floor: float = 0.0  # a topic's nearest paper must be this similar to fit (PLACEMENT_PERCENTILE)
    near_floor: float = 0.0  # ... and this similar to be "at the edge" of it (RELATED_PERCENTILE)


@dataclass(frozen=True)
class Placement:
    """Where a new paper lands: map position, topic, and the papers it sits among (rows, best first).

    `centroid_similarity` is the paper's similarity to its topic's centroid, `nearest_in_topic` to the
    topic's nearest paper, `fits` whether the paper fits the topic (see TYPICAL_QUANTILE; None when
    it is unassigned) and `fits_any` whether it is within some topic's reach (else it is outside
    every topic and unassigned). `verdict` is what the app and `pipeline add` say about it.
    """

    x: float
    y: float
    topic_id: int
    neighbour_rows: np.ndarray
    similarities: np.ndarray
    centroid_similarity: float | None = None
    fits: bool | None = None
    fits_any: bool = True
    nearest_in_topic: float | None = None

    @property
    def verdict(self) -> str:
        return verdict(self.fits, self.fits_any)


def word_count(text: str) -> int:
    """Words in `text`, each character of a script written without spaces counting as one.

    Examples:
        >>> word_count("four words right here"), word_count("扩散模型用于图像生成"), word_count("x" * 400)
        (4, 10, 1)
    """
    from pipeline.mapfolder.query import SPACELESS_RUN, tokens

    count = 0
    for token in tokens(str(text)):
        runs = SPACELESS_RUN.findall(token)
        count += sum(len(run) for run in runs) + bool(SPACELESS_RUN.sub("", token))
    return count


def placement_problem(text: str) -> str | None:
    """Why `text` is not placed, in the words the app and `pipeline add` both say, or None.

    Examples:
        >>> placement_problem("four words right here")
        'Too short to place: an abstract needs at least 5 words (this has 4).'
        >>> placement_problem("We study diffusion models for images.") is None
        True
    """
    words = word_count(text)
    if words < MIN_WORDS:
        return f"Too short to place: an abstract needs at least {MIN_WORDS} words (this has {words})."
    return None


def topic_profile(
    embeddings: np.ndarray, topic_ids: np.ndarray, pairs: PairSimilarities | None = None
) -> TopicProfile:
    """Centroids, typical member similarity and nearest-member closeness of every topic (-1 excluded).

    A member's similarity is to the centroid of the topic's *other* members: a new paper is not
    part of the centroid it is compared with, and in a topic of three a member's own third of
    the centroid would otherwise set a bar no newcomer reaches. `close` is how near a member's nearest
    fellow member is (the TYPICAL_QUANTILE of it, over at most CLOSE_SAMPLE members); the floors come
    from the map's pair similarities (`pipeline.modelling.floors`, measured here when `pairs` is not given).

    Examples:
        >>> vectors = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
        >>> profile = topic_profile(vectors, np.array([3, 3, 5]))
        >>> profile.topic_ids.tolist(), np.round(profile.centroids.astype(float), 3).tolist()
        ([3, 5], [[0.949, 0.316], [0.0, 1.0]])
        >>> round(float(profile.typical[0]), 3), round(float(profile.close[0]), 3)  # each member vs the other
        (0.8, 0.8)
    """
    vectors = embeddings  # float16 or a memory map: one topic's members are made float32 at a time
    labels = np.asarray(topic_ids)
    ids = np.array(sorted(set(labels.tolist()) - {-1}), dtype=np.int64)
    centroids = np.zeros((len(ids), vectors.shape[1]), dtype=np.float32)
    typical = np.zeros(len(ids), dtype=np.float32)
    close = np.ones(len(ids), dtype=np.float32)
    rng = np.random.default_rng(0)
    # One sort instead of a mask per topic: a map of 80,000 papers has hundreds of topics.
    order = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[order], ids)
    ends = np.searchsorted(labels[order], ids, side="right")
    for row, (start, end) in enumerate(zip(starts, ends, strict=True)):
        members = np.asarray(vectors[order[start:end]], dtype=np.float32)
        total = members.sum(axis=0)
        centroids[row] = total / (np.linalg.norm(total) or 1.0)
        if len(members) == 1:
            typical[row] = 1.0  # nothing to compare with: only a duplicate fits a lone paper
            continue
        others = total[None, :] - members
        others /= np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1e-12)
        typical[row] = np.quantile(np.einsum("ij,ij->i", members, others), TYPICAL_QUANTILE)
        sample = np.arange(len(members))
        if len(members) > CLOSE_SAMPLE:
            sample = np.sort(rng.choice(len(members), size=CLOSE_SAMPLE, replace=False))
        fellows = members[sample] @ members.T
        fellows[np.arange(len(sample)), sample] = -2.0  # not itself
        close[row] = np.quantile(fellows.max(axis=1), TYPICAL_QUANTILE)
    pairs = pairs or pair_similarities(vectors)
    return TopicProfile(
        topic_ids=ids,
        centroids=centroids,
        typical=typical,
        close=close,
        fit_floor=pairs.at(PLACEMENT_PERCENTILE),
        near_floor=pairs.at(RELATED_PERCENTILE),
    )


def topic_reach(
    similarity: np.ndarray, topic_ids: np.ndarray, centroid_similarity: np.ndarray, profile: TopicProfile
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each topic of `profile`: the similarity of its nearest paper to the placed one (`similarity`
    is to every paper), whether the paper fits it and whether it is at least at its edge.

    Examples:
        >>> profile = TopicProfile(np.array([0, 1]), np.eye(2), np.array([0.5, 0.5]), np.array([0.7, 0.7]), 0.6, 0.3)
        >>> nearest, fits, near = topic_reach(np.array([0.8, 0.4, 0.65]), np.array([0, 1, 1]), np.array([0.9, 0.6]), profile)
        >>> nearest.tolist(), fits.tolist(), near.tolist()
        ([0.8, 0.65], [True, False], [True, True])
    """
    labels = np.asarray(topic_ids)
    order = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[order], profile.topic_ids)
    ends = np.searchsorted(labels[order], profile.topic_ids, side="right")
    ranked = np.asarray(similarity, dtype=np.float64)[order]
    nearest = np.array(
        [ranked[a:b].max() if b > a else -1.0 for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    )
    typical = np.asarray(centroid_similarity) >= profile.typical
    close = profile.close if profile.close is not None else np.zeros(len(profile.topic_ids))
    fits = typical & (nearest >= np.maximum(close, profile.fit_floor))
    near = typical & (nearest >= profile.near_floor)
    return nearest, fits, near | fits


def verdict(fits_topic: bool | None, fits_any: bool) -> str:
    """The one rule for what a placement claims, shared by `pipeline add` and the app.

    FITS: as close to its topic's centre as the topic's own papers (all but the least typical 5%),
    with a paper of the topic as near as the topic's own papers' nearest fellows and closer than 99%
    of the map's pairs. EDGE: placed in (or among the unassigned papers next to) a topic it does not
    fit that well, while within some topic's reach (`topic_reach`). OUTSIDE: within no topic's reach:
    no topic may be claimed for it, and `place` leaves it unassigned.

    Examples:
        >>> verdict(True, True), verdict(False, True), verdict(None, False)
        ('fits', 'at the edge', 'outside every topic')
    """
    if fits_topic:
        return FITS
    return EDGE if fits_any else OUTSIDE


def evidence_weights(similarities: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax weights of neighbours by similarity: the nearest paper weighs 1, others less.

    Examples:
        >>> evidence_weights(np.array([0.6, 0.45, 0.44, 0.44]), 0.03).round(4).tolist()
        [1.0, 0.0067, 0.0048, 0.0048]
    """
    similarities = np.asarray(similarities, dtype=np.float64)
    return np.exp((similarities - similarities.max()) / temperature)


def topic_scores(
    neighbour_topics: np.ndarray, similarities: np.ndarray, centroid_similarities: dict[int, float]
) -> dict[int, float]:
    """Evidence for each topic: its neighbours' weighted vote share plus its centroid softmax share.

    Unassigned neighbours (-1) vote like a topic (their share is under -1) but have no centroid.

    Examples:
        >>> scores = topic_scores(np.array([9, 9, 0, 0, 0, 0]), np.array([.6, .55, .45, .44, .43, .42]),
        ...                       {9: 0.62, 0: 0.40})
        >>> max(scores, key=scores.get)
        9
    """
    weights = evidence_weights(similarities, VOTE_TEMPERATURE)
    scores: dict[int, float] = {}
    for topic, weight in zip(
        np.asarray(neighbour_topics).tolist(), (weights / weights.sum()).tolist(), strict=True
    ):
        scores[topic] = scores.get(topic, 0.0) + weight
    if centroid_similarities:
        ids = list(centroid_similarities)
        shares = evidence_weights(np.array([centroid_similarities[t] for t in ids]), CENTROID_TEMPERATURE)
        for topic, share in zip(ids, (shares / shares.sum()).tolist(), strict=True):
            scores[topic] = scores.get(topic, 0.0) + CENTROID_WEIGHT * share
    return scores


def place(
    vector: np.ndarray,
    embeddings: np.ndarray,
    papers_xy: np.ndarray,
    topic_ids: np.ndarray,
    k: int = NEIGHBOURS,
    *,
    profile: TopicProfile | None = None,
) -> Placement:
    """Position a unit `vector` among the map's papers it is most like.

    The topic is the one with the most evidence (`topic_scores`): the weighted vote of the `k`
    nearest papers plus closeness to each topic's centroid, so a small topic whose papers are
    clearly nearest wins over a big topic with many middling neighbours. A paper whose neighbours
    are mostly unassigned (-1) stays unassigned unless it sits in a topic's typical range. The
    position is the sharply weighted mean of the chosen topic's nearest papers, so the pin sits
    in that topic's cluster, on the papers it is most like, never between clusters.

    Args:
        vector: (d,) or (1, d) unit row from the map's encoder.
        embeddings: (n, d) unit rows of the map (float16 is fine).
        papers_xy: (n, 2) map coordinates, row i = embeddings row i.
        topic_ids: (n,) topic of each paper, -1 = unassigned.
        k: neighbours consulted (capped at n).
        profile: the map's `topic_profile`; computed here when not given (pass it when placing
            many papers on one map: it costs a pass over all embeddings).

    Examples:
        >>> corpus = np.eye(3, dtype=np.float32)[[0, 0, 1, 2]]
        >>> xy = np.array([[0, 0], [2, 0], [10, 10], [-10, 5]], dtype=np.float32)
        >>> spot = place(np.array([1, 0, 0], np.float32), corpus, xy, np.array([4, 4, 7, 8]), k=2)
        >>> (spot.x, spot.y, spot.topic_id, spot.neighbour_rows.tolist())
        (1.0, 0.0, 4, [0, 1])
    """
    if len(embeddings) == 0:
        raise ValueError("cannot place a paper on an empty map")
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    labels = np.asarray(topic_ids)
    profile = profile or topic_profile(embeddings, labels)
    # One pass over the corpus in float32 chunks (it may be a float16 memory map): every paper's
    # similarity, the k nearest taken from it.
    every = cosine_to(embeddings, query)
    k = min(k, len(every))
    top = np.argpartition(-every, k - 1)[:k]
    rows = top[np.argsort(-every[top], kind="stable")]
    similarities = every[rows]
    to_centroids = profile.centroids @ query
    centroid_similarity = dict(zip(profile.topic_ids.tolist(), to_centroids.tolist(), strict=True))
    nearest, fits_each, near_each = topic_reach(every, labels, to_centroids, profile)
    neighbour_topics = labels[rows]
    scores = topic_scores(neighbour_topics, similarities, centroid_similarity)
    unassigned_share = scores.pop(-1, 0.0)
    # Ties go to the topic holding the single closest paper.
    closest = {t: float(similarities[neighbour_topics == t].max(initial=-2)) for t in scores}
    topic_id = max(scores, key=lambda t: (round(scores[t], 9), closest[t])) if scores else -1
    fits = None
    if topic_id in centroid_similarity:
        fits = bool(fits_each[int(np.flatnonzero(profile.topic_ids == topic_id)[0])])
    fits_any = bool(near_each.any())
    # As in the build (`pipeline.modelling.neighbours.reassign_outliers`): among unassigned papers, a paper joins
    # a topic only with a third of the neighbour vote or when it fits the topic.
    if (unassigned_share > 2 / 3 and not fits) or not fits_any:  # outside every topic: unassigned
        topic_id, fits = -1, None
    home = neighbour_topics == topic_id
    if not fits_any:  # claimed by no topic: the pin sits by the papers it is nearest to, whatever their topic
        home = np.ones(len(rows), dtype=bool)
    home_rows, home_similarities = rows[home], similarities[home]
    if not len(home_rows):  # won on its centroid alone: sit among its own nearest members
        members = np.flatnonzero(labels == topic_id)
        order, home_similarities = _top(every[members], POSITION_PAPERS)
        home_rows = members[order]
    home_rows, home_similarities = home_rows[:POSITION_PAPERS], home_similarities[:POSITION_PAPERS]
    weights = evidence_weights(home_similarities, POSITION_TEMPERATURE)
    xy = np.asarray(papers_xy, dtype=np.float64)[home_rows]
    x, y = (weights[:, None] * xy).sum(axis=0) / weights.sum()
    at = np.flatnonzero(profile.topic_ids == topic_id)
    return Placement(
        x=float(x),
        y=float(y),
        topic_id=int(topic_id),
        neighbour_rows=rows,
        similarities=similarities.astype(np.float32),
        centroid_similarity=centroid_similarity.get(topic_id),
        fits=fits,
        fits_any=fits_any,
        nearest_in_topic=float(nearest[at[0]]) if len(at) else None,
    )


def _top(similarities: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the n largest similarities, largest first."""
    order = np.argsort(-similarities, kind="stable")[:n]
    return order, similarities[order]
