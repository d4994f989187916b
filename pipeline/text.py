"""Plain-text wording shared by the pipeline and the app: the one way to cut a text short, and the one
way to list a few things ("a, b and c"). Making text safe for a page is the app's (`app.text`)."""

from __future__ import annotations

import unicodedata
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


# ---- names: one line of visible text ----

# Unicode's bidirectional controls (Bidi_Control): shown as U+FFFD wherever text is shown or exported
# (`pipeline.exports.export.without_bidi_controls`), never obeyed.
BIDI_CHARACTERS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Joiners shape the letters around them (Persian, Indic scripts, emoji sequences): kept in a name.
JOINERS = frozenset("\u200c\u200d")
# Letters drawn as nothing: the Hangul fillers and the blank Braille pattern.
FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def is_hidden(char: str) -> bool:
    """Whether `char` breaks a line or is not shown as itself: a C0 or C1 control (U+0085, U+009B), a
    line or paragraph separator (U+2028, U+2029), a lone surrogate, or a formatting character such as
    U+200B or the bidi control U+202E (the joiners U+200C and U+200D excepted)."""
    category = unicodedata.category(char)
    return category in ("Cc", "Zl", "Zp", "Cs") or (category == "Cf" and char not in JOINERS)


def is_visible(char: str) -> bool:
    """Whether `char` puts ink on the page by itself: not a space, a mark, a control, a formatting
    character or a filler (U+3164)."""
    return unicodedata.category(char)[0] not in "MZC" and char not in FILLERS


def shown_plainly(text: object) -> str:
    """`text` on one line with every hidden character written as an escape (`\\n`, `\\x85`, `\\u202e`),
    for a terminal or a one-line message.

    Examples:
        >>> shown_plainly("a\\u2028b\\u202ec")
        'a\\\\u2028b\\\\u202ec'
    """
    text = str(text)
    if not any(is_hidden(char) for char in text):
        return text
    return "".join(
        SHORT_ESCAPES.get(char) or (ascii(char)[1:-1] if is_hidden(char) else char) for char in text
    )


def name_problem(name: str) -> str | None:
    """What keeps `name` from being a name a page can show on one line, in words; None when it is one.

    Examples:
        >>> name_problem("Optimal transport") is None
        True
        >>> name_problem("a\\u2028b")
        'a line break or an invisible character (U+2028)'
        >>> name_problem("\\u3164")
        'no visible character'
    """
    hidden = next((char for char in name if is_hidden(char)), None)
    if hidden is not None:
        return f"a line break or an invisible character (U+{ord(hidden):04X})"
    if not any(is_visible(char) for char in name):
        return "no visible character"
    return None


def name_key(name: str) -> str:
    """The key under which two names read the same (fullwidth letters, case, joiners and spacing
    aside): for duplicates only, never for what is shown.

    Examples:
        >>> name_key("Ｕｎａｓｓｉｇｎｅｄ") == name_key("unassigned\\u200b")
        True
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join("".join(c for c in folded if is_visible(c) or c.isspace()).split())


def plain_name(name: str, fallback: str) -> str:
    """A name read from a map's tables, fit to show: as written when it is one (`name_problem`),
    else with line breaks as spaces and invisible characters left out, or `fallback` when nothing
    visible is left. A bidi control (U+202E) is shown as U+FFFD, as everywhere text is shown.

    Examples:
        >>> plain_name("Diffusion\\u2028models", "Topic 1")
        'Diffusion models'
        >>> plain_name("\\u200b\\u3164", "Topic 1")
        'Topic 1'
    """
    if name_problem(name) is None:
        return name
    kept = "".join(
        " " if char.isspace() else "\ufffd" if char in BIDI_CHARACTERS else char
        for char in name
        if not is_hidden(char) or char.isspace() or char in BIDI_CHARACTERS
    )
    kept = " ".join(kept.split())
    return kept if kept and name_problem(kept) is None else fallback
