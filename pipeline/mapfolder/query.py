"""What a word search can hold, and which written words count as the word typed.

`parse_query` reads any text as a search, the way people type into search boxes:

    graph neural          papers holding every word (in the title or the abstract)
    "neural field"        those words next to each other, in that order
    rank*                 any word starting with "rank"
    -human  NOT human     leave out the papers holding "human" (a quoted phrase works too)
    pose OR posture       either word: OR joins the words (or phrases) on each side of it

Only `-` before a word, upper-case `OR` and `NOT`, double quotes and a trailing `*` are operators.
Everything else is taken as written: `AND` is what a space already means and is dropped, and a piece
holding a character that looks like an operator elsewhere (`C++`, `title:x`, `NEAR(`, `a|b`) is searched
for its words with a one-line notice saying so. Nothing typed reaches FTS5 unquoted.

A typed word matches itself first ("exact word"), then its inflections ("word form"): the written word
must have the same Porter stem (SQLite's own `porter` tokenizer) *and* reduce to the typed word by
removing only an inflection ending (`inflection_bases`): -s, -es, -ies/-ied (for -y), -ed/-d and -ing,
with a doubled final consonant (`planned` -> `plan`) or a dropped final -e (`posing` -> `pose`), at most
two of them (`rankings` -> `ranking` -> `rank`). Derivations never join: `transformer` is not
`transform`, `generation` is not `generate`, `seed` is not `see`.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from dataclasses import dataclass, field

from pipeline.text import and_list, shorten

EXACT_TOKENIZER = "unicode61 remove_diacritics 2"  # whole words as written, case and accents folded
PORTER_TOKENIZER = "porter " + EXACT_TOKENIZER
MAX_TERMS = 32  # words and phrases used from one query; the rest is ignored with a notice
MAX_QUERY_CHARS = 2_000  # characters of a query read at all (a pasted page is cut, not scanned)
MAX_PHRASE_FORMS = 32  # spellings of one phrase searched (every word's forms, combined); past it, as typed

# Scripts written without spaces between words: a run of these is one "word" to unicode61, so they
# go to the trigram table instead, searched as substrings (Han, Hiragana, Katakana, Thai, Lao,
# Myanmar, Khmer, Tibetan).
_SPACELESS = (
    "\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
SPACELESS_RUN = re.compile(f"[{_SPACELESS}]+")
_QUERY_PIECE = re.compile(r'(-?)"([^"]*)(?:"|$)|([^\s"]+)')
# Characters that are operators in some search box but not here: a piece holding one gets a notice.
_OPERATOR_LOOK = re.compile(r"[+|&()\[\]{}:^~!=<>\\]")
MARK_OPEN, MARK_CLOSE = "\x02", "\x03"  # highlight() markers; removed from the text beforehand
_VOWELS = set("aeiouy")


def has_word_characters(text: str) -> bool:
    """Whether unicode61 finds a token in `text`: a letter, a digit or a private-use character.

    Examples:
        >>> has_word_characters("NEAR("), has_word_characters("*"), has_word_characters("🙂 -")
        (True, False, False)
    """
    return any(unicodedata.category(c)[0] in "LN" or unicodedata.category(c) == "Co" for c in text)


@dataclass(frozen=True)
class Term:
    """One thing a query asks for: whole words (a phrase when several), as a prefix, or a substring."""

    text: str
    prefix: bool = False
    spaceless: bool = False  # a run of a script without spaces: matched as a substring
    quoted: bool = field(default=False, compare=False)  # typed in quotes (a hyphenated word is a phrase too)

    def fts(self) -> str:
        """The term as an FTS5 string: quoted, so no character of it is an operator."""
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + " *" if self.prefix else quoted

    @property
    def phrase(self) -> bool:
        return len(tokens(self.text)) > 1

    def shown(self) -> str:
        text = f'"{self.text}"' if " " in self.text.strip() else self.text
        return text + "*" if self.prefix else text


@dataclass(frozen=True)
class Query:
    """A parsed search: groups of alternatives (every group must match, any term of a group will do),
    terms that must not match, and notices about what was read differently from how it was typed."""

    groups: tuple[tuple[Term, ...], ...] = ()
    excluded: tuple[Term, ...] = ()
    notices: tuple[str, ...] = ()

    @property
    def terms(self) -> tuple[Term, ...]:
        """Every term a hit may match (what is highlighted), in the order typed."""
        return tuple(term for group in self.groups for term in group)

    @property
    def empty(self) -> bool:
        return not self.groups and not self.excluded

    def shown(self) -> str:
        """The query as it is searched, for headers: 'graph "neural field" rank* -human'."""
        parts = [" OR ".join(term.shown() for term in group) for group in self.groups]
        return " ".join([*parts, *("-" + term.shown() for term in self.excluded)])

    @staticmethod
    def _free(group: tuple[Term, ...]) -> bool:
        """A group of one plain word: not quoted, joined by OR, a prefix or a substring."""
        (term, *others) = group
        return not others and not (term.prefix or term.spaceless or term.quoted)

    @property
    def free(self) -> tuple[Term, ...]:
        """The plain words typed (what a search matches by meaning too), in the order typed."""
        return tuple(group[0] for group in self.groups if self._free(group))

    @property
    def filters(self) -> Query:
        """The query's operators alone: quoted phrases, OR, prefixes, substrings and exclusions, each
        a paper must satisfy (empty when the query has none).

        Examples:
            >>> query = parse_query('draft-model "speculative decoding" -survey')
            >>> [t.text for t in query.free], query.filters.shown()
            (['draft-model'], '"speculative decoding" -survey')
        """
        return Query(tuple(g for g in self.groups if not self._free(g)), self.excluded)

    def kinds(self) -> tuple[str, ...]:
        """What kinds of term the query holds, for the Match column: word, phrase, prefix, substring."""
        kinds = []
        for term in self.terms:
            kind = (
                "substring"
                if term.spaceless
                else "prefix"
                if term.prefix
                else "phrase"
                if term.phrase
                else "word"
            )
            kinds.append(kind)
        return tuple(dict.fromkeys(kinds))


def _piece_term(piece: str, prefix: bool, quoted: bool = False) -> list[Term]:
    terms = [Term(run, spaceless=True) for run in SPACELESS_RUN.findall(piece)]
    rest = " ".join(SPACELESS_RUN.sub(" ", piece).split())
    if has_word_characters(rest):
        ends_spaceless = bool(SPACELESS_RUN.search(piece[-1:]))
        terms.append(Term(rest, prefix=prefix and not ends_spaceless, quoted=quoted))
    return terms


def parse_query(text: str) -> Query:
    """Read any text as a search: words, "phrases", prefix*, -excluded, OR and NOT (see the module).

    An unclosed quote runs to the end. Pieces with no letter or digit (emoji, "*", "-") are left out
    with a notice; so is everything past `MAX_TERMS` terms, and an OR or NOT with nothing to join.

    Examples:
        >>> query = parse_query('Pose "neural field" rank* -human depth OR stereo NOT "open')
        >>> query.shown()
        'Pose "neural field" rank* depth OR stereo -human -open'
        >>> print(*parse_query("C++ AND c").notices)
        Searched 'C++' as 'c': only -word, OR, NOT, quotes and a final * are operators here.
        >>> [t.fts() for t in parse_query('say "hi" 扩散模型 BERT模型').terms]
        ['"say"', '"hi"', '"扩散模型"', '"模型"', '"BERT"']
    """
    text = str(text or "")
    notices: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        notices.append(f"Only the first {MAX_QUERY_CHARS:,} characters of the search were used.")
    text = text.replace(MARK_OPEN, " ").replace(MARK_CLOSE, " ")
    groups: list[list[Term]] = []
    excluded: list[Term] = []
    left_out: list[str] = []
    literal: list[tuple[str, str]] = []  # (as typed, as searched)
    dangling: list[str] = []
    joining = negating = False  # the previous piece was OR / NOT
    anding: str | None = None  # an AND (or &&) waiting for a word after it
    count = 0
    for match in _QUERY_PIECE.finditer(text):
        minus, phrase, bare = match.group(1), match.group(2), match.group(3)
        if bare is not None and bare in ("OR", "|", "||"):
            if groups and not negating and not joining:
                joining = True
            else:
                dangling.append(bare)
            continue
        if bare is not None and bare in ("AND", "&&"):  # what a space means already, between two words
            if not (groups or excluded) or anding:
                dangling.append(bare)
            anding = bare
            continue
        if bare is not None and bare == "NOT":
            if negating:
                dangling.append(bare)
            negating = True
            continue
        exclude = bool(minus) or negating
        if bare is not None and bare.startswith("-") and has_word_characters(bare[1:]):
            exclude, bare = True, bare.lstrip("-")
        typed = f'{minus}"{phrase}"' if phrase is not None else bare  # as typed, for the notice
        piece = " ".join((phrase if phrase is not None else bare).split())
        prefix = False
        if bare is not None:
            prefix = piece.endswith("*") and has_word_characters(piece.rstrip("*"))
            piece = piece.strip("*") if prefix or not has_word_characters(piece) else piece
            if _OPERATOR_LOOK.search(piece) and has_word_characters(piece):
                literal.append((bare, " ".join(tokens(piece)) or piece))
        if not has_word_characters(piece):  # "*", "**", '""', "-", an emoji
            left_out.append(typed)
            negating = False
            continue
        terms = _piece_term(piece, prefix, quoted=phrase is not None)
        if count + len(terms) > MAX_TERMS:
            notices.append(f"Only the first {MAX_TERMS} words and phrases of the search were used.")
            break
        count += len(terms)
        if exclude:
            excluded.extend(t for t in terms if t not in excluded)
            if joining:
                dangling.append("OR")
        elif joining and groups:
            groups[-1].extend(t for t in terms if t not in groups[-1])
        else:
            groups.extend([t] for t in terms)
        joining = negating = False
        anding = None
    if anding and anding not in dangling:
        dangling.append(anding)
    if joining:
        dangling.append("OR")
    if negating:
        dangling.append("NOT")
    groups = [g for i, g in enumerate(groups) if g not in groups[:i]]  # "a a" is "a"
    if left_out:
        shown = ", ".join(repr(shorten(p, 20)) for p in dict.fromkeys(left_out))
        notices.append(f"Left out {shown}: it has no letters or digits to search for.")
    if literal:
        shown = ", ".join(f"{typed!r} as {words!r}" for typed, words in dict.fromkeys(literal))
        notices.append(f"Searched {shown}: only -word, OR, NOT, quotes and a final * are operators here.")
    if dangling:
        shown = and_list(dict.fromkeys(dangling))
        notices.append(f"Left out {shown}: it needs a word on each side (AND, OR) or after it (NOT).")
    if excluded and not groups:
        notices.append("Every paper without the excluded words is shown: nothing else was asked for.")
    return Query(tuple(tuple(g) for g in groups), tuple(excluded), tuple(notices))


# ---------------------------------------------------------------- tokens, stems and word forms
class _Tokenizers(threading.local):
    """Per-thread in-memory FTS5 tables that tokenize (and stem) text exactly as the index does."""

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:")
        self.connection.executescript(
            f"""
            CREATE VIRTUAL TABLE exact USING fts5(x, tokenize = '{EXACT_TOKENIZER}');
            CREATE VIRTUAL TABLE porter USING fts5(x, tokenize = '{PORTER_TOKENIZER}');
            CREATE VIRTUAL TABLE exact_terms USING fts5vocab(exact, 'instance');
            CREATE VIRTUAL TABLE porter_terms USING fts5vocab(porter, 'instance');
            """
        )

    def run(self, table: str, texts: list[str]) -> list[list[str]]:
        with self.connection:
            self.connection.execute(f"DELETE FROM {table}")
            self.connection.executemany(f"INSERT INTO {table} (rowid, x) VALUES (?, ?)", enumerate(texts))
            found = self.connection.execute(f"SELECT doc, term FROM {table}_terms ORDER BY doc, offset")
            out: list[list[str]] = [[] for _ in texts]
            for doc, term in found:
                out[doc].append(term)
            self.connection.execute(f"DELETE FROM {table}")
        return out


_TOKENIZERS = _Tokenizers()


def tokens(text: str) -> list[str]:
    """The words of `text` as the index holds them: lower case, accents removed.

    Examples:
        >>> tokens("Étude of C++ pose-aware")
        ['etude', 'of', 'c', 'pose', 'aware']
    """
    return _TOKENIZERS.run("exact", [str(text)])[0]


def porter_stems(words: list[str]) -> list[str]:
    """SQLite's Porter stem of each word (one word each), in order.

    Examples:
        >>> porter_stems(["transformers", "transform", "seed", "agreed"])
        ['transform', 'transform', 'seed', 'agre']
    """
    found = _TOKENIZERS.run("porter", [str(w) for w in words])
    return [stems[0] if stems else "" for stems in found]


def _strip_once(word: str) -> set[str]:
    """Words `word` may be an inflection of, by one ending (see the module's rule)."""
    bases: set[str] = set()

    def keep(base: str) -> None:
        if len(base) >= 2 and any(c in _VOWELS for c in base):
            bases.add(base)

    if word.endswith("ies") and len(word) > 4:
        keep(word[:-3] + "y")
    if word.endswith("es") and len(word) > 3:
        keep(word[:-2])
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 2:
        keep(word[:-1])
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            stem = word[: -len(ending)]
            keep(stem)
            keep(stem + "e")
            if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:  # planned -> plan
                keep(stem[:-1])
            if ending == "ed" and stem.endswith("i"):  # studied -> study
                keep(stem[:-1] + "y")
    if word.endswith("ed") and len(word) > 3:  # posed -> pose
        keep(word[:-1])
    return bases


def inflection_bases(word: str) -> set[str]:
    """`word` and every word it may be an inflection of (at most two endings removed).

    Examples:
        >>> sorted(inflection_bases("rankings"))
        ['rank', 'ranke', 'ranking', 'rankings']
        >>> "transform" in inflection_bases("transformers")
        False
    """
    first = _strip_once(word)
    return {word, *first, *(base for stripped in first for base in _strip_once(stripped))}


def forms_among(typed: str, candidates: list[str]) -> list[str]:
    """The candidates that are `typed` or one of its inflections (or `typed` one of theirs): the same
    Porter stem and a common base (`inflection_bases`); the typed form first.

    Examples:
        >>> forms_among("transformer", ["transform", "transformers", "transformer", "transformation"])
        ['transformer', 'transformers']
        >>> forms_among("rank", ["ranking", "ranked", "ranks", "rank", "random"])
        ['rank', 'ranking', 'ranked', 'ranks']
        >>> forms_among("pose", ["posing", "proposed"]), forms_among("see", ["seed"])
        (['posing'], [])
    """
    candidates = list(dict.fromkeys(candidates))
    if not candidates:
        return []
    stems = porter_stems([typed, *candidates])
    typed_stem, typed_bases = stems[0], inflection_bases(typed)
    found = [
        word
        for word, stem in zip(candidates, stems[1:], strict=True)
        if word == typed or (stem == typed_stem and inflection_bases(word) & typed_bases)
    ]
    return sorted(found, key=lambda word: word != typed)


def vocabulary_prefix(typed: str) -> str:
    """The prefix every word form of `typed` starts with (a final -e or -y may change): for a
    vocabulary range scan.

    Examples:
        >>> vocabulary_prefix("pose"), vocabulary_prefix("study"), vocabulary_prefix("go")
        ('pos', 'stud', 'go')
    """
    return typed[:-1] if len(typed) > 2 else typed
