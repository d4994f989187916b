"""Tiny synthetic maps for the app's tests, written with the pipeline's own `write_map` (no model, no download)."""

from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).resolve().parent.parent) not in sys.path:  # `pytest` run without `python -m`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import base64

import numpy as np
import pandas as pd

from pipeline.mapfolder.files import SCHEMA_VERSION
from pipeline.mapfolder.store import AtlasMap, write_map

TOPIC_WORDS = [
    ("Graph neural networks", ["graph", "message passing", "nodes", "edges"]),
    ("Diffusion models", ["diffusion", "denoising", "score", "sampling"]),
    ("Reinforcement learning", ["policy", "reward", "agent", "exploration"]),
    ("Multi-view clustering", ["clustering", "views", "anchors", "consensus"]),
]
SOURCES = ("alpha.txt", "beta.txt")
YEARS = (2023, 2024)


def tiny_map(
    n: int = 60, *, seed: int = 0, titles: list[str] | None = None, labels: list[str] | None = None
) -> AtlasMap:
    """`n` papers in four topics plus every seventh paper unassigned; vectors cluster by topic.

    Paper i: topic `i % 4` (or -1 when `i % 7 == 6`), source `SOURCES[i % 2]`, year `YEARS[i % 3 == 0]`,
    title "<topic word> study i" unless `titles` is given.
    """
    rng = np.random.default_rng(seed)
    topic_ids = np.array([-1 if i % 7 == 6 else i % 4 for i in range(n)])
    directions = np.eye(384, dtype=np.float32)[:4]
    vectors = np.empty((n, 384), dtype=np.float32)
    centres = np.array([[-2.0, 2.0], [2.0, 2.0], [-2.0, -2.0], [2.0, -2.0]])
    xy = np.empty((n, 2), dtype=np.float32)
    for i, topic in enumerate(topic_ids):
        base = directions[i % 4]
        vectors[i] = base + 0.03 * rng.standard_normal(384).astype(np.float32)
        xy[i] = centres[i % 4] + rng.normal(0, 0.45, 2) if topic != -1 else rng.uniform(-3, 3, 2)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = labels or [name for name, _ in TOPIC_WORDS]
    default_titles = [f"{TOPIC_WORDS[i % 4][1][0].capitalize()} study {i}" for i in range(n)]
    papers = pd.DataFrame(
        {
            "doc_id": [f"doc{i:04d}" for i in range(n)],
            "title": titles if titles is not None else default_titles,
            "abstract": [
                f"We study {TOPIC_WORDS[i % 4][1][0]} with {TOPIC_WORDS[i % 4][1][1]} in paper {i}. "
                f"Costs are $O(n)$."
                for i in range(n)
            ],
            "source": [SOURCES[i % 2] for i in range(n)],
            "year": [YEARS[int(i % 3 == 0)] for i in range(n)],
            "topic_id": topic_ids,
            "x": xy[:, 0],
            "y": xy[:, 1],
        }
    )
    topics = pd.DataFrame(
        {
            "topic_id": range(4),
            "label": names,
            "keywords": [words for _, words in TOPIC_WORDS],
            "keyword_weights": [[0.4, 0.3, 0.2, 0.1]] * 4,
            "size": [int((topic_ids == t).sum()) for t in range(4)],
            "x": centres[:, 0],
            "y": centres[:, 1],
            "representative_doc_ids": [
                [f"doc{i:04d}" for i in range(n) if topic_ids[i] == t][:3] for t in range(4)
            ],
        }
    )
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "name": "Tiny test map",
        "papers": n,
        "topics": 4,
        "unassigned": int((topic_ids == -1).sum()),
        "config": {"embedder": "torch-fp32", "min_topic_size": 3},
        "model": {"name": "sentence-transformers/all-MiniLM-L6-v2", "encoder": "synthetic"},
        "timings_seconds": {"embed": 1.5, "topics": 2.0, "total": 3.5},
        "abstracts_per_second": 17.1,
        "quality": {
            "topics": 4,
            "unassigned_share": 0.15,
            "largest_topic_share": 0.25,
            "coherence_npmi": 0.12,
            "diversity": 1.0,
        },
        "built_at": "2026-01-01T00:00:00Z",
    }
    return AtlasMap(papers=papers, topics=topics, embeddings=vectors.astype(np.float16), manifest=manifest)


def write_tiny_map(folder: Path, **options) -> Path:
    write_map(Path(folder), tiny_map(**options))
    return Path(folder)


REPO = Path(__file__).resolve().parent.parent


def write_merged_map(folder: Path) -> Path:
    """The tiny map as rebuilt after a merge (issue 21): topic 2 was "Segmentation", took in "Object
    detection" (id 5, now gone) and bears that name; "Diffusion models" shrank from 30 papers."""
    atlas = tiny_map(
        labels=["Graph neural networks", "Diffusion models", "Object detection", "Multi-view clustering"]
    )
    atlas.lineage = pd.DataFrame(
        {
            "topic_id": [0, 1, 2, 3, 5],
            "status": ["kept", "shrunk", "merged", "kept", "gone"],
            "previous_topic_ids": [[0], [1], [2, 5], [3], [5]],
            "successor_topic_ids": [[], [], [], [], [2]],
            "previous_label": [
                "Graph neural networks",
                "Diffusion models",
                "Segmentation; Object detection",
                "Multi-view clustering",
                "Object detection",
            ],
            "shared_papers": [13, 11, 13, 13, 6],
            "previous_sizes": [[13], [30], [7, 6], [13], [6]],
        }
    )
    atlas.manifest["lineage"] = {
        "previous": {"name": "Tiny test map", "fingerprint": "f"},
        "next_topic_id": 6,
    }
    write_map(folder, atlas)
    return folder


def decode_mask(text: str | None, n: int) -> np.ndarray:
    """What map.js does with a view's `mask` (`app.map_component.payload.encode_mask`): the papers in view.

    Examples:
        >>> decode_mask("DQE=", 9).tolist()
        [True, False, True, True, False, False, False, False, True]
    """
    if text is None:
        return np.ones(n, dtype=bool)
    bits = np.frombuffer(base64.b64decode(text), dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[:n].astype(bool)
