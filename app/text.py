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
