"""The live map's browser code against its Python side.

Fast: the component's protocol typed once a side (payload.py's TypedDicts, js/protocol.js's JSDoc
typedefs) and described in docs/app.md, each held to the others; no JavaScript file writes a constant
Python owns. In Chromium: a test page that loads a few of js/'s files alone and runs the decoders
(binary point file, titles, LEB128 masks), the zoom parser and the sampler on the inputs their Python
twins encode or parse, comparing outputs.
"""

from __future__ import annotations

import base64
import re
import types
import typing
from urllib.parse import urlencode

import numpy as np
import pytest

from app.data import build_map_data
from app.map_component import payload
from app.map_component.assets import ENTRY, MAP_JS_DIR, SHARED_MODULE, map_script, module_order, read_modules
from app.map_component.payload import (
    EVENTS,
    ViewState,
    decode_points,
    encode_mask,
    encode_points,
    point_table,
    shared_constants,
    view_state,
)
from app.selection import rows_inside, selection_text
from app.state import MAX_CORNERS, Vocabulary, parse_selection, parse_view, parse_zoom
from app.text import plotly_wrap
from tests.helpers import REPO, write_tiny_map

PROTOCOL_TYPES = (
    "PinMark", "ThemeName", "KeyPick", "KeyEntry", "ViewState", "PanelState", "TableColumn",
    "TableTopic", "ExtraColumn", "TableState", "NearPaper", "MatchNote", "PaperState", "HeaderFacet", "SearchFacts",
    "HeaderState",
)  # fmt: skip
SUMMARY_TYPES = (
    "CentralPaper", "NearTopic", "YearShare", "VenueCount", "SummaryTopic", "ListSection", "TopicLists", "Summary"
)  # fmt: skip
EVENT_TYPES = (
    "ClickEvent",
    "SelectEvent",
    "LegendEvent",
    "TopicEvent",
    "OnlyEvent",
    "SortEvent",
    "PaperTopicEvent",
    "ClearEvent",
)
# The modules a test page loads alone (with those they import): the pure functions, no page elements
# (joined without the entry, map.js is a classic script, so their names are the page's globals).
PURE = ("load.js", "sampling.js", "zoom.js", "select.js")
JS_FILES = sorted(p.name for p in MAP_JS_DIR.glob("*.js"))


# --------------------------------------------------------------------------- the protocol, typed twice
def jsdoc_typedefs() -> dict[str, dict[str, str]]:
    """js/protocol.js's `@typedef {Object} Name` blocks: {name: {property (with [] when optional): type}}."""
    text = (MAP_JS_DIR / "protocol.js").read_text(encoding="utf-8")
    found = {}
    for block in re.findall(r"/\*\*(.*?)\*/", text, flags=re.S):
        name = re.search(r"@typedef \{Object\} (\w+)", block)
        if name:
            props = re.findall(r"@property \{([^}]*)\} (\[?\w+\]?)", block)
            found[name.group(1)] = {prop: kind for kind, prop in props}
    return found


def jsdoc(hint) -> str:
    """A Python annotation as the JSDoc type js/protocol.js writes for it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.NotRequired, typing.Required):
        return jsdoc(args[0])
    if origin in (typing.Union, types.UnionType):
        return "|".join("null" if a is type(None) else jsdoc(a) for a in args)
    if origin is list:
        return jsdoc(args[0]) + "[]"
    if origin is tuple:
        return "[" + ", ".join(jsdoc(a) for a in args) + "]"
    simple = {str: "string", int: "number", float: "number", bool: "boolean"}
    return simple.get(hint) or hint.__name__


def required_keys(typed) -> set[str]:
    """A TypedDict's required fields (its `__required_keys__` misses `NotRequired` under Python 3.11's
    postponed annotations)."""
    hints = typing.get_type_hints(typed, include_extras=True)
    marked = {typing.Required: True, typing.NotRequired: False}
    return {name for name, hint in hints.items() if marked.get(typing.get_origin(hint), typed.__total__)}


def python_fields(typed) -> dict[str, str]:
    """A TypedDict's fields as jsdoc_typedefs gives them."""
    hints = typing.get_type_hints(typed, include_extras=True)
    required = required_keys(typed)
    return {(name if name in required else f"[{name}]"): jsdoc(hint) for name, hint in hints.items()}


@pytest.mark.parametrize("name", PROTOCOL_TYPES + SUMMARY_TYPES + EVENT_TYPES)
def test_each_protocol_type_is_the_same_in_python_and_javascript(name):
    assert jsdoc_typedefs()[name] == python_fields(getattr(payload, name))


def test_the_events_and_the_shared_constants_are_typed_alike():
    typedefs = jsdoc_typedefs()
    assert typedefs["Events"] == {name: typed.__name__ for name, typed in EVENTS.items()}
    assert typedefs["Shared"] == {key: jsdoc(type(value)) for key, value in shared_constants().items()} | {
        "zoom_parts": "string[]",
        "link_order": "string[]",
        "link_keys": "ViewKeys",
        "view_defaults": "View",
    }


def conforms(value, hint) -> bool:
    """Whether `value` (JSON-like) has the type `hint` (a TypedDict's field, or a TypedDict)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.NotRequired, typing.Required):
        return conforms(value, args[0])
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, a) for a in args)
    if hint is type(None):
        return value is None
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin is tuple:  # JSON writes a tuple as a list
        return (
            isinstance(value, list | tuple)
            and len(value) == len(args)
            and all(conforms(v, a) for v, a in zip(value, args, strict=True))
        )
    if typing.is_typeddict(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        return (
            isinstance(value, dict)
            and required_keys(hint) <= value.keys() <= hints.keys()
            and all(conforms(v, hints[k]) for k, v in value.items())
        )
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int | np.integer) and not isinstance(value, bool)
    return isinstance(value, hint)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    titles = ["<b>bold</b> & <i>more</i>", "Ünïcödé — 数据 🌍 " * 6, "x" * 150, "a\nb", ""]
    titles += [f"Paper {i} about " + "long words " * (i % 9) for i in range(5, 300)]
    return build_map_data(
        "tiny", write_tiny_map(tmp_path_factory.mktemp("maps") / "tiny", n=300, titles=titles)
    )


def test_a_view_state_is_what_the_protocol_says(data):
    """Every field `ViewState` names, and no other, of its type: with and without a pin, a paper, a
    search, a colouring and a key."""
    urls = {"points_url": "points-x.bin.gz", "plotly_url": "plotly-y.min.js.gz"}
    plain = view_state(data, **urls)
    some = view_state(
        data, **urls, chosen_row=3,
        neighbours=[4, 5], colour="year", pin=payload.Pin(0.5, -0.25, "B"), themes=(0,), values=("2024",), selection="lasso:0,0,1,0,0.5,1",
    )  # fmt: skip
    for state in (plain, some):
        assert conforms(state, ViewState), state
    assert set(plain) == required_keys(ViewState)  # `live_map` adds the rest
    assert conforms({**plain, "module": "m.js.gz", "module_data": "eA=="}, ViewState)
    assert not conforms({**plain, "n": "300"}, ViewState) and not conforms({**plain, "extra": 1}, ViewState)
    assert some["legend"] and all(conforms(entry, payload.KeyEntry) for entry in some["legend"])


def test_the_panel_s_state_and_summary_are_what_the_protocol_says(data):
    """`PanelState`, and the map's `Summary` file, read back as the browser reads it (JSON, gunzip'd)."""
    import gzip
    import json

    from app.topic_summary import topic_summary
    from app.trends import rising_scores

    state = payload.panel_state(
        data, summary_url="s", points_url="p", plotly_url="q", sort="size", themes=(0,),
        topics=(1, -1), filters={"year": ("2024",)}, height=600,
    )  # fmt: skip
    assert conforms(state, payload.PanelState) and set(state) == required_keys(payload.PanelState)
    summary = topic_summary(data, rising_scores(data.papers))
    name, packed = payload.summary_file(summary)
    assert name.startswith("summary-") and conforms(json.loads(gzip.decompress(packed)), payload.Summary)
    assert [t["id"] for t in summary["topics"]] == [*data.topic_order, *([-1] if data.sizes.get(-1) else [])]
    assert [t["rank"] for t in summary["topics"]][: len(data.topic_order)] == list(
        range(len(data.topic_order))
    )


def test_the_table_s_state_and_file_are_what_the_protocol_says(data):
    """`TableState`, the header's state (the page's facts) for a search by words (its hits ranked over
    the whole map, how each matched), and the table file read back as the browser reads it."""
    import gzip

    from app.map_component.table import search_columns, table_file, table_state
    from app.search import search_evidence, search_facts, word_search

    state = table_state(table_url="t", points_url="p", topic=None)
    assert conforms(state, payload.TableState) and set(state) == required_keys(payload.TableState)
    words = word_search(data.search_index.search("paper"), "paper")
    hits = {"words": words.rows.tolist(), "evidence": search_evidence(words), "search": search_facts(words)}
    facts = payload.header_state(data, ("", "x"), hits, points_url="p", columns=search_columns(words))
    assert conforms(facts, payload.HeaderState) and set(facts) == required_keys(payload.HeaderState)
    assert facts["columns"] and all(conforms(extra, payload.ExtraColumn) for extra in facts["columns"])
    name, packed = table_file(data)
    file = payload.decode_points(gzip.decompress(packed))
    assert name.startswith("table-") and file["meta"]["n"] == data.n
    assert all(conforms(c, payload.TableColumn) for c in file["meta"]["columns"])
    assert sorted(file["arrays"]["title_rank"].tolist()) == list(range(data.n))


def test_an_opened_papers_state_is_what_the_protocol_says(data):
    """`PaperState` for every paper, with and without a word search: its nearest papers' topics named
    only where they differ, the title and abstract as written (the search's matches marked)."""
    from app.nearest import nearest_papers
    from app.paper_view import paper_state
    from app.search import word_search

    words = word_search(data.search_index.search("long words"), "long words")
    assert 0 < len(words.rows) < data.n
    for search in (None, words):
        for row in range(data.n):
            state = paper_state(data, row, search, "Back to the topic list")
            assert conforms(state, payload.PaperState) and set(state) == required_keys(payload.PaperState)
            rows, _ = nearest_papers(data, row)
            assert [paper["row"] for paper in state["nearest"]] == rows.tolist()
            named = {paper["topic"] for paper in state["nearest"]}
            assert named == {None} if len(set(data.topic_ids[rows])) == 1 else None not in named
            assert "".join(p for p, _ in state["abstract"]) == data.papers["abstract"].iloc[row]
            title = " ".join(str(data.papers["title"].iloc[row]).split())
            assert "".join(p for p, _ in state["title"]) == title
            marked = {p.casefold() for p, hit in state["title"] + state["abstract"] if hit}
            assert marked <= {"long", "words"} and (search is None) == (state["match"] is None)
            if search is not None:
                found = row in words.rows
                assert bool(marked) == found and state["match"]["kind"] == ("words" if found else "none")


def test_every_event_the_app_reads_is_typed():
    for name, typed in EVENTS.items():
        assert "map" in required_keys(typed), name  # names the point table it came from
    assert conforms({"row": 3, "map": "p"}, EVENTS["click"])
    assert conforms({"shape": None, "map": "p"}, EVENTS["select"])
    assert conforms({"shape": {"box": [0, 1, 0.5, 2]}, "map": "p"}, EVENTS["select"])
    assert conforms({"shape": {"lasso": {"x": [0, 1, 0], "y": [0, 0, 1]}}, "map": "p"}, EVENTS["select"])
    assert not conforms({"rows": [1], "map": "p"}, EVENTS["select"])
    assert conforms({"theme": None, "map": "p"}, EVENTS["legend"])
    assert not conforms({"row": 3}, EVENTS["click"])


def docs_table(heading: str) -> list[str]:
    """The first column's names in the table after `heading` in docs/app.md's protocol section."""
    text = (REPO / "docs" / "app.md").read_text(encoding="utf-8")
    section = text[text.index("## The map component's protocol") :]
    rows = section[section.index(heading) :].split("\n\n", 2)[1].splitlines()[2:]
    return [name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])]


def test_docs_describe_every_field_and_event():
    assert docs_table("**What the browser receives**") == list(typing.get_type_hints(ViewState))
    assert docs_table("**What comes back**") == list(EVENTS)
    assert docs_table("What the panel receives") == list(typing.get_type_hints(payload.PanelState))
    assert docs_table("What the table receives") == list(typing.get_type_hints(payload.TableState))
    assert docs_table("What an opened paper holds") == list(typing.get_type_hints(payload.PaperState))
    assert docs_table("`header` part (`HeaderState`)") == list(typing.get_type_hints(payload.HeaderState))


def test_map_js_is_every_module_of_js_once_and_writes_no_constant_python_owns():
    """map.js joins every module of js/ but the types (protocol.js), each once, after the modules it
    imports, the entry last; only the entry's default is exported, and no import is left."""
    order = module_order(read_modules(), (ENTRY,))
    assert sorted(order) == sorted({*JS_FILES, SHARED_MODULE} - {"protocol.js"}) and order[-1] == ENTRY
    script = map_script()
    assert script.count("export default") == 1 and "export default" in (MAP_JS_DIR / ENTRY).read_text()
    assert not re.search(r"^\s*(import|export) (?!default )", script, flags=re.M)
    assert [line for line in script.splitlines() if line.startswith("// ---- js/")] == [
        f"// ---- js/{name}" for name in order if name != SHARED_MODULE
    ]
    assert all((MAP_JS_DIR / name).read_text().startswith("// @ts-check\n") for name in JS_FILES)
    shared = shared_constants()
    owned = [str(shared["draw_cap"]), f"{shared['draw_cap']:,}".replace(",", "_"), shared["points_magic"],
             shared["context_colour"], f'"{shared["zoom_key"]}"', f"'{shared['zoom_key']}'"]  # fmt: skip
    for name in JS_FILES:
        code = (MAP_JS_DIR / name).read_text(encoding="utf-8")
        assert not [constant for constant in owned if constant in code], name
    assert script.count(shared["points_magic"]) == 1  # only in the generated first line


@pytest.mark.parametrize(
    "call",
    [
        # makes a number formatter on each call: the topic list's 400 numbers at 179 topics took 20 ms
        # of each redraw with it (benchmarks/STEPS_RESULTS.md, slice 13), not 1 ms with dom.js's `number`
        "toLocaleString(",
        # four to five times a square root's time in V8: the faint rest's dots (context.js `disc`) at a
        # million papers took 49 ms of a first search's script with it (STEPS_RESULTS.md, slice 14)
        "Math.hypot(",
    ],
)
def test_the_page_keeps_slow_calls_out_of_its_hot_paths(call):
    for name in JS_FILES:
        assert call not in (MAP_JS_DIR / name).read_text(encoding="utf-8"), name


# --------------------------------------------------------------------------- the test page: JS vs Python
@pytest.fixture(scope="module")
def pure(browser):
    """A blank page running only the pure files of map.js (with `SHARED`)."""
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_script_tag(content=map_script(PURE))
    assert page.evaluate("() => typeof decodePoints === 'function' && SHARED.points_format") == 2
    yield page
    assert not errors
    context.close()


def run(page, body: str, arg=None):
    """Evaluate `body` (a function of `arg`) in the test page."""
    return page.evaluate(body, arg)


# Decode a point file (base64) as the map does; give back the header and every array as plain lists.
DECODE = """(b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const { arrays, ...header } = decodePoints(bytes.buffer);
    const out = {};
    for (const [name, values] of Object.entries(arrays)) out[name] = [values.constructor.name, Array.from(values)];
    return { header, arrays: out };
}"""


@pytest.mark.browser
def test_the_point_file_decodes_in_the_browser_as_in_python(pure, data):
    raw = encode_points(point_table(data))
    decoded = decode_points(raw)
    got = run(pure, DECODE, base64.b64encode(raw).decode())
    assert got["header"] == decoded["meta"]
    kinds = {
        "float32": "Float32Array",
        "uint8": "Uint8Array",
        "uint16": "Uint16Array",
        "uint32": "Uint32Array",
    }
    assert set(got["arrays"]) == set(decoded["arrays"])
    for name, values in decoded["arrays"].items():
        kind, numbers = got["arrays"][name]
        assert kind == kinds[values.dtype.name], name
        assert np.array_equal(np.asarray(numbers, dtype=values.dtype), values), name
    other = bytearray(raw)
    other[7:8] = b"9"  # another format's file
    refused = run(
        pure,
        "(b64) => { try { decodePoints(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer); return null; }"
        " catch (e) { return e.message; } }",
        base64.b64encode(bytes(other)).decode(),
    )
    assert refused and "not a point file" in refused


@pytest.mark.browser
def test_titles_are_escaped_and_wrapped_in_the_browser_as_in_python(pure, data):
    raw = encode_points(point_table(data))
    hover = run(
        pure,
        """(b64) => {
            const t = prepare(decodePoints(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer));
            return { raw: Array.from({ length: t.n }, (_, i) => rawTitle(t, i)),
                     hover: Array.from({ length: t.n }, (_, i) => hoverTitle(t, i)) };
        }""",
        base64.b64encode(raw).decode(),
    )
    titles = data.papers["title"].fillna("").astype(str).tolist()
    assert hover["raw"] == titles
    assert hover["hover"] == [plotly_wrap(title, 64, 3) for title in titles]


MASKS = {
    "all": np.ones(40, dtype=bool),
    "none": np.zeros(40, dtype=bool),
    "bits": np.random.default_rng(0).random(1000) < 0.5,
    "few": np.isin(np.arange(5000), [0, 127, 128, 4999]),
    "far": np.isin(np.arange(2_100_000), [5, 2_097_160]),  # gaps of 1 to 4 LEB128 bytes
    "last": np.r_[np.zeros(1000, dtype=bool), True],
}


@pytest.mark.browser
@pytest.mark.parametrize("name", MASKS)
def test_a_view_mask_decodes_in_the_browser_as_it_was_encoded(pure, name):
    mask = MASKS[name]
    text = encode_mask(mask)
    got = run(
        pure,
        """([text, n]) => {
            const m = decodeMask(text, n);
            return m === null ? null : { ones: Array.from(m.rows), count: m.reduce((a, b) => a + b, 0) };
        }""",
        [text, len(mask)],
    )
    if mask.all():
        assert text is None and got is None
        return
    assert got["ones"] == np.flatnonzero(mask).tolist() and got["count"] == int(mask.sum())
    assert text[0] == ("d" if name in ("few", "far", "last", "none") else "b")  # both forms are read


ZOOMS = [
    "-1.5,2,0,3.25", "1,0,0,1", "0,1,1,1", "nan,1,0,1", "inf,1,0,1", "1,2,3", "1,2,3,4,5", "a,b,c,d",
    " 1, 2 ,3,4", "1e3,2e3,-1e-3,1e-3", "0.000001,0.000002,5,6", "", "1;2;3;4",
    # one grammar (ASCII decimal numbers): what Number() or float() alone read differently
    "1_0,20,0,1", "\uff10,\uff11,0,1", "0x10,0x20,0,1", ",1,0,1", "1,2,3,4 ", "+1,2,3,4", ".5,5.,1E2,1e+3",
    "Infinity,1,0,1", "1e999,1,0,1", "0,1e-300,0,1e-300", "0,0.0000009,0,1", "-0,1,-.5,0",
]  # fmt: skip


@pytest.mark.parametrize(
    "text", ["1_0,20,0,1", "\uff11,\uff12,0,1", "0x1,0x2,0,1", "0,1e-300,0,1e-300", ",1,0,1", " 1,2,3,4"]
)
def test_a_zoom_outside_the_one_grammar_is_refused_with_the_visible_notice(text):
    # what the map (js/zoom.js) drops, the server names: ASCII decimal numbers, ranges the map can write back
    assert parse_zoom(text) is None
    _, notices = parse_view({"view": [text]}, Vocabulary(topic_ids=frozenset({0})))
    assert len(notices) == 1 and notices[0].startswith("Ignored view=") and "four numbers" in notices[0]
    assert parse_view({"view": ["0,1,-2,2.5"]}, Vocabulary(topic_ids=frozenset({0})))[1] == []


@pytest.mark.browser
def test_the_zoom_in_a_link_is_read_in_the_browser_as_by_the_server(pure):
    searches = ["?" + urlencode({shared_constants()["zoom_key"]: text}) for text in ZOOMS]
    got = run(pure, "(searches) => searches.map((s) => parseZoom(s))", searches)
    for text, zoom in zip(ZOOMS, got, strict=True):
        assert (None if zoom is None else (*zoom["x"], *zoom["y"])) == parse_zoom(text), text
    assert run(pure, "() => parseZoom('?other=1,2,3,4')") is None


@pytest.mark.browser
@pytest.mark.parametrize(
    ("masked", "cap", "box"),
    [(False, 50, (-1, 1, -1, 1)), (True, 20, (-3, 0, -3, 3)), (False, 100, (-10, 10, -10, 10)), (True, 10_000, (0, 1, 0, 1))],
)  # fmt: skip
def test_the_browser_samples_the_first_papers_in_view_in_the_draw_order(pure, data, masked, cap, box):
    """`sampleRows` on the decoded table against the draw order Python wrote: the first `cap` papers
    of the order among the candidates inside the view widened by a fifth each side; null (draw every
    candidate) when they all fit under the cap."""
    table = point_table(data)
    order = table["arrays"]["order"]
    x, y = (table["arrays"][axis].astype(np.float64) for axis in "xy")  # compared as the browser does
    mask = np.arange(data.n) % 3 != 0 if masked else np.ones(data.n, dtype=bool)
    x0, x1, y0, y1 = box
    got = run(
        pure,
        """([b64, mask, n, range, cap]) => {
            const t = prepare(decodePoints(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer));
            const rows = sampleRows(t, decodeMask(mask, n), range, cap);
            return rows === null ? null : Array.from(rows);
        }""",
        [base64.b64encode(encode_points(table)).decode(), encode_mask(mask), data.n, {"x": [x0, x1], "y": [y0, y1]}, cap],
    )  # fmt: skip
    if mask.sum() <= cap:
        assert got is None
        return
    pad_x, pad_y = (x1 - x0) * 0.2, (y1 - y0) * 0.2
    inside = (x >= x0 - pad_x) & (x <= x1 + pad_x) & (y >= y0 - pad_y) & (y <= y1 + pad_y)
    expected = order[(mask & inside)[order]][:cap]
    assert got == expected.tolist() and 0 < len(got) <= cap


_RNG = np.random.default_rng(5)
_LONG = _RNG.normal(0, 7, (2, 200)) * 1e3  # a hand-drawn lasso: a corner a mouse move, long decimals
DRAWN = [
    {"range": {"x": [0.123456789, 1.98765432], "y": [-3.14159265, 2.71828182]}},
    {"range": {"x": [5.5, -0.25], "y": [12345678.9, 0.000123456789]}},  # reversed; exponent; tiny
    {"lassoPoints": {"x": [0.3333333333, 2.6666666, 0.1], "y": [0.1, 0.2, 2.9999999]}},
    {"lassoPoints": {"x": _LONG[0].tolist(), "y": _LONG[1].tolist()}},  # thinned to MAX_CORNERS
]


@pytest.mark.browser
@pytest.mark.parametrize("event", DRAWN, ids=["box", "reversed box", "lasso", "long lasso"])
def test_the_browser_writes_a_drawn_selection_as_the_server_draws_it_back(pure, event):
    """The outline the map sends for a box or lasso (`outlineOf`) is the one the server's answer
    carries back (`payload.outline` of the link's `select=`): equal, the map need not select again."""
    got = run(pure, "(event) => outlineOf(event)", event)
    box, lasso = event.get("range"), event.get("lassoPoints")
    reported = {"box": [*box["x"], *box["y"]]} if box else {"lasso": lasso}  # as the map sent it before
    assert got == payload.outline(selection_text(got)) == payload.outline(selection_text(reported))
    # The link the browser writes for it where it shows the selection itself (js/select.js) says the
    # server's shape, and the outline the browser reads back from that link is the one drawn.
    text = run(pure, "(outline) => selectionText(outline)", got)
    assert parse_selection(text) == parse_selection(selection_text(got))
    assert run(pure, "(text) => parsedOutline(text)", text) == got
    assert (
        len(got["lasso"]["x"]) == min(len(lasso["x"]), MAX_CORNERS)
        if lasso
        else got["box"] == sorted(got["box"][:2]) + sorted(got["box"][2:])
    )


@pytest.mark.browser
@pytest.mark.parametrize(
    "text",
    ["box:-1,1,-1,1", "box:0.5,-2,3,-0.25", "lasso:-2,-2,2,-2,0,2", "lasso:-3,-3,3,-3,3,3,0,0,-3,3"],
)
def test_a_selection_holds_the_same_papers_in_the_browser_as_on_the_server(pure, data, text):
    """`rowsInOutline` (the points a no-WebGL map draws for a selection) against `app.selection.rows_inside`
    (what the table lists), on the decoded table, for the outline the link's text describes."""
    table = point_table(data)
    outline = payload.outline(text)
    got = run(
        pure,
        """([b64, outline]) => {
            const t = prepare(decodePoints(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer));
            return rowsInOutline(t, null, outline);
        }""",
        [base64.b64encode(encode_points(table)).decode(), outline],
    )
    expected = rows_inside(parse_selection(text), table["arrays"]["x"], table["arrays"]["y"])
    assert got == expected.tolist() and 0 < len(got) < data.n


@pytest.mark.browser
@pytest.mark.parametrize("name", ["ranked", "large", "none"])
def test_a_search_s_hits_read_in_the_browser_are_the_server_s_rows(pure, name):
    """`decodeVarints` reads the page's facts' hits (`payload.varints`, base64: rows best first, up to a
    million papers and past 2**28) back row for row, in their order."""
    rows = {"ranked": _RNG.permutation(1003)[:400], "large": np.array([0, 127, 128, 16383, 16384, 999_999, 2**28 + 5]),
            "none": np.zeros(0, dtype=np.int64)}[name]  # fmt: skip
    text = base64.b64encode(payload.varints(rows.astype(np.uint64))).decode()
    got = run(pure, "(text) => Array.from(decodeVarints(text))", text)
    assert got == rows.tolist()
