"""Candidate phrases for names: the 1-3-word phrases papers write, the acronyms they define, and
which papers write which (counts and c-TF-IDF scores per group); term counters for BERTopic's
keywords in English and in other scripts. The word lists are data files in `words/`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from pipeline.naming.sentences import split_sentences
from pipeline.naming.vocabulary import word_list

# Words every abstract uses (`words/stop-words.txt`) and scikit-learn's English stop words: as
# keywords they say nothing about a topic.
ABSTRACT_STOP_WORDS = sorted(ENGLISH_STOP_WORDS | set(word_list("stop-words")))
# A phrase may not start or end with these (`words/edge-words.txt`, and the stop words). Inside a
# 3-word phrase only `CONNECTORS` among them may appear; `NOT_ALONE` words may end one.
_EDGE_WORDS = frozenset(ABSTRACT_STOP_WORDS) | frozenset(word_list("edge-words"))
# Generic heads ("models", "learning") that end a phrase but are never one on their own.
NOT_ALONE = frozenset(word_list("not-alone"))
CONNECTORS = frozenset(word_list("connectors"))

# A word as the papers write it: hyphenated words whole ("n-gram", "3-dim", "6-DoF"), never the part
# after a hyphen ("gram" of "2-gram", "means" of "𝑘-means"), which no paper writes as a word. `WORD`
# (two characters or more) is the keyword counter's token pattern. `TOKEN` finds the words of a
# phrase and what stops one: the letters after a digit ("D" of "3D", too short to be a word) and the
# part after a hyphen the word before is not written in these letters ("-means" of "𝑘-means").
WORD = r"(?<![\w-])(?:[0-9]+-)*[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]\b"
# Digits tried only from the start of their run, possessively: linear in the text.
TOKEN = re.compile(r"-?(?:(?<![0-9])[0-9]++-)*[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# Punctuation that ends a phrase: a name never spans a comma, a bracket or a sentence end.
_BREAK = re.compile(r"[.,;:!?()\[\]{}\"“”'’/|=<>+*%$&#@~^`\\]|\s-\s|\s–\s|\s—\s")
# An acronym defined in brackets after the words it abbreviates: "optimal transport (OT)". Words of
# at most 64 characters, tried only from a word's start (a match from inside a word is part of the
# match from its start): linear in the text, and each abstract is not scanned again from each letter.
_ACRONYM_DEFINITION = re.compile(
    r"(?<![A-Za-z])((?:[A-Za-z][\w-]{0,63}\s+){1,6})\(\s*([A-Z][A-Za-z0-9-]*[A-Z][a-z]?s?)\s*\)"
)
# Its bracket alone: a text without one defines no acronym, and is not scanned word by word for one.
_BRACKETED_ACRONYM = re.compile(r"\(\s*[A-Z][A-Za-z0-9-]*[A-Z][a-z]?s?\s*\)")
MAX_WORDS = 3


def vectorizer_for(n_papers: int) -> CountVectorizer:
    """1-2-gram counts without stop words for BERTopic's keywords; rare terms dropped in big corpora.

    Examples:
        >>> counter = vectorizer_for(10).build_analyzer()
        >>> counter("2-gram and n-gram models of 3-dim and 3D shapes")
        ['2-gram', 'n-gram', 'models', '3-dim', 'shapes', '2-gram n-gram', 'n-gram models', 'models 3-dim', '3-dim shapes']
    """
    return CountVectorizer(
        stop_words=ABSTRACT_STOP_WORDS,
        ngram_range=(1, 2),
        min_df=max(1, min(10, round(n_papers / 2000))),
        token_pattern=WORD,
    )


_LATIN_WORD = re.compile(WORD)
# Chinese and Japanese are written without spaces. Hiragana (particles, verb endings) and the
# commonest Chinese function words and abstract boilerplate split a run of ideographs and katakana
# into pieces that are mostly words ("扩散模型", "画像生成"); pieces over 12 characters are read as 2-4
# character sequences.
_IDEOGRAPHIC = "\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TERM = re.compile(rf"[{_IDEOGRAPHIC}]+|[^\W\d_\u3040-\u309f{_IDEOGRAPHIC}](?:[\w-]*[^\W_])?")
_CJK_FUNCTION = re.compile("|".join(map(re.escape, word_list("cjk-function-words"))))
# Words every Russian abstract uses (`words/russian-stop-words.txt`; the English ones are in
# ABSTRACT_STOP_WORDS).
_OTHER_STOP_WORDS = frozenset(word_list("russian-stop-words"))
NOT_ENGLISH_NOTE = (
    "fewer than half the abstracts are English: topic keywords are words of any script, "
    "and for Chinese and Japanese the pieces between particles and function words"
)
NO_WORDS_NOTE = (
    "the abstracts have no words (only numbers or symbols): topics are named Topic 0, Topic 1, ... "
    "and their keywords are the most telling tokens"
)


def any_script_terms(text: str) -> list[str]:
    """Words of any alphabet, lower-cased, without common function words; Chinese and Japanese
    split at particles and function words into word-like pieces.

    Examples:
        >>> any_script_terms("Мы изучаем оптимальный транспорт")
        ['изучаем', 'оптимальный', 'транспорт']
        >>> any_script_terms("我们研究扩散模型的图像生成问题")
        ['扩散模型', '图像生成']
        >>> any_script_terms("本研究では拡散モデルによる画像生成について")
        ['拡散モデル', '画像生成']
    """
    terms = []
    for run in _TERM.findall(text.lower()):
        if re.match(rf"[{_IDEOGRAPHIC}]", run):
            for piece in _CJK_FUNCTION.split(run):
                if 2 <= len(piece) <= 12:
                    terms.append(piece)
                elif len(piece) > 12:
                    terms.extend(piece[i : i + n] for n in (2, 3, 4) for i in range(len(piece) - n + 1))
        elif run not in ENGLISH_STOP_WORDS and run not in _OTHER_STOP_WORDS:
            terms.append(run)
    return terms


def vectorizers_for(documents: list[str]) -> list[tuple[CountVectorizer, str | None]]:
    """Term counters to try in order, each with a notice for the user.

    English corpora get `vectorizer_for`, unchanged. Where most abstracts are not English, words
    of any script; where no abstract has a letter at all, any whitespace-separated token.
    """
    english = sum(1 for doc in documents if len(_LATIN_WORD.findall(doc)) >= 3)
    candidates = []
    if english * 2 >= len(documents):
        candidates.append((vectorizer_for(len(documents)), None))
    candidates.append((CountVectorizer(analyzer=any_script_terms), NOT_ENGLISH_NOTE))
    candidates.append((CountVectorizer(token_pattern=r"\S+", lowercase=True), NO_WORDS_NOTE))
    return candidates


def initials(words: list[str]) -> list[str]:
    """Letters an acronym may take from words: the first of each, or of each hyphen part."""
    whole = "".join(w[0] for w in words)
    parts = "".join(p[0] for w in words for p in w.split("-") if p)
    return [whole.lower(), parts.lower()]


def definitions_in(text: str) -> list[tuple[str, str]]:
    """The acronyms one text defines, each as (acronym lower-cased, expansion), in the order written.

    "optimal transport (OT)" defines "ot" as "optimal transport": the acronym's capitals must be
    the initials of the words just before the bracket (of their hyphen parts, too, so
    "Multi-Modal Learning (MML)" counts). A plural acronym ("SNNs") is defined with its singular.

    Examples:
        >>> definitions_in("Optimal transport (OT) and Spiking neural networks (SNNs).")
        [('ot', 'optimal transport'), ('snn', 'spiking neural networks')]
    """
    found: list[tuple[str, str]] = []
    if not _BRACKETED_ACRONYM.search(text):
        return found
    for match in _ACRONYM_DEFINITION.finditer(text):
        acronym = match.group(2)
        letters = re.sub(r"s$", "", acronym) if re.search(r"[A-Z]s$", acronym) else acronym
        letters = "".join(c for c in letters if c.isalpha() and c.isupper()).lower()
        if len(letters) < 2:
            continue
        words = match.group(1).split()
        for size in range(1, len(words) + 1):
            tail = words[-size:]
            if letters in initials(tail):
                if tail[0].lower() not in _EDGE_WORDS or size == len(letters):
                    found.append((letters, " ".join(w.lower() for w in tail)))
                break
    return found


def most_given(definitions: Iterable[list[tuple[str, str]]]) -> dict[str, str]:
    """Acronym -> the expansion most texts give it (ties: the first given), over each text's
    `definitions_in`."""
    found: dict[str, Counter] = {}
    for pairs in definitions:
        for acronym, expansion in pairs:
            found.setdefault(acronym, Counter())[expansion] += 1
    return {acronym: forms.most_common(1)[0][0] for acronym, forms in sorted(found.items())}


def acronym_definitions(documents: list[str]) -> dict[str, str]:
    """Acronyms the papers define, lower-cased, with the expansion most papers give them
    (see `definitions_in`).

    Examples:
        >>> acronym_definitions(["Optimal transport (OT) is old.", "Spiking neural networks (SNNs) fire."])
        {'ot': 'optimal transport', 'snn': 'spiking neural networks'}
    """
    return most_given(definitions_in(doc) for doc in documents)


def _acronym_key(token: str) -> str | None:
    """The lower-case letters of an acronym token ("SNNs" -> "snn", "OT" -> "ot"), else None."""
    if not token[:1].isupper():  # most words: asked first, the cheap question
        return None
    core = token[:-1] if len(token) > 2 and token.endswith("s") and token[-2].isupper() else token
    if len(core) >= 2 and sum(c.isupper() for c in core) >= 2 and core[0].isupper():
        return "".join(c for c in core if c.isalpha()).lower()
    return None


@dataclass(frozen=True)
class PaperText:
    """What one abstract yields for naming on its own, whatever the rest of the corpus: worked out
    once per text (`read_text`) and cached by the text's hash (`pipeline.naming.text_cache`).

    Which acronyms a map defines depends on all its papers, so the acronyms the text writes are kept
    apart, and `phrases_with` counts them once the map's acronyms are known.
    """

    phrases: tuple[str, ...]  # candidate phrases (distinct)
    acronyms: tuple[str, ...]  # acronyms ("ot" of "OT", "snn" of "SNNs") written as words, distinct
    definitions: tuple[tuple[str, str], ...]  # `definitions_in`
    forms: tuple[tuple[str, int], ...]  # words as written mid-sentence and how often, first seen first

    def phrases_with(self, acronyms: dict[str, str]) -> list[str]:
        """The text's 1-3-word lower-case phrases when the map defines `acronyms`: an acronym it
        defines is a use of its expansion ("OT" -> "optimal transport"), so papers that only write
        the acronym count too, and a word of the phrases around it as written ("KV cache")."""
        return [*self.phrases, *(acronyms[key] for key in self.acronyms if key in acronyms)]


def read_text(text: str) -> PaperText:
    """A text's `PaperText`: its candidate phrases, the acronyms it writes and defines, its words' forms.

    A phrase is 1-3 words as the text writes them, within punctuation, lower-cased; it neither
    starts nor ends with a stop word.

    Examples:
        >>> paper = read_text("Sliced OT maps.")
        >>> sorted(paper.phrases_with({}))
        ['maps', 'ot', 'ot maps', 'sliced', 'sliced ot', 'sliced ot maps']
        >>> sorted(paper.phrases_with({"ot": "optimal transport"}))
        ['maps', 'optimal transport', 'ot', 'ot maps', 'sliced', 'sliced ot', 'sliced ot maps']
    """
    plain: dict[str, None] = {}
    written: dict[str, None] = {}
    for segment in _BREAK.split(text):
        tokens: list[str] = []
        for token in TOKEN.findall(segment):
            if token.startswith("-"):  # the part after a hyphen ("-means" of "𝑘-means"): not a word
                tokens.append("")
                continue
            key = _acronym_key(token)
            if key:
                written[key] = None
            tokens.append(token.lower())
        # Which words may start, end or be inside a phrase ("" and one letter: none).
        edge = [t in _EDGE_WORDS for t in tokens]
        starts = [len(t) > 1 and not e for t, e in zip(tokens, edge)]
        ends = [len(t) > 1 and (not e or t in NOT_ALONE) for t, e in zip(tokens, edge)]
        inner = [len(t) > 1 and (not e or t in CONNECTORS) for t, e in zip(tokens, edge)]
        for size in range(1, MAX_WORDS + 1):
            for start in range(len(tokens) - size + 1):
                last = start + size - 1
                if not (starts[start] and ends[last]) or (size == 3 and not inner[start + 1]):
                    continue
                if size == 1 and tokens[start] in NOT_ALONE:
                    continue
                plain[" ".join(tokens[start : last + 1])] = None
    return PaperText(
        phrases=tuple(plain),
        acronyms=tuple(written),
        definitions=tuple(definitions_in(text)),
        forms=tuple(forms_in(text).items()),
    )


@dataclass
class PhraseCounts:
    """Which papers use which candidate phrases: a binary papers x phrases matrix."""

    matrix: sparse.csr_matrix  # papers x phrases, 1 where a paper uses the phrase
    phrases: np.ndarray  # phrase strings, lower-case
    acronyms: dict[str, str]  # acronym -> expansion the papers define
    spelling: dict[str, str] | None = None  # how the corpus writes each word (see `word_case`)


def count_phrases(
    documents: list[str],
    analyzer: Callable[[str], list[str]] | None = None,
    *,
    texts: list[PaperText] | None = None,
) -> PhraseCounts:
    """Candidate phrases of a corpus: those at least two papers use (a name is never one paper's term).

    `analyzer` replaces the English phrase finder for corpora that are not English (see
    `vectorizers_for`); where no term is shared by two papers, every term is a candidate. `texts`
    are the documents' `PaperText`s when the caller has them (`pipeline.naming.text_cache`).
    """
    texts = texts if texts is not None else [read_text(doc) for doc in documents]
    acronyms = {} if analyzer else most_given(t.definitions for t in texts)
    terms = [analyzer(doc) for doc in documents] if analyzer else [t.phrases_with(acronyms) for t in texts]
    matrix, phrases = binary_counts(terms, min_df=min(2, len(documents)))
    return PhraseCounts(
        matrix=matrix, phrases=phrases, acronyms=acronyms, spelling=spelling_of(t.forms for t in texts)
    )


def binary_counts(terms: list[list[str]], min_df: int) -> tuple[sparse.csr_matrix, np.ndarray]:
    """A binary documents x terms matrix (int64, as scikit-learn's `CountVectorizer(binary=True)`
    makes) of the terms at least `min_df` documents use, or of every term when none is, and the
    terms in sorted order. No term at all is a ValueError, as it is for scikit-learn.

    Examples:
        >>> matrix, names = binary_counts([["b", "a", "a"], ["a"], ["c"]], min_df=2)
        >>> names.tolist(), matrix.toarray().tolist()
        (['a'], [[1], [1], [0]])
    """
    import pandas as pd

    lengths = np.fromiter((len(t) for t in terms), dtype=np.int64, count=len(terms))
    codes, uniques = pd.factorize(pd.Series(list(chain.from_iterable(terms)), dtype=object), sort=False)
    rows = np.repeat(np.arange(len(terms), dtype=np.int64), lengths)
    pairs = np.sort(rows * max(1, len(uniques)) + codes)
    pairs = pairs[np.concatenate([[True], pairs[1:] != pairs[:-1]])]  # each (document, term) once
    rows, codes = pairs // max(1, len(uniques)), pairs % max(1, len(uniques))
    df = np.bincount(codes, minlength=len(uniques))
    keep = np.flatnonzero(df >= min_df)
    if not len(keep):
        keep = np.flatnonzero(df >= 1)
    if not len(keep):
        raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
    names = np.asarray(uniques, dtype=object)[keep]
    order = np.argsort(names.astype(str), kind="stable")
    column = np.full(len(uniques), -1, dtype=np.int64)
    column[keep[order]] = np.arange(len(keep))
    inside = column[codes] >= 0
    matrix = sparse.csr_matrix(
        (np.ones(int(inside.sum()), dtype=np.int64), (rows[inside], column[codes[inside]])),
        shape=(len(terms), len(keep)),
    )
    matrix.sort_indices()
    return matrix, names[order]


def forms_in(text: str) -> Counter:
    """How often one text writes each word as it writes it, mid-sentence (see `word_case`)."""
    forms: Counter = Counter()
    # A definition's capitals mark where its acronym's letters come from, not proper nouns:
    # the words before "(ASP)" are no evidence of spelling.
    if _BRACKETED_ACRONYM.search(text):
        text = _ACRONYM_DEFINITION.sub(" ", text)
    for sentence in split_sentences(text):
        for i, token in enumerate(TOKEN.findall(sentence)):
            if i == 0 or token.startswith("-"):
                continue  # a sentence's first word is capitalised whatever it is; "-means" is no word
            forms[token] += 1
    return forms


def spelling_of(texts_forms: Iterable[Iterable[tuple[str, int]]]) -> dict[str, str]:
    """Each word's spelling over the texts' `forms_in`: lower case when any text writes it so, else
    the form written most often (ties: the first written).

    Examples:
        >>> spelling_of([[("LLM", 2), ("Gaussian", 1)], [("gaussian", 1), ("Llm", 2), ("BERT", 1)]])
        {'llm': 'LLM', 'gaussian': 'gaussian', 'bert': 'BERT'}
    """
    counts: dict[str, int] = {}  # first written first
    for token, n in chain.from_iterable(texts_forms):
        counts[token] = counts.get(token, 0) + n
    spelling: dict[str, str] = {}
    for token, count in counts.items():  # in the order first written
        word = token.lower()
        if word in counts:
            spelling[word] = word
        elif word not in spelling or count > counts[spelling[word]]:
            spelling[word] = token
    return spelling


def word_case(documents: list[str]) -> dict[str, str]:
    """How the papers spell each word mid-sentence: lower case when they ever write it so.

    Title Case in a definition ("Answer Set Programming (ASP)") then reads "Answer set
    programming"; "Gaussian", "Wasserstein" and "LLM" keep their capitals. Words with no evidence
    stay lower case.

    Examples:
        >>> word_case(["We use Gaussian noise and LLM agents.", "A gaussian prior."])["gaussian"]
        'gaussian'
    """
    return spelling_of(forms_in(doc).items() for doc in documents)


def lexical_scores(counts: PhraseCounts, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group and phrase: share of the group's papers using it, c-TF-IDF, and its precision.

    c-TF-IDF is BERTopic's class-based TF-IDF on document counts: a phrase's frequency in the
    group times log(1 + average group size / its frequency in the corpus). Precision is the
    share of all papers using the phrase that are in the group: high for a field's own term,
    low for "language models" when every topic writes it.
    """
    group_ids = np.unique(groups)
    indicator = sparse.csr_matrix(
        (np.ones(len(groups)), (np.searchsorted(group_ids, groups), np.arange(len(groups)))),
        shape=(len(group_ids), len(groups)),
    )
    df = np.asarray((indicator @ counts.matrix).todense(), dtype=np.float64)  # groups x phrases
    sizes = np.bincount(np.searchsorted(group_ids, groups), minlength=len(group_ids)).astype(np.float64)
    coverage = df / sizes[:, None]
    total = df.sum(axis=0)
    average = sizes.mean()
    ctfidf = coverage * np.log1p(average / np.maximum(total, 1))[None, :]
    precision = df / np.maximum(total, 1)[None, :]
    return coverage, ctfidf, precision


def keywords_of(counts: PhraseCounts, groups: np.ndarray, top_n: int = 10) -> dict[int, list[str]]:
    """A group's top phrases by c-TF-IDF (for themes; topics keep BERTopic's keywords)."""
    groups = np.asarray(groups)
    keep = np.flatnonzero(groups != -1)
    if not len(keep):
        return {}
    _, ctfidf, _ = lexical_scores(
        PhraseCounts(counts.matrix[keep], counts.phrases, counts.acronyms), groups[keep]
    )
    result = {}
    for row, group in enumerate(np.unique(groups[keep])):
        order = np.argsort(-ctfidf[row], kind="stable")[:top_n]
        result[int(group)] = [str(counts.phrases[i]) for i in order if ctfidf[row, i] > 0]
    return result
