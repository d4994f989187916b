"""Research-area names shipped with the project, and which of them each paper is closest to.

`areas.tsv` lists about 250 areas at three grains ("specific": Diffusion models, LLM safety and
alignment, Optimal transport; "broad": Language models, 3D vision, Robot learning; "field":
Computer vision, Robotics, Learning theory), each with a
line of the words its papers write, gathered from public calls for papers. A theme may take an
area's name only when the papers confirm it: most of the theme's papers are closer to that name's
description than to any other area of the same grain, and so is a real share of each of its topics
(`area_name`). Embedding ~240 short descriptions costs the map's encoder about a second once; they
are cached with every other text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.naming.names import name_key as normal
from pipeline.naming.vocabulary import data_lines

AREAS_FILE = Path(__file__).with_name("areas.tsv")
# The areas' vectors under the packaged int8 model, shipped so that every machine names themes with
# the same vectors (`python -m pipeline.commands.area_vectors` writes it after areas.tsv changes).
AREA_VECTORS = Path(__file__).with_name("areas.npz")
GRAINS = ("specific", "broad", "field")  # tried in this order: the most precise name that holds
# Most of a theme's papers are closest to its area name (among areas of one grain)...
AREA_MAJORITY = 0.5
# ...and at least this share of each member topic's papers are.
AREA_HOLDS = 1 / 3
# A paper is close to the areas of a grain that are among its this many nearest (a theme's name holds
# for the papers close to its area).
CLOSE = 3


@dataclass(frozen=True)
class Area:
    name: str
    description: str
    grain: str


def read_areas(path: Path = AREAS_FILE) -> list[Area]:
    """The vocabulary: `Name<TAB>description` lines, grains set by `# grain: NAME` lines.

    Examples:
        >>> areas = read_areas()
        >>> {"Diffusion models", "Optimal transport", "Clustering"} <= {a.name for a in areas}
        True
    """
    areas, grain = [], GRAINS[0]
    for line in data_lines(path):
        if line.startswith("# grain:"):
            grain = line.split(":", 1)[1].strip()
        elif not line.startswith("#"):
            name, description = line.split("\t", 1)
            areas.append(Area(name.strip(), description.strip(), grain))
    return areas


@dataclass
class AreaVotes:
    """Per paper, the area it is closest to at each grain (an index into `areas`)."""

    areas: list[Area]
    nearest: dict[str, np.ndarray]
    # Per area, the field-grain area its description is closest to (its own index for a field).
    field_of: np.ndarray | None = None
    # Per paper and grain, its `CLOSE` nearest areas (nearest first).
    close: dict[str, np.ndarray] | None = None


def area_texts(areas: list[Area]) -> list[str]:
    """What is embedded for each area: its name and its line of words."""
    return [f"{a.name}: {a.description}" for a in areas]


def shipped_vectors(encoder_name: str | None) -> np.ndarray | None:
    """The shipped area vectors, when they were made from this `areas.tsv` by this encoder (the
    token budget aside: descriptions are far shorter than any budget); else None."""
    import hashlib
    import re

    if not encoder_name or not AREA_VECTORS.is_file():
        return None
    try:
        with np.load(AREA_VECTORS, allow_pickle=False) as shipped:
            same_list = str(shipped["tsv_sha256"]) == hashlib.sha256(AREAS_FILE.read_bytes()).hexdigest()
            same_encoder = re.sub(r"-t\d+$", "", str(shipped["encoder"])) == re.sub(
                r"-t\d+$", "", encoder_name
            )
            return np.asarray(shipped["vectors"], dtype=np.float32) if same_list and same_encoder else None
    except (OSError, ValueError, KeyError):
        return None


def area_votes(
    embeddings: np.ndarray,
    encode: Callable[[list[str]], np.ndarray],
    areas: list[Area] | None = None,
    *,
    encoder_name: str | None = None,
) -> AreaVotes:
    """Which area of each grain every paper (unit embedding row) is closest to.

    The areas' vectors are the shipped ones when `encoder_name` made them (every machine then
    names themes alike), else `encode`'s."""
    vectors = shipped_vectors(encoder_name) if areas is None else None
    areas = areas if areas is not None else read_areas()
    if vectors is None or len(vectors) != len(areas):
        vectors = np.asarray(encode(area_texts(areas)), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    scores = np.asarray(embeddings, dtype=np.float32) @ vectors.T
    nearest, close = {}, {}
    for grain in GRAINS:
        columns = np.array([i for i, a in enumerate(areas) if a.grain == grain], dtype=np.int64)
        if len(columns):
            ranked = np.argsort(-scores[:, columns], axis=1, kind="stable")[:, :CLOSE]
            close[grain] = columns[ranked]
            nearest[grain] = close[grain][:, 0]
    fields = np.array([i for i, a in enumerate(areas) if a.grain == "field"], dtype=np.int64)
    field_of = fields[np.argmax(vectors @ vectors[fields].T, axis=1)] if len(fields) else None
    return AreaVotes(areas, nearest, field_of, close)


def area_name(
    votes: AreaVotes, rows_per_topic: list[np.ndarray], taken: set[str] = frozenset()
) -> str | None:
    """An area name most of the group's papers are closest to (`AREA_MAJORITY`) and at least
    `AREA_HOLDS` of each member topic's papers are, the specific grain first; None if none holds.

    Examples:
        >>> votes = AreaVotes([Area("A", "", "specific"), Area("B", "", "specific")], {"specific": np.array([0, 0, 0, 1, 0, 1])})
        >>> area_name(votes, [np.array([0, 1, 2]), np.array([3, 4])]), area_name(votes, [np.array([3, 5])])
        ('A', 'B')
        >>> area_name(votes, [np.array([0, 1, 2]), np.array([3, 5])]) is None  # B's papers are not A's
        True
    """
    rows_per_topic = [np.asarray(r, dtype=np.int64) for r in rows_per_topic if len(r)]
    if not rows_per_topic:
        return None
    everyone = np.concatenate(rows_per_topic)
    for grain in GRAINS:
        nearest = votes.nearest.get(grain)
        if nearest is None:
            continue
        for area, count in Counter(nearest[everyone].tolist()).most_common(3):
            name = votes.areas[area].name
            if count < AREA_MAJORITY * len(everyone):
                break
            if normal(name) in taken:
                continue
            if all((nearest[rows] == area).mean() >= AREA_HOLDS for rows in rows_per_topic):
                return name
    return None


# A theme no phrase and no confirmed area names takes the area most of its papers are closest to
# when at least this share are (at the specific grain first).
PLURALITY_FLOOR = 1 / 3


def plurality_area(votes: AreaVotes, rows: np.ndarray, taken: set[str] = frozenset()) -> str | None:
    """The area most of these papers are closest to, not in `taken`, when at least `PLURALITY_FLOOR`
    of them are (the specific grain first, then the broad one); None when no area gathers that many."""
    rows = np.asarray(rows, dtype=np.int64)
    for grain in GRAINS:
        nearest = votes.nearest.get(grain)
        if nearest is None or not len(rows):
            continue
        for area, count in Counter(nearest[rows].tolist()).most_common():
            if count < PLURALITY_FLOOR * len(rows):
                break
            if normal(votes.areas[area].name) not in taken:
                return votes.areas[area].name
    return None


def area_share(votes: AreaVotes, rows: np.ndarray, name: str) -> float:
    """The share of these papers closest to the area called `name` (among areas of its grain); 0 for a name not in the vocabulary."""
    rows = np.asarray(rows, dtype=np.int64)
    shares = [
        float((votes.nearest[area.grain][rows] == index).mean())
        for index, area in enumerate(votes.areas)
        if area.name == name and area.grain in votes.nearest and len(rows)
    ]
    return max(shares, default=0.0)
