"""Sentence splitting that knows the abbreviations abstracts use ("e.g.", "i.e.", "et al.", "Fig.")."""

from __future__ import annotations

import re
from collections.abc import Iterator

# Words that end with a period without ending a sentence (lower case, without their final period).
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "et",
        "al",
        "etc",
        "vs",
        "cf",
        "viz",
        "resp",
        "approx",
        "w.r.t",
        "a.k.a",
        "fig",
        "figs",
        "eq",
        "eqs",
        "sec",
        "secs",
        "no",
        "nos",
        "ref",
        "refs",
        "ch",
        "vol",
        "pp",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "inc",
        "ltd",
        "jr",
        "sr",
        "dept",
        "univ",
    ]
)
# A candidate sentence end: . ! or ? (closing quotes or brackets may follow) then whitespace;
# Chinese and Japanese end a sentence with 。！？ and no space after it.
# Tried only where a run of . ! ? starts, and possessive: linear in the text (else a title of ten
# thousand dots is scanned again from each one).
_CANDIDATE = re.compile(r"(?<![.!?])[.!?]++[\"'”’)\]]*+\s+|[。！？]\s*")
_LAST_WORD = re.compile(r"([\w.]+)[.!?]*[\"'”’)\]]*$")


def _ends_sentence(text: str, match: re.Match) -> bool:
    """Whether the candidate `match` in `text` really ends a sentence."""
    if match.group(0)[0] in "。！？":
        return True
    following = text[match.end() : match.end() + 1]
    if following and following.islower():
        return False  # "approx. ten", "et al. show": a sentence starts with a capital
    if match.group(0)[0] != ".":
        return True
    word = _LAST_WORD.search(text[max(0, match.start() - 40) : match.start() + 1])
    if word is None:
        return True
    token = word.group(1).rstrip(".").lower()
    if token in ABBREVIATIONS or token.split(".")[-1] in ABBREVIATIONS:
        return False
    # Dotted letters ("U.S.", "w.r.t.") are one abbreviated word.
    return not re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word.group(1).rstrip("."))


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, each with its closing punctuation, whitespace at the edges removed.

    Examples:
        >>> split_sentences("Methods (e.g. GANs) fail. As Smith et al. (2020) show, Fig. 2 holds. We fix it!")
        ['Methods (e.g. GANs) fail.', 'As Smith et al. (2020) show, Fig. 2 holds.', 'We fix it!']
        >>> split_sentences("我们研究扩散模型。结果很好。")
        ['我们研究扩散模型。', '结果很好。']
    """
    return list(_sentences(text))


def _sentences(text: str) -> Iterator[str]:
    start = 0
    for match in _CANDIDATE.finditer(text):
        if _ends_sentence(text, match):
            if text[start : match.end()].strip():
                yield text[start : match.end()].strip()
            start = match.end()
    if text[start:].strip():
        yield text[start:].strip()


def first_sentence(text: str) -> str:
    """The first sentence of a text (see `split_sentences`), or "" for a blank text.

    Examples:
        >>> first_sentence("Tasks, i.e. Ones Like This, are hard. We solve them.")
        'Tasks, i.e. Ones Like This, are hard.'
    """
    return next(_sentences(text), "")
