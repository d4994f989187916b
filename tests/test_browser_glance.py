"""Issue 66, in Chromium: the map read at a glance, on a desk (1400x900) and on a phone (390x844 with
touch): the colours the page computes are the palette's (themes far apart, topics shades of them), the
names leave the points visible, and a phone walks list -> topic -> paper -> back."""

from __future__ import annotations

import pytest

from app.data import build_map_data
from tests.devserver import StreamlitServer
from tests.helpers import GRAPH, SEED_MAP, idle, open_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def seed_app(tmp_path_factory):
    app = StreamlitServer(SEED_MAP, tmp_path_factory.mktemp("glance") / "no-other-maps", timeout=90)
    yield app
    app.stop()


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


# Each drawn paper's colour, found by its position in the point table (the chart's x and y are the table's).
DRAWN_COLOURS = f"""() => {{
    const gd = document.querySelector('{GRAPH}');
    const table = gd.atlasTable, row = new Map();
    for (let i = 0; i < table.x.length; i++) row.set(table.x[i] + ',' + table.y[i], i);
    const out = {{}};
    gd._fullData.filter((t) => t.name === 'papers' && t.visible === true).forEach((t) => {{
        for (let j = 0; j < t.x.length; j++) {{
            const colour = Array.isArray(t.marker.color) ? t.marker.color[j] : t.marker.color;
            out[row.get(t.x[j] + ',' + t.y[j])] = colour;
        }}
    }});
    return out;
}}"""


def test_the_page_draws_the_palettes_colours_for_themes_and_topics(browser, seed_app):
    """The key's swatches, the topic list's theme swatches and dots and every drawn paper are the
    colours `app.palette` computes for the seed map (themes far apart, topics shades of their theme)."""
    data = build_map_data("seeds", SEED_MAP)
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    try:
        open_app(page, seed_app.url)
        idle(page)
        key = page.evaluate(
            """() => [...document.querySelectorAll('.atlas-legend-item')].map(
                (e) => [e.textContent, getComputedStyle(e.querySelector('.atlas-swatch')).backgroundColor])"""
        )
        names = dict(zip(data.themes["theme_id"].astype(int), data.themes["label"].astype(str), strict=True))
        assert sorted(map(tuple, key)) == sorted((names[t], rgb(c)) for t, c in data.theme_colours.items())
        heads = page.evaluate(
            """() => [...document.querySelectorAll('.atlas-section-head')].filter((h) => h.querySelector('.atlas-theme-swatch'))
                .map((h) => [h.querySelector('.atlas-section-name').textContent,
                             getComputedStyle(h.querySelector('.atlas-theme-swatch')).backgroundColor])"""
        )
        assert sorted(map(tuple, heads)) == sorted(
            map(tuple, key)
        )  # the topic list's headings show the key's colours
        drawn = page.evaluate(DRAWN_COLOURS)
        assert len(drawn) == data.n
        for row, colour in drawn.items():
            assert colour.lower() == data.colours[int(data.topic_ids[int(row)])].lower(), row
    finally:
        page.context.close()
