"""How close is close on this map: floors calibrated on the map's own similarities.

A cosine similarity means nothing by itself: with all-MiniLM-L6-v2 two random abstracts of a
narrow vision map are 0.34 similar (the median pair), two of a mixed map far less, and a short query
scores lower against any abstract than another abstract does. So every verdict that says "close"
compares with the map's own distribution of pair similarities: the similarity of random pairs of
its papers (`pair_similarities`), stored at build time in the manifest (`similarity` block) and
computed from `embeddings.npy` at load for maps written before it (a 2,000-paper sample: 2 million
pairs, a few tens of milliseconds).

- Search lists the papers closer to the search than `CLOSE_PERCENTILE`% of the map's pairs are to
  each other as "close in meaning" (with those writing its words, `app.search`), all of them (paged),
  and when none is close and none writes its words it lists nothing and says so.
- Placement claims a topic only for an abstract whose nearest paper of that topic is closer than
  `PLACEMENT_PERCENTILE`% of the map's pairs (the absolute floor) and as close as the topic's own
  papers are to their nearest fellow member (`pipeline.modelling.place.topic_profile`).

benchmarks/FLOORS_RESULTS.md has the numbers these were chosen on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pipeline.mapfolder.manifest import Manifest

PAIR_SAMPLE = 2_000  # papers whose pairs are measured (all pairs of a smaller map)
PAIR_SEED = 0
# The percentiles kept: every whole one, then finer at the top where the floors sit.
LEVELS = tuple(
    [float(p) for p in range(0, 99)] + [round(99 + 0.1 * i, 1) for i in range(10)] + [99.95, 99.99, 100.0]
)
# Search: a paper is close in meaning to a search when closer to it than this share of the map's pairs
# are to each other. A search is shorter than an abstract and scores lower against every paper, so the
# 99.5th, chosen for descriptions (benchmarks/MEANING_RESULTS.md), listed none of the papers on a
# reader's question on a COLM map; on 32 hand-judged questions of two maps the 97th keeps precision
# and lists nothing for off-domain questions (benchmarks/SEARCH_QUALITY.md, bench_search_quality.py).
CLOSE_PERCENTILE = 97.0
# Placement's "at the edge": a paper of the topic closer than this share (off-topic texts, a recipe or
# the Roman empire, stay below it on every map measured: benchmarks/FLOORS_RESULTS.md).
RELATED_PERCENTILE = 90.0
# Placement: the nearest paper of a topic must be closer than this share of the map's pairs.
PLACEMENT_PERCENTILE = 99.0


@dataclass(frozen=True)
class PairSimilarities:
    """Percentiles of the similarity of random pairs of a map's papers."""

    levels: np.ndarray  # percentiles, increasing (LEVELS)
    values: np.ndarray  # the similarity at each level, non-decreasing
    pairs: int  # how many pairs were measured

    def at(self, percentile: float) -> float:
        """The similarity this share of pairs stays below.

        Examples:
            >>> table = PairSimilarities(np.array([0.0, 50.0, 100.0]), np.array([0.0, 0.2, 0.8]), 3)
            >>> table.at(75.0)
            0.5
        """
        return float(np.interp(percentile, self.levels, self.values))

    def percentile(self, similarity: np.ndarray | float) -> np.ndarray | float:
        """The share of pairs (in %) less similar than `similarity`: 97.0 = closer than 97% of pairs.

        Examples:
            >>> table = PairSimilarities(np.array([0.0, 50.0, 100.0]), np.array([0.0, 0.2, 0.8]), 3)
            >>> table.percentile(0.5), table.percentile(np.array([-1.0, 0.1, 0.9])).tolist()
            (75.0, [0.0, 25.0, 100.0])
        """
        values, levels = _strictly_increasing(self.values, self.levels)
        found = np.interp(similarity, values, levels)
        return float(found) if np.ndim(found) == 0 else found

    def to_manifest(self) -> dict:
        return {
            "method": f"cosine similarity of distinct pairs of papers (a seeded sample of at most {PAIR_SAMPLE:,})",
            "pairs": int(self.pairs),
            "percentiles": [float(v) for v in self.levels],
            "pair_similarity": [round(float(v), 4) for v in self.values],
        }

    @classmethod
    def from_manifest(cls, block: object) -> PairSimilarities | None:
        """The table a manifest's `similarity` block holds, or None when it has none (older maps) or a
        damaged one."""
        if not isinstance(block, Mapping):
            return None
        try:
            levels = np.asarray(block["percentiles"], dtype=np.float64)
            values = np.asarray(block["pair_similarity"], dtype=np.float64)
            pairs = int(block.get("pairs", 0))
        except (KeyError, TypeError, ValueError):
            return None
        if len(levels) < 2 or levels.shape != values.shape or np.any(np.diff(levels) <= 0):
            return None
        if not np.all(np.isfinite(values)) or np.any(np.diff(values) < 0):
            return None
        return cls(levels, values, pairs)


def _strictly_increasing(values: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For interpolating the inverse: tied similarities keep their highest percentile."""
    keep = np.append(np.diff(values) > 0, True)
    values, levels = values[keep], levels[keep]
    if len(values) == 1:
        return np.array([values[0] - 1e-9, values[0]]), np.array([0.0, levels[0]])
    return values, levels


def pair_similarities(
    embeddings: np.ndarray, *, sample: int = PAIR_SAMPLE, seed: int = PAIR_SEED
) -> PairSimilarities:
    """Percentiles of the similarity of distinct pairs of the map's papers (a seeded sample of them).

    Examples:
        >>> vectors = np.eye(3, dtype=np.float32)[[0, 0, 1, 2]]  # one identical pair of six
        >>> table = pair_similarities(vectors)
        >>> table.pairs, table.at(50.0), table.at(100.0)
        (6, 0.0, 1.0)
    """
    vectors = embeddings  # float16 or a memory map: only the sample is made float32
    n = len(vectors)
    if n < 2:
        return PairSimilarities(np.array([0.0, 100.0]), np.array([1.0, 1.0]), 0)
    if n > sample:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=sample, replace=False))
        vectors = vectors[rows]
    vectors = np.asarray(vectors, dtype=np.float32)
    similarity = vectors @ vectors.T
    upper = similarity[np.triu_indices(len(vectors), 1)]
    levels = np.array(LEVELS, dtype=np.float64)
    values = np.percentile(upper.astype(np.float64), levels)
    return PairSimilarities(levels, np.maximum.accumulate(values), int(len(upper)))


def map_pair_similarities(manifest: Manifest, embeddings: np.ndarray) -> PairSimilarities:
    """The map's pair similarities: from its manifest when the build stored them, else measured now."""
    return PairSimilarities.from_manifest(manifest.similarity) or pair_similarities(embeddings)


def closeness(percentile: float) -> str:
    """How a similarity's percentile among the map's pairs reads.

    Examples:
        >>> closeness(97.26), closeness(99.96), closeness(42.0)
        ('closer than 97% of pairs on this map', 'closer than 99.9% of pairs on this map', 'closer than 42% of pairs on this map')
    """
    shown = f"{np.floor(percentile * 10) / 10:.1f}" if percentile >= 99 else f"{int(np.floor(percentile))}"
    return f"closer than {shown}% of pairs on this map"
