"""Where the browser's time goes in one step: a Chrome trace of the step on a freshly loaded page,
the page's main thread's time by trace event, its long tasks and what ran in them, and the other
threads' time (the GPU process's SwiftShader among them).

Usage (from the repository root):

    .venv/bin/python benchmarks/trace_step.py --map DIR --step {search,clear,topic,click,filter,history,key,box,unbox}
        [--query QUERY] [--cpu]

The step is taken as `bench_steps.py` takes it (headless Chromium at 1400x900, after first paint):
"learning" typed and Enter pressed (clear: then emptied and Enter pressed); the topic list's first topic clicked; a paper of the first
topic clicked on the map; the sidebar's first filter's first option picked; a box dragged over the
middle fifth of the map, let go; the papers table's Clear selection after that box (unbox); Back in the browser after the filter; the key's first entry
clicked (`--query colour=field`: the page opened with that link, here a key of the column's values). The trace runs from the action until the map has redrawn (a box: has taken the server's
answer in) and Streamlit is idle. Nothing is written: it prints. Tracing slows the page, so the
step's time here is longer than bench_steps' (read it beside a bench_steps run).

`--cpu`: Chrome's CPU profile of the page's scripts instead of the trace (sampled every 0.1 ms): the
functions by their own time, and by their time with what they call (map.js's by name; Plotly's and
Streamlit's minified), which is where a step's script time goes.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_million import GRAPH, IDLE, draws  # noqa: E402
from benchmarks.bench_steps import first_filter_option, point_click, press, start_box  # noqa: E402
from tests.devserver import StreamlitServer  # noqa: E402

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "gpu"]


def prepare(page, step: str):
    """Get the page ready for `step` and return the action that takes it."""
    if step in ("search", "clear"):
        box = page.get_by_role("textbox", name="Search")
        box.fill("learning")
        if step == "search":
            return lambda: box.press("Enter")
        box.press("Enter")  # searched; the step is clearing it
        page.wait_for_timeout(500)
        page.wait_for_function(IDLE)
        box.fill("")
        return lambda: box.press("Enter")
    if step == "box":
        start_box(page)
        return page.mouse.up
    if step == "unbox":  # the papers table's Clear selection after a box, as bench_steps takes it
        start_box(page)
        page.mouse.up()
        page.wait_for_timeout(500)
        page.wait_for_function(IDLE)
        clear = page.get_by_role("button", name="Clear selection")
        clear.scroll_into_view_if_needed()
        return press(page, clear)
    if step == "history":  # Back in the browser after a filter, as bench_steps takes it
        filtering = prepare(page, "filter")
        before = draws(page)
        filtering()
        page.wait_for_function(f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before}")
        page.keyboard.press("Escape")
        page.wait_for_timeout(300)
        page.wait_for_function(IDLE)
        return page.go_back
    if step == "topic":
        return press(page, page.locator(".atlas-panel-list .atlas-topic").first)
    if step == "key":
        return press(page, page.locator(".atlas-legend button.atlas-legend-item").first)
    if step == "click":
        return point_click(page)
    return press(page, first_filter_option(page))


def report(trace: dict) -> None:
    events = trace["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    main = sorted(
        (e for e in events if e.get("ph") == "X" and names.get((e["pid"], e["tid"])) == "CrRendererMain"),
        key=lambda e: e["ts"],
    )
    total, count = collections.Counter(), collections.Counter()
    for e in main:
        total[e["name"]] += e.get("dur", 0) / 1000
        count[e["name"]] += 1
    print("main thread, ms by event:")
    for name, ms in total.most_common(14):
        print(f"  {ms:7.1f} ms {count[name]:4d}× {name}")
    start = main[0]["ts"]
    print("long tasks (over 8 ms) and what took over 4 ms in them:")
    for task in main:
        if task["name"] != "RunTask" or task.get("dur", 0) <= 8000:
            continue
        print(f"  at {(task['ts'] - start) / 1000:4.0f} ms: {task['dur'] / 1000:3.0f} ms")
        for inner in main:
            inside = task["ts"] <= inner["ts"] <= task["ts"] + task["dur"] and inner is not task
            if inside and inner.get("dur", 0) > 4000 and inner["name"] != "RunTask":
                data = inner.get("args", {}).get("data", {})
                what = data.get("functionName") or data.get("url", "")[-40:] or data.get("type", "")
                print(
                    f"      +{(inner['ts'] - task['ts']) / 1000:3.0f} {inner['dur'] / 1000:3.0f} ms {inner['name']} {what}"
                )
    other = collections.Counter()
    for e in events:
        thread = names.get((e.get("pid"), e.get("tid")))
        if e.get("ph") == "X" and thread and thread != "CrRendererMain":
            other[thread] += e.get("dur", 0) / 1000
    print("other threads, ms:", ", ".join(f"{name} {ms:.0f}" for name, ms in other.most_common(5)))


def label(node: dict) -> str:
    frame = node["callFrame"]
    return f"{frame['functionName'] or '(anonymous)'} {frame['url'].split('/')[-1][:24]}:{frame['lineNumber'] + 1}"


def report_cpu(profile: dict, top: int = 25) -> None:
    """The profile's functions by their own time, then by their time with what they call (a function
    counted once a sample, however deep it recurses)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    spent = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        spent[sample] += delta / 1000
    own, inclusive = collections.Counter(), collections.Counter()
    for node, ms in spent.items():
        own[label(nodes[node])] += ms
        seen = set()
        while node is not None:
            name = label(nodes[node])
            if name not in seen:
                inclusive[name] += ms
                seen.add(name)
            node = parent.get(node)
    for title, counter in (("own time", own), ("with what they call", inclusive)):
        print(f"functions by {title}, ms:")
        for name, ms in counter.most_common(top):
            print(f"  {ms:7.1f} {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--map", type=Path, required=True, metavar="DIR")
    parser.add_argument(
        "--step",
        choices=("search", "clear", "topic", "click", "filter", "history", "key", "box", "unbox"),
        required=True,
    )
    parser.add_argument("--query", default="", help="the link's query string to open (e.g. colour=field)")
    parser.add_argument(
        "--cpu", action="store_true", help="Chrome's CPU profile of the step instead of a trace"
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    with StreamlitServer(args.map, Path(tempfile.mkdtemp()), timeout=300) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=flags)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{server.url}?{args.query}" if args.query else server.url)
        page.wait_for_function(
            f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1", timeout=600_000
        )
        page.wait_for_function(IDLE, timeout=600_000)
        page.wait_for_timeout(1500)  # the charts made ahead while the page is idle
        action = prepare(page, args.step)
        if args.cpu:
            profiler = page.context.new_cdp_session(page)
            profiler.send("Profiler.enable")
            profiler.send("Profiler.setSamplingInterval", {"interval": 100})  # microseconds
            profiler.send("Profiler.start")
        else:
            browser.start_tracing(page=page, categories=CATEGORIES)
        before = draws(page)
        started = time.perf_counter()
        action()
        page.wait_for_function(f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before}")
        page.wait_for_timeout(30)
        page.wait_for_function(IDLE)
        seconds = time.perf_counter() - started
        profile = profiler.send("Profiler.stop")["profile"] if args.cpu else None
        trace = None if args.cpu else json.loads(browser.stop_tracing())
        browser.close()
    print(f"{args.step} on {args.map.name}: {seconds:.3f} s to idle, {'profiled' if args.cpu else 'traced'}")
    if profile is not None:
        report_cpu(profile)
    else:
        report(trace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
