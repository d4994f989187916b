"""The view's rule, in both languages, against one set of test vectors (tests/view_vectors.py): the
papers a view shows (the intersection of its named sets: topics, themes, each column's values, the
papers added, the unassigned switch, a search's hits, the selection) and the link it writes
(today's keys and order, quoted as the server's query string is). Python's own rule must still give
them (`app.view.current_view`, `app.state.to_params`); the browser's (js/view.js) must too, under
Node (skipped only where Node is not installed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from app.map_component.assets import MAP_JS_DIR, read_modules
from app.map_component.payload import shared_constants
from tests.helpers import REPO
from tests.view_vectors import VECTORS, python_link, python_rule, tables, view_state

VECTOR_DATA = json.loads(VECTORS.read_text(encoding="utf-8"))
CASES = {case["name"]: case for case in VECTOR_DATA["cases"]}


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
    assert got == {"rows": case["rows"], "selected": case["selected"]}
    assert python_link(case["view"]) == case["link"]


def test_the_browser_s_rule_gives_the_vectors(tmp_path):
    """js/view.js (`inView`, `linkParams`, `linkText`, `viewOfLink`; `keyInBrowser`, `valuesInBrowser`)
    with its generated `SHARED`, under `node --test`."""
    if not shutil.which("node"):
        pytest.skip("Node is not installed")
    assert set(read_modules()["view.js"].imports) == {"shared.js"}  # pure: nothing of the page
    shutil.copy(MAP_JS_DIR / "view.js", tmp_path / "view.js")
    shutil.copy(REPO / "tests" / "js" / "view_rule.test.mjs", tmp_path / "view_rule.test.mjs")
    (tmp_path / "shared.js").write_text(
        f"export const SHARED = Object.freeze({json.dumps(shared_constants())});\n"
    )
    (tmp_path / "package.json").write_text('{"type": "module"}\n')
    done = subprocess.run(
        ["node", "--test", "view_rule.test.mjs"], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "VIEW_VECTORS": str(VECTORS)}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = int(re.search(r"^# pass (\d+)$", done.stdout, re.M).group(1))
    assert passed == int(re.search(r"^# tests (\d+)$", done.stdout, re.M).group(1)) >= 3 * len(CASES)
