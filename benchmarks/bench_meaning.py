"""Search by meaning: is the close list on the question? Precision of narrow questions at the floors.

On a map of 5,000 papers of the shared corpus (`corpus.sample(5000, random_state=5)`, the
`random-5000` map of bench_themes.py, read from /work/bench-maps/random-5000 or built there when
absent), each question is embedded with the map's own int8 ONNX encoder (the bundle its manifest
names, as the app does) and scored against every paper. A question's answers are counted by words:
the papers whose title or abstract write every pattern of the question (e.g. "pose" and "RGB-D" or
"6D" for the 6-D pose of objects). For each floor (a percentile of the map's pair similarities,
`pipeline.modelling.floors`): how many papers the close list holds and which share of them are
answers (precision), and the share of the answers it lists (recall). Off-domain questions must list
nothing as close. Writes benchmarks/MEANING_RESULTS.md.

    .venv/bin/python benchmarks/bench_meaning.py [--map DIR]

Counting answers by words is strict (a paper on 6-D pose may not write "RGB-D"), so precision here is
a lower bound; the floors' choice compares the same questions at every floor.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.common import CORPUS, corpus_missing  # noqa: E402

RESULTS = ROOT / "benchmarks" / "MEANING_RESULTS.md"
MAP_NAME = "random-5000"
# question -> the patterns an answer writes, every one of them (lower-cased title and abstract)
QUESTIONS = {
    "estimating the 6-D pose of objects from RGB-D images": [
        r"\bposes?\b",
        r"\brgb-?d\b|\b6-?d\b|\b6-?dof\b",
    ],
    "optimal transport between probability distributions": [r"optimal transport|wasserstein|sinkhorn"],
    "spiking neural networks": [r"\bspiking\b|\bspikes?\b"],
    "visual SLAM for mobile robots": [r"\bslam\b|simultaneous locali[sz]ation and mapping"],
    "machine translation of low-resource languages": [r"\btranslation\b", r"low-resource|low resource"],
    "legged robot locomotion over rough terrain": [
        r"\blegged\b|quadruped|\bbiped|humanoid",
        r"locomotion|walking|\bgaits?\b",
    ],
    "monocular depth estimation": [r"\bdepth\b"],
    "federated learning with non-IID clients": [r"\bfederated\b"],
    "adversarial examples against image classifiers": [r"\badversarial\b"],
    "automatic speech recognition": [r"\bspeech\b|\basr\b"],
    "predicting the trajectories of pedestrians and vehicles": [
        r"\btrajector(?:y|ies)\b|motion forecast",
        r"pedestrian|vehicle|driving|traffic",
    ],
    "robotic grasping of objects": [r"\bgrasp"],
    "question answering over knowledge graphs": [r"knowledge graph|knowledge base|\bkbqa\b", r"\bquestion"],
    "differential privacy in machine learning": [r"differential(?:ly)? priva"],
}
OFF_DOMAIN = ["a sourdough recipe", "football match results", "the history of the Roman empire"]
FLOORS = (90.0, 95.0, 98.0, 99.0, 99.5, 99.7, 99.9)  # percentiles of the map's pair similarities


def map_folder(folder: Path | None) -> Path:
    """The map measured: `folder`, else the random-5000 map of bench_themes.py (built when absent)."""
    if folder is not None:
        return folder
    from benchmarks.bench_themes import MAPS, MAPS_DIR, build_maps

    if not (MAPS_DIR / MAP_NAME / "manifest.json").is_file():
        import pandas as pd

        build_maps([spec for spec in MAPS if spec.name == MAP_NAME], MAPS_DIR, pd.read_parquet(CORPUS))
    return MAPS_DIR / MAP_NAME


def measure(folder: Path) -> list[str]:
    from app.encoder import bundle_folder
    from pipeline.embedding.onnx_encoder import OnnxEncoder
    from pipeline.mapfolder.store import read_map
    from pipeline.modelling.floors import CLOSE_PERCENTILE, RELATED_PERCENTILE, map_pair_similarities

    atlas = read_map(folder)
    manifest = atlas.manifest
    vectors = np.asarray(atlas.embeddings, dtype=np.float32)
    written = (atlas.papers["title"].fillna("") + " " + atlas.papers["abstract"].fillna("")).str.lower()
    pairs = map_pair_similarities(manifest, vectors)
    encoder = OnnxEncoder(bundle=str(bundle_folder(manifest)), max_tokens=manifest.max_tokens, threads=1)
    texts = [*QUESTIONS, *OFF_DOMAIN]
    scores = vectors @ encoder.encode(texts).T  # (papers, questions)
    floors = {p: pairs.at(p) for p in FLOORS}
    today, chosen = RELATED_PERCENTILE, CLOSE_PERCENTILE

    def answers(patterns: list[str]) -> np.ndarray:
        found = np.ones(len(written), dtype=bool)
        for pattern in patterns:
            found &= written.str.contains(re.compile(pattern)).to_numpy()
        return found

    rows, sweep = [], {p: [] for p in FLOORS}
    for i, (question, patterns) in enumerate(QUESTIONS.items()):
        answer = answers(patterns)
        score = scores[:, i]

        def listed(percentile: float, score=score) -> np.ndarray:
            return score >= floors[percentile]

        for p in FLOORS:
            hits = listed(p)
            sweep[p].append((int(hits.sum()), answer[hits].mean() if hits.any() else np.nan))
        old, new = listed(today), listed(chosen)
        rows.append(
            f"| {question} | {int(answer.sum()):,} | {int(old.sum()):,} | {_share(answer, old)} | "
            f"{int(new.sum()):,} | {_share(answer, new)} | "
            f"{answer[new].sum() / max(int(answer.sum()), 1):.0%} | {int((old & ~new).sum()):,} |"
        )
    off = []
    for j, question in enumerate(OFF_DOMAIN, start=len(QUESTIONS)):
        score = scores[:, j]
        off.append(
            f"| {question} | {float(score.max()):.3f} | {pairs.percentile(float(score.max())):.1f}% | "
            f"{int((score >= floors[chosen]).sum())} | {int((score >= floors[today]).sum())} |"
        )
    lines = [
        f"### {manifest.name or folder.name} ({len(vectors):,} papers, {manifest.topics} topics)",
        "",
        "The map's pair similarities: "
        + ", ".join(f"{p:g}th {floors[p]:.3f}" for p in FLOORS)
        + f". Floors: close {chosen:g}th ({floors[chosen]:.3f}), related {today:g}th ({floors[today]:.3f}, "
        "the close floor before).",
        "",
        f"| question | answers (papers writing its words) | close at the {today:g}th | precision | "
        f"close at the {chosen:g}th | precision | recall | related beyond the close list |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "Every floor on the same questions (mean precision over the questions listing any paper; list "
        "length median and largest):",
        "",
        "| floor (percentile of pairs) | similarity | mean precision | questions listing none | median listed | most listed |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for p in FLOORS:
        counts = [c for c, _ in sweep[p]]
        precision = [q for c, q in sweep[p] if c]
        lines.append(
            f"| {p:g}th | {floors[p]:.3f} | {np.mean(precision):.0%} | {counts.count(0)} | "
            f"{int(np.median(counts)):,} | {max(counts):,} |"
        )
    lines += [
        "",
        "Off-domain questions (must list nothing as close):",
        "",
        f"| question | nearest paper | its share of pairs | close ({chosen:g}th) | related ({today:g}th) |",
        "|---|---:|---:|---:|---:|",
        *off,
        "",
    ]
    return lines


def _share(answer: np.ndarray, hits: np.ndarray) -> str:
    return f"{answer[hits].mean():.0%}" if hits.any() else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", type=Path, help="the map folder to measure (default: the random-5000 map)")
    args = parser.parse_args()
    if args.map is None and corpus_missing("bench_meaning.py"):
        return 2
    started, load = time.perf_counter(), os.getloadavg()
    lines = measure(map_folder(args.map))
    header = [
        "# Search by meaning: precision of the close list",
        "",
        f"Written by `benchmarks/bench_meaning.py` ({time.strftime('%Y-%m-%d %H:%M')}, load average "
        f"{load[0]:.1f}, {time.perf_counter() - started:.0f} s). Answers are counted by words (see the "
        "script's patterns): a lower bound on precision.",
        "",
    ]
    RESULTS.write_text("\n".join(header + lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
