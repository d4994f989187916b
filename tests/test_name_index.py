"""Name checks read an index of the papers' words made once (`pipeline.naming.support.WrittenIndex`):
the same papers write a name as when each text is searched with the regular expressions the checks
used before (kept here as the oracle), on the seeds, on a few hundred texts made from them with
awkward separators and letters, and in a whole build's names."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from pipeline.commands.build import build_map
from pipeline.ingest import ingest
from pipeline.modelling import themes
from pipeline.naming import names, support
from pipeline.naming.areas import read_areas
from pipeline.naming.phrases import acronym_definitions, read_text
from pipeline.naming.support import _NAME_PARTS, _acronyms_of, _all_words_key, _stem, _words, uses_name
from tests.helpers import SEEDS, FakeEncoder

# ---- the oracle: the regular expressions name checks searched every text with before ----

_BETWEEN = r"(?:[\W_]+(?:and|of|for|in|with|the|a|an|to|on|from|by)\b)*[\W_]+"


def _form_pattern(form: str) -> re.Pattern:
    if " " not in form and sum(c.isupper() for c in form) >= 2:
        return re.compile(rf"\b{re.escape(form)}s?\b")
    words = _words(form) or re.findall(r"[^\W_]+", form.lower())
    return re.compile(r"\b" + _BETWEEN.join(rf"{re.escape(_stem(w))}\w*" for w in words), re.I)


def _part_patterns(part: str, acronyms: dict[str, str] | None) -> list[re.Pattern]:
    words = _words(part)
    if not words:
        return []
    key = " ".join(_stem(w) for w in words)
    patterns = [_form_pattern(part)]
    patterns += [_form_pattern(form) for form in support.vocabulary_forms().get(key, ())]
    for acronym in _acronyms_of(tuple((acronyms or {}).items())).get(_all_words_key(part), []):
        patterns.append(re.compile(rf"\b(?=[A-Za-z]*[A-Z][A-Za-z]*[A-Z])(?i:{re.escape(acronym)})s?\b"))
    return patterns


def searched(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> np.ndarray:
    parts = [p for p in (_part_patterns(part, acronyms) for part in _NAME_PARTS.split(name)) if p]
    return np.array([any(p.search(d) for ps in parts for p in ps) for d in documents], dtype=bool)


# ---- texts and names ----

SEPARATORS = [
    " ",
    "_",
    "-",
    " of ",
    " and the ",
    "__",
    "_-",
    "-_",
    " _",
    " (",
    ") ",
    ", ",
    " OF ",
    "/",
    " 's ",
]
LETTERS = {"s": "ſ", "i": "ı", "I": "İ", "σ": "ς", "k": "\u212a"}


def awkward(text: str, rng: random.Random) -> str:
    """The text with some separators swapped for others and some letters for ones a case-blind
    search takes for them, some words in capitals or run together."""
    pieces = re.split(r"(\s+)", text)
    out = []
    for piece in pieces:
        roll = rng.random()
        if piece.isspace():
            out.append(rng.choice(SEPARATORS) if roll < 0.3 else piece)
        elif roll < 0.05:
            out.append(piece.upper())
        elif roll < 0.08:
            out.append("".join(LETTERS.get(c, c) for c in piece))
        elif roll < 0.1:
            out.append(piece + "s")
        else:
            out.append(piece)
    return "".join(out)


@pytest.fixture(scope="module")
def documents() -> list[str]:
    seeds = ingest([SEEDS]).papers["abstract"].tolist()
    rng = random.Random(67)
    made = [awkward(rng.choice(seeds), rng) for _ in range(300)]
    hand = [  # one case each: a paper writes it or not whatever else it writes
        *[
            "Optimal transport (OT) maps.",
            "OTs here.",
            "oTs here.",
            "Ot here.",
            "OT_maps.",
            "_OT maps.",
            "OTS maps.",
            "Optimal_transport.",
        ],
        *[
            "learning_of_dynamics",
            "learning of the dynamics",
            "learning _of dynamics",
            "learning of_ dynamics",
            "learning",
        ],
        *[
            "dynamics of learning",
            "Reinforcement-learning agents",
            "deep RL",
            "RLs",
            "RL_agents",
            "LLM-as-a-judge",
            "re-IDs",
        ],
        *[
            "ΣΙΓΜΑ",
            "σίγμας",
            "ſpiking neural networks (SNNs)",
            "ſNNs",
            "İmage generation",
            "ımage generation",
            "sNNs",
        ],
        *["graph_neural networks", "graph neural_networks", "graphneural networks", "neural networks graph"],
        *["text-to-SQLs", "", "___", "a", "maps optimal", "optimal", "transport optimal_"],
    ]
    return seeds + made + hand


def names_to_check(documents: list[str]) -> list[str]:
    rng = random.Random(62)
    phrases = sorted({p for doc in documents[:80] for p in read_text(doc).phrases})
    areas = [a.name for a in read_areas()]
    hand = [
        "Optimal transport",
        "Learning dynamics",
        "Reinforcement learning & LLM judges",
        "Spiking neural networks",
        "Graph neural networks, image generation; re-identification",
        "Text-to-SQL",
        "Sigma",
        "Graph networks",
        "Optimal maps",
        "the of",
        "&",
    ]
    return hand + rng.sample(phrases, min(250, len(phrases))) + rng.sample(areas, min(80, len(areas)))


def test_an_index_of_the_papers_words_finds_the_papers_a_search_of_each_text_finds(documents):
    acronyms = {
        **acronym_definitions(documents),
        "ot": "optimal transport",
        "snn": "spiking neural networks",
        "ig": "image generation",
    }
    checked = names_to_check(documents)
    subset = documents[::3]
    with support.written_index(documents):
        for name in checked:
            for given in (None, acronyms):
                assert (
                    uses_name(name, documents, given).tolist() == searched(name, documents, given).tolist()
                ), name
            assert uses_name(name, subset, acronyms).tolist() == searched(name, subset, acronyms).tolist(), (
                name
            )
    # Papers no index was made for: one is made for them.
    for name in checked[:40]:
        assert uses_name(name, subset, acronyms).tolist() == searched(name, subset, acronyms).tolist(), name
    assert uses_name("Optimal transport", []).tolist() == []


def test_a_build_names_its_topics_and_themes_as_searching_every_text_did(tmp_path, monkeypatch):
    def build(out):
        build_map([SEEDS], out, encoder=FakeEncoder(), progress=False, log=lambda message: None)
        return {f: (out / f).read_bytes() for f in ("topics.parquet", "themes.parquet")}

    indexed = build(tmp_path / "indexed")
    for module in (support, names, themes):
        monkeypatch.setattr(module, "uses_name", searched)
    assert build(tmp_path / "searched") == indexed
