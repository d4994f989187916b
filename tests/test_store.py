"""The browser's one store of the view (js/store.js), under Node (skipped only where Node is not
installed): it writes the link, whole, from the view, and alone. Every address the link corpus opens
(tests/link_corpus.py, today's links as the server writes them) is written back by the store as it
was; each reading step of the view's test vectors (tests/view_vectors.py, which Python's
`app.state.step` gives too) is written as its link with the map's name and the zoom kept, as a new
history entry, and Back reads the view before it back."""

from __future__ import annotations

import json

from app.map_component.assets import read_modules
from tests.helpers import node_test
from tests.link_corpus import CORPUS
from tests.view_vectors import VECTORS


def test_the_store_writes_each_link_and_step_as_the_server_would(tmp_path):
    assert set(read_modules()["store.js"].imports) == {"links.js", "shared.js", "view.js", "zoom.js"}
    env = {"VIEW_VECTORS": str(VECTORS), "LINK_CORPUS": str(CORPUS)}
    passed = node_test(tmp_path, "store.test.mjs", ("store.js", "links.js", "view.js", "zoom.js"), env)
    corpus, steps = json.loads(CORPUS.read_text()), json.loads(VECTORS.read_text())["steps"]
    assert passed == len(corpus) + len(steps) + 1
