"""A million papers in the app: does the map open, draw every point, pan, zoom, search and filter?

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_million.py                     # 1,000,000 papers
    .venv/bin/python benchmarks/bench_million.py --papers 200000 --out /tmp/r.md
    .venv/bin/python benchmarks/bench_million.py --map /work/maps/synthetic-1000000   # a map already written
    .venv/bin/python benchmarks/bench_million.py --map DIR --app /tmp/before   # another checkout's app (before/after)

The map is synthetic (`bench_app.synthesise_map`: real abstracts from the shared corpus, repeated past
its 81,671 rows, with synthetic topics, coordinates and 384-d embeddings), written once into
`--synthetic-dir`. One `streamlit run` serves it; headless Chromium (software WebGL) opens it and:

- first paint: from the request until the map has drawn (the component counts its draws);
- points drawn: the papers in the chart's traces (a big map draws a sample of at most the draw cap
  per view, `app.map_component.payload.DRAW_CAP`; an older checkout drew every paper);
- pan and zoom: a drag and a Ctrl+wheel on the map, timed until the chart has moved;
- search and filter reruns: Enter in Search / a click on the largest topic in the Topics filter,
  until the map has redrawn and Streamlit is idle again;
- bytes per rerun: what the page received over Streamlit's WebSocket for each rerun;
- memory: the server's resident memory (its process tree) after the map is open, the browser's
  (the tree of the Chromium this script launched) and the page's JavaScript heap.

Results are appended as a Markdown section to `--out` (benchmarks/MILLION_RESULTS.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_app import synthesise_map  # noqa: E402
from pipeline.mapfolder.manifest import read_manifest  # noqa: E402
from tests.devserver import StreamlitServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CORPUS = REPO.parent / "shared" / "corpus" / "ml_abstracts.parquet"
GRAPH = ".atlas-map-graph"
# Streamlit has finished: the script is not running (the app root's data-test-script-state) and no
# element of the previous run is still waiting to be replaced (data-stale). The status widget's running
# icon cannot tell: with client.toolbarMode = "viewer" it is never shown.
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app && app.dataset.testScriptState === 'notRunning' && !document.querySelector('[data-stale="true"]');
}"""


def append_results(out: Path, lines: list[str]) -> None:
    """Append a results section to `out` (a Markdown file of earlier runs) and print it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as handle:
        handle.write("\n".join(lines) + "\n\n")
    print("\n".join(lines))


def tree_rss_mb(pid: int, field: str = "VmRSS:") -> float:
    """Resident memory of a process and all its descendants, in MB (from /proc); `field` "RssAnon:"
    for its anonymous part alone (without mapped files: vectors and abstracts the kernel may drop)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith(field):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def browser_pid(user_data: Path) -> int | None:
    """The Chromium browser process started with `user_data` as its profile."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "chrom" in line and f"--user-data-dir={user_data}" in line and "--type=" not in line:
                return int(entry.name)
    return None


# One frame of a pan on the whole map: the view moved by 2% (as a drag's step does) until two frames
# have passed, in ms; the median of three, a second and a half apart (a pan's end draws a new sample).
PAN_FRAME = f"""async () => {{
    const gd = document.querySelector('{GRAPH}'), out = [];
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    for (let k = 0; k < 3; k++) {{
        const x = gd.layout.xaxis.range, dx = (x[1] - x[0]) * 0.02, t0 = performance.now();
        await window.Plotly.relayout(gd, {{'xaxis.range': [x[0] + dx, x[1] + dx]}});
        await frames();
        out.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 1500));
    }}
    return out.sort((a, b) => a - b)[1];
}}"""


def draws(page) -> int:
    return int(page.evaluate(f"document.querySelector('{GRAPH}').dataset.atlasDraws || 0"))


def rerun(page, action, received: list[int]) -> tuple[float, int]:
    """Seconds from the action until the map redrew and Streamlit is idle, and the bytes received."""
    before_draws, before_bytes = draws(page), sum(received)
    started = time.perf_counter()
    action()
    page.wait_for_function(
        f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before_draws}", timeout=120_000
    )
    page.wait_for_function(IDLE, timeout=120_000)
    return time.perf_counter() - started, sum(received) - before_bytes


def measure(folder: Path, app: Path = REPO) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {}
    log = open(Path(tempfile.gettempdir()) / "bench-million-server.log", "w")  # noqa: SIM115
    started = time.perf_counter()
    server = StreamlitServer(
        folder, Path(tempfile.mkdtemp()), script=app / "streamlit_app.py", log=log, timeout=120
    )
    out["server_idle_mb"] = tree_rss_mb(server.process.pid)
    try:
        with sync_playwright() as playwright:
            profile = Path(tempfile.mkdtemp(prefix="bench-million-profile-"))
            context = playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=CHROMIUM,
                headless=True,
                viewport={"width": 1400, "height": 900},
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--enable-precise-memory-info",
                ],
            )
            page = context.new_page()
            received: list[int] = []
            page.on(
                "websocket",
                lambda ws: ws.on(
                    "framereceived", lambda f: received.append(len(f) if isinstance(f, bytes | str) else 0)
                ),
            )
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            opened = time.perf_counter()
            page.goto(server.url, timeout=120_000)
            page.wait_for_function(
                f"() => document.querySelector('{GRAPH}')?.dataset.atlasDraws >= 1 || "
                "document.querySelector('.atlas-map-error:not([hidden])')",
                timeout=900_000,
            )
            out["first_paint_s"] = time.perf_counter() - opened
            out["server_start_to_paint_s"] = time.perf_counter() - started
            failed = page.evaluate(
                "document.querySelector('.atlas-map-error:not([hidden])')?.textContent || ''"
            )
            if failed:
                out["error"] = failed
                return out
            page.wait_for_function(IDLE, timeout=120_000)
            out["points_drawn"] = page.evaluate(
                f"document.querySelector('{GRAPH}')._fullData.filter(t => t.visible === true)"
                ".reduce((n, t) => n + t.x.length, 0)"
            )
            out["first_draw_ms"] = int(
                page.evaluate(f"document.querySelector('{GRAPH}').dataset.atlasApplyMs")
            )
            out["server_open_mb"] = tree_rss_mb(server.process.pid)
            out["server_open_anon_mb"] = tree_rss_mb(server.process.pid, "RssAnon:")
            page.wait_for_timeout(2000)
            frames = page.evaluate(PAN_FRAME)
            out["pan_frame_ms"] = int(frames)
            page.wait_for_function(IDLE, timeout=120_000)
            box = page.locator(f"{GRAPH} .nsewdrag").first.bounding_box()
            cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            for name, move in (
                (
                    "pan_s",
                    lambda: (
                        page.mouse.move(cx, cy),
                        page.mouse.down(),
                        page.mouse.move(cx + 120, cy + 60, steps=4),
                        page.mouse.up(),
                    ),
                ),
                (
                    "zoom_s",
                    lambda: (
                        page.keyboard.down("Control"),
                        page.mouse.wheel(0, -400),
                        page.keyboard.up("Control"),
                    ),
                ),
            ):
                before = page.evaluate(f"document.querySelector('{GRAPH}')._fullLayout.xaxis.range.join()")
                t0 = time.perf_counter()
                move()
                page.wait_for_function(
                    f"(b) => document.querySelector('{GRAPH}')._fullLayout.xaxis.range.join() !== b",
                    arg=before,
                    timeout=120_000,
                )
                page.evaluate(
                    "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
                )
                out[name] = time.perf_counter() - t0
                page.wait_for_timeout(2500)  # the view's new sample (drawn after a pan or zoom ends) settles
                page.wait_for_function(IDLE, timeout=120_000)
            search = page.get_by_role("textbox", name="Search")

            def do_search():
                search.fill("diffusion")
                search.press("Enter")

            out["search_s"], out["search_bytes"] = rerun(page, do_search, received)
            out["search_hits"] = page.evaluate(
                f"document.querySelector('{GRAPH}')._fullData.filter(t => t.name === 'highlight')[0].x.length"
            )
            page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").nth(0).click()
            option = page.get_by_role("option").first
            option.wait_for(timeout=120_000)
            out["filter_s"], out["filter_bytes"] = rerun(page, option.click, received)
            pid = browser_pid(profile)
            out["browser_mb"] = tree_rss_mb(pid) if pid else float("nan")
            out["js_heap_mb"] = page.evaluate(
                "performance.memory ? performance.memory.usedJSHeapSize / 1048576 : NaN"
            )
            out["server_after_mb"] = tree_rss_mb(server.process.pid)
            out["server_after_anon_mb"] = tree_rss_mb(server.process.pid, "RssAnon:")
            out["errors"] = errors
            context.close()
    finally:
        server.stop()
        log.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--synthetic-dir", type=Path, default=Path(tempfile.gettempdir()) / "atlas-bench-maps"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "MILLION_RESULTS.md")
    parser.add_argument("--map", type=Path, help="a map folder already written (no synthesis)")
    parser.add_argument(
        "--app", type=Path, default=REPO, help="the checkout whose streamlit_app.py is served"
    )
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists() or (args.map is None and not args.corpus.is_file()):
        print(f"error: needs {CHROMIUM} and the corpus {args.corpus}", file=sys.stderr)
        return 2
    folder = args.map or args.synthetic_dir / f"synthetic-{args.papers}"
    if args.map is None and not (folder / "manifest.json").is_file():
        t0 = time.perf_counter()
        synthesise_map(args.corpus, folder, args.papers)
        print(f"synthesised {folder} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    load = os.getloadavg()[0]
    result = measure(folder, args.app.resolve())
    papers = read_manifest(folder).papers
    lines = [
        f"## {papers:,} papers ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_million.py {' '.join(argv if argv is not None else sys.argv[1:])}`"
        f" (app of {args.app.resolve()}). Machine: {platform.machine()}, "
        f"{os.cpu_count()} cores (shared); load average before the run {load:.1f}.",
        "",
        "| measure | value |",
        "|---|---|",
    ]
    for key, value in result.items():
        if key == "errors":
            continue
        shown = (
            f"{value:,.2f}"
            if isinstance(value, float)
            else f"{value:,}"
            if isinstance(value, int)
            else str(value)
        )
        lines.append(f"| {key} | {shown} |")
    if result.get("errors"):
        lines += ["", "Browser errors:", *[f"- {e[:200]}" for e in result["errors"][:10]]]
    append_results(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
