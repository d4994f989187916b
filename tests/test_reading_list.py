"""Reading lists: Markdown grouped by topic and BibTeX that parses back, escaped, with unique stable keys."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest

from pipeline.artifacts import read_map
from pipeline.reading_list import bibtex_key, reading_list_bibtex, reading_list_markdown
from tests.conftest import ROOT

SEED_MAP = ROOT / "assets" / "maps" / "seeds"
TEX_UNESCAPES = {
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\textbackslash{}": "\\",
    r"\&": "&",
    r"\%": "%",
    r"\$": "$",
    r"\#": "#",
    r"\_": "_",
    r"\{": "{",
    r"\}": "}",
}


def parse_bibtex(text: str) -> list[dict]:
    """A small strict BibTeX reader: @type{key, name = {value}, ...} with balanced braces.

    Fails (AssertionError) on anything else, so a malformed export cannot pass.
    """
    entries, at = [], 0
    while True:
        start = text.find("@", at)
        if start == -1:
            assert not text[at:].strip(), f"trailing text: {text[at:][:80]!r}"
            return entries
        assert not text[at:start].strip(), f"text between entries: {text[at:start][:80]!r}"
        head = re.compile(r"@(\w+)\{([^,\s{}]+),\n").match(text, start)
        assert head, text[start : start + 80]
        entry, at = {"type": head.group(1), "key": head.group(2)}, head.end()
        while True:
            if text.startswith("}\n", at):
                at += 2
                break
            field = re.compile(r"  (\w+) = \{").match(text, at)
            assert field, text[at : at + 80]
            depth, i = 1, field.end()
            while depth:
                char = text[i]
                if char == "\\":  # an escaped character or a command: never a brace that counts
                    i += 2 if text[i + 1] in "{}&%$#_" else 1
                    continue
                depth += {"{": 1, "}": -1}.get(char, 0)
                i += 1
            value = text[field.end() : i - 1]
            assert text.startswith(",\n", i), text[i : i + 20]
            entry[field.group(1)] = value
            at = i + 2
        entries.append(entry)


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
    assert "javascript:" not in text.replace("\\[link\\](javascript:alert(1))", "")
    assert "<script>" not in text and "\\<script\\>" in text and "\\*bold\\*" in text
    assert "<b>" not in text
    # heading and a blank line; per section its heading and a blank; the papers; blanks between sections
    assert len(text.splitlines()) == 2 + 3 * 2 + 4 + 2 and text.endswith("\n")


@pytest.mark.parametrize(
    "name, extra, check",
    [
        ("list.md", [], lambda text: text.startswith("# Reading list: ICML 2025 (57 papers)")),
        ("list.bib", [], lambda text: len(parse_bibtex(text)) == 57),
        ("list.txt", ["--format", "bib"], lambda text: len(parse_bibtex(text)) == 57),
        ("topic.md", ["--topic", "TOPIC"], lambda text: text.startswith("# Reading list: ICML 2025 (")),
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
