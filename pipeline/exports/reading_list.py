"""Reading lists of a set of papers: Markdown grouped by topic, and BibTeX with stable unique keys."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

import pandas as pd

from pipeline.exports.export import without_bidi_controls
from pipeline.naming.sentences import first_sentence
from pipeline.text import shorten

SUMMARY_CHARACTERS = 200
# Markdown: CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that
# could turn an abstract's text into emphasis, code, links, raw HTML, tables, entities or math.
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$!{}#])")
# Text a Markdown viewer would turn into a live link by itself (GitHub's autolinks, markdown-it's
# linkify): scheme URLs, www. addresses, mailto:/xmpp: and e-mail addresses. Shown as code instead.
# Linear in the text: a scheme or an address's local part is only tried from the start of its run
# of characters (the lookbehinds), and possessive runs never give characters back; else a title of
# one long word is scanned again from each of its letters (100 KB: ten minutes).
AUTOLINK = re.compile(
    r"(?:(?<![a-z0-9+.-])[0-9+.-]*+[a-z][a-z0-9+.-]*+://|(?:mailto|xmpp|javascript|data|tel):|www\.)\S+"
    r"|(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+",
    re.IGNORECASE,
)
# A dot between a word and two or more letters, as before a domain's last part: "evil.com/login" and
# "bit.ly/x", which markdown-it's linkify turns into live links with no scheme at all, have it
# backslash-escaped (rendered as the dot it is); "e.g." and "Fig. 2" are left as written.
DOMAIN_DOT = re.compile(r"(?<=\w)(\.)(?=[^\W\d_]{2})")
# Control characters (C0, DEL, C1) a reading list never carries raw: shown as U+FFFD, as in exports.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# TeX: the ten characters with a special meaning, in one pass so replacements are not re-escaped.
# Braces become commands, not \{ and \}: BibTeX counts a brace even after a backslash, so a
# single `}` in a title would end the field (and let the rest of the title add fields of its own).
TEX_ESCAPES = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}
TEX_SPECIAL = re.compile("|".join(re.escape(c) for c in TEX_ESCAPES))
KEY_STOP_WORDS = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "via", "towards", "toward"}
SAFE_URL = re.compile(r"^https?://[^\s\"<>]+$", re.IGNORECASE)
# Characters of a URL that would end or bend a Markdown link or a BibTeX field: percent-encoded.
BIDI_OR_CONTROL = re.compile(r"[\x00-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
URL_MARKUP = {c: f"%{ord(c):02X}" for c in '\\(){}<>`"|^'}


def one_line(text: object) -> str:
    """Whitespace (newlines included) collapsed to single spaces; bidi controls and other control
    characters (a NUL) shown as U+FFFD, not obeyed.

    Examples:
        >>> one_line("a\\x00b\\n c")
        'a\ufffdb c'
    """
    if not _present(text):
        return ""
    return CONTROL.sub("\ufffd", without_bidi_controls(" ".join(str(text).split())))


def summary(abstract: str, limit: int = SUMMARY_CHARACTERS) -> str:
    """The abstract's first sentence, cut at a word boundary to about `limit` characters.

    Examples:
        >>> summary("We propose X. It is fast.")
        'We propose X.'
        >>> summary("Priors (e.g. Gaussian ones) help, as Lee et al. Found. Then more.")
        'Priors (e.g. Gaussian ones) help, as Lee et al. Found.'
        >>> summary("word " * 100, limit=20)
        'word word word…'
    """
    text = one_line(abstract)
    first = first_sentence(text)
    return shorten(first, limit, at_word=True)


def markdown_text(text: object) -> str:
    """Plain text safe inside a Markdown line: no markup, links or HTML can come out of it.

    URLs and e-mail addresses are shown as code, which no viewer turns into a link; in a bare domain
    ("evil.com/login") the dot is escaped, so linkify leaves it text.

    Examples:
        >>> markdown_text("<b>x</b> *and* [y](z)")
        '\\\\<b\\\\>x\\\\</b\\\\> \\\\*and\\\\* \\\\[y\\\\](z)'
        >>> markdown_text("Mail ada@example.org or see https://x.org/a_b")
        'Mail `ada@example.org` or see `https://x.org/a_b`'
        >>> markdown_text("Log in at evil.com/login")
        'Log in at evil\\\\.com/login'
    """
    text, parts, at = one_line(text), [], 0
    for match in AUTOLINK.finditer(text):
        parts += [_plain_markdown(text[at : match.start()]), _code(match.group(0))]
        at = match.end()
    return "".join([*parts, _plain_markdown(text[at:])])


def _plain_markdown(text: str) -> str:
    """Text outside a code span: markup characters and the dots of bare domains backslash-escaped."""
    return DOMAIN_DOT.sub(r"\\\1", MARKDOWN_SPECIAL.sub(r"\\\1", text))


def _code(text: str) -> str:
    """A Markdown code span holding `text` literally (a fence longer than any backtick run in it)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def safe_url(value: object) -> str | None:
    r"""An http(s) URL with no spaces, quotes or angle brackets, else None (never a javascript: link);
    characters that would end a Markdown link or a BibTeX field (`\`, braces, brackets) percent-encoded.

    Examples:
        >>> safe_url("https://x.org/a\\"), safe_url("javascript:alert(1)")
        ('https://x.org/a%5C', None)
    """
    text = str(value).strip() if _present(value) else ""
    if not SAFE_URL.match(text) or BIDI_OR_CONTROL.search(text):
        return None
    return "".join(URL_MARKUP.get(c, c) for c in text)


def reading_list_heading(map_name: str) -> str:
    """A reading list's heading, the same from the app and from `python -m pipeline export`; the
    list adds its count and how its papers were chosen.

    Examples:
        >>> reading_list_heading("COLM 2024")
        'Reading list from COLM 2024'
    """
    return f"Reading list from {map_name}"


def reading_list_markdown(
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    *,
    heading: str = "Reading list",
    chosen: str | None = None,
    evidence: list[tuple[int, str]] | None = None,
) -> str:
    """A Markdown reading list: one section a topic (largest first, unassigned last), one bullet a
    paper with its title, a one-line summary and its link when the papers have a `url` column.
    `chosen` says how the papers were chosen (the search, filters or topic), under the heading.
    `evidence` (one a paper: its rank in a search's list and why it is there): the papers in their
    order, in one list, each with its rank, evidence and topic.

    Examples:
        >>> papers = pd.DataFrame({"title": ["OT at scale"], "abstract": ["We scale OT. Then more."],
        ...                        "topic_id": [4], "url": ["https://x.org/1"]})
        >>> print(reading_list_markdown(papers, pd.DataFrame({"topic_id": [4], "label": ["Transport"]})))
        # Reading list (1 paper)
        <BLANKLINE>
        ## Transport (1)
        <BLANKLINE>
        - **OT at scale**: We scale OT. [link](https://x.org/1)
        <BLANKLINE>
    """
    names = dict(zip(topics["topic_id"].astype(int), topics["label"].astype(str), strict=True))
    notes = dict(zip(topics["topic_id"].astype(int), topics["note"].fillna(""))) if "note" in topics else {}
    count = len(papers)
    lines = [f"# {markdown_text(heading)} ({count:,} paper{'s' if count != 1 else ''})", ""]
    if chosen:
        lines += [f"How it was chosen: {markdown_text(chosen)}", ""]
    if evidence is not None:
        lines += ["## Best matches first", ""]
        for paper, (rank, why) in zip(papers.itertuples(index=False), evidence, strict=True):
            topic = int(paper.topic_id)
            name = "Unassigned" if topic == -1 else names.get(topic, f"Topic {topic}")
            line = f"- #{rank:,} **{markdown_text(paper.title)}** ({markdown_text(why)}; {markdown_text(name)}): "
            line += markdown_text(summary(paper.abstract))
            url = safe_url(getattr(paper, "url", None))
            lines.append(line + (f" [link]({url})" if url else ""))
        return "\n".join([*lines, ""])
    sizes = papers["topic_id"].astype(int).value_counts()
    order = sorted(sizes.index, key=lambda t: (t == -1, -sizes[t], t))
    for topic in order:
        name = "Unassigned" if topic == -1 else names.get(topic, f"Topic {topic}")
        lines += [f"## {markdown_text(name)} ({sizes[topic]:,})", ""]
        if notes.get(topic):  # a curator's note (pipeline/mapfolder/curation.py), as plain text
            lines += [f"> {markdown_text(notes[topic])}", ""]
        for paper in papers[papers["topic_id"].astype(int) == topic].itertuples(index=False):
            line = f"- **{markdown_text(paper.title)}**: {markdown_text(summary(paper.abstract))}"
            url = safe_url(getattr(paper, "url", None))
            if url:
                line += f" [link]({url})"
            lines.append(line)
        lines.append("")
    return "\n".join(lines)


def tex_escape(text: object) -> str:
    r"""Text with TeX's special characters escaped, on one line.

    Examples:
        >>> print(tex_escape(r"50% of $x_1$ & {y} #2 ~ ^ \ok"))
        50\% of \$x\_1\$ \& \textbraceleft{}y\textbraceright{} \#2 \textasciitilde{} \textasciicircum{} \textbackslash{}ok
    """
    return TEX_SPECIAL.sub(lambda m: TEX_ESCAPES[m.group(0)], one_line(text))


def bibtex_key(title: str, year: object, doc_id: str) -> str:
    """A stable key: first meaningful title word, year, and 4 hex digits of the doc_id's hash.

    Examples:
        >>> bibtex_key("The Sinkhorn Solver at Scale", 2025, "abc123")
        'sinkhorn2025-6ca1'
    """
    words = [_ascii(w).lower() for w in re.findall(r"[^\W\d_][\w-]*", str(title))]
    word = next((re.sub(r"[^a-z0-9]", "", w) for w in words if w not in KEY_STOP_WORDS and _ascii(w)), "")
    word = word[:20] or "paper"
    return f"{word}{_year(year)}-{hashlib.sha256(str(doc_id).encode()).hexdigest()[:4]}"


def unique_keys(keys: Iterable[str], doc_ids: Iterable[str]) -> list[str]:
    """Keys made unique by lengthening the hash of those that collide (deterministic)."""
    keys, doc_ids = list(keys), [str(d) for d in doc_ids]
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    result = []
    for key, doc_id in zip(keys, doc_ids, strict=True):
        if seen[key] > 1:
            key = key.rsplit("-", 1)[0] + "-" + hashlib.sha256(doc_id.encode()).hexdigest()[:12]
        result.append(key)
    used: set[str] = set()
    for index, key in enumerate(result):  # identical doc_ids (not in one map) still get distinct keys
        candidate, suffix = key, 2
        while candidate in used:
            candidate, suffix = f"{key}-{suffix}", suffix + 1
        used.add(candidate)
        result[index] = candidate
    return result


def reading_list_bibtex(
    papers: pd.DataFrame, *, heading: str | None = None, chosen: str | None = None
) -> str:
    """BibTeX entries for the papers: @inproceedings with booktitle when a venue is known, else
    @misc; title, author (when an `authors` column exists), year, url where present. `heading` and
    `chosen` (how the papers were chosen) come first as comment lines, which BibTeX skips (no `@` in them).

    Examples:
        >>> print(reading_list_bibtex(pd.DataFrame({"doc_id": ["d1"], "title": ["Sinkhorn & co at 100%"],
        ...     "year": [2025], "venue": ["ICML"]})))
        @inproceedings{sinkhorn2025-8b53,
          title = {{Sinkhorn \\& co at 100\\%}},
          year = {2025},
          booktitle = {ICML},
        }
        <BLANKLINE>
    """
    rows = papers.reset_index(drop=True)
    keys = unique_keys(
        (bibtex_key(p["title"], p.get("year"), p["doc_id"]) for _, p in rows.iterrows()), rows["doc_id"]
    )
    entries = []
    for key, (_, paper) in zip(keys, rows.iterrows(), strict=True):
        venue = one_line(paper.get("venue"))
        fields = [("title", "{" + tex_escape(paper["title"]) + "}")]
        authors = _authors(paper.get("authors"))
        if authors:
            fields.append(("author", " and ".join(tex_escape(a) for a in authors)))
        year = _year(paper.get("year"))
        if year:
            fields.append(("year", year))
        if venue:
            fields.append(("booktitle", tex_escape(venue)))
        url = safe_url(paper.get("url"))
        if url:  # read verbatim by biblatex/hyperref; safe_url encoded what would break the braces
            fields.append(("url", url))
        body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields)
        entries.append(f"@{'inproceedings' if venue else 'misc'}{{{key},\n{body}}}\n")
    comments = [text for text in (heading, chosen and f"How it was chosen: {chosen}") if text]
    preamble = "".join(f"% {one_line(text).replace('@', ' at ')}\n" for text in comments)
    return preamble + ("\n" if preamble else "") + "\n".join(entries)


def export_choice(topic_id: int | None, topics: pd.DataFrame, count: int) -> str:
    """How `python -m pipeline export --topic` chose its papers, for the reading list.

    Examples:
        >>> topics = pd.DataFrame({"topic_id": [3], "label": ["Optical flow"]})
        >>> export_choice(3, topics, 41), export_choice(-1, topics, 1), export_choice(None, topics, 1357)
        ('the 41 papers of topic 3, “Optical flow”', 'the 1 unassigned paper', 'every paper of the map (1,357)')
    """
    noun = "paper" if count == 1 else "papers"
    if topic_id is None:
        return f"every paper of the map ({count:,})"
    if topic_id == -1:
        return f"the {count:,} unassigned {noun}"
    names = dict(zip(topics["topic_id"].astype(int), topics["label"].astype(str)))
    name = names.get(int(topic_id))
    return f"the {count:,} {noun} of topic {topic_id}" + (f", “{name}”" if name else "")


def _authors(value: object) -> list[str]:
    """Author names from a list, or a string separated by ';' (else ',' or ' and ')."""
    if value is None:
        return []
    if not isinstance(value, str) and hasattr(value, "__iter__"):
        return [one_line(a) for a in value if one_line(a)]
    text = one_line(value)
    if not text:
        return []
    separator = ";" if ";" in text else (" and " if " and " in text else ",")
    return [part.strip() for part in text.split(separator) if part.strip()]


def _year(value: object) -> str:
    """A year as digits ("2025" from 2025, 2025.0 or " 2025 "), else ""."""
    if not _present(value):
        return ""
    try:
        return str(int(float(str(value).strip())))
    except (TypeError, ValueError, OverflowError):
        return ""


def _ascii(word: str) -> str:
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()


def _present(value: object) -> bool:
    if value is None:
        return False
    try:
        return not bool(pd.isna(value))
    except (TypeError, ValueError):  # lists and arrays
        return True
