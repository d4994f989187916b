"""Take the README's screenshot (`assets/screenshot.png`) of the committed seed map in headless Chromium.

    .venv/bin/python benchmarks/screenshot.py [--map assets/maps/seeds] [--out assets/screenshot.png]
        [--width 1400] [--height 900]

`make screenshot` runs it with the defaults. Serves the map with the app (tests/devserver.py), waits until
the map is drawn and the page idle, and writes a PNG of the window.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.devserver import StreamlitServer  # noqa: E402
from tests.helpers import CHROMIUM, idle, open_app  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", type=Path, default=REPO / "assets" / "maps" / "seeds")
    parser.add_argument("--out", type=Path, default=REPO / "assets" / "screenshot.png")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory() as empty,
        StreamlitServer(args.map, Path(empty)) as app,
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        open_app(page, app.url)
        idle(page)
        page.wait_for_timeout(1000)  # the names placed, the hint gone
        page.screenshot(path=str(args.out))
        browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
