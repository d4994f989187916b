"""In a real browser, no shared link or map text puts a live link on the page (issue 29): Streamlit's
Markdown links web and e-mail addresses even when escaped, so the page itself is asked for links."""

from __future__ import annotations

import pytest

from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import open_app, tiny_map

pytestmark = pytest.mark.browser
EVIL_LINKS = "a[href*='evil.com'], img[src*='evil.com'], .katex"


@pytest.fixture(scope="module")
def evil_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-links")
    titles = ["Read www.evil.com now", "Mail me@evil.com"] + [f"Paper {i}" for i in range(2, 60)]
    atlas = tiny_map(titles=titles, labels=["https://evil.com/x", "B www.evil.com", "C", "D"])
    write_map(root / "evil", atlas)
    app = StreamlitServer(root / "evil", root / "no-other-maps", timeout=60)
    yield app, atlas
    app.stop()


@pytest.mark.parametrize(
    "query",
    [
        "?q=www.evil.com%20https://evil.com/x",
        "?paper=https://evil.com/x&topic=www.evil.com",
        "?paper=0000000000000000000&q=%24x%5E2%24%20me%40evil.com",
    ],
)
def test_a_shared_link_puts_no_live_link_on_the_page(page, evil_app, query):  # noqa: F811
    app, atlas = evil_app
    url = app.url.rstrip("/") + "/" + query.replace("0000000000000000000", atlas.papers["doc_id"][0])
    open_app(page, url)
    page.get_by_text("evil", exact=False).first.wait_for(timeout=30_000)  # the text is shown, as text
    found = page.evaluate(
        f"[...document.querySelectorAll({EVIL_LINKS!r})].map((e) => e.outerHTML.slice(0, 200))"
    )
    assert found == []
