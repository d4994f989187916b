"""Reading lists: Markdown grouped by topic and BibTeX that parses back, escaped, with unique stable keys."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest

from pipeline.exports.reading_list import bibtex_key, reading_list_bibtex, reading_list_markdown
from pipeline.mapfolder.store import read_map
from tests.helpers import ROOT

SEED_MAP = ROOT / "assets" / "maps" / "seeds"
TEX_UNESCAPES = {
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\textbackslash{}": "\\",
    r"\textbraceleft{}": "{",
    r"\textbraceright{}": "}",
    r"\&": "&",
    r"\%": "%",
    r"\$": "$",
    r"\#": "#",
    r"\_": "_",
}


def parse_bibtex(text: str) -> list[dict]:
    """Entries as BibTeX itself reads them (bibtex.web, followed by biber and pybtex).

    Text outside entries is skipped up to the next `@` (only `%` comment lines are allowed there); an entry is `@type{key, name = value, ...}`
    (or with parentheses); a value is `{...}`, `"..."`, a number or a macro name, joined by `#`.
    Every brace counts, with or without a backslash before it: `\\}` closes a group just as `}` does.
    Field names are case-insensitive and a repeated one is an error (BibTeX warns and keeps the first).
    A field that ends early, an unbalanced brace or a stray token fails with an AssertionError.
    """
    entries, at = [], 0
    space = re.compile(r"\s*")

    def skip(i: int) -> int:
        return space.match(text, i).end()

    def value_at(i: int) -> tuple[str, int]:
        parts = []
        while True:
            assert i < len(text), "entry not closed"
            if text[i] in '{"':
                closer, depth, j = ("}" if text[i] == "{" else '"'), 0, i + 1
                while not (text[j] == closer and depth == 0):
                    depth += {"{": 1, "}": -1}.get(text[j], 0)
                    assert depth >= 0, f"unbalanced brace in {text[i : j + 1][-80:]!r}"
                    j += 1
                    assert j < len(text), f"unbalanced braces from {text[i : i + 80]!r}"
                parts.append(text[i + 1 : j])
                i = j + 1
            else:
                token = re.compile(r"[^\s#,={}()\"]+").match(text, i)
                assert token, f"no value at {text[i : i + 40]!r}"
                parts.append(token.group(0))
                i = token.end()
            i = skip(i)
            if text.startswith("#", i):
                i = skip(i + 1)
                continue
            return "".join(parts), i

    while (start := text.find("@", at)) != -1:
        between = re.sub(r"(?m)^%.*$", "", text[at:start])  # comment lines (biber's; BibTeX skips them)
        assert not between.strip(), f"text between entries: {text[at:start][:80]!r}"
        head = re.compile(r"@\s*([A-Za-z]+)\s*([{(])\s*([^,\s]*)").match(text, start)
        assert head, text[start : start + 80]
        close = "}" if head.group(2) == "{" else ")"
        entry, i = {"type": head.group(1).lower(), "key": head.group(3)}, skip(head.end())
        while True:
            if text.startswith(close, i):
                i += 1
                break
            assert text.startswith(",", i), f"expected ',' or end of entry at {text[i : i + 80]!r}"
            i = skip(i + 1)
            if text.startswith(close, i):
                i += 1
                break
            field = re.compile(r"([A-Za-z][\w:.+/'-]*)\s*=\s*").match(text, i)
            assert field, f"expected a field at {text[i : i + 80]!r}"
            name = field.group(1).lower()
            assert name not in entry, f"field {name} given twice in {entry['key']}"
            entry[name], i = value_at(field.end())
        entries.append(entry)
        at = i
    assert not text[at:].strip(), f"trailing text: {text[at:][:80]!r}"
    return entries


def untex(value: str) -> str:
    if value.startswith("{") and value.endswith("}"):
        value = value[1:-1]
    return re.sub("|".join(re.escape(k) for k in TEX_UNESCAPES), lambda m: TEX_UNESCAPES[m.group(0)], value)


NASTY = pd.DataFrame(
    {
        "doc_id": ["d1", "d2", "d3", "d4"],
        "title": [
            "Costs & 100% of $x_1$ {braces} #tag ~tilde ^caret \\backslash",
            "Sinkhorn at scale",
            "Sinkhorn at scale",  # same title and year, other paper: keys must still differ
            "<script>alert(1)</script> *bold* [link](javascript:alert(1))",
        ],
        "abstract": [
            "First sentence here. Second one.",
            "We scale Sinkhorn. More.",
            "Another Sinkhorn paper.\nWith a newline.",
            "Markup <b>in</b> the abstract. Yes.",
        ],
        "topic_id": [2, 5, 5, -1],
        "year": [2024, 2025, 2025, None],
        "venue": ["ICML", "NeurIPS", None, None],
        "url": ["https://example.org/a_b?x=1&y=%20", "javascript:alert(1)", None, "http://e.org/{x}"],
        "authors": ["Ada Lovelace; Alan Turing", None, None, None],
    }
)
TOPICS = pd.DataFrame({"topic_id": [2, 5], "label": ["Costs_and *stars*", "Optimal transport"]})


def test_bibtex_parses_back_with_every_special_character_escaped_and_unique_keys():
    text = reading_list_bibtex(NASTY)
    entries = parse_bibtex(text)
    assert len(entries) == 4
    keys = [e["key"] for e in entries]
    assert len(set(keys)) == 4
    assert all(re.fullmatch(r"[a-z0-9]+-[0-9a-f]+(-\d+)?", k) for k in keys), keys
    assert keys[0].startswith("costs2024-") and keys[1].startswith("sinkhorn2025-")
    assert [untex(e["title"]) for e in entries] == [" ".join(t.split()) for t in NASTY["title"]]
    first = entries[0]
    assert first["type"] == "inproceedings" and first["booktitle"] == "ICML" and first["year"] == "2024"
    assert first["author"] == "Ada Lovelace and Alan Turing"
    assert first["url"] == "https://example.org/a_b?x=1&y=%20"
    assert entries[1]["type"] == "inproceedings" and "url" not in entries[1]  # javascript: is no link
    assert entries[2]["type"] == "misc" and "booktitle" not in entries[2]
    assert (
        entries[3]["type"] == "misc"
        and "year" not in entries[3]
        and entries[3]["url"] == "http://e.org/%7Bx%7D"
    )
    # every TeX special character inside a title is escaped: no bare & % $ # _ ^ ~ outside commands
    raw_title = first["title"]
    assert not re.search(r"(?<!\\)[&%$#_]", raw_title)
    assert "^" not in raw_title.replace(r"\textasciicircum{}", "") and "~" not in raw_title


def test_bibtex_keys_are_stable_whatever_else_is_exported():
    alone = parse_bibtex(reading_list_bibtex(NASTY.iloc[[1]]))[0]["key"]
    together = parse_bibtex(reading_list_bibtex(NASTY.iloc[[0, 1]]))[1]["key"]
    assert alone == together == bibtex_key("Sinkhorn at scale", 2025, "d2")


def test_markdown_groups_by_topic_escapes_markup_and_links_only_web_urls():
    text = reading_list_markdown(NASTY, TOPICS, heading="Picks")
    assert text.startswith("# Picks (4 papers)\n")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings == ["Optimal transport (2)", "Costs\\_and \\*stars\\* (1)", "Unassigned (1)"]
    assert "- **Sinkhorn at scale**: We scale Sinkhorn." in text
    assert "Another Sinkhorn paper." in text and "With a newline" not in text
    assert "[link](https://example.org/a_b?x=1&y=%20)" in text
    assert "javascript:" not in text.replace("\\[link\\](`javascript:alert(1))`", "")
    assert "<script>" not in text and "\\<script\\>" in text and "\\*bold\\*" in text
    assert "<b>" not in text
    # heading and a blank line; per section its heading and a blank; the papers; blanks between sections
    assert len(text.splitlines()) == 2 + 3 * 2 + 4 + 2 and text.endswith("\n")


@pytest.mark.parametrize(
    "name, extra, check",
    [
        ("list.md", [], lambda text: text.startswith("# Reading list from ICML 2025 (57 papers)")),
        ("list.bib", [], lambda text: len(parse_bibtex(text)) == 57),
        ("list.txt", ["--format", "bib"], lambda text: len(parse_bibtex(text)) == 57),
        ("topic.md", ["--topic", "TOPIC"], lambda text: text.startswith("# Reading list from ICML 2025 (")),
    ],
)
def test_export_command_writes_reading_lists(tmp_path, name, extra, check):
    atlas = read_map(SEED_MAP)
    topic = int(atlas.topics["topic_id"].iloc[0])
    extra = [str(topic) if e == "TOPIC" else e for e in extra]
    out = tmp_path / name
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "export", str(SEED_MAP), "--out", str(out), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert check(text)
    if "--topic" in extra:
        size = int(atlas.topics["size"].iloc[0])
        assert text.count("\n- **") == size and len(re.findall(r"^## ", text, re.M)) == 1


def test_export_to_an_unknown_topic_names_the_real_ids(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "export",
            str(SEED_MAP),
            "--out",
            str(tmp_path / "x.bib"),
            "--topic",
            "99",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.startswith("error:") and "no topic 99" in result.stderr
    assert not (tmp_path / "x.bib").exists()


# Data that tries to end a field early, swallow the rest, or add fields of its own (issue 17).
HOSTILE_BIB = pd.DataFrame(
    {
        "doc_id": ["h1", "h2", "h3", "h4", "h5"],
        "title": [
            "A lone } closes nothing",
            "An open { swallows nothing",
            r"Escaped \} and \{ still count for BibTeX \ ",
            'Title}, url = "javascript:alert(1)", note = {x',
            "@misc{evil, title = {x}} @comment{ ends here",
        ],
        "abstract": ["One.", "Two.", "Three.", "Four.", "Five."],
        "topic_id": [0, 0, 0, 0, 0],
        "year": [2025, 2025, 2024, 2023, 2022],
        "venue": ['ICML}, url = "javascript:alert(2)"', "{NeurIPS", "ICLR\\", None, "}}}"],
        "authors": ["Ada}, url = {javascript:alert(3)}", "Bob {Builder", None, "Eve\\}", None],
        "url": ["https://x.org/a}b", "https://x.org/{", "https://x.org/end\\", None, None],
    }
)


def test_bibtex_fields_stay_balanced_and_hold_their_own_text_whatever_the_data_holds():
    text = reading_list_bibtex(HOSTILE_BIB)
    entries = parse_bibtex(text)  # BibTeX's brace rules: `\}` counts as a brace
    assert [e["key"][:4] for e in entries] == ["lone", "open", "esca", "titl", "misc"]
    for entry, (_, paper) in zip(entries, HOSTILE_BIB.iterrows(), strict=True):
        expected = {"type", "key", "title", "year"}
        expected |= {"booktitle"} if isinstance(paper["venue"], str) else set()
        expected |= {"author"} if isinstance(paper["authors"], str) else set()
        expected |= {"url"} if isinstance(paper["url"], str) else set()
        assert set(entry) == expected, entry  # no field lost, none injected
        assert untex(entry["title"]) == " ".join(paper["title"].split())
        assert entry["year"] == str(paper["year"])
        if "booktitle" in entry:
            assert untex(entry["booktitle"]) == paper["venue"]
        if "url" in entry:
            assert entry["url"].startswith("https://x.org/") and not set(entry["url"]) & set("{}\\")
    assert untex(entries[0]["author"]) == "Ada} and url = {javascript:alert(3)}"  # split at the comma
    assert "javascript" not in "".join(e.get("url", "") for e in entries)


def test_markdown_shows_web_addresses_and_emails_in_titles_as_code_and_closes_every_link():
    from markdown_it import MarkdownIt

    papers = pd.DataFrame(
        {
            "title": [
                "See https://evil.example/login and www.evil.example now",
                "Write to ada@example.org or mailto:bob@example.org",
                "Plain title",
            ],
            "abstract": ["Visit http://x.org/`a`b today. More.", "One.", "Two."],
            "topic_id": [1, 1, 1],
            "url": [None, None, "https://x.org/ends\\"],
        }
    )
    text = reading_list_markdown(papers, pd.DataFrame({"topic_id": [1], "label": ["T"]}))
    html = MarkdownIt("commonmark").render(text)
    outside_code = re.sub(r"<code>.*?</code>", "", html)
    # What a linkifier (GitHub's autolinks, markdown-it's linkify) would turn into a link is in code.
    for token in ("https://evil", "www.evil", "ada@example", "bob@example", "http://x.org"):
        assert token not in re.sub(r'href="[^"]*"', "", outside_code), token
    assert "<code>https://evil.example/login</code>" in html and "<code>ada@example.org</code>" in html
    assert "<code>http://x.org/`a`b</code>" in html
    assert re.findall(r"<a href=\"([^\"]*)\">link</a>", html) == ["https://x.org/ends%5C"]  # closed


def test_bidi_controls_are_shown_not_obeyed_in_every_export():
    from pipeline.exports.export import export_frame, to_csv_bytes

    rlo = "invoice\u202egpj.exe"
    papers = pd.DataFrame(
        {"doc_id": ["b1"], "title": [rlo], "abstract": [f"About {rlo}. More."], "topic_id": [0]}
        | {"source": ["a.csv"], "x": [0.0], "y": [0.0], "venue": ["\u2067ICML\u2069"]}
    )
    topics = pd.DataFrame({"topic_id": [0], "label": ["T\u202e"], "keywords": [["k\u200f"]], "size": [1]})
    outputs = [
        reading_list_markdown(papers, topics),
        reading_list_bibtex(papers),
        to_csv_bytes(export_frame(papers, topics)).decode("utf-8-sig"),
    ]
    for output in outputs:
        assert not re.search("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", output)
        assert "invoice\ufffdgpj.exe" in output.replace("\\.", ".")  # Markdown escapes a dot before a letter


BARE_DOMAINS = [
    "Log in at evil.com/login now",
    "bit.ly/x",
    "(see EXAMPLE.ORG)",
    "sub.evil.co.uk/a?b=c",
    "//evil.com/x",
]


def test_bare_domains_in_titles_stay_text_under_linkify_and_read_as_written():
    from markdown_it import MarkdownIt

    papers = pd.DataFrame(
        {"title": BARE_DOMAINS, "abstract": ["Mirror at evil.com/x. More."] * 5, "topic_id": [1] * 5}
    )
    text = reading_list_markdown(papers, pd.DataFrame({"topic_id": [1], "label": ["bit.ly/t"]}))
    html = MarkdownIt("gfm-like", {"linkify": True}).render(text)  # the linkifier that links bare domains
    assert "<a " not in html, html
    shown = re.sub(r"<[^>]+>", "", html)  # the rendered text: each title exactly as written
    for title in [*BARE_DOMAINS, "bit.ly/t", "Mirror at evil.com/x."]:
        assert title in shown, title
    plain = MarkdownIt("gfm-like", {"linkify": True}).render("evil.com/login")
    assert "<a " in plain  # the renderer does link a bare domain left as it is


def test_reading_lists_never_carry_a_control_character_raw():
    controls = "".join(map(chr, [*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0)]))
    papers = pd.DataFrame(
        {
            "doc_id": ["d1"],
            "title": [f"Nul\x00title{controls}end"],
            "abstract": ["An\x00abstract\x1b[31m here. More."],
            "topic_id": [0],
            "venue": ["ICML\x00"],
            "authors": ["Ada\x07 Lovelace"],
            "year": [2024],
        }
    )
    topics = pd.DataFrame({"topic_id": [0], "label": ["T"], "note": ["a\x00note"]})
    for output in (reading_list_markdown(papers, topics, chosen="q\x00"), reading_list_bibtex(papers)):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", output), repr(output)
        assert "Nul\ufffdtitle" in output


# Run apart, so a pattern gone quadratic is stopped by the timeout rather than holding the suite for hours.
LONG_WORD_EXPORTS = """
import sys, time
from pathlib import Path
from pipeline.__main__ import main
from pipeline.mapfolder.store import write_map
from tests.helpers import hostile_map, long_words

words, folder = long_words(), Path(sys.argv[1])
for half in (0, 1):
    atlas = hostile_map()
    atlas.papers["title"] = (words[:7], words[-7:])[half]
    atlas.papers["abstract"] = (words[-7:], words[:7])[half]
    write_map(folder / f"map{half}", atlas)
    for fmt in ("csv", "md", "bib"):
        start = time.perf_counter()
        assert main(["export", str(folder / f"map{half}"), "--out", str(folder / f"x{half}.{fmt}"), "--format", fmt]) == 0
        print(fmt, round(time.perf_counter() - start, 1), flush=True)
"""


def test_every_export_of_titles_and_abstracts_of_one_megabyte_word_takes_seconds(tmp_path):
    """A title or abstract is one untrusted cell: a 1 MB word in it is exported in seconds in every
    format (a Markdown list of one 100 KB word took ten minutes when the e-mail pattern rescanned it)."""
    result = subprocess.run(
        [sys.executable, "-c", LONG_WORD_EXPORTS, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    times = [line.split() for line in result.stdout.splitlines()]
    assert len(times) == 6 and all(float(seconds) < 60 for _, seconds in times), times
