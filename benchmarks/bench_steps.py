"""Each kind of step a reader takes, timed to page idle, each against a bare Streamlit page's rerun
measured in the same run (its ratio: the target is 2.5× at most).

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_steps.py --maps DIR [DIR ...] [--repeat 3] [--uncomposited]
        [--compare CHECKOUT] [--out FILE]

For each map a fresh `streamlit run` serves it and headless Chromium (1400x900), after first paint:
types a word and presses Enter (search; "learning"), then another ("graph": search again, with the
highlights' chart already made), empties the box and presses Enter (clear: the whole map again),
picks the first option of the sidebar's first filter (Themes or Topics) (filter), goes Back in the
browser (history: the whole map again, as the link before the filter), clicks a paper on the map
(click), closes it with "Back to the topic list" beside the map (close), opens the first topic of the topic list (topic), goes back to the list with the panel's
button (back), goes Back in the browser (topic history: the topic open again), presses the opened
topic's "Only this topic" (only: its papers alone, the topic kept open; Back in the browser after), clicks the first
entry of the map's key (key topic, on a map with themes: that theme alone, the topic kept open in it or
closed; clicked again after), returns to the list, clicks the first entry of the map's key (key,
on a map with themes: that theme alone), then the second (key other: that theme alone in its place;
clicked again after), ticks the first topic of the topic list (tick: its papers alone), then the
second (tick more: both topics'; "Show all topics" after), opens "Filter by …" above the list and
presses the first value of the column coloured by below, else its first value (chip: that value's
papers alone; pressed again after), presses it again
with the first topic ticked (chip ticked: both filters; both dropped after), opens the map coloured by its first column with few values and clicks the
first entry of its key (key value: that value alone; clicked again after), turns the papers table to its second page
(page: until it says "page 2 of"), pans the whole map by 2% three times (pan frame: until two frames
have passed, timed in the page, the median of the three), and drags a box over the middle of the map
with the modebar's Box Select (box, timed from letting go of the mouse button), then presses the
papers table's "Clear selection" (clear selection). Each is timed from the action until the map has
redrawn (a box: has taken the server's answer in, the drawn box among it), the server has answered
any message the page sent for it (a step the browser draws itself may still tell the server), and
Streamlit is idle again (the script not running and no element of the previous run left stale); the
bytes and messages the page received over the WebSocket are counted.
Medians of `--repeat` rounds. The same run measures the floor, a bare Streamlit page with only a
Search box and a header, searched and cleared the same way (the steps' ratios are to this rerun), and
for each map a filter's floor: the first option picked in the bare page's sidebar multiselect of as many
options as the map's first filter, until the page counts it. With `--uncomposited` this checkout
again, its map's WebGL canvases drawn but left out of the page's frames (`UNCOMPOSITED`: what the
steps take without this GPU-less machine's read-back of them). With `--compare` another checkout of
the app (a worktree of an earlier commit) on the same maps; the rounds alternate (floor, this
checkout, the other; the next round the other first) so that a busy spell on the machine, and what the
first to go pays once (files read cold, the search's model loaded), fall on all of them. Results are appended to `--out`
(benchmarks/STEPS_RESULTS.md) with the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.data import facet_columns  # noqa: E402
from app.palette import colour_columns  # noqa: E402
from app.themes import usable_themes  # noqa: E402
from benchmarks.bench_million import GRAPH, IDLE, PAN_FRAME, append_results, draws  # noqa: E402
from pipeline.mapfolder.files import PAPERS, THEMES, TOPICS  # noqa: E402
from pipeline.mapfolder.manifest import read_manifest  # noqa: E402
from tests.devserver import StreamlitServer  # noqa: E402
from tests.test_browser import point_position  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
STEPS = (
    "search",
    "search again",
    "clear",
    "filter",
    "history",
    "click",
    "close",
    "topic",
    "back",
    "topic history",
    "only",
    "tick",
    "tick more",
    "chip",
    "chip ticked",
    "key topic",
    "key",
    "key other",
    "key value",
    "page",
    "pan",
    "box",
    "clear selection",
)
NAMES = {
    "search": "search",
    "search again": "search again",
    "clear": "clear the search",
    "filter": "filter",
    "history": "Back in the browser",
    "click": "click a point",
    "close": "close the paper (Back to the topic list)",
    "topic": "open a topic",
    "back": "back to the list",
    "topic history": "Back in the browser, to a topic",
    "only": "Only this topic",
    "tick": "tick a topic in the list",
    "tick more": "tick another topic",
    "chip": "a value pressed in the list (Filter by)",
    "chip ticked": "a value pressed, a topic ticked",
    "page": "next page of the table",
    "key topic": "click in the key, a topic open",
    "key": "click in the key",
    "key other": "another entry of the key in its place",
    "key value": "click in the key, coloured by a column",
    "pan": "pan frame",
    "box": "box selection",
    "clear selection": "Clear selection",
}
# The floor: a bare Streamlit page (a Search box and a header that counts its letters), searched the same
# way; and, for a filter, the sidebar's multiselect alone (as many options as the map's first filter, the
# link's `options`) and a line that counts the options chosen.
FLOOR_APP = """
import streamlit as st

st.set_page_config(layout="wide")
words = st.text_input("Search")
st.markdown(f"#### Papers · {len(words)}")
with st.sidebar:
    n = int(st.query_params.get("options", "0"))
    chosen = st.multiselect("Topics", range(n), format_func=lambda t: f"Topic {t} ({7 * t:,})", select_all=False)
st.markdown(f"Chosen · {len(chosen)}")
"""
MULTISELECT = "[data-testid='stSidebar'] [data-testid='stMultiSelect']"


def first_filter_option(page):
    """The sidebar's first filter opened: its first option, ready to be picked (the filter step)."""
    page.locator(MULTISELECT).first.click()
    option = page.get_by_role("option").first
    option.wait_for(timeout=60_000)
    return option


def press(page, locator):
    """A click on `locator` at the place it is drawn now: the step, without Playwright's waiting for
    the element to be ready (which would be timed with it)."""
    locator.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=120_000)
    box = locator.bounding_box()
    return lambda: page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def point_click(page):
    """The pointer over a paper of the first topic, its hover box shown: the click on it (the step)."""
    row = page.evaluate(  # as either version of map.js keeps its groups
        f"(g => (g.groups || g)[1].rows[0])(document.querySelector('{GRAPH}').atlasTable.groupings.get(''))"
    )
    page.mouse.move(*point_position(page, row))
    page.wait_for_selector(".hoverlayer .hovertext", timeout=60_000)
    return lambda: (page.mouse.down(), page.mouse.up())


def settle(page, action) -> None:
    """Do `action` (a step between the measured ones) and wait until Streamlit is idle again."""
    action()
    page.wait_for_timeout(500)
    page.wait_for_function(IDLE, timeout=120_000)


def start_box(page) -> None:
    """Choose the modebar's Box Select and drag a box over the middle fifth of the map, the mouse
    button still down (the step is letting go of it)."""
    page.locator(f"{GRAPH} .modebar-btn[data-val='select']").click()
    area = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
    x0, y0 = area["x"] + 0.4 * area["width"], area["y"] + 0.4 * area["height"]
    x1, y1 = area["x"] + 0.6 * area["width"], area["y"] + 0.6 * area["height"]
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=4)
    page.mouse.move(x1, y1, steps=4)


def shown(page, action, text: str) -> float:
    """Seconds from the action until an element of the page says `text` and Streamlit is idle (for a
    step the browser may answer without a message)."""
    started = time.perf_counter()
    action()
    page.wait_for_function(
        "(text) => [...document.querySelectorAll('p')].some((p) => p.textContent.includes(text))",
        arg=text,
        timeout=120_000,
    )
    page.wait_for_function(IDLE, timeout=120_000)
    return time.perf_counter() - started


class Wire:
    """The page's WebSocket as the steps see it: the sizes of the messages received, and whether a
    message the page sent is still unanswered."""

    def __init__(self, page) -> None:
        self.received: list[int] = []
        self.waiting = False
        page.on("websocket", self._watch)

    def _watch(self, socket) -> None:
        socket.on("framesent", lambda frame: setattr(self, "waiting", True))
        socket.on("framereceived", self._got)

    def _got(self, frame) -> None:
        self.received.append(len(frame))
        self.waiting = False


def redrawn(page, action, wire: Wire) -> tuple[float, int]:
    """Seconds from the action until the map redrew, the server answered what the page sent for the
    step (if anything) and Streamlit is idle, and the bytes received. Idle alone is not enough: a step
    the browser draws itself can be idle before the server has even been told."""
    before_draws, before_bytes = draws(page), sum(wire.received)
    wire.waiting = False
    started = time.perf_counter()
    action()
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before_draws}", timeout=120_000
    )
    while wire.waiting:
        page.wait_for_timeout(5)
        if time.perf_counter() - started > 120:
            raise TimeoutError("the server did not answer")
    page.wait_for_function(IDLE, timeout=120_000)
    return time.perf_counter() - started, sum(wire.received) - before_bytes


# `--uncomposited`: the map's WebGL canvases drawn but left out of the page's frames, so that a step no
# longer pays this machine's software compositor to read them back (`GLES2::ReadPixels`, which a GPU
# does not pay): what the steps would take with the map composited for free.
UNCOMPOSITED = ".atlas-map-chart canvas { visibility: hidden !important; }"


def opened(page, url: str, uncomposited: bool) -> None:
    """`url` opened and drawn, Streamlit idle."""
    page.goto(url)
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=600_000
    )
    page.wait_for_function(IDLE, timeout=600_000)
    if uncomposited:
        page.add_style_tag(content=UNCOMPOSITED)


def one_round(browser, url: str, tally: Tally, uncomposited: bool = False, colour: str | None = None) -> None:
    times, sizes, counts = tally.times, tally.sizes, tally.counts
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    wire = Wire(page)
    received = wire.received
    opened(page, url, uncomposited)
    box = page.get_by_role("textbox", name="Search")

    def search(text):
        box.fill(text)  # before the step, as on the bare page: the step is pressing Enter
        return lambda: box.press("Enter")

    def record(step, action, until=None):
        messages, before = len(received), sum(received)
        if until is not None:
            seconds, size = shown(page, action, until), sum(received) - before
        else:
            seconds, size = redrawn(page, action, wire)
        times[step].append(seconds)
        sizes[step].append(size)
        counts[step].append(len(received) - messages)

    record("search", search("learning"))  # the first search: the highlights' chart is made
    record("search again", search("graph"))
    record("clear", search(""))  # the whole map again
    record("filter", press(page, first_filter_option(page)))
    page.keyboard.press("Escape")  # the filter's list closed
    page.wait_for_function(IDLE, timeout=120_000)
    record("history", page.go_back)  # the whole map again, as the link before the filter says
    opened(page, url, uncomposited)  # the whole map again for the map-only steps
    record("click", point_click(page))
    record("close", press(page, page.get_by_role("button", name="Back to the topic list")))
    panel = page.locator(".atlas-panel-list .atlas-topic")  # the topic panel (js/panel.js) ...
    page.wait_for_timeout(500)
    if panel.count():
        record("topic", press(page, panel.first))
        record("back", press(page, page.locator(".atlas-panel-topic .atlas-back")))
        page.wait_for_function(IDLE, timeout=120_000)
        record("topic history", page.go_back)  # the topic open again
        only = page.locator(".atlas-panel-topic .atlas-only")
        if only.is_visible():  # its papers alone, then Back to the topic open without the filter
            record("only", press(page, only))
            settle(page, page.go_back)
        entry = page.locator(".atlas-legend button.atlas-legend-item")
        if entry.count():  # a theme picked with the topic open (kept open in its theme, else closed)
            record("key topic", press(page, entry.first))
            settle(page, press(page, entry.first))  # every theme again
        back = page.locator(".atlas-panel-topic .atlas-back")
        if back.is_visible():
            settle(page, press(page, back))
    else:  # ... or, in a checkout from before it, the topic list's table
        frame = page.locator("[data-testid='stDataFrame']").first.bounding_box()
        record(
            "topic", lambda: page.mouse.click(frame["x"] + 12, frame["y"] + 52)
        )  # the first row's checkbox
        record("back", press(page, page.get_by_role("button", name="Back to the topic list")))
    entry = page.locator(".atlas-legend button.atlas-legend-item")
    if entry.count():  # a map with themes: its key's entries show one theme alone
        record("key", press(page, entry.first))
        alone = entry.first  # the entry shown alone
        if entry.count() > 1:  # another theme in its place
            alone = entry.nth(1)
            record("key other", press(page, alone))
        settle(page, press(page, alone))  # every theme again
    tick = page.locator(".atlas-topic-list .atlas-topic-tick")  # topics' ticks (not their themes')
    if tick.count() > 1:  # the first topic of the list ticked (its papers alone), then the second with it
        record("tick", press(page, tick.first))
        record("tick more", press(page, tick.nth(1)))
        settle(page, press(page, page.locator(".atlas-ticks-clear")))  # every topic again
    summary = page.locator(".atlas-facets-summary")
    if summary.count():  # "Filter by …" opened, its first value pressed (its papers alone), again after
        settle(page, press(page, summary))
        # the first value of the column the key is coloured by below (offered by every checkout since
        # the values came), else the first offered
        of_colour = page.locator(f".atlas-chip[data-column='{colour}']")
        chip = of_colour.first if colour and of_colour.count() else page.locator(".atlas-chip").first
        record("chip", press(page, chip))
        settle(page, press(page, chip))
        if tick.count() > 1:  # the same value pressed over a topic ticked: both filters at once
            tick.first.scroll_into_view_if_needed()  # under the values, in the panel's scrolled list
            settle(page, press(page, tick.first))
            chip.scroll_into_view_if_needed()
            record("chip ticked", press(page, chip))
            settle(page, press(page, chip))
            every = page.locator(".atlas-ticks-clear")
            every.scroll_into_view_if_needed()
            settle(page, press(page, every))
    if colour:  # the map coloured by a column: its key's entries show one value alone
        opened(page, f"{url}?colour={colour}", uncomposited)
        entry = page.locator(".atlas-legend button.atlas-legend-item")
        record("key value", press(page, entry.first))
        settle(page, press(page, entry.first))  # every value again
        opened(page, url, uncomposited)
    forward = page.get_by_role("button", name=re.compile(r"^Next"))
    forward.scroll_into_view_if_needed()  # the table is under the map
    record("page", press(page, forward), until="page 2 of")
    page.locator(GRAPH).scroll_into_view_if_needed()  # the map in sight again for the pan and the box
    times["pan"].append(page.evaluate(PAN_FRAME) / 1000)
    sizes["pan"].append(0)
    counts["pan"].append(0)
    start_box(page)
    record("box", page.mouse.up)
    page.get_by_text("Selected on the map", exact=False).first.wait_for(timeout=60_000)
    clear = page.get_by_role("button", name="Clear selection")
    clear.scroll_into_view_if_needed()  # the table's head, under the map
    record("clear selection", press(page, clear))
    page.close()


def floor_round(browser, url: str, tally: Tally, options: int, picked: Tally) -> None:
    """Search and clear on the bare page, timed to idle the same way (no map to wait for: its header);
    then the first of `options` picked in its sidebar's multiselect (until the page counts it), into
    `picked`."""
    times, sizes, counts = tally.times, tally.sizes, tally.counts
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    wire = Wire(page)
    received = wire.received
    page.goto(f"{url}?options={options}")
    box = page.get_by_role("textbox", name="Search")
    box.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    for step, text in (("search", "learning"), ("search again", "graph"), ("clear", "")):
        box.fill(text)
        before, messages = sum(received), len(received)
        started = time.perf_counter()
        box.press("Enter")
        page.get_by_text(f"Papers · {len(text)}", exact=True).wait_for(timeout=60_000)
        page.wait_for_function(IDLE, timeout=60_000)
        times[step].append(time.perf_counter() - started)
        sizes[step].append(sum(received) - before)
        counts[step].append(len(received) - messages)
    option = first_filter_option(page)
    before, messages = sum(received), len(received)
    picked.times["filter"].append(shown(page, press(page, option), "Chosen · 1"))
    picked.sizes["filter"].append(sum(received) - before)
    picked.counts["filter"].append(len(received) - messages)
    page.close()


class Tally:
    """Each step's times, bytes and messages over the rounds of one app on one map."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {s: [] for s in STEPS}
        self.sizes: dict[str, list[int]] = {s: [] for s in STEPS}
        self.counts: dict[str, list[int]] = {s: [] for s in STEPS}

    def medians(self) -> dict[str, tuple[float, float, float]]:
        """(seconds, KB, messages) of each step measured."""
        return {
            s: (
                statistics.median(self.times[s]),
                statistics.median(self.sizes[s]) / 1000,
                statistics.median(self.counts[s]),
            )
            for s in STEPS
            if self.times[s]
        }


def filter_options(folder: Path) -> int:
    """How many options the map's first sidebar filter offers: its themes, else its topics and
    "Unassigned" (as `app.controls.sidebar` draws them)."""
    topics = pd.read_parquet(folder / TOPICS)
    themes = pd.read_parquet(folder / THEMES) if (folder / THEMES).exists() else None
    if usable_themes(topics, themes) is not None:
        return len(themes)
    return len(topics) + (1 if read_manifest(folder).unassigned else 0)


def colour_column(folder: Path) -> str | None:
    """The first column the map can be coloured by (`app.palette.colour_columns`), if any."""
    columns = colour_columns(facet_columns(pd.read_parquet(folder / PAPERS)))
    return columns[0] if columns else None


def launch(playwright):
    """Debian's headless Chromium as the tests drive it (no sandbox, no GPU, no background network)."""
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)


def serve(folder: Path, script: Path) -> StreamlitServer:
    return StreamlitServer(folder, Path(tempfile.mkdtemp()), timeout=300, script=script)


def cell(result: tuple, floor: float) -> str:
    """A step's median, its ratio to the bare page's rerun, KB and messages received."""
    seconds, kb, messages = result
    return f"{seconds:.2f} s · **{seconds / floor:.1f}×** · {kb:,.0f} KB · {messages:.0f} msgs"


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
    parser.add_argument(
        "--uncomposited",
        action="store_true",
        help="also this checkout with the map's canvases left out of the page's frames (no read-back)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "STEPS_RESULTS.md")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    apps = [("this checkout", REPO / "streamlit_app.py", False)]
    if args.uncomposited:
        apps.append(("this checkout, the map's canvases not composited", REPO / "streamlit_app.py", True))
    if args.compare:
        apps.append((f"`{args.compare}`", args.compare.resolve() / "streamlit_app.py", False))
    rows = []
    with sync_playwright() as playwright:
        browser = launch(playwright)
        floor_script = Path(tempfile.mkdtemp()) / "floor_app.py"
        floor_script.write_text(FLOOR_APP)
        floor_server, floor = serve(REPO, floor_script), Tally()
        measured, filter_floors = [], []
        try:
            for folder in args.maps:
                papers, options = read_manifest(folder).papers, filter_options(folder)
                colour = colour_column(folder)
                print(f"measuring {folder} ({papers:,} papers)...", file=sys.stderr)
                servers = [(label, serve(folder, script), Tally(), hide) for label, script, hide in apps]
                picked = Tally()  # the bare page's multiselect, with this map's number of options
                try:  # the apps' rounds alternate, with a round of the bare page's, so load falls on all;
                    # each round in the other order (who goes first pays for files read cold, a model loaded)
                    for round_ in range(args.repeat):
                        floor_round(browser, floor_server.url, floor, options, picked)
                        for _, server, tally, hide in servers[:: -1 if round_ % 2 else 1]:
                            one_round(browser, server.url, tally, hide, colour)
                finally:
                    for _, server, _, _ in servers:
                        server.stop()
                measured += [(label, papers, tally.medians()) for label, _, tally, _ in servers]
                filter_floors.append((papers, options, picked.medians()["filter"]))
        finally:
            floor_server.stop()
        reruns = ("search", "search again", "clear")
        bare = statistics.median(t for s in reruns for t in floor.times[s])  # the bare page's rerun
        rows.append(
            "| bare Streamlit page (floor) | – | "
            + " | ".join(cell(floor.medians()[s], bare) if s in reruns else "–" for s in STEPS)
            + " |"
        )
        for papers, options, result in filter_floors:
            rows.append(
                f"| bare page, its sidebar's multiselect of {options:,} options (a filter's floor) | {papers:,} | "
                + " | ".join(cell(result, bare) if s == "filter" else "–" for s in STEPS)
                + " |"
            )
        for label, papers, result in measured:
            rows.append(
                f"| {label} | {papers:,} | "
                + " | ".join(cell(result[s], bare) if s in result else "–" for s in STEPS)
                + " |"
            )
        browser.close()
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (2 shared cores)",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_steps.py --maps {' '.join(str(m) for m in args.maps)} "
        f"--repeat {args.repeat}{' --uncomposited' if args.uncomposited else ''}"
        f"{f' --compare {args.compare}' if args.compare else ''}`. Action until the map "
        "has redrawn (a box selection: has taken the server's answer in), the server answered and Streamlit "
        "is idle (script not running, no stale element), median (a pan frame: two frames after the move, "
        f"timed in the page); its ratio to the bare page's rerun ({bare:.3f} s, the "
        "median of its searches and clears in this run; target ≤ 2.5×); KB and messages received over the "
        "WebSocket.",
        "",
        "| app | papers | " + " | ".join(NAMES[s] for s in STEPS) + " |",
        "|---|---:|" + "---:|" * len(STEPS),
        *rows,
    ]
    append_results(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
