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
    from pipeline.modelling.neighbours import cosine_knn

    def compute() -> tuple[np.ndarray, list[float]]:
        neighbours, similarities = cosine_knn(data.vectors[row : row + 1], data.vectors, k + 1)
        keep = neighbours[0] != row
        return neighbours[0][keep][:k], [float(s) for s in similarities[0][keep][:k]]

    return session.remembered("nearest_papers", (data.name, data.n, id(data.vectors), row, k), compute)
