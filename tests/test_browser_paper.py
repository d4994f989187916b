"""In a real browser, an opened paper as the topic panel beside the map draws it (js/panel.js, drawPaper):
each line against the map's own tables (its title byte for byte, the searched words marked and no other,
its topic, source and authors, its page's link, how it matched, its abstract as written, hostile text
made into no element), and the keyboard: a central paper opened with Enter leaves the focus on the way
back, Escape closes it, back to the topic it was opened from."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest

from app.data import build_map_data, paper_places
from app.nearest import nearest_papers
from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import Received, idle, open_app, themed_map

pytestmark = pytest.mark.browser
PAPER = ".atlas-panel-paper"
HOSTILE_TITLE = "Diffusion <b>study</b>  five\u202e"  # markup, a double space, a bidi control
HOSTILE_ABSTRACT = (
    "We study <img src=x onerror=alert(1)> diffusion with $x^2$ and **bold** steps.\n\n"
    "A second paragraph: www.example.com, [x](y)."
)


@pytest.fixture(scope="module")
def paper_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-paper")
    atlas = themed_map()
    atlas.papers.loc[5, ["title", "abstract"]] = [HOSTILE_TITLE, HOSTILE_ABSTRACT]
    atlas.papers["authors"] = [f"Author {i}, Coauthor {i}" for i in range(len(atlas.papers))]
    atlas.papers["url"] = [f"https://example.org/paper/{i}" for i in range(len(atlas.papers))]
    atlas.papers.loc[9, "url"] = "javascript:alert(1)"
    write_map(root / "themed", atlas)
    app = StreamlitServer(root / "themed", root / "no-other-maps", timeout=60)
    yield app, build_map_data("themed", root / "themed")
    app.stop()


def opened(page) -> dict:
    """The opened paper as the reader sees it in the panel."""
    page.locator(f"{PAPER}:not([hidden]) h4").wait_for(timeout=30_000)
    idle(page)
    return page.evaluate(
        """(selector) => {
            const view = document.querySelector(selector), one = (s) => view.querySelector(s);
            const link = one('.atlas-page-link');
            return {
                back: one('.atlas-back').textContent,
                title: one('h4').textContent,
                marked: [...view.querySelectorAll('mark')].map((m) => m.textContent),
                topic: one('.atlas-paper-topic-name').textContent,
                details: one('.atlas-caption').textContent,
                link: link && [link.textContent, link.getAttribute('href'), link.target, link.rel],
                match: one('.atlas-match') && one('.atlas-match').textContent,
                abstract: one('.atlas-abstract').textContent,
                nearest: [...view.querySelectorAll('.atlas-near-title')].map((t) => t.textContent),
                elements: [...view.querySelectorAll('img, script, a, b, strong')].map((e) => e.tagName),
                listHidden: document.querySelector('.atlas-panel-list').hidden,
            };
        }""",
        PAPER,
    )


def test_an_opened_paper_says_what_the_map_holds_and_marks_only_the_searched_words(page, paper_app):
    app, data = paper_app
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_app(page, app.url + "?q=diffusion&paper=doc0005")
    shown = opened(page)
    paper = data.papers.iloc[5]
    rows, _ = nearest_papers(data, 5)
    assert shown["back"] == "← Back to the topic list" and shown["listHidden"]
    assert (
        shown["title"] == "Diffusion <b>study</b> five\ufffd"
    )  # as written, spaces run together, the control shown
    assert shown["marked"] == ["Diffusion", "diffusion"]  # the search's word in the title and the abstract
    assert shown["topic"] == f"Topic: {data.label(int(data.topic_ids[5]))}" == "Topic: Diffusion models"
    assert shown["details"] == f"{paper_places(data.papers.iloc[5:6]).iloc[0]} · {paper['authors']}"
    assert shown["link"] == [
        "Open the paper's page ↗",
        "https://example.org/paper/5",
        "_blank",
        "noopener noreferrer",
    ]
    assert re.fullmatch(r"Found by its words \(#\d+ of \d+\): the matches are highlighted\.", shown["match"])
    assert shown["abstract"] == HOSTILE_ABSTRACT  # every character, the blank line too
    assert shown["nearest"] == data.papers["title"].iloc[rows].tolist()
    assert shown["elements"] == ["STRONG", "A"]  # "Topic:" and the page's link: nothing made of the text
    assert dialogs == []  # no handler of the text ran

    open_app(page, app.url + "?paper=doc0009")  # a javascript: address: no link, no search: no match line
    shown = opened(page)
    assert shown["title"] == "Diffusion study 9" and shown["marked"] == []
    assert shown["link"] is None and shown["match"] is None


def test_a_central_paper_opened_with_the_keyboard_leads_back_to_its_topic(page, paper_app):
    app, data = paper_app
    open_app(page, app.url + "?topic=1")
    central = page.locator(".atlas-panel-topic .atlas-paper").first
    central.wait_for(timeout=30_000)
    title = central.text_content()
    central.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.search.includes('paper=')", timeout=30_000)
    shown = opened(page)
    assert shown["title"] == title and shown["back"] == "← Back to Diffusion models"
    page.wait_for_function("() => document.activeElement?.classList.contains('atlas-back')", timeout=10_000)
    page.keyboard.press("Escape")  # the map's: the paper closes, its topic still open
    page.wait_for_function("() => location.search === '?topic=1'", timeout=30_000)
    page.locator(".atlas-panel-topic:not([hidden]) h4", has_text="Diffusion models").wait_for(timeout=30_000)
    idle(page)
    assert page.locator(PAPER).is_hidden()
    focused = page.evaluate("document.activeElement.closest('.atlas-panel-topic') !== null")
    assert focused  # the focus where the reader is, not lost to the page

    page.locator(".atlas-panel-topic .atlas-paper").first.click()
    opened(page)
    page.get_by_role("button", name="Back to Diffusion models").click()  # the panel's way back
    page.wait_for_function("() => location.search === '?topic=1'", timeout=30_000)
    page.locator(".atlas-panel-topic:not([hidden]) h4", has_text="Diffusion models").wait_for(timeout=30_000)


def test_back_and_forward_to_and_from_an_opened_paper_are_drawn_by_the_browser(page, paper_app):
    """The browser keeps the map's, the panel's and the table's states of each view the server drew, an
    opened paper's too: Back from it and Forward to it, and its "Back to …", are drawn again from them,
    the server told (it reruns the map's part: nothing else changed), where a rerun of the whole page
    for the link would send the sidebar and every part again."""
    app, data = paper_app
    received = Received(page)
    open_app(page, app.url + "?topic=1")
    central = page.locator(".atlas-panel-topic .atlas-paper").first
    central.wait_for(timeout=30_000)
    title = central.text_content()
    central.click()
    page.wait_for_function("() => location.search.includes('paper=')", timeout=30_000)
    assert opened(page)["title"] == title
    link, entries = page.evaluate("location.search"), page.evaluate("history.length")

    def drawn_by_the_browser(step) -> None:
        received.take()
        step()
        page.wait_for_timeout(500)
        idle(page)
        drawn = received.take()
        assert {place for place, _, _ in drawn} <= {"main"}, drawn  # not the whole page's rerun

    drawn_by_the_browser(page.go_back)
    assert page.evaluate("location.search") == "?topic=1" and page.locator(PAPER).is_hidden()
    page.locator(".atlas-panel-topic:not([hidden]) h4", has_text="Diffusion models").wait_for(timeout=30_000)
    assert page.locator(".atlas-near:not([hidden])").count() == 0  # the paper's rings gone from the map
    drawn_by_the_browser(page.go_forward)
    assert page.evaluate("location.search") == link and opened(page)["title"] == title
    assert page.locator(".atlas-near:not([hidden])").count() == 8  # its nearest papers ringed again
    assert page.evaluate("history.length") == entries  # Back and Forward added none
    # "Back to …" (Escape too: js/history.js closePaper) draws the view the paper was opened from again,
    # as a new history entry; Back in the browser opens the paper again.
    drawn_by_the_browser(page.get_by_role("button", name="Back to Diffusion models").click)
    assert page.evaluate("location.search") == "?topic=1" and page.locator(PAPER).is_hidden()
    assert page.evaluate("history.length") == entries + 1
    drawn_by_the_browser(page.go_back)
    assert page.evaluate("location.search") == link and opened(page)["title"] == title
    box = page.get_by_role("textbox", name="Search")  # the server followed each: its link keeps the paper
    box.fill("denoising")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('q=denoising')", timeout=30_000)
    assert parse_qs(page.evaluate("location.search")[1:]) == parse_qs(link[1:]) | {"q": ["denoising"]}
    assert opened(page)["marked"] == ["denoising"]
