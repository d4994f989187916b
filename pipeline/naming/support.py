"""Whether papers write a name: `name_support`, the one measure of how far a topic's or a theme's
name holds (naming, themes, the build's checks, the benchmark, tests, the app), and `uses_name` per
paper. A name is a claim about its papers, checked on their words: a paper backs a name when it
writes the name (its words in order, as word starts) or one of the forms the vocabulary lists for it
(`areas.tsv`: "RL" for "Reinforcement learning"), never because its vector is close to it.

The papers' words are read once into a `WrittenIndex` (each word's positions, the separators around
it): a check is a lookup in it, not a scan of the texts. A build makes one for all its papers
(`written_index`); a check on papers outside it makes one for them.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache

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
_SMALL = frozenset(("and", "of", "for", "in", "with", "the", "a", "an", "to", "on", "from", "by"))


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


def _all_words_key(text: str) -> str:
    """A text's words, stop words included, singular: how an expansion is matched to a name's part."""
    return " ".join(_stem(w) for w in re.findall(r"[^\W_]+", text.lower()))


@lru_cache(maxsize=8)
def _acronyms_of(acronyms: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """`_all_words_key` of each expansion -> its acronyms, in the map's order: made once per map's
    acronyms, not again for each name checked."""
    index: dict[str, list[str]] = {}
    for acronym, expansion in acronyms:
        index.setdefault(_all_words_key(expansion), []).append(acronym)
    return index


def part_forms(part: str, acronyms: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """What a paper writes, any one of them, when it writes a name's part, as (kind, text): its words
    ("words"), the forms the vocabulary lists for it ("words", or "literal" for a form in capitals
    such as "RL", written as it is, "s" allowed), and the acronyms the map defines for it
    ("acronym": in any case but with at least two capitals, "OT", "SNNs", "NeRF"; "of" is no
    acronym of "optical flow").

    Examples:
        >>> part_forms("Bundle adjustment", {"ba": "bundle adjustment"})
        [('words', 'Bundle adjustment'), ('acronym', 'ba')]
    """
    return _part_forms(part, _acronyms_of(tuple((acronyms or {}).items())))


def _part_forms(part: str, by_expansion: dict[str, list[str]]) -> list[tuple[str, str]]:
    """`part_forms`, with the map's acronyms by expansion (`_acronyms_of`)."""
    words = _words(part)
    if not words:
        return []
    key = " ".join(_stem(w) for w in words)
    forms = [_form_kind(part), *(_form_kind(form) for form in vocabulary_forms().get(key, ()))]
    return forms + [("acronym", a) for a in by_expansion.get(_all_words_key(part), [])]


def _form_kind(form: str) -> tuple[str, str]:
    """A form in capitals ("RL", "LLMs") is written as it is; any other as words in order."""
    return ("literal" if " " not in form and sum(c.isupper() for c in form) >= 2 else "words", form)


def uses_name(name: str, documents: list[str], acronyms: dict[str, str] | None = None) -> np.ndarray:
    """Per document, whether it writes the name (see `name_support`, the share of them that do)."""
    if not documents:
        return np.zeros(0, dtype=bool)
    index = _ACTIVE[-1] if _ACTIVE else None
    rows = index.rows(documents) if index is not None else None
    if rows is None:
        index = WrittenIndex(documents)
        rows = np.arange(len(documents))
    return index.writes(name, acronyms)[rows]


_ACTIVE: list[WrittenIndex] = []


@contextmanager
def written_index(documents: list[str]) -> Iterator[WrittenIndex]:
    """Within it, name checks on any of `documents` read one index of their words made here."""
    _ACTIVE.append(WrittenIndex(documents))
    try:
        yield _ACTIVE[-1]
    finally:
        _ACTIVE.pop()


_SPLIT = re.compile(r"([^\W_]+)")  # words and what separates them, alternating
_WORD = re.compile(r"[^\W_]+")
_ACRONYM_CAPITALS = re.compile(r"[A-Za-z]*[A-Z][A-Za-z]*[A-Z]")

try:  # the letters a case-blind regular expression takes for one another (σ and ς, s and ſ)
    from re._casefix import _EXTRA_CASES
except ImportError:  # pragma: no cover - Python before 3.11
    _EXTRA_CASES = {}


@cache
def _fold_char(c: str) -> str:
    lower = c.lower() if len(c.lower()) == 1 else "i"  # "İ": the one letter two letters lower-case
    return chr(min((ord(lower), *_EXTRA_CASES.get(ord(lower), ()))))


def fold(word: str) -> str:
    """A word as a case-blind regular expression sees it: lower-case, letters it takes for one
    another made one.

    Examples:
        >>> fold("OT"), fold("ΣΑΣ") == fold("σας")
        ('ot', True)
    """
    return word.lower() if word.isascii() else "".join(map(_fold_char, word))


class _Ids(dict):
    def __missing__(self, key: str) -> int:
        self[key] = len(self)
        return self[key]


class WrittenIndex:
    """The words of a list of papers, read once: every word's position (words in the order written,
    paper after paper) and what separates it from its neighbours.
    `writes(name)` says which papers write a name from it alone, the same as reading them."""

    def __init__(self, documents: list[str]) -> None:
        self.size = len(documents)
        self.row_of: dict[str, int] = {}
        words, separators = _Ids(), _Ids()
        word_ids, before, after, counts = array("i"), array("i"), array("i"), array("q")
        for row, doc in enumerate(documents):
            self.row_of.setdefault(doc, row)
            pieces = _SPLIT.split(doc)  # separator, word, separator, ..., word, separator
            seps = list(map(separators.__getitem__, pieces[0::2]))
            word_ids.extend(map(words.__getitem__, pieces[1::2]))
            before.extend(seps[:-1])
            after.extend(seps[1:])
            counts.append(len(seps) - 1)
        # Words in order of their case-blind forms: the words a stem begins are one range of ids.
        self.words = list(words)  # as written
        folded = [fold(w) for w in words]
        self.vocabulary = sorted(set(folded))
        rank = {w: i for i, w in enumerate(self.vocabulary)}
        to_rank = np.array([rank[w] for w in folded], dtype=np.int32)
        small = np.array([w in _SMALL for w in folded] or [False], dtype=bool)
        self.raw = ids = np.frombuffer(word_ids, dtype=np.int32)
        self.ids = to_rank[ids] if len(ids) else np.zeros(0, np.int32)
        self.starts = np.concatenate([[0], np.cumsum(np.frombuffer(counts, dtype=np.int64))])
        self.last = last = np.zeros(len(ids), dtype=bool)  # a paper's last word
        last[self.starts[1:][np.diff(self.starts) > 0] - 1] = True
        seps = list(separators)
        ends_underscore = np.array([s.endswith("_") for s in seps] or [False])
        starts_underscore = np.array([s.startswith("_") for s in seps] or [False])
        underscores = np.array([bool(s) and not s.strip("_") for s in seps] or [False])
        before_ids, after_ids = np.frombuffer(before, dtype=np.int32), np.frombuffer(after, dtype=np.int32)
        # A name's first word starts at a word boundary: not right after an underscore.
        self.may_start = ~ends_underscore[before_ids]
        self.may_end = ~starts_underscore[after_ids] | last  # and a whole word ends at one
        # A word's `\w*` runs on over underscores into the next word.
        self.runs_on = underscores[after_ids] & ~last
        # A small word between two of a name's words ("learning of dynamics"), ending at a boundary.
        self.skippable = small[ids] & ~starts_underscore[after_ids] & ~last if len(ids) else last
        self.order = np.argsort(self.ids, kind="stable").astype(np.int32)
        self.first = np.searchsorted(self.ids[self.order], np.arange(len(self.vocabulary) + 1))
        self._documents = documents
        self._written: dict[tuple, np.ndarray] = {}
        self._forms: dict[tuple[str, int], list[tuple[str, str]]] = {}
        self._acronym_dicts: dict[int, tuple] = {}  # kept alive while their ids are keys

    def rows(self, documents: list[str]) -> np.ndarray | None:
        """Each document's row in the index; None when one is not in it."""
        try:
            return np.fromiter(map(self.row_of.__getitem__, documents), dtype=np.int64, count=len(documents))
        except KeyError:
            return None

    def writes(self, name: str, acronyms: dict[str, str] | None = None) -> np.ndarray:
        """Per paper, whether it writes the name (`uses_name`)."""
        used = np.zeros(self.size, dtype=bool)
        # The map's acronyms are one dict per build, never changed: its parts' forms are kept by its id.
        if id(acronyms) not in self._acronym_dicts:
            self._acronym_dicts[id(acronyms)] = (acronyms, _acronyms_of(tuple((acronyms or {}).items())))
        by_expansion = self._acronym_dicts[id(acronyms)][1]
        for part in _NAME_PARTS.split(name):
            if (part, id(acronyms)) not in self._forms:
                self._forms[part, id(acronyms)] = _part_forms(part, by_expansion)
            for form in self._forms[part, id(acronyms)]:
                if form not in self._written:
                    self._written[form] = self._papers_writing(*form)
                used |= self._written[form]
        return used

    def _papers_writing(self, kind: str, form: str) -> np.ndarray:
        used = np.zeros(self.size, dtype=bool)
        if kind == "words":
            words = _words(form) or re.findall(r"[^\W_]+", form.lower())
            used[self._papers_with_words([fold(_stem(w)) for w in words])] = True
        elif kind == "acronym":  # in any case but with two capitals, an "s" allowed ("OT", "SNNs")
            key = fold(form)
            used[
                self._whole_words(
                    key,
                    lambda w: (
                        (fold(w) == key or (w[-1] == "s" and fold(w[:-1]) == key))
                        and bool(_ACRONYM_CAPITALS.match(w))
                    ),
                )
            ] = True
        elif _WORD.fullmatch(form):  # a literal word: as written, or with an "s"
            used[self._whole_words(fold(form), lambda w: w in (form, form + "s"))] = True
        else:  # a literal with a hyphen ("re-ID", "LLM-as-a-judge"): four of the vocabulary's forms
            pattern = re.compile(rf"\b{re.escape(form)}s?\b")  # read only where the form is written
            used[[i for i, doc in enumerate(self._documents) if form in doc and pattern.search(doc)]] = True
        return used

    def _whole_words(self, key: str, written: Callable[[str], bool]) -> np.ndarray:
        """The rows (repeated) of the papers that write a whole word (`\\b` on both sides) whose
        case-blind form is `key` or `key` + "s" and which, as written, `written` accepts."""
        found = [np.zeros(0, dtype=np.int32)]
        for word in (key, key + "s"):
            i = bisect_left(self.vocabulary, word)
            if i < len(self.vocabulary) and self.vocabulary[i] == word:
                found.append(self.order[self.first[i] : self.first[i + 1]])
        at = np.concatenate(found)
        at = at[self.may_start[at] & self.may_end[at]]
        accepted = [w for w in np.unique(self.raw[at]).tolist() if written(self.words[w])]
        return np.searchsorted(self.starts, at[np.isin(self.raw[at], accepted)], side="right") - 1

    def _positions(self, stem: str) -> tuple[int, int]:
        """The range of word ids a stem begins."""
        return bisect_left(self.vocabulary, stem), bisect_left(
            self.vocabulary, stem[:-1] + chr(ord(stem[-1]) + 1)
        )

    def _papers_with_words(self, stems: list[str]) -> np.ndarray:
        """The rows (repeated) of the papers that write words beginning with `stems` in order, the
        first at a word boundary, with only separators or `_SMALL` words between them: what a
        regular expression `\\bstem1\\w*` + `(?:[\\W_]+(?:small)\\b)*[\\W_]+` + `stem2\\w*`... finds."""
        low, high = self._positions(stems[0])
        at = self.order[self.first[low] : self.first[high]]
        at = at[self.may_start[at]]
        for stem in stems[1:]:
            at = _closure(at, self.runs_on)  # this word, and the words it runs on to
            at = at[~self.last[at]] + 1  # the word after
            at = _closure(at, self.skippable)  # or after small words
            low, high = self._positions(stem)
            at = at[(self.ids[at] >= low) & (self.ids[at] < high)]
        return np.searchsorted(self.starts, at, side="right") - 1


def _closure(at: np.ndarray, step: np.ndarray) -> np.ndarray:
    """`at` and the positions after those `step` marks, again and again (a paper's last word marks
    none: the chains end)."""
    reached = [at]
    while len(at):
        at = at[step[at]] + 1
        reached.append(at)
    return np.concatenate(reached)
