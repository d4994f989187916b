"""The floors of search by meaning and placement, measured on maps (`pipeline/modelling/floors.py`).

For each map: the percentiles of its pairs' similarity (what the floors are made of) and of each
paper's nearest-paper similarity; for a list of in-domain and off-topic queries, the nearest paper's
share of pairs and how many papers search by meaning lists; and placement: the verdicts of held-out
papers of the map (each placed on the map without itself, profile recomputed) and of a few probes.
Appends to benchmarks/FLOORS_RESULTS.md.

    .venv/bin/python benchmarks/bench_floors.py [--map DIR ...] [--held-out 200]

The committed seed map is always measured; other maps (e.g. built from the shared corpus with
`python -m pipeline build`) are named with --map.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.encoder import bundle_folder  # noqa: E402
from pipeline.embedding.onnx_encoder import OnnxEncoder  # noqa: E402
from pipeline.mapfolder.store import read_map  # noqa: E402
from pipeline.modelling.floors import CLOSE_PERCENTILE, PLACEMENT_PERCENTILE, pair_similarities  # noqa: E402
from pipeline.modelling.place import place, topic_profile  # noqa: E402

RESULTS = ROOT / "benchmarks" / "FLOORS_RESULTS.md"
QUERIES = {
    "off-topic": [
        "a sourdough recipe",
        "football match results",
        "the history of the Roman empire",
        "Preheat the oven to 180 degrees. Cream the butter and sugar until pale, beat in four eggs",
    ],
    "in-domain (depends on the map)": [
        "keeping language models from saying harmful things",
        "making language models refuse harmful requests",
        "optimal transport",
        "estimating 3D human body shape",
        "monocular depth estimation",
        "legged robot locomotion over rough terrain",
        "Chinese word segmentation for news text",
    ],
    "one or two words": ["RL", "OT"],
}
PROBES = {
    "cake recipe": (
        "Preheat the oven to 180 degrees. Cream the butter and sugar until pale, beat in four eggs one at a "
        "time, fold in the flour and a pinch of salt, and bake the sponge for 25 minutes until golden. Cool "
        "on a rack before icing with lemon glaze."
    ),
    "LiDAR keypoints": (
        "We present a detector of repeatable 3D keypoints in LiDAR point clouds for outdoor registration. A "
        "sparse convolutional network scores every point, and a descriptor head learns local geometry with a "
        "contrastive loss over matched scans. Keypoints and descriptors are trained jointly without manual "
        "labels, and registration with RANSAC on KITTI and nuScenes sweeps is more accurate and faster than "
        "with hand-crafted keypoints."
    ),
    "Sinkhorn (tests/fixtures)": pd.read_csv(ROOT / "tests" / "fixtures" / "extra_abstracts.csv")[
        "abstract"
    ].iloc[0],
}


def measure(folder: Path, held_out: int) -> list[str]:
    atlas = read_map(folder)
    manifest = atlas.manifest
    vectors = atlas.embeddings.astype(np.float32)
    labels = atlas.papers["topic_id"].to_numpy()
    xy = atlas.papers[["x", "y"]].to_numpy()
    names = dict(zip(atlas.topics["topic_id"].astype(int), atlas.topics["label"], strict=True))
    pairs = pair_similarities(vectors)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -2.0)
    nearest = similarity.max(axis=1)
    lines = [
        f"### {manifest.name or folder.name} ({len(vectors):,} papers, {len(names)} topics)",
        "",
        "Pairs' similarity: "
        + ", ".join(f"{p:g}th {pairs.at(p):.3f}" for p in (50, 90, 95, 99, 99.9))
        + f". Each paper's nearest paper: 5th percentile {np.percentile(nearest, 5):.3f}, "
        f"median {np.median(nearest):.3f}. Floors: meaning {pairs.at(CLOSE_PERCENTILE):.3f} "
        f"({CLOSE_PERCENTILE:g}th), placement {pairs.at(PLACEMENT_PERCENTILE):.3f} ({PLACEMENT_PERCENTILE:g}th).",
        "",
        "| query | kind | nearest paper | its share of pairs | listed as close |",
        "|---|---|---:|---:|---:|",
    ]
    encoder = OnnxEncoder(bundle=str(bundle_folder(manifest)), max_tokens=manifest.max_tokens, threads=1)
    floor = pairs.at(CLOSE_PERCENTILE)
    for kind, queries in QUERIES.items():
        for query, vector in zip(queries, encoder.encode(queries), strict=True):
            scores = vectors @ vector
            best = float(scores.max())
            shown = query if len(query) <= 50 else query[:49] + "…"
            lines.append(
                f"| {shown} | {kind} | {best:.3f} | {pairs.percentile(best):.1f}% | {int((scores >= floor).sum()):,} |"
            )
    profile = topic_profile(vectors, labels, pairs)
    lines += [
        "",
        "| probe | verdict | topic | nearest paper | its share of pairs |",
        "|---|---|---|---:|---:|",
    ]
    for name, text in PROBES.items():
        vector = encoder.encode([text])[0]
        spot = place(vector, vectors, xy, labels, profile=profile)
        best = float(spot.similarities[0])
        lines.append(
            f"| {name} | {spot.verdict} | {names.get(spot.topic_id, 'Unassigned')} | {best:.3f} | "
            f"{pairs.percentile(best):.1f}% |"
        )
    # held-out papers: each placed on the map without itself (profile recomputed without it)
    assigned = np.flatnonzero(labels != -1)
    rows = np.random.default_rng(0).choice(assigned, size=min(held_out, len(assigned)), replace=False)
    verdicts, home = [], []
    started = time.perf_counter()
    for row in rows.tolist():
        keep = np.arange(len(vectors)) != row
        rest, rest_labels = vectors[keep], labels[keep]
        spot = place(
            vectors[row], rest, xy[keep], rest_labels, profile=topic_profile(rest, rest_labels, pairs)
        )
        verdicts.append(spot.verdict)
        home.append(spot.topic_id == labels[row])
    counts = pd.Series(verdicts).value_counts()
    lines += [
        "",
        f"Held-out papers ({len(rows):,}, {time.perf_counter() - started:.0f} s): "
        + ", ".join(
            f"{counts.get(v, 0) / len(rows):.1%} {v}" for v in ("fits", "at the edge", "outside every topic")
        )
        + f"; placed back in their own topic {np.mean(home):.1%}.",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", action="append", default=[], type=Path, help="another map folder to measure")
    parser.add_argument("--held-out", type=int, default=200, help="held-out papers placed per map")
    args = parser.parse_args()
    load = os.getloadavg()
    lines = [f"## {time.strftime('%Y-%m-%d %H:%M')} · load average {load[0]:.1f}", ""]
    for folder in [ROOT / "assets" / "maps" / "seeds", *args.map]:
        lines += measure(folder, args.held_out)
    with RESULTS.open("a") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
