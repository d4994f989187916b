"""Make untrusted text (titles, abstracts, topic names) safe for Plotly labels and Streamlit markdown."""

from __future__ import annotations

import re

from pipeline.text import BIDI_CHARACTERS

# What text set on the page would obey or hide instead of show: NUL and the other C0 controls (tab and
# line breaks aside), DEL, the C1 controls and the bidi controls (U+202E reverses what follows).
HIDDEN_PATTERN = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + BIDI_CHARACTERS + "]"
_HIDDEN = re.compile(HIDDEN_PATTERN)
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:=&\"'^])")
# Streamlit's Markdown (remark-gfm) turns web and e-mail addresses in the text into live links after
# escapes are read, so a backslash cannot stop it: a WORD JOINER (U+2060, invisible, not a word
# character) after `www`, inside `://` and after `@` leaves no address it recognises. Case-insensitive,
# as its own matching is.
_AUTOLINKS = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?<=@)")
WORD_JOINER = "\u2060"
_CLOSING = ".,;:!?)]}’”\"'…%"  # punctuation that follows a word without a space


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun, singular or plural, with the thousands separator every count on the page uses.

    Examples:
        >>> counted(1, "paper"), counted(1357, "paper"), counted(0, "topic"), counted(2, "is", "are")
        ('1 paper', '1,357 papers', '0 topics', '2 are')
    """
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def column_name(column: str) -> str:
    """A metadata column as the page names it (raw text: escape it for Markdown where it goes there).

    Examples:
        >>> column_name("first_author"), column_name("year")
        ('First author', 'Year')
    """
    return column.replace("_", " ").capitalize()


def plotly_escape(text: object) -> str:
    """Escape text for Plotly hover templates and annotations, which render a subset of HTML tags.

    Examples:
        >>> plotly_escape("<img src=x onerror=alert(1)> & <b>")
        '&lt;img src=x onerror=alert(1)&gt; &amp; &lt;b&gt;'
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plotly_wrap(text: object, width: int = 60, max_lines: int = 3) -> str:
    """Escape, then wrap onto at most `max_lines` lines joined by `<br>` (the one tag we add ourselves).

    A plain greedy wrap on spaces: `textwrap` is ten times slower and this runs once per paper.

    Examples:
        >>> plotly_wrap("a " * 50, width=20, max_lines=2)
        'a a a a a a a a a a<br>a a a a a a a a a a…'
        >>> plotly_wrap("<b>" + "x" * 30, width=10)
        '&lt;b&gt;xxxxxxx<br>xxxxxxxxxx<br>xxxxxxxxxx…'
    """
    text = str(text)
    if len(text) <= width and "\n" not in text:  # most titles: one line, nothing to wrap
        return plotly_escape(text)
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > width and len(lines) <= max_lines:  # break words longer than a line
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
        if len(lines) > max_lines:
            break
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1].rstrip(" .,;:") + "…"
    return "<br>".join(plotly_escape(part) for part in lines)


def visible(text: object) -> str:
    r"""`text` as text set on the page shows it: bidirectional controls (U+202E reversing what follows),
    NUL and the other C0 and C1 controls (`HIDDEN_PATTERN`) become U+FFFD, one character for one.
    Every text the browser draws comes through it (`app.data.shown_as_text` for the map's tables).

    Examples:
        >>> visible("Invoice \u202egpj.exe\x00\x1b[2J\x85") == "Invoice \ufffdgpj.exe\ufffd\ufffd[2J\ufffd"
        True
    """
    return _HIDDEN.sub("\ufffd", str(text))


def inert(text: object) -> str:
    """`text` with nothing in it a page would obey instead of show: `visible`, and web and e-mail
    addresses get an invisible WORD JOINER where Markdown would start a link. What is left looks as
    written.

    Examples:
        >>> inert("see www.evil.com, https://evil.com/x or a@evil.com\u202e").encode("unicode_escape")
        b'see www\\\\u2060.evil.com, https:\\\\u2060//evil.com/x or a@\\\\u2060evil.com\\\\ufffd'
    """
    return _AUTOLINKS.sub(WORD_JOINER, visible(text))


def markdown_literal(text: object) -> str:
    """The one way untrusted text reaches the page as Markdown: shown exactly as typed, obeyed never.

    Every Markdown, LaTeX and HTML trigger is backslash-escaped (no link, image, KaTeX or tag), web
    and e-mail addresses are defused (`inert`: Streamlit links them despite escapes), bidi controls
    and NUL bytes are made visible. Newlines become spaces: one paragraph, never headings or lists.

    Examples:
        >>> markdown_literal("$x$ **bold** [x](y)")
        '\\\\$x\\\\$ \\\\*\\\\*bold\\\\*\\\\* \\\\[x\\\\]\\\\(y\\\\)'
    """
    flat = " ".join(inert(text).split())
    return _MARKDOWN_SPECIALS.sub(r"\\\1", flat)


def highlighted_markdown(pieces: list[tuple[str, bool]], colour: str = "orange") -> str:
    """Markdown showing text exactly as written, with the flagged pieces bold on a coloured background.

    Every piece is escaped with `markdown_literal` (no markup, LaTeX or HTML from the text is ever
    interpreted); paragraphs (blank-line or line breaks) stay separate paragraphs.

    Examples:
        >>> print(highlighted_markdown([("We ", False), ("pose", True), (" <b>$x$</b>", False)]))
        We :orange-background[**pose**] \\<b\\>\\$x\\$\\</b\\>
    """
    paragraphs: list[list[str]] = [[]]
    pieces = _inert_pieces(pieces)
    for index, (text, flagged) in enumerate(pieces):
        lines = text.split("\n")
        for number, line in enumerate(lines):
            if number:
                paragraphs.append([])
            if not line:
                continue
            if flagged and line.strip():
                lead, core, tail = _split_spaces(line.replace("\t", " "))
                after = ""
                if not tail and number == len(lines) - 1 and index + 1 < len(pieces):
                    # Punctuation right after a highlight goes inside its coloured box (not bold): the box's
                    # padding would otherwise show as a gap before it ("trace transform , allow").
                    following = pieces[index + 1][0]
                    after = following[: len(following) - len(following.lstrip(_CLOSING))]
                    pieces[index + 1] = (following[len(after) :], pieces[index + 1][1])
                core, after = (_MARKDOWN_SPECIALS.sub(r"\\\1", p) for p in (core, after))
                paragraphs[-1].append(f"{lead}:{colour}-background[**{core}**{after}]{tail}")
            else:
                paragraphs[-1].append(_MARKDOWN_SPECIALS.sub(r"\\\1", line.replace("\t", " ")))
    return "\n\n".join(text for text in ("".join(p).strip() for p in paragraphs) if text)


def _split_spaces(text: str) -> tuple[str, str, str]:
    core = text.strip()
    start = text.index(core)
    return text[:start], core, text[start + len(core) :]


def _inert_pieces(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """`pieces` made `inert` as one text: an address cut across two pieces is defused too."""
    cleaned = visible("".join(text for text, _ in pieces))  # one character for one
    joins = {match.start() for match in _AUTOLINKS.finditer(cleaned)}
    result, start = [], 0
    for text, flagged in pieces:
        end = start + len(text)
        piece = "".join((WORD_JOINER if i in joins else "") + cleaned[i] for i in range(start, end))
        result.append((piece, flagged))
        start = end
    if len(cleaned) in joins and result:  # an `@` at the very end
        result[-1] = (result[-1][0] + WORD_JOINER, result[-1][1])
    return result


def without_server_paths(text: object, folder: object = None, name: str = "") -> str:
    """A message for the page without the server's folders: the map folder as the map's `name`, any
    other absolute path as its last part.

    Examples:
        >>> without_server_paths("/srv/app/maps/icml/manifest.json: damaged", "/srv/app/maps/icml", "icml")
        'icml/manifest.json: damaged'
    """
    text = str(text)
    if folder:
        text = text.replace(str(folder), name or "the map")
    return re.sub(r"(?<![\w.:/])/(?:[^\s/:]+/)+([^\s/:]*)", lambda m: m.group(1) or "…", text)
