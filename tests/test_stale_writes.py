"""The browser keeps the address bar on the entry the reader is on (js/zoom.js, `staleWrite`): the
server's late write of a link a step the browser drew was sent with, after the reader went Back or
Forward from it, is not made (it made a storm end with the link on one view and the page on another:
tests/test_browser_storms.py). Under Node (skipped only where Node is not installed)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from app.map_component.assets import MAP_JS_DIR
from app.map_component.payload import shared_constants
from tests.helpers import REPO


def test_a_late_write_of_a_link_left_by_back_or_forward_is_not_made(tmp_path):
    if not shutil.which("node"):
        pytest.skip("Node is not installed")
    shutil.copy(MAP_JS_DIR / "zoom.js", tmp_path / "zoom.js")
    shutil.copy(REPO / "tests" / "js" / "stale_writes.test.mjs", tmp_path / "stale_writes.test.mjs")
    (tmp_path / "shared.js").write_text(
        f"export const SHARED = Object.freeze({json.dumps(shared_constants())});\n"
    )
    (tmp_path / "plot.js").write_text("export const ranges = () => null;\n")
    (tmp_path / "package.json").write_text('{"type": "module"}\n')
    done = subprocess.run(
        ["node", "--test", "stale_writes.test.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# pass 4" in done.stdout
