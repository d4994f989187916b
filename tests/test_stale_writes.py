"""The browser keeps the address bar on the entry the reader is on (js/zoom.js, `staleWrite`): the
server's late write of a link a step the browser drew was sent with, after the reader went Back or
Forward from it, is not made, nor that of a step the server takes itself (a paper opened) written
after a Back or Forward, nor a push of the link the address bar says already (in Python's encoding) (it made a storm end with the link on one view and the page on another:
tests/test_browser_storms.py); and a part's state the server sent for a view the address bar no longer
says is not drawn over it (js/links.js, `drawAnswer`), but where the server writes its link after it or
the part shows nothing yet; the topic panel follows the link on every write and every Back or Forward.
Under Node (skipped only where Node is not installed)."""

from __future__ import annotations

from tests.helpers import node_test


def test_a_late_write_of_a_link_left_by_back_or_forward_is_not_made(tmp_path):
    assert node_test(tmp_path, "stale_writes.test.mjs", ("zoom.js", "links.js", "view.js")) == 12
