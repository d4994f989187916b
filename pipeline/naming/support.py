"""Whether papers write a name: `name_support`, the one measure of how far a topic's or a theme's
name holds (naming, themes, the build's checks, the benchmark, tests, the app), and `uses_name` per
paper. A name is a claim about its papers, checked on their words: a paper backs a name when it
writes the name (its words in order, as word starts) or one of the forms the vocabulary lists for it
(`areas.tsv`: "RL" for "Reinforcement learning"), never because its vector is close to it."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

# A topic's name is written by at least this share of its papers; among its candidates the
# best-scored one that is takes precedence over a better-scored one that is not.
NAME_SUPPORT = 1 / 3

# A name that lists its parts ("Pose estimation & body models", "Robots, drones & vehicles",
# "Bundle adjustment & camera models; illumination").
_NAME_PARTS = re.compile(r"\s*(?:&|,|;)\s*")
# Between two words of a name a paper may write punctuation, a hyphen or these small words
# ("learning of dynamics", "vision-language"), nothing else: "learning ... theory" far apart is not
# "Learning theory".
_BETWEEN = r"(?:[\W_]+(?:and|of|for|in|with|the|a|an|to|on|from|by)\b)*[\W_]+"


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in ENGLISH_STOP_WORDS]


def part_key(part: str) -> str:
    """A name part's words without stop words, singular: the key `areas.tsv` forms are listed under.

    Examples:
        >>> part_key("Bandits and online learning"), part_key("Graph neural networks")
        ('bandit online learning', 'graph neural network')
    """
    return " ".join(_stem(w) for w in _words(part))


@cache
def vocabulary_forms() -> dict[str, tuple[str, ...]]:
    """`part_key` of each area of `areas.tsv` -> the forms papers write when they are about it."""
    from pipeline.naming.areas import read_areas

    return {part_key(a.name): a.forms for a in read_areas()}


@cache
def _form_pattern(form: str) -> re.Pattern:
    """A form as a pattern: an acronym ("RL", "LLMs") as a whole word in its capitals; words in order,
    each as a word start, with only punctuation or small words between them."""
    if " " not in form and sum(c.isupper() for c in form) >= 2:
        return re.compile(rf"\b{re.escape(form)}s?\b")
    words = _words(form) or re.findall(r"[^\W_]+", form.lower())
    return re.compile(r"\b" + _BETWEEN.join(rf"{re.escape(_stem(w))}\w*" for w in words), re.I)


def name_support(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> float:
    """How far a name holds for a set of papers: the share of them that write the name, or one of
    its parts when the name lists several ("Pose estimation & body models").

    The one definition of "support" for topic and theme names (naming, themes, benchmark, tests).
    A part is written when its words come in order, each as a word start (case aside, "models"
    counting "model"), with only punctuation or small words ("of", "and") between them. With
    `acronyms` (acronym -> expansion, as `acronym_definitions` finds them), a paper that writes the
    acronym of a part ("OT" for "optimal transport") writes it too; so does one that writes a form
    `areas.tsv` lists for it ("RL" for "Reinforcement learning").

    Examples:
        >>> name_support("Optimal transport", ["optimal transport plans", "OT maps", "diffusion"])
        0.6666666666666666
        >>> name_support("Learning theory", ["theory of games and learning", "statistical learning theory"])
        0.5
        >>> name_support("Pose estimation & body models", ["human pose estimation", "a body model", "x"])
        0.6666666666666666
    """
    if not documents:
        return 0.0
    return float(uses_name(name, documents, acronyms).mean())


def part_patterns(part: str, acronyms: dict[str, str] | None = None) -> list[re.Pattern]:
    """The patterns any one of which a paper writes when it writes a name's part: its words, the
    acronyms the map defines for it, and the forms the vocabulary lists for it."""
    words = _words(part)
    if not words:
        return []
    key = " ".join(_stem(w) for w in words)
    patterns = [_form_pattern(part)]
    patterns += [_form_pattern(form) for form in vocabulary_forms().get(key, ())]
    for acronym, expansion in (acronyms or {}).items():
        if " ".join(_stem(w) for w in re.findall(r"[^\W_]+", expansion.lower())) == " ".join(
            _stem(w) for w in re.findall(r"[^\W_]+", part.lower())
        ):
            # Written in capitals, at least two ("OT", "SNNs", "NeRF"): "of" is no acronym of "optical flow".
            patterns.append(re.compile(rf"\b(?=[A-Za-z]*[A-Z][A-Za-z]*[A-Z])(?i:{re.escape(acronym)})s?\b"))
    return patterns


def uses_name(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> np.ndarray:
    """Per document, whether it writes the name (see `name_support`, the share of them that do)."""
    parts = [p for p in (part_patterns(part, acronyms) for part in _NAME_PARTS.split(name)) if p]
    return np.array(
        [any(p.search(doc) for patterns in parts for p in patterns) for doc in documents], dtype=bool
    )
