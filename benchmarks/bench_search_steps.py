"""The three search steps alone (search, search again, clear it), timed on one map for several checkouts,
with the map's draws and Plotly's calls counted: to tell a slower step from this machine's noise.

    python benchmarks/bench_search_steps.py --map DIR [--rounds 3] CHECKOUT [CHECKOUT ...]

Each checkout's `streamlit_app.py` is served on the map (`tests/devserver.py`), opened in Chromium,
and each round types "learning", then "graph", then clears the box, each followed by Enter. Printed
per step: seconds until the map has drawn, seconds until Streamlit is idle, the map's draws, and
Plotly's calls (`react`, `newPlot`, `relayout`, `restyle`, `update`) with their ms after Enter.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.devserver import StreamlitServer  # noqa: E402
from tests.helpers import CHROMIUM, GRAPH  # noqa: E402

IDLE = """() => { const app = document.querySelector('[data-testid="stApp"]');
  return app && app.dataset.testScriptState === 'notRunning' && !document.querySelector('[data-stale="true"]'); }"""
COUNT_CALLS = """() => { window.__calls = []; for (const f of ['react', 'newPlot', 'relayout', 'restyle', 'update']) {
  const g = Plotly[f]; Plotly[f] = function (...a) { window.__calls.push([f, performance.now()]); return g.apply(this, a); }; } }"""
DRAWS = f"() => Number(document.querySelector('{GRAPH}')?.dataset.atlasDraws ?? 0)"


def one_round(page, name: str) -> None:
    box = page.get_by_role("textbox", name="Search")
    for text in ("learning", "graph", ""):
        box.fill(text)
        page.wait_for_timeout(500)
        page.evaluate(COUNT_CALLS)
        before, start = page.evaluate(DRAWS), page.evaluate("performance.now()")
        started = time.perf_counter()
        box.press("Enter")
        page.wait_for_function(f"() => ({DRAWS})() > {before}", timeout=120_000)
        drawn = time.perf_counter() - started
        page.wait_for_function(IDLE, timeout=120_000)
        settled = time.perf_counter() - started
        calls = [(f, round(t - start)) for f, t in page.evaluate("window.__calls")]
        draws = page.evaluate(DRAWS) - before
        print(
            f"{name}\t{text or '(cleared)'}\tdrawn {drawn:.2f} s\tidle {settled:.2f} s\tdraws {draws}\t{calls}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("checkouts", type=Path, nargs="+")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as empty:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        for checkout in args.checkouts:
            app = StreamlitServer(args.map, Path(empty), script=checkout / "streamlit_app.py", timeout=120)
            try:
                for _ in range(args.rounds):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    page.goto(app.url)
                    page.wait_for_function(f"() => ({DRAWS})() >= 1", timeout=600_000)
                    page.wait_for_function(IDLE, timeout=600_000)
                    one_round(page, str(checkout))
                    page.close()
            finally:
                app.stop()


if __name__ == "__main__":
    main()
