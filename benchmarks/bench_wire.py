"""Bytes on the wire from the server to the browser, each reading step, with Streamlit's WebSocket
compression (permessage-deflate, `server.enableWebsocketCompression`: on in .streamlit/config.toml)
and without it, side by side in one run, with each step's time to page idle.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_wire.py --maps DIR [DIR ...] [--repeat 2] [--out FILE]

For each map two `streamlit run`s of this checkout serve it, one with the compression off (the
STREAMLIT_SERVER_ENABLE_WEBSOCKET_COMPRESSION environment variable), each behind a TCP proxy of its
own that counts the bytes the server sends on the page's WebSocket (frames, headers and all, as a
hosted reader's connection carries them: what the page's own counters, which see each message
inflated, cannot tell). Headless Chromium (1400x900) opens the map (first paint: until the map is
drawn and Streamlit is idle), then takes bench_steps' steps: a search ("learning"), clearing it, the
sidebar's first filter, a click on a paper, opening the first topic of the list, back to the list, and
a box over the middle of the map; each until the map has redrawn and Streamlit is idle. The rounds
alternate between the two servers; medians of `--repeat` rounds. Results are appended to `--out`
(benchmarks/WIRE_RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_million import GRAPH, IDLE, append_results, draws  # noqa: E402
from benchmarks.bench_steps import first_filter_option, launch, opened, point_click, press, start_box  # noqa: E402
from pipeline.mapfolder.manifest import read_manifest  # noqa: E402
from tests.devserver import StreamlitServer, free_port  # noqa: E402

STEPS = ("first paint", "search", "clear the search", "filter", "click a point", "open a topic", "back to the list", "box selection")  # fmt: skip
COMPRESSION = "STREAMLIT_SERVER_ENABLE_WEBSOCKET_COMPRESSION"


class CountingProxy:
    """A TCP proxy on a free local port in front of `port`, counting the bytes the server sends on
    WebSocket connections (those whose request asks for Streamlit's stream)."""

    def __init__(self, port: int) -> None:
        self.target, self.port, self.sent = port, free_port(), 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(10)
        self.url = f"http://127.0.0.1:{self.port}/"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        ready.set()
        self.loop.run_until_complete(server.serve_forever())

    async def _serve(self, client_in, client_out) -> None:
        server_in, server_out = await asyncio.open_connection("127.0.0.1", self.target)
        first = await client_in.read(65536)
        stream = b"/_stcore/stream" in first
        server_out.write(first)

        async def pipe(source, sink, counted: bool) -> None:
            try:
                while chunk := await source.read(65536):
                    if counted:
                        self.sent += len(chunk)
                    sink.write(chunk)
                    await sink.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(client_in, server_out, False), pipe(server_in, client_out, stream))


def settled(page, action, before_draws: int | None = None) -> float:
    """Seconds from the action until the map has redrawn (where `before_draws` is given) and Streamlit
    is idle again (after a moment, so that a step's messages have come)."""
    started = time.perf_counter()
    action()
    if before_draws is not None:
        page.wait_for_function(
            f"() => document.querySelector('{GRAPH}').dataset.atlasDraws > {before_draws}", timeout=120_000
        )
    page.wait_for_timeout(200)
    page.wait_for_function(IDLE, timeout=120_000)
    return time.perf_counter() - started - 0.2


def one_round(browser, proxy: CountingProxy, times: dict, wire: dict, payload: dict) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    inflated = [0]
    page.on(
        "websocket",
        lambda socket: socket.on("framereceived", lambda f: inflated.__setitem__(0, inflated[0] + len(f))),
    )

    def record(step: str, action, redraw: bool = True) -> None:
        sent, seen = proxy.sent, inflated[0]
        times[step].append(settled(page, action, draws(page) if redraw else None))
        wire[step].append(proxy.sent - sent)
        payload[step].append(inflated[0] - seen)

    record("first paint", lambda: opened(page, proxy.url, False), redraw=False)
    page.wait_for_timeout(1000)
    page.wait_for_function(IDLE, timeout=120_000)
    box = page.get_by_role("textbox", name="Search")
    box.fill("learning")
    record("search", lambda: box.press("Enter"))
    box.fill("")
    record("clear the search", lambda: box.press("Enter"))
    record("filter", press(page, first_filter_option(page)))
    page.keyboard.press("Escape")
    page.wait_for_function(IDLE, timeout=120_000)
    opened(page, proxy.url, False)  # the whole map again, in a fresh page state
    page.wait_for_timeout(1000)
    page.wait_for_function(IDLE, timeout=120_000)
    record("click a point", point_click(page))
    page.get_by_role("button", name="Back to the topic list").click()
    page.wait_for_timeout(500)
    page.wait_for_function(IDLE, timeout=120_000)
    record("open a topic", press(page, page.locator(".atlas-panel-list .atlas-topic").first))
    record("back to the list", press(page, page.locator(".atlas-panel-topic .atlas-back")))
    page.locator(GRAPH).scroll_into_view_if_needed()
    start_box(page)
    record("box selection", page.mouse.up)
    page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", nargs="+", type=Path, required=True, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "WIRE_RESULTS.md")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    rows = []
    with sync_playwright() as playwright:
        browser = launch(playwright)
        for folder in args.maps:
            papers = read_manifest(folder).papers
            print(f"measuring {folder} ({papers:,} papers)...", file=sys.stderr)
            runs = []
            for label, on in (("compressed (config.toml)", "true"), ("not compressed", "false")):
                server = StreamlitServer(folder, Path(tempfile.mkdtemp()), timeout=300, env={COMPRESSION: on})
                runs.append(
                    (label, server, CountingProxy(server.port), *({s: [] for s in STEPS} for _ in range(3)))
                )
            try:
                for _ in range(args.repeat):
                    for _, _, proxy, times, wire, payload in runs:
                        one_round(browser, proxy, times, wire, payload)
            finally:
                for run in runs:
                    run[1].stop()
            for label, _, _, times, wire, payload in runs:
                cells = [
                    f"{statistics.median(wire[s]) / 1000:,.0f} KB on the wire ({statistics.median(payload[s]) / 1000:,.0f} KB inflated) · "
                    f"{statistics.median(times[s]):.2f} s"
                    for s in STEPS
                ]
                rows.append(f"| {label} | {papers:,} | " + " | ".join(cells) + " |")
        browser.close()
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after (2 shared cores)",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_wire.py --maps {' '.join(map(str, args.maps))} --repeat {args.repeat}`. "
        "Bytes the server sent on the page's WebSocket for the step, counted by a TCP proxy in front of it "
        "(and the messages' own bytes as the page reads them, inflated), and the step's seconds to page idle; medians.",
        "",
        "| server | papers | " + " | ".join(STEPS) + " |",
        "|---|---:|" + "---:|" * len(STEPS),
        *rows,
    ]
    append_results(args.out, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
