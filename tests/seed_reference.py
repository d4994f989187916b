"""A small reference of a fresh build of `seeds/`: what every machine of every CPU kind must build.

`python -m tests.seed_reference write [MAP]` records it from a map folder (default: the committed
seed map, which `make map` builds fresh); `tests/test_same_map_everywhere.py` compares a fresh build
and the committed map against it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "fixtures" / "seed_reference.json"
SEED_MAP = ROOT / "assets" / "maps" / "seeds"


def reference_of(map_dir: Path) -> dict:
    """Doc id -> topic id and position, topic and theme names, and the vectors' checksum."""
    papers = pd.read_parquet(map_dir / "papers.parquet").sort_values("doc_id", kind="stable")
    vectors = np.load(map_dir / "embeddings.npy")[papers.index.to_numpy()].astype(np.float16)
    topics = pd.read_parquet(map_dir / "topics.parquet").sort_values("topic_id")
    themes = pd.read_parquet(map_dir / "themes.parquet").sort_values("theme_id")
    return {
        "vectors_sha256": hashlib.sha256(np.ascontiguousarray(vectors).tobytes()).hexdigest(),
        "topic_of": dict(zip(papers["doc_id"], papers["topic_id"].astype(int).tolist(), strict=True)),
        "xy": {
            d: [round(float(x), 5), round(float(y), 5)]
            for d, x, y in zip(papers["doc_id"], papers["x"], papers["y"])
        },
        "topics": {str(t): str(label) for t, label in zip(topics["topic_id"], topics["label"], strict=True)},
        "themes": [
            {
                "theme_id": int(row.theme_id),
                "label": str(row.label),
                "topic_ids": sorted(int(t) for t in row.topic_ids),
            }
            for row in themes.itertuples()
        ],
    }


def differences(expected: dict, actual: dict, *, tolerance: float = 1e-3) -> list[str]:
    """What differs between two references, one line each (empty when they agree)."""
    found = []
    if expected["vectors_sha256"] != actual["vectors_sha256"]:
        found.append("the vectors differ (the encoder gave other numbers)")
    moved = [d for d, t in expected["topic_of"].items() if actual["topic_of"].get(d) != t]
    if moved or set(expected["topic_of"]) != set(actual["topic_of"]):
        found.append(f"{len(moved)} of {len(expected['topic_of'])} papers have another topic id")
    if expected["topics"] != actual["topics"]:
        found.append(f"topic names differ: {expected['topics']} != {actual['topics']}")
    if expected["themes"] != actual["themes"]:
        found.append(f"themes differ: {expected['themes']} != {actual['themes']}")
    shifts = [
        max(abs(a - b) for a, b in zip(xy, actual["xy"][d], strict=True))
        for d, xy in expected["xy"].items()
        if d in actual["xy"]
    ]
    if shifts and max(shifts) > tolerance:
        found.append(f"positions differ by up to {max(shifts):.4f} (more than {tolerance})")
    return found


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] != "write":
        print("usage: python -m tests.seed_reference write [MAP]", file=sys.stderr)
        return 2
    source = Path(argv[1]) if len(argv) > 1 else SEED_MAP
    REFERENCE.write_text(
        json.dumps(reference_of(source), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {REFERENCE.relative_to(ROOT)} from {source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
