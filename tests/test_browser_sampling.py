"""End-to-end, a big map's drawing: the binary point file as the browser reads it, and a map drawn as a
density-biased sample (the cap forced low with ATLAS_DRAW_CAP) that still names the right paper."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import GRAPH, hostile_map, open_app, write_tiny_map

pytestmark = pytest.mark.browser  # the browser and page fixtures: tests/conftest.py
CAP = 300
N = 2_000

# Rows drawn by the shown chart (its traces' rows, map.js `atlasDrawn`), and the papers in its view.
DRAWN = f"""() => {{
    const gd = document.querySelector('{GRAPH}');
    const rows = [];
    gd.atlasDrawn.forEach((g) => rows.push(...g.rows));
    const [x0, x1] = gd._fullLayout.xaxis.range, [y0, y1] = gd._fullLayout.yaxis.range;
    const t = gd.atlasTable, inView = [];
    for (let i = 0; i < t.n; i++) if (t.x[i] >= x0 && t.x[i] <= x1 && t.y[i] >= y0 && t.y[i] <= y1) inView.push(i);
    const plotted = gd._fullData.filter((d) => d.visible === true).reduce((n, d) => n + d.x.length, 0);
    return {{ rows, inView, plotted }};
}}"""


@pytest.fixture(scope="module")
def capped_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("sampling")
    folder = write_tiny_map(root / "capped", n=N)
    log = open(root / "streamlit.log", "w")  # noqa: SIM115 (closed below)
    app = StreamlitServer(
        folder, root / "no-other-maps", log=log, timeout=60, env={"ATLAS_DRAW_CAP": str(CAP)}
    )
    yield app, folder
    app.stop()
    log.close()


def zoom_to(page, x: list[float], y: list[float]) -> None:
    """Zoom the shown chart to x/y as a reader's zoom would, and wait until the view's sample is drawn."""
    page.evaluate(
        f"([x, y]) => window.Plotly.relayout(document.querySelector('{GRAPH}'), {{'xaxis.range': x, 'yaxis.range': y}})",
        [x, y],
    )
    page.wait_for_function(
        f"""([x0]) => {{
            const gd = document.querySelector('{GRAPH}');
            const rows = gd.atlasDrawn.flatMap((g) => Array.from(g.rows));
            return rows.length > 0 && rows.every((i) => gd.atlasTable.x[i] >= x0 - 1);  // the view's own sample
        }}""",
        arg=[x[0]],
        timeout=30_000,
    )
    page.wait_for_timeout(400)  # the resample after the zoom (120 ms debounce) has been drawn


def test_a_zoomed_out_big_map_draws_at_most_the_cap_and_zoomed_in_every_paper_in_view(page, capped_app):
    app, _ = capped_app
    open_app(page, app.url)
    drawn = page.evaluate(DRAWN)
    assert drawn["plotted"] == len(drawn["rows"]) and 0.9 * CAP <= len(drawn["rows"]) <= CAP
    assert len(set(drawn["rows"])) == len(drawn["rows"])  # no paper twice
    # Zoomed in on one topic's cluster (around (2, 2)): every paper in view is drawn.
    zoom_to(page, [1.6, 2.4], [1.6, 2.4])
    drawn = page.evaluate(DRAWN)
    assert 0 < len(drawn["inView"]) <= CAP and set(drawn["inView"]) <= set(drawn["rows"])


def test_search_hits_beyond_the_cap_are_drawn_as_a_sample_and_a_sampled_paper_opens_on_click(
    page, capped_app
):
    app, folder = capped_app
    open_app(page, app.url)
    before = int(page.evaluate(f"document.querySelector('{GRAPH}').dataset.atlasDraws"))
    box = page.get_by_role("textbox", name="Search")
    box.fill("policy")
    box.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before} && "
        f"document.querySelector('{GRAPH}')._fullData.some((t) => t.name === 'highlight')",
        timeout=30_000,
    )
    papers = pd.read_parquet(folder / "papers.parquet")
    hits = set(np.flatnonzero(papers["title"].str.startswith("Policy")).tolist())
    drawn = page.evaluate(DRAWN)
    assert len(hits) > CAP and drawn["plotted"] == len(drawn["rows"])
    # hits only, a sample of them
    assert set(drawn["rows"]) <= hits and 0.9 * CAP <= len(drawn["rows"]) <= CAP
    # Zoomed in on one cluster of hits: every hit in view is drawn.
    xy = papers[["x", "y"]].to_numpy()
    cx, cy = (float(v) for v in np.median(xy[sorted(hits)], axis=0))
    zoom_to(page, [cx - 0.4, cx + 0.4], [cy - 0.4, cy + 0.4])
    drawn = page.evaluate(DRAWN)
    in_view = hits & set(drawn["inView"])
    assert 0 < len(in_view) <= CAP and in_view <= set(drawn["rows"]) <= hits
    # Back to the whole map: click a drawn paper well apart from the other drawn ones.
    page.goto(app.url)
    open_app(page, app.url)
    rows = np.array(page.evaluate(DRAWN)["rows"])
    xy = papers[["x", "y"]].to_numpy()[rows]
    gaps = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)) + np.eye(len(rows)) * 1e9
    row = int(rows[int(np.argmax(gaps.min(axis=1)))])
    spot = page.evaluate(
        f"""(row) => {{
            const gd = document.querySelector('{GRAPH}');
            const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
            return [r.left + gd._fullLayout.xaxis.l2p(gd.atlasTable.x[row]), r.top + gd._fullLayout.yaxis.l2p(gd.atlasTable.y[row])];
        }}""",
        row,
    )
    page.mouse.move(*spot)
    hover = page.locator(".hoverlayer .hovertext").first
    hover.wait_for(timeout=10_000)
    title = str(papers["title"][row])
    assert title in hover.text_content()  # SVG text: the hover names the paper under the pointer
    page.mouse.down()
    page.mouse.up()
    page.wait_for_function(
        "(part) => location.href.includes(part)", arg=f"paper=doc{row:04d}", timeout=30_000
    )


def test_the_point_file_round_trips_to_the_browser(page, tmp_path):
    """What the browser decodes from the binary point file is papers.parquet: x, y and every title,
    hostile ones included, byte for byte."""
    atlas = hostile_map()
    atlas.papers["title"] = [
        "<img src=x onerror=alert(1)>",
        "中文 · émigré ∑",
        "",
        "a\nb",
        "x" * 300,
        "&amp;",
        "ok",
    ]
    write_map(tmp_path / "hostile", atlas)
    log = open(tmp_path / "streamlit.log", "w")  # noqa: SIM115 (closed below)
    app = StreamlitServer(tmp_path / "hostile", tmp_path / "none", log=log, timeout=60)
    try:
        open_app(page, app.url)
        table = page.evaluate(
            f"""() => {{
                const t = document.querySelector('{GRAPH}').atlasTable, d = new TextDecoder(), titles = [];
                for (let i = 0; i < t.n; i++) titles.push(d.decode(t.titleBytes.subarray(i ? t.titleEnd[i - 1] : 0, t.titleEnd[i])));
                return {{ x: Array.from(t.x), y: Array.from(t.y), titles, n: t.n }};
            }}"""
        )
    finally:
        app.stop()
        log.close()
    papers = pd.read_parquet(tmp_path / "hostile" / "papers.parquet")
    assert table["n"] == len(papers) and table["titles"] == papers["title"].tolist()
    assert np.array_equal(np.float32(table["x"]), papers["x"].to_numpy(np.float32))
    assert np.array_equal(np.float32(table["y"]), papers["y"].to_numpy(np.float32))
    assert page.evaluate("window.__pwned === undefined")
