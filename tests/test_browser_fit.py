"""What a reader must see whole, in Chromium: no point of the map under Plotly's toolbar, the chosen
"Colour by" option, and paper titles and change notes in the tables, on a wide screen and a phone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.mapfolder.store import read_map, write_map
from tests.devserver import StreamlitServer
from tests.helpers import GRAPH, SEED_MAP, open_app, themed_map, tiny_map

pytestmark = pytest.mark.browser  # the browser fixture: tests/conftest.py


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Start an app per map folder on demand, each once a module; all stopped at its end."""
    root = tmp_path_factory.mktemp("fit")
    running: dict[Path, StreamlitServer] = {}

    def serve(folder: Path) -> StreamlitServer:
        if folder not in running:
            running[folder] = StreamlitServer(folder, root / "no-other-maps", timeout=90)
        return running[folder]

    yield serve
    for server in running.values():
        server.stop()


def corner_map(folder: Path) -> Path:
    """The tiny map with paper 0 moved to the map's top-right corner (its largest x and y)."""
    atlas = tiny_map()
    papers = atlas.papers
    papers.loc[0, ["x", "y"]] = [papers["x"].max() + 0.5, papers["y"].max() + 0.5]
    write_map(folder, atlas)
    return folder


def covered_points(page) -> tuple[list[int], dict, dict]:
    """Rows of papers.parquet whose drawn dot (its centre and radius, where Plotly puts it) meets
    the toolbar's box; the toolbar's box; the plot area's box."""
    return page.evaluate(
        """(selector) => {
            const gd = document.querySelector(selector);
            const area = gd.querySelector('.nsewdrag').getBoundingClientRect();
            const bar = gd.querySelector('.modebar').getBoundingClientRect();
            const t = gd.atlasTable, radius = t.size / 2, under = [];
            for (let row = 0; row < t.n; row++) {
                const x = area.left + gd._fullLayout.xaxis.l2p(t.x[row]);
                const y = area.top + gd._fullLayout.yaxis.l2p(t.y[row]);
                if (x + radius > bar.left && x - radius < bar.right && y + radius > bar.top && y - radius < bar.bottom)
                    under.push(row);
            }
            return [under, bar.toJSON(), area.toJSON()];
        }""",
        GRAPH,
    )


@pytest.mark.parametrize("width, height", [(1400, 900), (390, 844)])
def test_no_point_of_the_map_lies_under_the_toolbar(browser, servers, tmp_path_factory, width, height):
    """Plotly's toolbar (pan, box and lasso select, reset) sits in a strip of its own above the plot
    area: on the seed map (two papers under it before) and on a map with a paper in its top-right corner."""
    corner = corner_map(tmp_path_factory.mktemp("corner") / "corner")
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        for folder in (SEED_MAP, corner):
            open_app(page, servers(folder).url)
            page.wait_for_selector(f"{GRAPH} .modebar-btn[data-val='select']", state="attached")
            under, bar, area = covered_points(page)
            assert bar["width"] > 50 and bar["height"] > 15  # the toolbar is there, with its buttons
            assert under == [], (folder.name, under)
            assert bar["bottom"] <= area["top"] + 0.5, (bar, area)  # above the plot area, not over it
            if folder == corner:  # the corner paper is drawn, at the plot area's top right
                papers = read_map(corner).papers
                assert int(np.argmax(papers["x"].to_numpy())) == 0
    finally:
        context.close()


def shown_choice(page) -> dict:
    """The "Colour by" box's shown value (its text input's), the width that text takes in the input's
    font, and the input's room for it (its width less its padding) and scrolled width."""
    box = page.get_by_role("combobox", name="Colour by")
    box.wait_for(timeout=30_000)
    return box.evaluate(
        """(input) => {
            const style = getComputedStyle(input);
            const context = document.createElement('canvas').getContext('2d');
            context.font = style.font;
            const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            return {text: input.value, width: context.measureText(input.value).width, room,
                    scroll: input.scrollWidth, client: input.clientWidth};
        }"""
    )


def test_the_chosen_colour_option_reads_whole_in_its_box(page, servers, tmp_path_factory):
    folder = tmp_path_factory.mktemp("themed") / "themed"
    write_map(folder, themed_map())
    url = servers(folder).url
    for query, option in (("", "Themes and topics"), ("?colour=year", "Year")):
        open_app(page, url + query)
        shown = shown_choice(page)
        assert shown["text"] == option
        assert shown["width"] <= shown["room"] and shown["scroll"] <= shown["client"], shown
        page.get_by_role("combobox", name="Colour by").click()
        options = page.get_by_role("option").all_inner_texts()
        page.keyboard.press("Escape")
        assert shown["text"] in options  # the whole option's text, no ellipsis
