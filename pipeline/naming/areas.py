"""Research-area names shipped with the project, and which of them each paper is closest to.

`areas.tsv` lists about 250 areas at three grains ("specific": Diffusion models, LLM safety and
alignment, Optimal transport; "broad": Language models, 3D vision, Robot learning; "field":
Computer vision, Robotics, Learning theory), each with a
line of the words its papers write, gathered from public calls for papers, and the forms a paper
writes when it is about the area ("reinforcement learning; RL"). Each paper is nearest to one area
of each grain and close to its `CLOSE` nearest (`area_votes`): closeness only ranks which areas are
tried as a theme's name; an area names a theme only where its papers write one of its forms
(`pipeline.modelling.themes.name_themes`). Embedding ~250 short
descriptions costs the map's encoder about a second once; the vectors of the packaged model ship
in `areas.npz`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.naming.vocabulary import data_lines

AREAS_FILE = Path(__file__).with_name("areas.tsv")
# The areas' vectors under the packaged int8 model, shipped so that every machine names themes with
# the same vectors (`python -m pipeline.commands.area_vectors` writes it after areas.tsv changes).
AREA_VECTORS = Path(__file__).with_name("areas.npz")
GRAINS = ("specific", "broad", "field")  # tried in this order: the most precise name that holds
# A paper is close to the areas of a grain that are among its this many nearest: closeness decides
# which areas are tried as a theme's name, never for which papers one holds (they write it).
CLOSE = 3


@dataclass(frozen=True)
class Area:
    name: str
    description: str
    grain: str
    # What a paper writes when it is about the area (the name, its acronyms and aliases): the
    # only evidence that a paper is of the area (`pipeline.naming.support.uses_name`).
    forms: tuple[str, ...] = ()


def read_areas(path: Path = AREAS_FILE) -> list[Area]:
    """The vocabulary: `Name<TAB>description<TAB>forms` lines (forms separated by "; "), grains set
    by `# grain: NAME` lines.

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
            name, description, *forms = line.split("\t")
            written = tuple(f.strip() for f in "; ".join(forms).split(";") if f.strip())
            areas.append(Area(name.strip(), description.strip(), grain, written))
    return areas


@dataclass
class AreaVotes:
    """Per paper, the area it is closest to at each grain (an index into `areas`)."""

    areas: list[Area]
    nearest: dict[str, np.ndarray]
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
    return AreaVotes(areas, nearest, close)
