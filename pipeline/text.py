"""Plain-text wording shared by the pipeline and the app: the one way to cut a text short, and the one
way to list a few things ("a, b and c"). Making text safe for a page is the app's (`app.text`)."""

from __future__ import annotations

from collections.abc import Iterable

ELLIPSIS = "…"
# What a cut at a word leaves off its end: a clause's dangling punctuation ("a, b, …" reads "a, b…").
CLAUSE_ENDS = " ,;:-–—("


def shorten(text: object, limit: int, *, at_word: bool = False) -> str:
    """`text` in at most `limit` characters, ending with an ellipsis when cut (no space before it).

    `at_word` (for prose: titles, summaries): the text without its surrounding spaces, cut before the
    last word that does not fit unless that loses more than half of the room, dangling punctuation
    left off.

    Examples:
        >>> shorten("papercopilot/paperlists:iclr/iclr2024.json", 20)
        'papercopilot/paperl…'
        >>> shorten("Sinkhorn distances, fast and exact", 20, at_word=True)
        'Sinkhorn distances…'
        >>> shorten("short", 20)
        'short'
    """
    text = str(text).strip() if at_word else str(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if at_word:
        if " " in cut[limit // 2 :]:
            cut = cut[: cut.rindex(" ")]
        return cut.rstrip(CLAUSE_ENDS) + ELLIPSIS
    return cut.rstrip() + ELLIPSIS


def and_list(items: Iterable[object]) -> str:
    """The items as a list in a sentence: "a", "a and b", "a, b and c" ("" for none).

    Examples:
        >>> and_list([4, 7, 9])
        '4, 7 and 9'
        >>> and_list(["OR"])
        'OR'
    """
    shown = [str(item) for item in items]
    return ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else "".join(shown)
