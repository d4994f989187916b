"""No shared link and no text of a map can put a live link, a remote image, KaTeX, reversed text or a
server path on the page (issue 29). Streamlit's Markdown links web and e-mail addresses even when they
are backslash-escaped, so every text element is checked as Markdown would read it."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import session
from app.text import highlighted_markdown, markdown_literal
from pipeline.mapfolder.files import SEARCH_INDEX
from pipeline.mapfolder.store import write_map
from tests.helpers import REPO, header_sentence, keeping_facts, tiny_map, write_tiny_map

APP = str(REPO / "streamlit_app.py")
EVIL = "www.evil.com https://evil.com/x mailto:me@evil.com ![i](https://evil.com/i.png) $x^2$ <b>b</b>"
# What remark-gfm's autolink-literal links in a text node (after escapes are read), case-insensitive.
AUTOLINK = re.compile(r"(?i)www\.[\w-]|https?://[\w-]|[\w.+-]@[\w-]+\.[\w-]")


def as_markdown_reads_it(value: str) -> str:
    """The text of a Markdown source once its backslash escapes are read (what autolinking sees)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", value)


def page_texts(at: AppTest) -> list[str]:
    kinds = ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader")
    texts = [element.value for kind in kinds for element in at.get(kind)]
    texts += [
        w.label for kind in ("multiselect", "selectbox", "toggle", "button", "expander") for w in at.get(kind)
    ]
    return [str(t) for t in texts if t]


def assert_no_live_link(at: AppTest) -> None:
    assert not at.exception, at.exception
    for text in page_texts(at):
        read = as_markdown_reads_it(text)
        assert not AUTOLINK.search(read), text
        assert "](" not in read.replace("\\](", "") or "\\]" in text, text  # no link or image syntax
        assert "\u202e" not in text and "\x00" not in text, text


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> Path:
    folder = write_tiny_map(tmp_path / "tiny")
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return folder


def start(params: dict | None = None) -> AppTest:
    """The page with every panel open (a closed one's body is not made), so all of its text is read."""
    at = keeping_facts(AppTest.from_file(APP, default_timeout=60))
    at.query_params.update(params or {})
    for panel in (session.ABOUT_PANEL, session.CHANGES_PANEL, session.PLACEMENT_PANEL, session.EDIT_PANEL):
        at.session_state[panel] = True
    return at.run()


@pytest.mark.parametrize(
    "text",
    [
        "www.evil.com",
        "WWW.Evil.com/x",
        "https://evil.com/x",
        "http://evil.com",
        "me@evil.com",
        "mailto:me@evil.com",
        "xmpp:me@evil.com",
        "see (www.evil.com).",
        EVIL,
    ],
)
def test_page_text_leaves_no_address_markdown_would_link(text):
    for shown in (markdown_literal(text), highlighted_markdown([(text, False)])):
        assert not AUTOLINK.search(as_markdown_reads_it(shown)), shown
        assert shown.replace("\u2060", "").replace("\\", "") == " ".join(text.split())  # looks as written


def test_an_address_cut_across_highlighted_pieces_is_defused_too():
    shown = highlighted_markdown([("see www", False), (".evil.com", False), ("now", True)])
    assert not AUTOLINK.search(as_markdown_reads_it(shown)), shown
    shown = highlighted_markdown([("mail me", True), ("@evil.com", False)])
    assert not AUTOLINK.search(as_markdown_reads_it(shown)), shown


def test_bidi_controls_and_nul_bytes_never_reach_markdown():
    assert "\u202e" not in markdown_literal("abc\u202edef") and "\x00" not in markdown_literal("a\x00b")
    assert "\u202e" not in highlighted_markdown([("abc\u202e", True), ("def", False)])


def test_a_link_with_web_addresses_in_the_search_makes_no_link(tiny):
    at = start({"q": "www.evil.com https://evil.com/x"})
    assert_no_live_link(at)
    assert any("evil" in t for t in page_texts(at))  # the search is still said, as text


def test_a_link_with_an_address_as_paper_is_a_notice_without_a_link(tiny):
    at = start({"paper": "https://evil.com/x", "topic": "www.evil.com", "sort": "me@evil.com"})
    assert_no_live_link(at)
    assert at.warning and "evil" in at.warning[0].value


def test_reversed_text_in_the_search_never_reaches_the_page(tiny):
    at = start({"q": "diffusion \u202egnp.exe"})
    assert_no_live_link(at)


def test_addresses_in_titles_names_abstracts_and_column_names_make_no_link(tmp_path, monkeypatch):
    titles = ["Read www.evil.com now", "Mail me@evil.com"] + [f"Paper {i}" for i in range(2, 60)]
    atlas = tiny_map(titles=titles, labels=["https://evil.com/x", "B www.evil.com", "C", "D"])
    atlas.papers.loc[0, "abstract"] = "Diffusion at https://evil.com/x and www.evil.com " + EVIL
    atlas.papers["see www.evil.com"] = ["A", "B"] * 30
    write_map(tmp_path / "odd", atlas)
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "odd"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    for params in (
        {},
        {"paper": atlas.papers["doc_id"][0], "q": "diffusion"},
        {"topic": "0"},
        {"topic": "1"},
    ):
        assert_no_live_link(start(params))


def test_the_error_page_shows_no_server_path(tmp_path, monkeypatch):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("[" * 100_000)
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "broken"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    at = start()
    assert not at.exception
    [error] = at.error
    shown = as_markdown_reads_it(error.value)
    assert shown.startswith("broken/manifest.json: damaged manifest") and "nested" in shown, shown
    assert str(tmp_path) not in shown


def test_a_dropped_search_table_is_one_notice_and_search_still_works(tiny, monkeypatch, tmp_path):
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    with closing(sqlite3.connect(tiny / SEARCH_INDEX)) as connection:
        connection.execute("DROP TABLE grams")
        connection.commit()
    at = start({"q": "diffusion"})
    assert not at.exception
    notices = [c.value for c in at.caption if "search index is damaged" in c.value]
    assert len(notices) == 1, [c.value for c in at.caption]
    assert any("15" in said and "diffusion" in said for said in header_sentence(at))


def test_the_edit_panel_shows_notes_and_refusals_without_links(tiny, monkeypatch):
    monkeypatch.setenv("ATLAS_EDITING", "1")
    at = start({"topic": "2"})
    note = next(w for w in at.text_area if w.label == "Note")
    note.input("See https://evil.com/x and www.evil.com ![i](https://evil.com/i.png) $x$")
    next(b for b in at.button if b.label == "Save note").click().run()
    assert_no_live_link(at)
    name = next(w for w in at.text_input if w.label == "Name")
    name.input("[x](https://evil.com/x)")
    next(b for b in at.button if b.label == "Rename topic").click().run()
    assert_no_live_link(at)
    assert at.error and "markup" in at.error[0].value


# ---- damaged map tables: one short error on the page, or the map as written; never a traceback ----


def _rewrite_papers(folder: Path, change) -> None:
    import json

    import pandas as pd

    from pipeline.mapfolder.store import checksum

    papers = pd.read_parquet(folder / "papers.parquet")
    change(papers)
    papers.to_parquet(folder / "papers.parquet", index=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    ids = [str(d) for d in papers["doc_id"]]
    manifest["checksum"] = checksum((folder / "embeddings.npy").read_bytes(), ids)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_map_whose_title_column_is_categorical_loads(tiny):
    _rewrite_papers(tiny, lambda p: p.__setitem__("title", p["title"].astype("category")))
    at = start({"q": "diffusion"})
    assert not at.exception and not at.error


@pytest.mark.parametrize("value", [2**40, -5])
def test_a_map_with_an_impossible_topic_id_is_one_short_error(tiny, value):
    _rewrite_papers(tiny, lambda p: p.__setitem__("topic_id", [value] + p["topic_id"].tolist()[1:]))
    at = start()
    assert not at.exception
    [error] = at.error
    shown = as_markdown_reads_it(error.value)
    assert "papers.parquet" in shown and "topic_id" in shown and str(value) in shown
    assert str(tiny.parent) not in shown
