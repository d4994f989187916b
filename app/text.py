"""Make untrusted text (titles, abstracts, topic names) safe for Plotly labels and Streamlit markdown."""

from __future__ import annotations

import re

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:=&\"'^])")


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
        while len(word) > width:  # break words longer than a line
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


def markdown_literal(text: object) -> str:
    """Backslash-escape every markdown, LaTeX and HTML trigger so `st.markdown` shows `text` as typed.

    Newlines become spaces: the text is shown on one paragraph, never as headings or lists.

    Examples:
        >>> markdown_literal("$x$ **bold** [x](y)")
        '\\\\$x\\\\$ \\\\*\\\\*bold\\\\*\\\\* \\\\[x\\\\]\\\\(y\\\\)'
    """
    flat = " ".join(str(text).split())
    return _MARKDOWN_SPECIALS.sub(r"\\\1", flat)


def shorten(text: object, limit: int) -> str:
    """Cut `text` to at most `limit` characters, ending with an ellipsis when cut.

    Examples:
        >>> shorten("papercopilot/paperlists:iclr/iclr2024.json", 20)
        'papercopilot/paperl…'
    """
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def highlighted_markdown(pieces: list[tuple[str, bool]], colour: str = "orange") -> str:
    """Markdown showing text exactly as written, with the flagged pieces bold on a coloured background.

    Every piece is escaped with `markdown_literal` (no markup, LaTeX or HTML from the text is ever
    interpreted); paragraphs (blank-line or line breaks) stay separate paragraphs.

    Examples:
        >>> print(highlighted_markdown([("We ", False), ("pose", True), (" <b>$x$</b>", False)]))
        We :orange-background[**pose**] \\<b\\>\\$x\\$\\</b\\>
    """
    paragraphs: list[list[str]] = [[]]
    for text, flagged in pieces:
        for number, line in enumerate(text.split("\n")):
            if number:
                paragraphs.append([])
            if not line:
                continue
            body = _MARKDOWN_SPECIALS.sub(r"\\\1", line.replace("\t", " "))
            if flagged and body.strip():
                lead, core, tail = _split_spaces(body)
                paragraphs[-1].append(f"{lead}:{colour}-background[**{core}**]{tail}")
            else:
                paragraphs[-1].append(body)
    return "\n\n".join(text for text in ("".join(p).strip() for p in paragraphs) if text)


def _split_spaces(text: str) -> tuple[str, str, str]:
    core = text.strip()
    start = text.index(core)
    return text[:start], core, text[start + len(core) :]
