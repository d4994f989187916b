"""Each kind of step a reader takes, timed to page idle: search and filter (whole page) against the
map-only steps (a click on a point, a topic opened from the list), which rerun only the map and the
panel beside it.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_steps.py --maps DIR [DIR ...] [--repeat 3] [--compare CHECKOUT] [--out FILE]

For each map a fresh `streamlit run` serves it and headless Chromium (1400x900), after first paint:
types a word and presses Enter (search; "learning"), then another ("graph": search again, with
the highlights' chart already made), empties the box and presses Enter (clear: the whole map
again), picks the first option of the sidebar's first filter (Themes or Topics) (filter), clicks a
paper on the map (click), and opens the first topic of the topic list (topic). Each is timed from the
action until the map has redrawn and Streamlit is idle again (the script not running and no element
of the previous run left stale), and the bytes the page received over the WebSocket are counted.
Medians of `--repeat` rounds. The same run measures the floor, a bare Streamlit page with only a
Search box and a header, searched and cleared the same way, and with `--compare` another checkout of
the app (a worktree of an earlier commit) on the same maps. Results are appended to `--out`
(benchmarks/STEPS_RESULTS.md) with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_million import GRAPH, IDLE, append_results, rerun  # noqa: E402
from pipeline.mapfolder.manifest import read_manifest  # noqa: E402
from tests.devserver import StreamlitServer  # noqa: E402
from tests.test_browser import point_position  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
STEPS = ("search", "search again", "clear", "filter", "click", "topic")
# The floor: a bare Streamlit page (a Search box and a header that counts its letters), searched the same way.
FLOOR_APP = """
import streamlit as st

st.set_page_config(layout="wide")
words = st.text_input("Search")
st.markdown(f"#### Papers · {len(words)}")
"""


def settle(page, action) -> None:
    """Do `action` (a step between the measured ones) and wait until Streamlit is idle again."""
    action()
    page.wait_for_timeout(500)
    page.wait_for_function(IDLE, timeout=120_000)


def one_round(browser, url: str, times: dict, sizes: dict) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    received: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(len(f))))
    page.goto(url)
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=600_000
    )
    page.wait_for_function(IDLE, timeout=600_000)
    box = page.get_by_role("textbox", name="Search")

    def search(text):
        box.fill(text)
        box.press("Enter")

    def record(step, action):
        seconds, size = rerun(page, action, received)
        times[step].append(seconds)
        sizes[step].append(size)

    record("search", lambda: search("learning"))  # the first search: the highlights' chart is made
    record("search again", lambda: search("graph"))
    record("clear", lambda: search(""))  # the whole map again
    page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first.click()
    option = page.get_by_role("option").first
    option.wait_for(timeout=60_000)
    record("filter", option.click)
    page.goto(url)  # the whole map again for the map-only steps
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=600_000
    )
    page.wait_for_function(IDLE, timeout=600_000)
    row = page.evaluate(f"document.querySelector('{GRAPH}').atlasTable.groupings.get('').groups[1].rows[0]")
    page.mouse.move(*point_position(page, row))
    page.wait_for_selector(".hoverlayer .hovertext", timeout=60_000)
    record("click", lambda: (page.mouse.down(), page.mouse.up()))
    settle(page, page.get_by_role("button", name="Back to the topic list").click)
    frame = page.locator("[data-testid='stDataFrame']").first.bounding_box()
    record("topic", lambda: page.mouse.click(frame["x"] + 12, frame["y"] + 52))  # the first row's checkbox
    page.close()


def floor_round(browser, url: str, times: dict, sizes: dict) -> None:
    """Search and clear on the bare page, timed to idle the same way (no map to wait for: its header)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    received: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(len(f))))
    page.goto(url)
    box = page.get_by_role("textbox", name="Search")
    box.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    for step, text in (("search", "learning"), ("search again", "graph"), ("clear", "")):
        box.fill(text)
        before = sum(received)
        started = time.perf_counter()
        box.press("Enter")
        page.get_by_text(f"Papers · {len(text)}", exact=True).wait_for(timeout=60_000)
        page.wait_for_function(IDLE, timeout=60_000)
        times[step].append(time.perf_counter() - started)
        sizes[step].append(sum(received) - before)
    page.close()


def measure(
    browser, folder: Path | None, repeat: int, script: Path = REPO / "streamlit_app.py"
) -> dict[str, tuple[float, float]]:
    """Medians over `repeat` rounds of each step: (seconds, KB). `folder` None: the bare-page floor."""
    if folder is None:
        script = Path(tempfile.mkdtemp()) / "floor_app.py"
        script.write_text(FLOOR_APP)
    server = StreamlitServer(folder or REPO, Path(tempfile.mkdtemp()), timeout=300, script=script)
    times: dict[str, list[float]] = {s: [] for s in STEPS}
    sizes: dict[str, list[int]] = {s: [] for s in STEPS}
    try:
        for _ in range(repeat):
            (one_round if folder is not None else floor_round)(browser, server.url, times, sizes)
    finally:
        server.stop()
    return {s: (statistics.median(times[s]), statistics.median(sizes[s]) / 1000) for s in STEPS if times[s]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", nargs="+", type=Path, required=True, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="CHECKOUT",
        help="another checkout of the app (e.g. a worktree of an earlier commit), measured in the same run",
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "STEPS_RESULTS.md")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    apps = [("this checkout", REPO / "streamlit_app.py")]
    if args.compare:
        apps.append((f"`{args.compare}`", args.compare.resolve() / "streamlit_app.py"))
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        floor = measure(browser, None, args.repeat)
        cells = [f"{floor[s][0]:.2f} s · {floor[s][1]:,.0f} KB" if s in floor else "–" for s in STEPS]
        rows.append("| bare Streamlit page (floor) | – | " + " | ".join(cells) + " |")
        for folder in args.maps:
            papers = read_manifest(folder)["papers"]
            for label, script in apps:
                print(f"measuring {folder} ({papers:,} papers) with {label}...", file=sys.stderr)
                result = measure(browser, folder, args.repeat, script)
                rows.append(
                    f"| {label} | {papers:,} | "
                    + " | ".join(f"{result[s][0]:.2f} s · {result[s][1]:,.0f} KB" for s in STEPS)
                    + " |"
                )
        browser.close()
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (2 shared cores)",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_steps.py --maps {' '.join(str(m) for m in args.maps)} "
        f"--repeat {args.repeat}{f' --compare {args.compare}' if args.compare else ''}`. Action until the map "
        "has redrawn and Streamlit is idle (script not running, no stale element), median; and KB received "
        "over the WebSocket.",
        "",
        "| app | papers | search (whole page) | search again | clear the search (whole page) "
        "| filter (whole page) | click a point (map + panel) | open a topic (map + panel) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
    ]
    append_results(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
