"""The live map's Python side: the point table, the per-rerun view state (shape and size), mask encoding."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import re

import numpy as np
import pytest

from app.data import build_map_data
from app.map_component.assets import PLOTLY_JS, plotly_bundle, publish
from app.map_component.payload import (
    Pin,
    decode_points,
    draw_order,
    encode_mask,
    point_table,
    points_file,
    view_ranges,
    view_state,
)
from pipeline.mapfolder.store import write_map
from tests.helpers import THEME_NAMES, decode_mask, themed_map, write_tiny_map

URLS = {
    "points_url": "app/static/atlas/points-x.bin.gz",
    "plotly_url": "app/static/atlas/plotly-y.min.js.gz",
}


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    titles = ["<img src=x onerror=alert(1)>", '<a href="javascript:alert(1)">x</a>', "<b>bold</b>"]
    titles += [f"Paper {i}" for i in range(3, 60)]
    folder = write_tiny_map(
        tmp_path_factory.mktemp("maps") / "tiny", titles=titles, labels=["<i>A</i>", "B & C", "C", "D"]
    )
    return build_map_data("tiny", folder)


def scaled(data, n: int):
    """`data` repeated up to `n` papers: a map of that size for payload sizes, without building one."""
    rows = np.arange(n) % data.n
    papers = data.papers.iloc[rows].reset_index(drop=True)
    return dataclasses.replace(
        data,
        papers=papers,
        topic_ids=data.topic_ids[rows],
        colour_index=data.colour_index[rows],
        doc_ids=data.doc_ids[rows],
        row_of={d: i for i, d in enumerate(papers["doc_id"])},
    )


@pytest.mark.parametrize("n", [1, 7, 8, 9, 60, 1001, 81_646])
def test_masks_round_trip_through_their_bit_encoding(n):
    rng = np.random.default_rng(n)
    for share in (0.0, 0.01, 0.5, 0.99):
        mask = rng.random(n) < share
        encoded = encode_mask(mask)
        assert np.array_equal(decode_mask(encoded, n), mask)
        if not mask.all():
            assert len(encoded) <= 4 * ((n + 7) // 8 + 2) // 3 + 5  # at most one bit a paper, base64
            if 0 < mask.sum() * 40 < n:  # a search's few hits: their gaps, a few bytes a hit
                assert encoded[0] == "d" and len(encoded) <= 4 * (3 * int(mask.sum()) + 2) // 3 + 5
    assert encode_mask(np.ones(n, dtype=bool)) is None and decode_mask(None, n).all()


def test_the_point_file_holds_every_paper_once_and_names_escaped(tiny_data):
    table = decode_points(gzip.decompress(points_file(tiny_data)[1]))
    meta, arrays = table["meta"], table["arrays"]
    assert meta["n"] == 60 and all(
        len(arrays[k]) == 60 for k in ("x", "y", "colour", "source", "order", "title_end")
    )
    ends = arrays["title_end"].astype(int)
    titles = [arrays["title_bytes"][a:b].tobytes().decode() for a, b in zip(np.r_[0, ends[:-1]], ends)]
    assert titles == tiny_data.papers["title"].tolist()  # raw: map.js escapes each as it draws it
    assert meta["topic_names"][arrays["colour"][0]] == "&lt;i&gt;A&lt;/i&gt;"
    assert "B &amp; C" in meta["topic_names"] and meta["topic_names"][-1] == "Unassigned"
    assert meta["palette"][-1] == "#9aa0a6" and meta["webgl"] is False
    unassigned = np.flatnonzero(tiny_data.topic_ids == -1)
    assert {int(arrays["colour"][i]) for i in unassigned} == {len(meta["palette"]) - 1}
    assert arrays["x"][5] == pytest.approx(float(tiny_data.papers["x"][5]), abs=1e-5)
    assert sorted(arrays["order"].tolist()) == list(range(60))  # the draw order holds every row once


def test_the_draw_order_keeps_sparse_places_and_thins_dense_ones():
    """The first k rows of the draw order (what the browser draws of a big map zoomed out) hold every
    paper of a sparse place and an even share of a dense one."""
    rng = np.random.default_rng(1)
    dense = rng.normal(0.25, 0.01, size=(20_000, 2))  # one crowded spot
    sparse = rng.uniform(0.5, 1.0, size=(300, 2))  # a thin spread elsewhere
    xy = np.vstack([dense, sparse]).astype(np.float32)
    order = draw_order(xy[:, 0], xy[:, 1], [0.0, 1.0], [0.0, 1.0], cells=64)
    first = order[:2_000]
    assert np.isin(np.arange(20_000, 20_300), first).all()  # every sparse paper within the first 10%
    assert (first < 20_000).sum() == 1_700  # the dense spot fills the rest, thinned
    assert np.array_equal(order, draw_order(xy[:, 0], xy[:, 1], [0.0, 1.0], [0.0, 1.0], cells=64))


def test_the_points_file_is_named_by_its_content(tiny_data, tmp_path):
    name, packed = points_file(tiny_data)
    assert points_file(tiny_data) == (name, packed)  # deterministic: the browser's cached copy stays valid
    assert decode_points(gzip.decompress(packed))["meta"]["n"] == 60 and name.endswith(".bin.gz")
    url = publish(name, packed, tmp_path)
    assert url == f"app/static/atlas/{name}" and (tmp_path / name).read_bytes() == packed
    assert publish(name, b"ignored: same name, same content", tmp_path) == url
    assert (tmp_path / name).read_bytes() == packed and [p.name for p in tmp_path.iterdir()] == [name]
    other = dataclasses.replace(tiny_data, papers=tiny_data.papers.assign(x=tiny_data.papers["x"] + 1))
    assert points_file(other)[0] != name  # a rebuilt map gets a new file


def test_plotly_is_the_committed_bundle_unchanged():
    """The map's Plotly.js is the file assets/plotly/README.md names, byte for byte, and it has the traces
    the map and the topic panel draw with (scatter, scattergl; bar)."""
    name, packed = plotly_bundle()
    code = gzip.decompress(packed)
    readme = (PLOTLY_JS.parent / "README.md").read_text()
    assert hashlib.sha256(code).hexdigest() in readme
    assert name.startswith("plotly-") and name.endswith(".min.js.gz")
    assert b"plotly.js (scatter, scattergl, bar - minified) v3.7.0" in code[:200]
    traces = re.findall(rb'moduleType:"trace",name:"(\w+)"', code)
    assert traces == [b"scatter", b"scattergl", b"bar"] and len(packed) < 600_000


def test_view_state_says_what_changed_in_a_few_fields(tiny_data):
    """Which papers the map draws, their names and hits it works out from the link's view: its state
    holds what the server owns (the opened paper, its neighbours, the pin, the key)."""
    view = view_state(tiny_data, **URLS, chosen_row=5, pin=Pin(1.0, 2.0, "<script>"))
    assert set(view) == {
        "points", "plotly", "n", "paper", "pin", "label_limit", "height",
        "neighbours", "colour", "legend", "reset", "draw_cap", "selection", "browser_steps",
    }  # fmt: skip
    assert view["pin"] == {"x": 1.0, "y": 2.0, "topic": "<script>"}  # the browser shows names as text
    assert view["paper"] == 5


def test_the_map_can_be_coloured_by_a_column_with_a_key_for_each_value(tiny_data):
    table = point_table(tiny_data)
    years = table["meta"]["colourings"]["year"]
    assert set(table["meta"]["colourings"]) == {"year"}  # the tiny map's filters (its sources are file names)
    assert years["values"] == ["2023", "2024"] and len(years["palette"]) == 3  # and grey for missing
    expected = [int(str(y) == "2024") for y in tiny_data.papers["year"]]
    assert table["arrays"]["code:year"].tolist() == expected  # row i's value, as a position in `values`
    key = view_state(tiny_data, **URLS, colour="year")["legend"]
    assert key == [
        {"text": "2023", "colour": years["palette"][0], "pick": {"value": 0}, "link": "2023", "on": False},
        {"text": "2024", "colour": years["palette"][1], "pick": {"value": 1}, "link": "2024", "on": False},
    ]
    chosen = view_state(tiny_data, **URLS, colour="year", values=("2024",))
    assert [entry["on"] for entry in chosen["legend"]] == [False, True]  # the chosen value is marked


def test_topics_are_shades_of_their_theme_hue(tmp_path):
    from app.palette import HUE_TURN, oklab_of

    folder = tmp_path / "themed"
    write_map(folder, themed_map())  # two themes of two topics each: 1 and 2, 0 and 3
    data = build_map_data("themed", folder)

    def hue(topic):  # as a reader sees it: OKLab's hue
        _, a, b = oklab_of([data.colours[topic]])[0]
        return np.degrees(np.arctan2(b, a))

    def gap(a, b):
        return abs((a - b + 180) % 360 - 180)

    assert (
        data.colours[1] != data.colours[2] and gap(hue(1), hue(2)) <= 2 * HUE_TURN + 1
    )  # one theme's shades
    assert data.colours[0] != data.colours[3] and gap(hue(0), hue(3)) <= 2 * HUE_TURN + 1
    assert gap(hue(1), hue(0)) > 40  # two themes: two hues
    assert {data.colours[1], data.colours[0]} == set(data.theme_colours.values())  # each theme's first topic
    key = view_state(data, **URLS)["legend"]
    assert [k["text"] for k in key] == list(THEME_NAMES)  # the key names the themes' hues
    assert [k["pick"] for k in key] == [{"theme": 0}, {"theme": 1}]  # a click shows that theme alone
    chosen = view_state(data, **URLS, themes=(1,))["legend"]
    assert [k["on"] for k in chosen] == [False, True]


@pytest.mark.parametrize("n", [10_000, 81_646])
def test_a_rerun_sends_a_few_kb_at_any_size(tiny_data, n):
    """The map's state holds nothing a paper: its papers are the link's view's, worked out in the browser."""
    big = scaled(tiny_data, n)
    assert len(json.dumps(view_state(big, **URLS, chosen_row=3, neighbours=list(range(10))))) < 3_000


def test_a_map_without_themes_has_none(tmp_path):
    assert build_map_data("plain", write_tiny_map(tmp_path / "plain")).themes is None


def test_a_far_off_paper_does_not_squeeze_the_opening_view():
    xs = np.r_[np.linspace(-2, 2, 1499), 400.0]
    x_range, _ = view_ranges(xs, xs)
    assert x_range[1] < 10 and x_range[0] < -2
    assert view_ranges(np.array([0.0, 1.0]), np.array([5.0, 5.0]))[1] == [4.0, 6.0]  # flat: padded by 1


def test_the_map_script_is_loaded_by_a_few_lines_and_parses(tmp_path):
    """Streamlit sends a component's inline code with every rerun: the inline part is only the loader
    (map.js comes once per page from its file), and map.js, the files of js/ joined, is valid JavaScript
    (checked with Node where it is installed)."""
    import shutil
    import subprocess

    from app.map_component import LOADER
    from app.map_component.assets import map_script

    assert len(LOADER) < 2_000
    if shutil.which("node"):
        for name, code in (("map.mjs", map_script()), ("loader.mjs", LOADER)):
            (tmp_path / name).write_text(code)
            checked = subprocess.run(
                ["node", "--check", str(tmp_path / name)], capture_output=True, text=True
            )
            assert checked.returncode == 0, checked.stderr
