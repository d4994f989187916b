"""The view's rule, in both languages, against one set of test vectors (tests/view_vectors.py): the
papers a view shows (the intersection of its named sets: topics, themes, each column's values, the
papers added, the unassigned switch, a search's hits, the selection), the link it writes (today's
keys and order, quoted as the server's query string is) and the view each reading step leads to.
Python's own rule must still give them (`app.view.current_view`, `app.state.to_params`,
`app.state.step`); the browser's (js/view.js) must too, under Node (skipped only where Node is not
installed)."""

from __future__ import annotations

import json

import pytest

from app.map_component.assets import read_modules
from tests.helpers import node_test
from tests.view_vectors import VECTORS, python_link, python_rule, python_step, tables, view_state

VECTOR_DATA = json.loads(VECTORS.read_text(encoding="utf-8"))
CASES = {case["name"]: case for case in VECTOR_DATA["cases"]}
STEPS = {case["name"]: case for case in VECTOR_DATA["steps"]}


def test_the_vectors_cover_every_named_set_and_setting():
    """Every set the view intersects and every setting the link writes is exercised by some case."""
    views = [case["view"] for case in CASES.values()]
    defaults = view_state({})
    for name in ("search", "topics", "show_unassigned", "filters", "topic", "paper", "themes",
                 "sort", "added_only", "colour", "selection"):  # fmt: skip
        assert any(getattr(view_state(v), name) != getattr(defaults, name) for v in views), name
    kinds = [name for case in CASES.values() for name, value in case["hits"].items() if value is not None]
    assert {"words", "selected"} <= set(kinds)
    assert VECTOR_DATA["tables"] == tables()
    rows = {len(case["rows"]) for case in CASES.values()}
    assert 0 in rows and max(rows) == 40 and len(rows) > 10  # the cases tell the rules apart


@pytest.mark.parametrize("name", CASES)
def test_python_s_rule_gives_the_vectors(name):
    case = CASES[name]
    found = {kind: value for kind, value in case["hits"].items() if value is not None}
    got = python_rule(VECTOR_DATA["tables"][case["tables"]], case["view"], found)
    assert got == {"rows": case["rows"], "selected": case["selected"], "sentence": case["sentence"]}
    assert python_link(case["view"]) == case["link"]


def test_the_steps_cover_every_kind_and_change_the_view():
    kinds = {(case["action"]["kind"], "column" in case["action"]) for case in STEPS.values()}
    assert {kind for kind, _ in kinds} == {
        "topic",
        "paper",
        "topics",
        "values",
        "key",
        "select",
        "unassigned",
        "reset",
    }
    assert {("key", True), ("key", False)} <= kinds  # a theme and a value of the colour column
    assert all(case["after"] != case["view"] for case in STEPS.values())


@pytest.mark.parametrize("name", STEPS)
def test_python_s_steps_give_the_vectors(name):
    case = STEPS[name]
    after = python_step(VECTOR_DATA["tables"][case["tables"]], case["view"], case["action"])
    assert after == case["after"] and python_link(after) == case["link"]


def test_the_browser_s_rule_gives_the_vectors(tmp_path):
    """js/view.js (`inView`, `linkParams`, `linkText`, `viewOfLink`, `step`) with its generated
    `SHARED`, under `node --test`."""
    assert set(read_modules()["view.js"].imports) == {"shared.js"}  # pure: nothing of the page
    passed = node_test(tmp_path, "view_rule.test.mjs", ("view.js",), {"VIEW_VECTORS": str(VECTORS)})
    assert passed >= 3 * len(CASES) + len(STEPS)


@pytest.fixture(scope="module")
def corpus_maps(tmp_path_factory):
    from tests.link_corpus import maps

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATLAS_MAPS_DIR", str(tmp_path_factory.mktemp("none") / "no-other-maps"))
        yield maps(tmp_path_factory.mktemp("corpus"))


def test_the_browser_writes_the_header_every_corpus_link_opened(corpus_maps, tmp_path):
    """Every link of the link corpus (tests/link_corpus.py): the browser's sentence (js/page.js reads
    the header's state the server sends, `app.map_component.payload.header_state`, beside the map's point
    table; js/view.js `sentence` writes it) for the view the link says, written as Markdown writes it,
    is the header the link opened, byte for byte; and so is Python's own (`header_sentence`)."""
    from app.loaders import MapKey, cached_rising, load_map
    from app.map_component.payload import header_state, point_table
    from app.state import VIEW_DEFAULTS, parse_view
    from app.text import markdown_literal
    from app.view import (
        current_view,
        header_sentence,
        opened_topic_view,
        selected_rows,
        sentence_hits,
        view_vocabulary,
    )
    from tests.link_corpus import CORPUS

    recorded = json.loads(CORPUS.read_text(encoding="utf-8"))
    keys = {name: MapKey.of(name, folder) for name, folder in corpus_maps.items()}
    loaded = {name: load_map(key) for name, key in keys.items()}
    inputs: dict = {"tables": {}, "cases": []}
    for name, data in loaded.items():
        arrays = point_table(data)["arrays"]
        codes = {column: arrays[f"code:{column}"].tolist() for column in data.facets}
        places = {axis: arrays[axis].tolist() for axis in ("x", "y")}  # float32, as the browser reads them
        inputs["tables"][name] = {"n": data.n, "colour": arrays["colour"].tolist(), "codes": codes, **places}
    python = []
    for entry in recorded:
        data, key = loaded[entry["map"]], keys[entry["map"]]
        state, _ = parse_view(entry["address"], view_vocabulary(data, cached_rising(key)))
        view = json.loads(json.dumps({name: getattr(state, name) for name in VIEW_DEFAULTS}))
        selected = selected_rows(data, key, state)
        own = header_sentence(data, opened_topic_view(data, state, current_view(data, key, state)), selected)
        sent = header_state(data, ("", "the server's"), sentence_hits(data, key, state), points_url="points")
        inputs["cases"].append({"map": entry["map"], "view": view, "state": sent})
        python.append(own)
    (tmp_path / "inputs.json").write_text(json.dumps(inputs), encoding="utf-8")
    env = {"SENTENCE_INPUTS": str(tmp_path / "inputs.json"), "SENTENCE_OUTPUT": str(tmp_path / "said.json")}
    node_test(
        tmp_path,
        "sentence_corpus.test.mjs",
        ("page.js", "load.js", "sampling.js", "store.js", "links.js", "view.js", "zoom.js"),
        env,
    )
    said = json.loads((tmp_path / "said.json").read_text(encoding="utf-8"))

    def header(number: str, rest: str) -> str:  # as Markdown writes it (the number bold)
        return (f"**{markdown_literal(number)}** " if number else "") + markdown_literal(rest)

    assert len(said) == len(recorded) == 42
    for entry, browser, own in zip(recorded, said, python, strict=True):
        assert header(*browser) == entry["header"], entry["link"]
        assert header(*own) == entry["header"], entry["link"]
