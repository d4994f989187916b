"""An opened paper's nearest papers by meaning: the map rings them and the paper view lists them."""

from __future__ import annotations

import numpy as np

from app import session
from app.data import MapData

NEIGHBOURS = 8


def nearest_papers(data: MapData, row: int, k: int = NEIGHBOURS) -> tuple[np.ndarray, list[float]]:
    """The `k` papers nearest to `row` by meaning (cosine of their vectors), nearest first, and their similarity.

    The map rings them and the paper view lists them in the same run: the last answer is kept.
    """
    from pipeline.modelling.neighbours import cosine_to

    def compute() -> tuple[np.ndarray, list[float]]:
        scores = cosine_to(data.vectors, data.vectors[row])  # float32 chunks of the float16 rows
        scores[row] = -np.inf  # not itself
        take = min(k, len(scores) - 1)
        if take <= 0:
            return np.arange(0, dtype=np.int64), []
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        return top.astype(np.int64), [float(s) for s in scores[top]]

    return session.remembered(session.NEAREST_PAPERS, (data.name, data.n, id(data.vectors), row, k), compute)
