"""Names for topics and themes: the phrase each group's papers write that names it best, spelled as
they spell it, with a second part where it names less than most of the group, distinct across the map.
Candidate phrases come from `phrases`, support from `support`; the word lists from `words/`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pipeline.naming.phrases import (
    CONNECTORS,
    NOT_ALONE,
    PhraseCounts,
    count_phrases,
    initials,
    lexical_scores,
    word_case,
)
from pipeline.naming.support import NAME_SUPPORT, uses_name
from pipeline.naming.vocabulary import word_list

# Names that say nothing about an area (`words/generic-names.txt`): never a topic's or a theme's
# name on their own.
GENERIC_NAMES = frozenset(word_list("generic-names"))
# Single words that only complete another name (`words/filler-words.txt`, "Optimal transport &
# map"): never the second part of a name.
FILLER_WORDS = frozenset(word_list("filler-words"))
# A lone hyphenated word ending so is half of a phrase ("Inference-time", "Transformer-based";
# `words/fragment-suffixes.txt`).
_FRAGMENT_SUFFIX = re.compile(rf"-({'|'.join(word_list('fragment-suffixes'))})$")
# Single words with an adjective's or participle's ending ("causal", "adversarial", "robust"):
# alone they describe rather than name, so a phrase around them is preferred.
_ADJECTIVE_ENDING = re.compile(r"(al|ive|ic|ous|ary|ed|ing|able|ible|ent|ant|ust)$")
# At the end of a phrase "-ing" is usually a noun ("motion planning"), so only these endings count.
_PHRASE_ADJECTIVE_ENDING = re.compile(r"(al|ive|ic|ous|ary|able|ible)$")


def display_name(phrase: str, spelling: dict[str, str]) -> str:
    """A phrase spelled as the papers spell its words, with a capital first letter.

    Examples:
        >>> display_name("llm safety", {"llm": "LLM", "safety": "safety"})
        'LLM safety'
        >>> display_name("answer set programming", {})
        'Answer set programming'
    """
    words = [spelling.get(w, w) for w in phrase.split()]
    name = " ".join(words)
    return name[0].upper() + name[1:] if name else name


def as_in_text(name: str, spelling: dict[str, str]) -> str:
    """A name's first word as the papers spell it mid-sentence, for the later parts of a name
    that lists several ("Pose estimation & body models").

    Examples:
        >>> as_in_text("Body models", {"body": "body"}), as_in_text("LLM safety", {"llm": "LLM"})
        ('body models', 'LLM safety')
    """
    first, _, rest = name.partition(" ")
    word = spelling.get(first.lower(), first if any(c.isupper() for c in first[1:]) else first.lower())
    return f"{word} {rest}" if rest else word


_PLURAL = re.compile(r"(?<=[a-z]{3})(es|s)(?= |$)")  # at the end of each word


@lru_cache(maxsize=1 << 16)  # asked for each candidate phrase many times
def name_key(phrase: str) -> str:
    """A phrase with plural endings dropped, to treat "diffusion model(s)" as one name."""
    return _PLURAL.sub("", " ".join(phrase.lower().split()))


# Keys of the singular and the plural: `name_key` cuts "examples" to "exampl", "example" not at all.
_GENERIC_KEYS = frozenset(name_key(w + end) for w in GENERIC_NAMES for end in ("", "s"))
_FILLER_KEYS = frozenset(name_key(w + end) for w in FILLER_WORDS for end in ("", "s"))


# What papers are measured on (benchmarks, datasets, metrics): no part of a name.
_MEASURES = frozenset(word_list("datasets-and-metrics"))


@lru_cache(maxsize=1 << 16)  # asked for each candidate phrase of the map, topic names and sibling names
def is_generic(phrase: str) -> bool:
    """Whether a phrase is too generic ("Neural networks"), too partial ("Inference-time") or about a
    benchmark or metric rather than an area ("COCO", "Top-1 accuracy") to name one.

    Examples:
        >>> [is_generic(p) for p in ("Neural networks", "inference-time", "Diffusion models", "safety", "KITTI")]
        [True, True, False, False, True]
    """
    key = name_key(phrase)
    lower = phrase.lower()
    return (
        key in _GENERIC_KEYS
        or (" " not in key and bool(_FRAGMENT_SUFFIX.search(key)))
        or lower in _MEASURES
        or not _MEASURES.isdisjoint(lower.split())
    )


# A phrase more than this share of the map's papers write is the map's own field or a word everyone
# writes ("language model" on a language-model conference, "image" on a vision one): never a whole
# name, nor the head of one ("Large language models").
EVERYONE = 1 / 3


def common_keys(counts: PhraseCounts, groups: np.ndarray | None = None) -> frozenset[str]:
    """`name_key`s of the phrases more than `EVERYONE` of the papers of `counts` write, all over the
    map: with `groups` (a topic per paper, -1 none), not those one group holds most uses of (on a
    map of three topics, a topic's own phrase is written by a third of the map)."""
    n = counts.matrix.shape[0]
    if not n:
        return frozenset()
    binary = (counts.matrix > 0).astype(np.float64)
    written = np.asarray(binary.sum(axis=0)).ravel()
    wide = np.flatnonzero(written / n > EVERYONE)
    if groups is not None and len(wide):
        groups = np.asarray(groups)
        ids = np.unique(groups[groups >= 0])
        by_group = np.stack([np.asarray(binary[groups == g][:, wide].sum(axis=0)).ravel() for g in ids])
        wide = wide[by_group.max(axis=0) <= 0.5 * written[wide]]
    return frozenset(name_key(str(counts.phrases[i])) for i in wide)


def too_common(phrase: str, common: frozenset[str] | set[str]) -> bool:
    """Whether a phrase, or its head (its last words, down to a last word that may stand alone), is
    one of the `common` keys: "Large language models" when "language model" is, "Medical image"
    when "image" is; "Diffusion models" not for "models" (a head that never names alone).

    Examples:
        >>> too_common("Large language models", {"language model"}), too_common("Diffusion models", {"model"})
        (True, False)
    """
    whole, heads = _heads(common if isinstance(common, frozenset) else frozenset(common))
    key = name_key(phrase)
    return key in whole or key.endswith(heads)


@lru_cache(maxsize=64)
def _heads(common: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The `common` keys a phrase's key may be (`too_common`), and the endings (" " + key) it may
    have: all but a lone word that never names alone."""
    keys = [
        key
        for key in common
        if key and not (" " not in key and (key in NOT_ALONE or key + "s" in NOT_ALONE or key in CONNECTORS))
    ]
    return frozenset(keys), tuple(sorted(" " + key for key in keys))


# A topic's name is written at least this many times as often by its papers as by any sibling
# topic's (the other topics of its theme): it tells the topic apart from them.
SIBLING_LIFT = 1.5
# A name is written at least this many times as often in its group as in the whole map; a lone
# word, which every field writes in some sense, at least `WORD_LIFT` times.
NAME_LIFT = 2.0
WORD_LIFT = 3.0
# Of a topic's shortlisted phrases, those most of whose use is in the topic come first in its final
# name (`name_topics_among_siblings`): their score is multiplied by their precision to this power (the
# shortlist's own score holds it to the power 1/4). Not for the first names the themes are grouped
# and named with.
OWN_WORDS = 0.75
# A lone word names an area only when it is an area's noun (`words/area-nouns.txt`: "Clustering",
# "Robotics", "Segmentation") or an acronym the papers write ("SLAM"); "Visual", "Flow", "Face" do not.
AREA_NOUNS = frozenset(word_list("area-nouns"))
# Words a fragment is made of (`words/weak-words.txt`), compared by `name_key`.
_WEAK_KEYS = frozenset(name_key(w + end) for w in word_list("weak-words") for end in ("", "s"))


def _may_stand_alone(phrase: str, spelling: dict[str, str]) -> bool:
    """Whether a phrase may be a name (or a name's part) on its own: a phrase of two or three words
    unless every word is a weak one ("Target domain", "Video frames"), and a lone word only as
    `AREA_NOUNS` says or as an acronym.

    Examples:
        >>> [_may_stand_alone(p, {"slam": "SLAM"}) for p in ("clustering", "convex", "slam", "point clouds", "flow")]
        [True, False, True, True, False]
        >>> [_may_stand_alone(p, {}) for p in ("target domain", "image and text", "video object segmentation")]
        [False, False, True]
    """
    if " " in phrase.strip():
        return not _weak_words_only(phrase)
    written = spelling.get(phrase.lower(), phrase)
    return (
        phrase.lower() in AREA_NOUNS
        or phrase.lower() in _AREA_WORDS
        or (written.isupper() and len(written) >= 2)
    )


@lru_cache(maxsize=1 << 16)  # asked for each candidate phrase by topic names and sibling names
def _weak_words_only(phrase: str) -> bool:
    """Whether every word of a phrase but its connectors is a weak one (`_may_stand_alone`)."""
    return all(name_key(w) in _WEAK_KEYS for w in phrase.lower().split() if w not in CONNECTORS)


# Single forms of `areas.tsv` that describe rather than name (adjectives), or say too little alone.
_NOT_NOUNS = frozenset(
    [
        "convex",
        "nonconvex",
        "marine",
        "molecular",
        "tactile",
        "spiking",
        "trustworthy",
        "underwater",
        "urban",
        "bayesian",
        "multitask",
        "cot",
        "ads",
        "web",
        "robot",
        "city",
        "brain",
        "face",
        "diffusion",
        "ranking",
        "health",
        "patient",
        "coding",
        "controller",
    ]
)


def _area_words() -> frozenset[str]:
    """Lone words the vocabulary lists as what a paper about an area writes (`areas.tsv` forms:
    "unlearning", "hallucination", "quantization"), nouns only: they may name a topic alone."""
    from pipeline.naming.areas import read_areas

    return frozenset(
        form.lower()
        for area in read_areas()
        for form in area.forms
        if " " not in form
        and "-" not in form
        and not form.isupper()
        and not re.search(r"(al|ive|ic|ous|ary|able|ible|ful|ed|en|ant)$|^(fair|unsafe)$", form.lower())
        and form.lower() not in _NOT_NOUNS
    )


_AREA_WORDS = _area_words()


def _cut_off(phrase: str) -> bool:
    """Whether a phrase of several words ends on an adjective: a cut-off name ("deep neural",
    "unmanned aerial").

    Examples:
        >>> _cut_off("deep neural"), _cut_off("deep neural networks"), _cut_off("neural")
        (True, False, False)
    """
    words = phrase.split()
    return len(words) > 1 and bool(_PHRASE_ADJECTIVE_ENDING.search(words[-1])) and words[-1] not in NOT_ALONE


@lru_cache(maxsize=1 << 16)  # asked for each candidate phrase by topic names and sibling names
def _shape_factor(phrase: str) -> float:
    """Two- and three-word phrases name a field; a lone word, and an adjective above all, less so."""
    words = phrase.split()
    if len(words) > 1:
        return 0.45 if _cut_off(phrase) else 1.0
    # A lone word names an area less often than a phrase does ("Clustering" does, "Force" not).
    return 0.35 if _ADJECTIVE_ENDING.search(words[0]) else 0.5


@dataclass
class Candidate:
    phrase: str
    score: float
    coverage: float
    precision: float = 1.0  # share of all the papers using the phrase that are in the group
    alone: bool = True  # may be a name on its own (`_may_stand_alone`), not only a name's second part


# Cosines between a name's vector and the groups' are rounded to this many decimals before names are
# ranked by them: the int8 encoder's last bits differ between CPU kinds (AVX2, AVX-512 VNNI), and
# rounded cosines rank alike on both (ties go to the better-scored name by the words).
COSINE_DECIMALS = 3
# Of a group's names that the words back, this many (the best-scored first) are ranked by retrieval.
RANKED = 8


class Retrieval:
    """How well a name points at its own group among the groups of its level: the name embedded with
    the map's encoder (through the embedding cache: a warm rebuild encodes nothing), its cosine to
    each group's mean vector. KeyBERT's idea on the map's own encoder; it only ranks names the papers'
    words already back (`name_support`), it is never evidence.

    Examples:
        >>> fake = {"apples": [1.0, 0.0], "pears": [0.0, 1.0], "fruit": [0.7, 0.7]}
        >>> ranker = Retrieval(lambda ts: np.array([fake[t] for t in ts]), [0, 1], np.eye(2))
        >>> ranker.rank(0, "apples"), ranker.rank(0, "pears"), ranker.rank(0, "fruit")
        ((True, 1.0), (False, -1.0), (False, 0.0))
    """

    def __init__(self, encode: Callable[[list[str]], np.ndarray], ids: list[int], centroids: np.ndarray):
        self.encode = encode
        self.row = {int(g): i for i, g in enumerate(ids)}
        matrix = np.asarray(centroids, dtype=np.float32)
        self.centroids = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        self.cosines: dict[str, np.ndarray] = {}

    def prepare(self, names: list[str]) -> None:
        """Encode the names not yet encoded, in one batch."""
        missing = sorted({n for n in names if n not in self.cosines})
        if not missing:
            return
        vectors = np.asarray(self.encode(missing), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        for name, cosines in zip(missing, np.round(vectors @ self.centroids.T, COSINE_DECIMALS)):
            self.cosines[name] = cosines

    def best(self, group: int, names: list[str], siblings: list[int] = ()) -> int:
        """Which of a group's names (best-scored by the words first) to take: the first that points
        at its own group first; when none does, of those that point at it before any of its
        `siblings` (the other topics of its theme), else of all, the one closest to doing so
        (largest margin). A name that points at a sibling never wins over one that points home.

        Examples:
            >>> fake = {"a": [1.0, 0.0, 0.0], "b": [0.9, 0.1, 0.0], "c": [0.0, 1.0, 0.0], "d": [0.4, 0.6, 0.0]}
            >>> fake |= {"e": [0.4, 0.0, 0.5], "f": [0.3, 0.0, 0.31]}
            >>> ranker = Retrieval(lambda ts: np.array([fake[t] for t in ts]), [0, 1, 2], np.eye(3))
            >>> ranker.best(0, ["c", "b", "a"]), ranker.best(0, ["c", "d"]), ranker.best(0, ["d", "e"], [1])
            (1, 1, 1)
        """
        ranks = [self.rank(group, name) for name in names]
        pointing = [i for i, (first, _) in enumerate(ranks) if first]
        if pointing:
            return pointing[0]
        rows = [self.row[int(s)] for s in siblings if int(s) in self.row]
        own = self.row[int(group)]

        def key(i: int) -> tuple[bool, float, int]:
            cosines = self.cosines[names[i]]
            above = not rows or bool(cosines[own] > cosines[rows].max())
            return above, ranks[i][1], -i

        return max(range(len(names)), key=key)

    def margins(self, group: int, names: list[list[str]]) -> np.ndarray:
        """Each name's predicted margin over the runner-up group, from its parts' cosines (encoded
        already), averaged: which names of several parts to encode and rank (`rank`)."""
        own = self.row[int(group)]
        index = {part: i for i, part in enumerate({p: None for parts in names for p in parts})}
        table = np.stack([self.cosines[part] for part in index])
        cosines = np.zeros((len(names), len(self.row)), dtype=np.float32)
        by_length: dict[int, list[int]] = {}
        for i, parts in enumerate(names):
            by_length.setdefault(len(parts), []).append(i)
        for rows in by_length.values():  # the names of k parts: their parts' cosines averaged at once
            cosines[rows] = table[[[index[p] for p in names[i]] for i in rows]].mean(axis=1)
        runner_up = np.delete(cosines, own, axis=1).max(axis=1, initial=-1.0)
        return np.round(cosines[:, own] - runner_up, COSINE_DECIMALS)

    def rank(self, group: int, name: str) -> tuple[bool, float]:
        """(points at its own group first, its margin over the runner-up group), rounded."""
        self.prepare([name])
        cosines = self.cosines[name]
        own = float(cosines[self.row[int(group)]])
        others = np.delete(cosines, self.row[int(group)])
        runner_up = float(others.max()) if len(others) else -1.0
        return own > runner_up, round(own - runner_up, COSINE_DECIMALS)


def name_groups(
    documents: list[str],
    groups: np.ndarray,
    centroids: dict[int, np.ndarray] | None = None,
    *,
    embeddings: np.ndarray | None = None,
    counts: PhraseCounts | None = None,
    avoid: dict[int, set[str]] | None = None,
    forbid: set[str] | None = None,
    shortlist: int = 30,
    siblings: dict[int, list[int]] | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    distinct: float = 0.0,
) -> dict[int, str]:
    """A distinct name for each group of papers (topic or theme), from the phrases its papers use.

    Each candidate phrase (1-3 words, used by at least two of the group's papers, acronyms
    counted as their spelled-out form) is scored by the share of the group's papers using it,
    its precision (how much of its use is in this group) and its c-TF-IDF rank; the best
    `shortlist` per group are then re-ranked by how close the papers writing the phrase are to the
    group's centroid (`_closeness`; no encoder runs). Names are given greedily, most confident group
    first, so two groups never share a name (nor its plural); `avoid` lists phrases a group
    should not take when it has another (a theme avoids its topics' names).

    Args:
        documents: the papers' texts, row i = groups[i].
        groups: a group id per paper; -1 (unassigned) is not named.
        centroids: unit mean embedding per group id, for the closeness re-ranking.
        embeddings: the papers' unit vectors, row i = groups[i], same space as `centroids`.
        counts: `count_phrases(documents)`, when the caller already has it.
        avoid: phrases (lower case) per group id to use only as a last resort.
        forbid: names no group may take (a map's theme names, which its topics never repeat).
        siblings: group id -> the ids of the groups it must be told apart from (the other topics
            of its theme): a name is written at least `SIBLING_LIFT` times as often by the
            group's papers as by any sibling's, where the group writes any such phrase.
        encode: the map's encoder (texts -> vectors, through the embedding cache), with
            `centroids`: of the names the words back, the one that points at its own group first
            with the largest margin is taken (`Retrieval`).
        distinct: the shortlist's scores are multiplied by the phrases' precision to this power
            (`OWN_WORDS` for the map's final topic names): the group's own words come first.

    Returns:
        group id -> name, e.g. {0: "Optimal transport", 1: "Diffusion models"}.
    """
    groups = np.asarray(groups)
    keep = groups != -1
    if not keep.any():
        return {}
    documents_kept = [d for d, k in zip(documents, keep) if k]
    groups_kept = groups[keep]
    embeddings_kept = None if embeddings is None else np.asarray(embeddings)[keep]
    if counts is None:
        counts = count_phrases(documents_kept)
    else:
        counts = PhraseCounts(
            counts.matrix[np.flatnonzero(keep)], counts.phrases, counts.acronyms, counts.spelling
        )
    group_ids = np.unique(groups_kept)
    coverage, ctfidf, precision = lexical_scores(counts, groups_kept)
    sizes = np.bincount(np.searchsorted(group_ids, groups_kept))
    shape = np.array([_shape_factor(p) for p in counts.phrases])
    spelling = counts.spelling if counts.spelling is not None else word_case(documents_kept)

    # Rank by c-TF-IDF, normalised per group so groups of any size weigh alike, and by coverage
    # times precision: a name most of the group's papers write and few others do.
    lexical = np.sqrt(coverage * np.sqrt(precision)) * np.sqrt(
        ctfidf / np.maximum(ctfidf.max(axis=1, keepdims=True), 1e-12)
    )
    lexical *= shape[None, :]
    common = common_keys(counts, groups_kept)
    generic = np.array([is_generic(p) or too_common(str(p), common) for p in counts.phrases], dtype=bool)
    single = np.array([" " not in p for p in counts.phrases], dtype=bool)
    alone = np.array([_may_stand_alone(str(p), spelling) for p in counts.phrases], dtype=bool)
    shortlists: dict[int, np.ndarray] = {}
    reserves: dict[int, np.ndarray] = {}
    for row in range(len(group_ids)):
        used_by = coverage[row] * sizes[row]
        # Distinctive: written at least `NAME_LIFT` times as often in the group as in the corpus
        # ("analysis" and "information" are everywhere; "convex" is not).
        share = sizes[row] / max(1, sizes.sum())
        lift = precision[row] / max(share, 1e-12)
        distinctive = lift >= np.minimum(np.where(single, WORD_LIFT, NAME_LIFT), 0.5 / max(share, 1e-12))
        apart = np.ones(len(counts.phrases), dtype=bool)
        sibling_rows = np.searchsorted(
            group_ids, [g for g in (siblings or {}).get(int(group_ids[row]), []) if g in group_ids]
        )
        if len(sibling_rows):
            apart = coverage[row] >= SIBLING_LIFT * coverage[sibling_rows].max(axis=0)
        eligible = np.flatnonzero((used_by >= min(2, sizes[row])) & ~generic & distinctive & apart)
        if not len(eligible):  # nothing distinctive enough: the best of what the group writes
            eligible = np.flatnonzero((used_by >= min(2, sizes[row])) & ~generic & apart)
        if not len(eligible):
            eligible = np.flatnonzero((used_by >= min(2, sizes[row])) & ~generic)
        if alone[
            eligible
        ].any():  # a lone word that names no area ("Paths", "Visual") only when nothing else is left
            eligible = eligible[alone[eligible]]
        shortlists[row] = eligible[np.argsort(-lexical[row, eligible], kind="stable")[:shortlist]]
        # What the group writes, even one paper of it, for when every name above is taken or a
        # sibling's head: still a name only when a third of its papers write it (or a pair of them).
        rest = np.flatnonzero((used_by >= 1) & ~generic & alone & (shape == 1.0))
        rest = rest[~np.isin(rest, shortlists[row])]
        reserves[row] = rest[np.argsort(-lexical[row, rest], kind="stable")[:shortlist]]
    closeness = _closeness(counts, shortlists, group_ids, groups_kept, centroids, embeddings_kept)
    options: dict[int, list[Candidate]] = {}
    reserve: dict[int, list[Candidate]] = {}
    for row, group in enumerate(group_ids):
        best = shortlists[row]
        # With `distinct`, the shortlist ranked again with precision weighing more: precision is a
        # phrase's lift over the map times the group's share, so the group's distinctive words
        # ("Mamba", "probing") come before those its neighbours write too.
        scores = lexical[row, best] * closeness.get(row, 1.0)
        if distinct:
            scores *= _own_share(counts.phrases, best, coverage[row], precision[row]) ** distinct
        order = np.argsort(-scores, kind="stable")
        options[int(group)] = [
            Candidate(
                str(counts.phrases[best[i]]),
                float(scores[i]),
                float(coverage[row, best[i]]),
                float(precision[row, best[i]]),
                bool(alone[best[i]]),
            )
            for i in order
        ]
        reserve[int(group)] = [
            Candidate(
                str(counts.phrases[i]),
                float(lexical[row, i]),
                float(coverage[row, i]),
                float(precision[row, i]),
            )
            for i in reserves[row]
        ]
    members: dict[int, list[str]] = {}
    for doc, group in zip(documents_kept, groups_kept.tolist()):
        members.setdefault(int(group), []).append(doc)

    masks: dict[tuple[int, str], np.ndarray] = {}
    shares: dict[tuple[int, str], float] = {}  # asked for the same names again and again

    def support(group: int, name: str) -> float:
        """`name_support` of a name (parts joined by " & ") on the group's papers, each part once."""
        if (group, name) in shares:
            return shares[group, name]
        used = None
        for part in name.split(" & "):
            if (group, part) not in masks:
                masks[group, part] = uses_name(part, members[group], counts.acronyms)
            used = masks[group, part] if used is None else used | masks[group, part]
        shares[group, name] = np.count_nonzero(used) / len(used) if len(used) else 0.0
        return shares[group, name]

    ranker = None
    if encode is not None and centroids:
        ids = sorted(centroids)
        ranker = Retrieval(encode, ids, np.stack([np.asarray(centroids[g]) for g in ids]))
    return _assign_distinct(
        options,
        spelling,
        avoid or {},
        support,
        {name_key(f) for f in forbid or ()},
        ranker,
        siblings,
        reserve,
    )


def _own_share(phrases, best: np.ndarray, coverage: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """The precision of each shortlisted phrase, a head no higher than a longer phrase's it heads that
    more of the group write: "language model", counted where no "large" comes before it, is not more
    the group's own than "large language models"."""
    own = precision[best].copy()
    texts = [str(phrases[i]) for i in best]
    for i, short in enumerate(texts):
        for j, long in enumerate(texts):
            longer = len(long.split()) > len(short.split()) and coverage[best[j]] > coverage[best[i]]
            if longer and same_head(short, long):
                own[i] = min(own[i], own[j])
    return own


def _closeness(
    counts: PhraseCounts,
    shortlists: dict[int, np.ndarray],
    group_ids: np.ndarray,
    groups: np.ndarray,
    centroids: dict[int, np.ndarray] | None,
    embeddings: np.ndarray | None,
) -> dict[int, np.ndarray]:
    """How central the papers writing each shortlisted phrase are to their group: the mean cosine of
    the group's papers that write it to the group's centroid, clipped to [0, 1].

    A phrase the topic's central papers write names it better than one its fringe writes (KeyBERT's
    idea, measured on the papers' own vectors rather than on an embedding of the phrase: no encoder
    runs, and the same vectors give the same names on every machine).
    """
    if embeddings is None or not centroids:
        return {}
    vectors = np.asarray(embeddings, dtype=np.float32)
    matrix = counts.matrix.tocsc()
    result = {}
    for row, best in shortlists.items():
        group = int(group_ids[row])
        centroid = centroids.get(group)
        if centroid is None or not len(best):
            continue
        members = np.flatnonzero(groups == group)
        closeness = vectors[members] @ np.asarray(centroid, dtype=np.float32)
        uses = matrix[members][:, best].toarray() > 0  # members x shortlisted phrases
        written = np.maximum(uses.sum(axis=0), 1)
        result[row] = np.clip((closeness[:, None] * uses).sum(axis=0) / written, 0.0, 1.0)
    return result


def _assign_distinct(
    options: dict[int, list[Candidate]],
    spelling: dict[str, str],
    avoid: dict[int, set[str]],
    support: Callable[[int, str], float] | None = None,
    forbidden: set[str] = frozenset(),
    ranker: Retrieval | None = None,
    siblings: dict[int, list[int]] | None = None,
    reserve: dict[int, list[Candidate]] | None = None,
) -> dict[int, str]:
    """Give each group its best phrase no other group took; the most confident group chooses first.
    No phrase is a sibling's name's head or has it as its head (`same_head`: "Language models"
    beside "Large language models"); a group left with none of its `options` takes its `reserve`
    (what else its papers write).

    With `support` (group, phrase -> share of the group's papers using it, see `name_support`),
    a phrase at least `NAME_SUPPORT` of the group's papers write comes before any that fewer do:
    a name should describe most of what it names, not a corner of it. With `ranker`, of the first
    `RANKED` names that hold, the one that points at its own group first, by the largest margin.
    """
    taken: set[str] = set(forbidden)
    names: dict[int, str] = {}
    parts: dict[int, tuple[str, ...]] = {}  # the phrases of each name given
    confidence = {g: (c[0].score if c else 0.0) for g, c in options.items()}

    def ordered(group: int) -> tuple[list[Candidate], list[Candidate]]:
        avoided = {name_key(p) for p in avoid.get(group, set())}
        heads = [part for sibling in (siblings or {}).get(group, []) for part in parts.get(sibling, ())]

        def usable(candidates: list[Candidate]) -> list[Candidate]:
            return [
                c
                for c in candidates
                if name_key(c.phrase) not in taken and not any(same_head(c.phrase, h) for h in heads)
            ]

        free = usable(options[group]) or usable((reserve or {}).get(group, []))
        # An avoided phrase is still better than a fragment: it costs half its score, not all.
        by_score = sorted(free, key=lambda c: -c.score * (0.5 if name_key(c.phrase) in avoided else 1.0))
        # A lone word that names no area ("Convex", "Presents") is only ever a second part.
        return [c for c in by_score if c.alone] + [c for c in by_score if not c.alone], by_score

    def lines(group: int, preferred: list[Candidate]) -> list[Candidate]:
        """Every free phrase of a group that may name alone, its reserve's too (`_pointing_pairs`)."""
        more = [c for c in (reserve or {}).get(group, []) if c.phrase not in {p.phrase for p in preferred}]
        heads = [part for sibling in (siblings or {}).get(group, []) for part in parts.get(sibling, ())]
        more = [
            c
            for c in more
            if name_key(c.phrase) not in taken and not any(same_head(c.phrase, h) for h in heads)
        ]
        return [c for c in preferred + more if c.alone]

    def shown(candidate: Candidate, second: str | None) -> str:
        name = display_name(candidate.phrase, spelling)
        return name if second is None else f"{name} & {as_in_text(display_name(second, spelling), spelling)}"

    limit = RANKED if ranker is not None else 1
    if ranker is not None and support is not None:  # every name that may be ranked, in one batch
        ranker.prepare(
            [
                shown(*whole)
                for group in options
                for whole in _holding(group, *ordered(group), support, taken, limit)
            ]
        )
    for group in sorted(options, key=lambda g: (-confidence[g], g)):
        preferred, by_score = ordered(group)
        if not preferred:
            names[group] = f"Topic {group}"
            continue
        candidate, second = preferred[0], None
        if support is not None:
            # The best phrase, with a second part where it names less than most of the topic;
            # failing NAME_SUPPORT even so, the best phrase that reaches it (and its second part);
            # else the two lines that together are written by the most of its papers.
            wholes = _holding(group, preferred, by_score, support, taken, limit)
            held = bool(wholes)
            # None points home: pairs of its shortlisted phrases, then of what else it writes, too.
            for pool in (preferred, lines(group, preferred)):
                if ranker is None or any(ranker.rank(group, shown(*whole))[0] for whole in wholes):
                    break
                found = _pointing_pairs(group, pool, support, ranker, shown)
                wholes += [pair for pair in found if pair not in wholes]
            if not held:  # the pair most of its papers write, last
                fallback = _two_lines(group, preferred, support, taken)
                wholes += [fallback] if fallback not in wholes else []
            if ranker is not None and len(wholes) > 1:
                sibling_ids = (siblings or {}).get(group, [])
                wholes = [wholes[ranker.best(group, [shown(*whole) for whole in wholes], sibling_ids)]]
            candidate, second = wholes[0]
        taken.add(name_key(candidate.phrase))
        names[group] = shown(candidate, second)
        parts[group] = (candidate.phrase,) if second is None else (candidate.phrase, second)
    return names


def same_head(phrase: str, other: str) -> bool:
    """Whether one phrase is the other's head (its last words), plurals aside.

    Examples:
        >>> same_head("Language models", "Large language models"), same_head("Imitation learning", "Robot learning")
        (True, False)
    """
    words, others = name_key(phrase).split(), name_key(other).split()
    n = min(len(words), len(others))
    return n > 0 and words[-n:] == others[-n:]


def _holding(
    group: int,
    preferred: list[Candidate],
    by_score: list[Candidate],
    support: Callable[[int, str], float],
    taken: set[str],
    limit: int,
) -> list[tuple[Candidate, str | None]]:
    """The first `limit` of a group's names (a phrase and its second part, `_second_part`) that at
    least `NAME_SUPPORT` of its papers write, then the first `limit` pairs of its lines that
    together reach it (`_pairs`: a topic that is two lines is named by both). With `limit` 1, the
    first name that holds, else the first pair."""
    wholes = []
    for candidate in preferred:
        second = _second_part(group, candidate.phrase, by_score, support)
        if (
            support(group, candidate.phrase if second is None else f"{candidate.phrase} & {second}")
            >= NAME_SUPPORT
        ):
            wholes.append((candidate, second))
            if len(wholes) >= limit:
                break
    if limit == 1 and wholes:
        return wholes
    pairs = [p for p in _pairs(group, preferred, support, taken) if p not in wholes]
    return wholes + pairs[:limit]


# A topic no name of one line holds for is named by the two of its best-scored phrases (of this many)
# that together are written by most of its papers.
LINES = 20


def _line_pairs(
    group: int, preferred: list[Candidate], support: Callable[[int, str], float], taken: set[str]
) -> list[tuple[float, Candidate, str]]:
    """Pairs of a topic's best-scored phrases (each free, each a name on its own, no word shared),
    the better-scored first, with the share of its papers that write one or the other; the pairs
    most written first."""
    lines = [c for c in preferred[:LINES] if c.alone and name_key(c.phrase) not in taken]
    pairs = []
    for i, first in enumerate(lines):
        for second in lines[i + 1 :]:
            if not _one_thing(first.phrase, second.phrase):
                pairs.append((support(group, f"{first.phrase} & {second.phrase}"), first, second.phrase))
    return sorted(pairs, key=lambda pair: -pair[0])


def _pairs(
    group: int, preferred: list[Candidate], support: Callable[[int, str], float], taken: set[str]
) -> list[tuple[Candidate, str | None]]:
    """The pairs of a topic's lines (`_line_pairs`) that together at least `NAME_SUPPORT` of its
    papers write, the most written first."""
    return [
        (first, second)
        for share, first, second in _line_pairs(group, preferred, support, taken)
        if share >= NAME_SUPPORT
    ]


def _one_thing(phrase: str, other: str) -> bool:
    """Whether two phrases say one thing and never make one name together: they share a word in
    some form (`_stems`), or one is the other's acronym ("OT" beside "Optimal transport").

    Examples:
        >>> _one_thing("Optimal transport", "OT"), _one_thing("Dialogue", "dialog systems"), _one_thing("OT", "Graphs")
        (True, True, False)
    """
    return bool(_stems(phrase) & _stems(other)) or _abbreviates(phrase, other) or _abbreviates(other, phrase)


def _abbreviates(short: str, phrase: str) -> bool:
    """Whether one word is the initials of a phrase of several words (a plural "s" aside: "SNNs")."""
    words = phrase.split()
    letters = short[:-1] if short.endswith("s") and short[:-1].isupper() else short
    return len(words) > 1 and " " not in short and letters.lower() in initials(words)


@lru_cache(maxsize=1 << 16)
def _stems(phrase: str) -> frozenset[str]:
    """The first four letters of each word of a phrase: two phrases that share one share a word in
    some form ("dialogue" and "dialog"), and never make one name together."""
    return frozenset(w[:4] for w in name_key(phrase).split())


def _pointing_pairs(
    group: int,
    lines: list[Candidate],
    support: Callable[[int, str], float],
    ranker: Retrieval,
    shown: Callable[[Candidate, str | None], str],
) -> list[tuple[Candidate, str]]:
    """For a topic none of whose names that hold points at it first: pairs of its phrases (`lines`,
    each a name on its own and not cut off on an adjective, no word shared) that together at least `NAME_SUPPORT` of its papers write,
    each part adding papers to the other (a topic that is two lines is named by both), the more
    written part first. Offered to the encoder are the `RANKED` pairs whose two parts' cosines to
    the groups, averaged, point at the topic by the largest margin (the keyword label's idea: several
    of the group's words together say more than one, here on words that hold), in the order of their
    phrases in `lines` (best-scored first)."""
    lines = [c for c in lines if c.alone and not _cut_off(c.phrase)]
    texts = [shown(c, None) for c in lines]
    ranker.prepare(texts)
    if len(lines) < 2:
        return []
    first, second = np.triu_indices(len(lines), k=1)
    margin = ranker.margins(group, [[texts[i], texts[j]] for i, j in zip(first, second)])
    alone = [support(group, c.phrase) for c in lines]
    first, second = first.tolist(), second.tolist()
    found: list[tuple[int, tuple[Candidate, str]]] = []
    for k in np.argsort(-margin, kind="stable").tolist():
        i, j = first[k], second[k]
        # Together no more than both alone: a pair short of NAME_SUPPORT so is never joined.
        if alone[i] + alone[j] < NAME_SUPPORT - 1e-9 or _one_thing(lines[i].phrase, lines[j].phrase):
            continue
        a, b = lines[i], lines[j]
        together = support(group, f"{a.phrase} & {b.phrase}")
        if together < NAME_SUPPORT or together <= max(alone[i], alone[j]):
            continue
        pair = (a, b.phrase) if alone[i] >= alone[j] else (b, a.phrase)
        found.append((i + j, pair))
        if len(found) >= RANKED:
            break
    ranker.prepare([shown(*pair) for _, pair in found])
    return [pair for _, pair in sorted(found, key=lambda f: f[0])]


def _two_lines(
    group: int, preferred: list[Candidate], support: Callable[[int, str], float], taken: set[str]
) -> tuple[Candidate, str | None]:
    """The pair of a topic's phrases written together by the most of its papers (`_line_pairs`);
    the best phrase alone when no pair adds to it.

    Examples:
        >>> docs = {"a b": 0.5, "c d": 0.4, "a b & c d": 0.8, "e f": 0.3, "a b & e f": 0.6, "c d & e f": 0.5}
        >>> best = _two_lines(0, [Candidate(p, 1.0, 0.0) for p in ("a b", "c d", "e f")], lambda g, n: docs[n], set())
        >>> best[0].phrase, best[1]
        ('a b', 'c d')
    """
    pairs = _line_pairs(group, preferred, support, taken)
    if pairs and pairs[0][0] > support(group, preferred[0].phrase) + 1e-9:
        return pairs[0][1], pairs[0][2]
    return preferred[0], None


# A name fewer than this share of a topic's papers write names only part of it...
MAJORITY = 2 / 3
# ...and it takes a second part ("Adversarial examples & safety") that adds at least this share
# and that this share of the topic's papers write themselves (no "& R-CNN" written by 7%).
SECOND_PART_GAIN = 0.1
PART_SUPPORT = 0.2


def _second_part(
    group: int, choice: str, candidates: list[Candidate], support: Callable[[int, str], float]
) -> str | None:
    """A second phrase for a name that describes less than `MAJORITY` of its topic: of the topic's
    own phrases (most of their use is in it; not a lone adjective like "restricted"), the one whose
    papers add most to the name's, when they add at least `SECOND_PART_GAIN`."""
    alone = support(group, choice)
    if alone >= MAJORITY:
        return None
    best, best_value = None, 0.0
    for candidate in candidates[:10]:
        phrase = candidate.phrase
        # No word of the name again, in any form ("Dialogue & dialog", "Question answering & answers"),
        # nor its acronym ("Optimal transport & OT").
        if _one_thing(choice, phrase) or candidate.precision < 0.5:
            continue
        if (
            not candidate.alone
            or " " not in phrase
            and (
                _ADJECTIVE_ENDING.search(phrase)
                or phrase.lower().endswith("ly")
                or name_key(phrase) in _FILLER_KEYS
            )
        ):
            continue
        if is_generic(phrase) or support(group, phrase) < PART_SUPPORT:
            continue
        if support(group, f"{choice} & {phrase}") < alone + SECOND_PART_GAIN:
            continue
        value = support(group, phrase) * candidate.precision  # common in the topic, rare elsewhere
        if value > best_value:
            best, best_value = phrase, value
    return best
