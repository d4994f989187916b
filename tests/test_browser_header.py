"""In a real browser, the header's sentence is the browser's (js/header.js, issue 63): a reading step
the browser takes (a topic ticked in the list, an entry of the map's key picked, Back, Forward) is said
in the header in the same moment as the address bar changes, before the server could answer, and it
is what a fresh load of the link says."""

from __future__ import annotations

import pytest

from app.data import build_map_data
from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import idle, open_app, themed_map

pytestmark = pytest.mark.browser
SENTENCE = "[data-testid='stMain'] .atlas-sentence"

# A click taken and the header read in the same task: what it says then, no server answer can have
# made (an answer comes over the socket, in a later task).
CLICK_AND_READ = """([target, nth, sentence]) => {
    document.querySelectorAll(target)[nth].click();
    return [location.search, document.querySelector(sentence).innerText.trim()];
}"""
# Back or Forward, the header read as the page's own handlers of it have run (the listener added last).
MOVE_AND_READ = """([way, sentence]) => new Promise((resolve) => {
    window.addEventListener("popstate", () => resolve([location.search, document.querySelector(sentence).innerText.trim()]), { once: true });
    way === "back" ? history.back() : history.forward();
})"""


@pytest.fixture(scope="module")
def themed_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-header")
    write_map(root / "themed", themed_map())
    app = StreamlitServer(root / "themed", root / "no-other-maps", timeout=60)
    yield app, build_map_data("themed", root / "themed")
    app.stop()


def fresh(page, url: str) -> str:
    """What a fresh load of `url` says in the header."""
    tab = page.context.new_page()
    open_app(tab, url)
    idle(tab)
    said = tab.locator(SENTENCE).inner_text().strip()
    tab.close()
    return said


def test_a_reading_step_is_said_in_the_header_before_any_server_answer(page, themed_app):
    app, data = themed_app
    topic, theme = 2, 1  # "Reinforcement learning"; the theme "Learning on structure" (topics 0 and 3)
    themes = data.themes.set_index("theme_id")
    open_app(page, app.url)
    idle(page)
    assert page.locator(SENTENCE).inner_text() == "Showing the 60 papers of the map"

    tick = f".atlas-topic-list .atlas-topic-tick[data-topic='{topic}']"
    page.locator(tick).wait_for(timeout=30_000)
    ticked = (
        f"?topics={topic}",
        f"Showing the {data.sizes[topic]} papers in the topic “{data.label(topic)}”",
    )
    assert tuple(page.evaluate(CLICK_AND_READ, [tick, 0, SENTENCE])) == ticked
    idle(page)  # the server's run for the step, if any, leaves it so
    assert page.locator(SENTENCE).inner_text() == ticked[1]

    entry = ".atlas-legend-item"
    picked = (
        f"?theme={theme}",
        f"Showing the {int(themes.loc[theme, 'size'])} papers in the theme “{themes.loc[theme, 'label']}”",
    )
    assert page.locator(entry).nth(theme).inner_text() == themes.loc[theme, "label"]
    assert tuple(page.evaluate(CLICK_AND_READ, [entry, theme, SENTENCE])) == picked
    idle(page)
    assert page.locator(SENTENCE).inner_text() == picked[1]

    assert tuple(page.evaluate(MOVE_AND_READ, ["back", SENTENCE])) == ticked
    idle(page)
    assert page.locator(SENTENCE).inner_text() == ticked[1]
    assert tuple(page.evaluate(MOVE_AND_READ, ["forward", SENTENCE])) == picked
    idle(page)
    assert page.locator(SENTENCE).inner_text() == picked[1] == fresh(page, app.url + picked[0])
    # the sentence is text: the theme's name "<b>Generative</b> models" would be too, never markup
    assert page.locator(f"{SENTENCE} b").count() == 0
