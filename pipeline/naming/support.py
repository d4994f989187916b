"""Whether papers write a name: `name_support`, the one measure of how far a topic's or a theme's
name holds (naming, themes, the build's checks, the benchmark, tests), and `uses_name` per paper."""

from __future__ import annotations

import re

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

# A topic's name should be written by at least this share of its papers; among its candidates
# the best-scored one that is takes precedence over a better-scored one that is not.
NAME_SUPPORT = 0.25

# A name that lists its parts ("Pose estimation & body models", "Robots, drones & vehicles",
# "Bundle adjustment & camera models; illumination").
_NAME_PARTS = re.compile(r"\s*(?:&|,|;)\s*")


def name_support(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> float:
    """How far a name holds for a set of papers: the share of them that use all the words of the
    name, or of one of its parts when the name lists several ("Pose estimation & body models").

    The one definition of "support" for topic and theme names (naming, themes, benchmark, tests).
    Words are compared as word starts, case aside, without stop words and with plurals as
    singulars ("models" counts "model"); a hyphenated word counts its parts ("multi-view" is
    "multi" and "view"). With `acronyms` (acronym -> expansion, as `acronym_definitions` finds
    them), a paper that writes the acronym of a part ("OT" for "optimal transport") uses it too.

    Examples:
        >>> name_support("Optimal transport", ["optimal transport plans", "OT maps", "diffusion"])
        0.3333333333333333
        >>> name_support("Optimal transport", ["optimal transport plans", "OT maps"], {"ot": "optimal transport"})
        1.0
        >>> name_support("Pose estimation & body models", ["human pose estimation", "a body model", "x"])
        0.6666666666666666
    """
    if not documents:
        return 0.0
    return float(uses_name(name, documents, acronyms).mean())


def uses_name(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> np.ndarray:
    """Per document, whether it uses the name (see `name_support`, the share of them that do)."""

    def stem(word: str) -> str:
        return word[:-1] if len(word) > 4 and word.endswith("s") else word

    by_expansion: dict[str, list[str]] = {}
    for acronym, expansion in (acronyms or {}).items():
        by_expansion.setdefault(" ".join(stem(w) for w in expansion.split()), []).append(acronym)
    parts = []
    for part in _NAME_PARTS.split(name):
        words = [w for w in re.findall(r"[^\W_]+", part.lower()) if w not in ENGLISH_STOP_WORDS]
        if not words:
            continue
        patterns = [re.compile(rf"\b{re.escape(stem(w))}", re.I) for w in words]
        written = by_expansion.get(" ".join(stem(w) for w in re.findall(r"[^\W_]+", part.lower())), [])
        short = [re.compile(rf"\b{re.escape(a)}s?\b", re.I) for a in written]
        parts.append((patterns, short))
    return np.array(
        [
            any(
                all(p.search(doc) for p in words) or any(a.search(doc) for a in short)
                for words, short in parts
            )
            for doc in documents
        ],
        dtype=bool,
    )
