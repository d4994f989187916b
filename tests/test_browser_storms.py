"""In a real browser, storms of steps and of Back and Forward (issue 63): ticks in the topic list, picks
in the map's key, values pressed in "Filter by …", topics and papers opened and closed, a box drawn
on the map, then Back and Forward, 0-50 ms apart. After each storm the page, once settled, must read
as a fresh load of its own link: the header's sentence, the papers table's count, the papers the map
shows. The issue's two sequences are fixed cases; the rest are drawn at random from fixed seeds
(`SEEDS`: about 20 s each on a shared 2-core machine, so the file takes about 3 minutes).

The random storms once ended now and then (seed 9, in 2 of 9 runs) with the address bar on one entry and
the page on another: the server's run for a step the browser drew wrote the step's link again after the
reader had gone Back or Forward from it (js/zoom.js, `staleWrite`, drops such a write now); likewise
the late write of a step the server takes itself (a paper opened), held back here to make it late."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError

from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import GRAPH, idle, open_app, themed_map, tiny_map
from tests.test_browser_steps import drag_box

pytestmark = pytest.mark.browser
# Random storms. Seed 9 ended, about 1 run in 16, with the header and the link on `?paper=…&select=…`
# over a map and a table showing theme 0; a fresh clone's CI run (75ea90e) found the papers table on
# another selection (28 listed where the link's view holds 3): the table drew the server's mask. Every
# part draws the link's view since (js/page.js, js/steps.js): it passed in every run after (8 of 8, and
# CI at bdd1ef0), so it is an ordinary seed again.
SEEDS = (0, 1, 2, 3, 4, 9)
STEPS = 9  # steps a random storm takes before its Back and Forward
VENUES = ("ICML", "NeurIPS")


@pytest.fixture(scope="module")
def storm_app(tmp_path_factory):
    """A themed map of 300 papers in four topics, with a venue column (missing for every tenth)."""
    root = tmp_path_factory.mktemp("storms")
    atlas = themed_map(tiny_map(300))
    atlas.papers["venue"] = [None if i % 10 == 9 else VENUES[i % 2] for i in range(len(atlas.papers))]
    write_map(root / "storms", atlas)
    app = StreamlitServer(root / "storms", root / "no-other-maps", timeout=60)
    yield app
    app.stop()


# What the reader sees that the view decides: the header's sentence, the papers table's heading (its
# count), and the papers the map shows (the shown chart's rows: every paper, or those highlighted).
READ = f"""() => {{
    const texts = [...document.querySelectorAll("[data-testid='stMain'] .atlas-sentence")].map((e) => e.innerText.trim());
    const gd = document.querySelector('{GRAPH}');
    const drawn = gd && gd.atlasDrawn ? gd.atlasDrawn[0] : null;
    return {{
        header: texts.find((t) => /^(Showing the |None of )/.test(t) || / of the /.test(t)) ?? null,
        table: [...document.querySelectorAll('.atlas-table h4')].map((h) => h.innerText)[0] ?? null,
        map: drawn ? Array.from(drawn.rows).sort((a, b) => a - b).join(',') : null,
    }};
}}"""


def settled(page) -> dict:
    """What the page reads once no run is under way and nothing changes for a second."""
    last = None
    for _ in range(30):
        idle(page)
        page.wait_for_timeout(600)
        now = page.evaluate(READ)
        if now == last:
            return now
        last = now
    return last


def afresh(browser, url: str) -> dict:
    fresh = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_app(fresh, url)
        return settled(fresh)
    finally:
        fresh.close()


def attempt(locator) -> None:
    """Click `locator` where it is there to click now (a storm's page is redrawn under it)."""
    try:
        if locator.count():
            locator.click(timeout=1500)
    except PlaywrightError:
        pass  # gone or covered as the page followed the last step: the storm goes on


def attempt_one(locator, rng, first: int | None = None) -> bool:
    """Click one of `locator`'s elements (of its `first` ones) drawn at random, counted once (a storm's
    page is redrawn under it); whether there was one."""
    count = locator.count()
    if first is not None:
        count = min(count, first)
    if count:
        attempt(locator.nth(int(rng.integers(count))))
    return count > 0


def tick(page, rng) -> None:
    if not attempt_one(page.locator(".atlas-panel-list .atlas-topic-list .atlas-topic-tick"), rng):
        attempt(page.locator(".atlas-panel-topic .atlas-only"))  # a topic is open: its "Only this topic"


def key_pick(page, rng) -> None:
    attempt_one(page.locator(".atlas-legend button"), rng)


def value(page, rng) -> None:
    if not page.locator(".atlas-chip").count():
        attempt(page.locator(".atlas-facets-summary"))
    attempt_one(page.locator(".atlas-chip"), rng)


def open_topic(page, rng) -> None:
    attempt_one(page.locator(".atlas-panel-list .atlas-topic"), rng)


def close(page, rng) -> None:
    """Close the opened paper or topic: its "← Back to …", or Escape."""
    if rng.random() < 0.5:
        attempt(page.locator(".atlas-panel .atlas-back"))
    else:
        page.keyboard.press("Escape")


def open_paper(page, rng) -> None:
    attempt_one(page.locator(".atlas-table .atlas-row-title"), rng, first=10)


def select(page, rng) -> None:
    try:
        x0, y0 = rng.uniform(-3, 1, 2)
        drag_box(page, (float(x0), float(y0), float(x0) + 3, float(y0) + 3))
    except PlaywrightError:
        pass


def back(page, rng) -> None:
    """Back, but never past the app's first entry (`opened`): that would leave the app."""
    page.evaluate(
        "() => { if (navigation.currentEntry.index > Number(sessionStorage.stormFloor)) history.back(); }"
    )


def forward(page, rng) -> None:
    page.evaluate("history.forward()")


STEP = {"tick": tick, "key": key_pick, "value": value, "open": open_topic, "close": close,
        "paper": open_paper, "select": select, "back": back, "forward": forward}  # fmt: skip
# The issue's two sequences: each named step 0.1 s after the last (a storm's 0-50 ms for the rest).
FIXED = {
    "three ticks, open, back to the list, tick; Back Back Forward Forward Back Back": (
        ["tick", "tick", "tick", "open", "close", "tick"],
        ["back", "back", "forward", "forward", "back", "back"],
    ),
    "tick, Back, tick, tick, open, tick; Back Back Forward Forward Back Back": (
        ["tick", "back", "tick", "tick", "open", "tick"],
        ["back", "back", "forward", "forward", "back", "back"],
    ),
}


def storm(page, rng, steps: list[str], then: list[str], gap: tuple[int, int]) -> None:
    """Take `steps` (each waited for as a reader would: until no run is under way), then `then` as a storm,
    `gap` ms apart (drawn at random between its ends)."""
    for name in steps:
        STEP[name](page, rng)
        idle(page)
    for name in then:
        STEP[name](page, rng)
        page.wait_for_timeout(int(rng.integers(gap[0], gap[1] + 1)))


def opened(page, url: str) -> None:
    """The app opened at `url` and settled, its history entry the floor a storm's Back stops at."""
    open_app(page, url)
    page.evaluate("() => { sessionStorage.stormFloor = String(navigation.currentEntry.index); }")
    settled(page)


def check(page, browser) -> None:
    shown = settled(page)
    assert shown == afresh(browser, page.url), page.url


def test_a_link_written_over_the_page_is_the_page_s_view(page, browser, storm_app):
    """Seed 1078 of benchmarks/bench_storms.py (1 run in 6): the server's run for closing a paper, cut short
    by Back, wrote its link (`theme=0&…`) over the entry the reader went to; the run for that entry wrote
    the entry's link back (`paper=…&select=…`), and took the map and the table as drawn, so they kept the
    cut run's view. Here the same writes, as Streamlit makes them (`history.pushState`), with no run."""
    opened(page, storm_app.url + "?theme=0")
    page.evaluate("history.pushState(null, '', '?paper=doc0021')")
    check(page, browser)
    assert page.url.endswith("?paper=doc0021")


@pytest.mark.parametrize("name", FIXED)
def test_the_issue_s_storms_end_on_the_page_their_link_opens(page, browser, storm_app, name):
    opened(page, storm_app.url)
    steps, then = FIXED[name]
    storm(page, np.random.default_rng(0), steps, then, (100, 100))
    check(page, browser)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_storm_ends_on_the_page_its_link_opens(page, browser, storm_app, seed):
    rng = np.random.default_rng(seed)
    opened(page, storm_app.url)
    kinds = ["tick", "tick", "key", "value", "open", "close", "paper", "select"]
    steps = [kinds[k] for k in rng.integers(len(kinds), size=STEPS // 2)]
    then = [["tick", "key", "value", "open", "close", "paper", "back", "back", "forward"][k]
            for k in rng.integers(9, size=STEPS)]  # fmt: skip
    storm(page, rng, steps, then, (0, 50))
    check(page, browser)


class HeldAnswers:
    """The page's WebSocket to the server, its answers held while `holding` (what a slow server or a slow
    network does to a step's run), then passed on in order."""

    def __init__(self, page) -> None:
        self.holding, self.held, self.sent = False, [], 0
        page.route_web_socket(re.compile(r".*/_stcore/stream$"), self._route)

    def _route(self, socket) -> None:
        server = socket.connect_to_server()
        socket.on_message(lambda message: self._up(server, message))
        server.on_message(
            lambda message: self.held.append((socket, message)) if self.holding else socket.send(message)
        )

    def _up(self, server, message) -> None:
        self.sent += 1
        server.send(message)

    def release(self) -> None:
        self.holding = False
        for socket, message in self.held:
            socket.send(message)
        self.held.clear()


def test_back_before_the_server_opened_a_paper_stays_where_back_went(page, browser, storm_app):
    """A paper opened from the papers table is the server's step (its abstract and nearest papers are the
    server's), and the server writes its link when its run gets there. Back pressed before that run's
    answer arrived went to the entry before; the run's late write of the paper's link is not put over it
    (a new history entry the reader never asked for, Forward's entries lost) and the page is that entry's."""
    wire = HeldAnswers(page)
    opened(page, storm_app.url)
    floor = page.evaluate("navigation.currentEntry.index")
    page.locator(".atlas-panel-list .atlas-topic").first.click()  # a step of the browser's: a new entry
    idle(page)
    assert page.evaluate("navigation.currentEntry.index") == floor + 1
    wire.holding, sent = True, wire.sent
    page.locator(".atlas-table .atlas-row-title").first.click()  # the click's trigger sent ...
    for _ in range(50):
        if wire.sent > sent:
            break
        page.wait_for_timeout(20)
    assert wire.sent > sent, "the click was not sent to the server"
    page.wait_for_timeout(400)  # ... and its run over before the reader goes Back
    page.evaluate("history.back()")
    page.wait_for_timeout(400)
    wire.release()
    shown = settled(page)
    assert page.evaluate("[navigation.currentEntry.index, navigation.entries().length]") == [floor, floor + 2]
    assert "paper=" not in page.url and "topic=" not in page.url, page.url
    assert shown == afresh(browser, page.url), page.url


def test_back_to_an_entry_the_server_wrote_adds_none_and_forward_comes_back(page, storm_app):
    """A search in the sidebar is written into the address bar by the server (Python's encoding: a
    comma is `%2C`, `~` itself), and the page keeps it as the browser encodes it (`,`, `%7E`); a tick
    is written by the browser. Back to the search, the server writes the entry's link again in its own
    encoding: that is the link the address bar says, not a new entry (it was, over the tick's entry,
    so Forward went nowhere)."""
    opened(page, storm_app.url)
    floor = page.evaluate("navigation.currentEntry.index")
    box = page.get_by_role("textbox", name="Search")
    box.fill("graph, ~model")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('q=')", timeout=30_000)
    idle(page)
    page.locator(".atlas-panel-list .atlas-topic-list .atlas-topic-tick").first.click()
    page.wait_for_function("() => location.search.includes('topics=')", timeout=30_000)
    idle(page)
    entries = "() => [navigation.currentEntry.index, navigation.entries().length]"
    assert page.evaluate(entries) == [floor + 2, floor + 3]
    ticked = page.url
    page.evaluate("history.back()")
    settled(page)
    assert page.evaluate(entries) == [floor + 1, floor + 3]
    assert "topics=" not in page.url
    page.evaluate("history.forward()")
    settled(page)
    assert page.evaluate(entries) == [floor + 2, floor + 3] and page.url == ticked
