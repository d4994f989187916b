"""App under load: simultaneous browser sessions on one map, each searching and filtering.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_load.py --prepare     # build benchmarks/maps/corpus-10k if missing
    .venv/bin/python benchmarks/bench_load.py                # 20 sessions on benchmarks/maps/corpus-10k
    .venv/bin/python benchmarks/bench_load.py --map DIR --sessions 20 --rounds 3

`--prepare` needs the shared corpus (default ../shared/corpus/ml_abstracts.parquet from the
repository root, or `--corpus PATH` / `ATLAS_CORPUS`): it samples 10,000 rows with a fixed seed
and builds the map with `python -m pipeline build` (about 6+ minutes of embedding on 2 cores).
Without the corpus or the map the script says so and exits 0.

One `streamlit run` serves the map. `--sessions` headless Chromium pages (each in its own browser
context, so each is its own Streamlit session) open it at the same moment; each then, `--rounds`
times: types a word into the Search box and presses Enter, and picks a topic in the sidebar's
Topics filter, waiting each time until the app has finished running. Only what a reader sees is
used (the Search box, the Topics filter, Streamlit's running state), never how the map is drawn,
so the benchmark survives a change of map component.

Reported: errors (page errors, Streamlit exception boxes, timeouts, tracebacks in the server log),
server memory (RSS of the server's process tree) before any session, after one, after all and at
peak, with the increase per session, and the rerun times (median, 95th percentile, slowest).
Results go to benchmarks/LOAD_RESULTS.md. Each browser step may take up to 10 minutes
(`BENCH_LOAD_TIMEOUT_MS`): 20 renderers on 2 shared cores are slow, and a step that still runs out
of time is reported as a browser-side timeout, apart from the app's own errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.devserver import StreamlitServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
DEFAULT_MAP = REPO / "benchmarks" / "maps" / "corpus-10k"
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "ml_abstracts.parquet"
WORDS = ["learning", "graph", "diffusion", "reinforcement", "language", "privacy", "optimization"]
TIMEOUT_MS = int(os.environ.get("BENCH_LOAD_TIMEOUT_MS", 600_000))

# Counts the app's finished runs: Streamlit marks its root with the script's state.
WATCH_RUNS = """() => {
    if (window.__atlasRuns !== undefined) return;
    window.__atlasRuns = 0;
    // Every change away from 'running' is a run ending; records keep the old value, so a run that
    // starts and ends between two observer callbacks is still counted.
    new MutationObserver((records) => {
        for (const record of records) {
            if (record.oldValue === 'running') window.__atlasRuns += 1;
        }
    }).observe(document.body, {
        attributes: true, subtree: true, attributeOldValue: true,
        attributeFilter: ['data-test-script-state'],
    });
}"""
IDLE = """() => {
    const root = document.querySelector('[data-testid="stApp"]');
    return !!root && root.getAttribute('data-test-script-state') === 'notRunning';
}"""


def process_tree_rss(pid: int) -> int:
    """Resident memory in bytes of `pid` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


class MemoryWatch:
    """Samples the server's RSS every half second in a thread; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, process_tree_rss(self.pid))
            self._stop.wait(0.5)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


async def after_run(page, action) -> float:
    """Seconds from `action` until the rerun it caused has finished."""
    before = await page.evaluate("() => window.__atlasRuns")
    started = time.perf_counter()
    await action()
    await page.wait_for_function(f"() => window.__atlasRuns > {before}", timeout=TIMEOUT_MS, polling=100)
    await page.wait_for_function(IDLE, timeout=TIMEOUT_MS, polling=100)
    return time.perf_counter() - started


async def session(browser, url: str, index: int, rounds: int, loaded: asyncio.Event, ready: list) -> dict:
    """One reader: open the map, then search and filter `rounds` times. Never raises."""
    result = {"reruns": [], "errors": [], "load": None}
    step = "opening the map"
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    # 20 renderers drawing a 10,000-point map on 2 cores are slow to act: a click may wait minutes.
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    page.on("pageerror", lambda error: result["errors"].append(f"page error: {error}"))
    try:
        started = time.perf_counter()
        await page.goto(url, timeout=TIMEOUT_MS)
        await page.evaluate(WATCH_RUNS)
        search = page.get_by_role("textbox", name="Search")
        await search.wait_for(timeout=TIMEOUT_MS)
        await page.wait_for_function(IDLE, timeout=TIMEOUT_MS, polling=100)
        result["load"] = time.perf_counter() - started
        ready.append(index)
        if len(ready) == 1:
            loaded.set()
        topics = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").filter(
            has_text="Topics"
        )
        for round_ in range(rounds):
            word = WORDS[(index + round_) % len(WORDS)]
            step = f"round {round_ + 1}: search"

            async def type_word(word=word):
                await search.fill(word)
                await search.press("Enter")

            result["reruns"].append(("search", await after_run(page, type_word)))

            async def pick_topic(choice=(index + round_) % 5):
                # Click its text box, not its middle, which may hold a chosen topic's chip.
                await topics.first.get_by_role("combobox").click()
                options = page.get_by_role("option")
                await options.first.wait_for(timeout=TIMEOUT_MS)
                count = await options.count()
                await options.nth(min(choice, count - 1)).click()

            step = f"round {round_ + 1}: topic filter"
            result["reruns"].append(("filter", await after_run(page, pick_topic)))
            await page.keyboard.press("Escape")  # close the options list
        exceptions = await page.locator("[data-testid='stException']").count()
        if exceptions:
            result["errors"].append(f"{exceptions} Streamlit exception box(es) on the page")
    except Exception as exc:  # a timeout or a missing control is a failed session, counted
        result["errors"].append(f"{type(exc).__name__} in {step}: {str(exc).splitlines()[0][:200]}")
    finally:
        await context.close()
    return result


async def run_sessions(url: str, sessions: int, rounds: int, server_pid: int) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            idle_rss = process_tree_rss(server_pid)
            # One reader first, so the map is loaded (and cached) once before the crowd arrives.
            one_loaded, ready = asyncio.Event(), []
            first = await session(browser, url, 0, 0, one_loaded, ready)
            one_rss = process_tree_rss(server_pid)
            watch = MemoryWatch(server_pid)
            started = time.perf_counter()
            results = await asyncio.gather(
                *(session(browser, url, i, rounds, asyncio.Event(), ready) for i in range(sessions))
            )
            wall = time.perf_counter() - started
            peak = watch.stop()
            all_rss = process_tree_rss(server_pid)
        finally:
            await browser.close()
    return {
        "first_load": first["load"],
        "first_errors": first["errors"],
        "results": results,
        "wall": wall,
        "rss": {"idle": idle_rss, "one": one_rss, "all": all_rss, "peak": peak},
    }


def prepare(corpus: Path, out: Path, n: int = 10_000, seed: int = 0) -> int:
    """Build the `n`-paper map from a fixed-seed sample of `corpus` (skipped when `out` holds a map)."""
    if (out / "manifest.json").is_file():
        print(f"{out}: already a map; nothing to prepare")
        return 0
    if not corpus.is_file():
        print(f"{corpus}: corpus not found (give --corpus or ATLAS_CORPUS); nothing prepared")
        return 0
    import pandas as pd

    sample = out.parent / f"{out.name}-input.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.read_parquet(corpus).sample(n=n, random_state=seed).to_parquet(sample, index=False)
    print(f"building {out} from {n:,} rows of {corpus} (seed {seed}); embedding takes minutes")
    return subprocess.call(
        [sys.executable, "-m", "pipeline", "build", str(sample), "--out", str(out), "--quiet"], cwd=REPO
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(args, outcome: dict, manifest: dict, server_log: str, load_before: float) -> str:
    papers = manifest["papers"]
    kind = (
        " (a stand-in written by `bench_app.synthesise_map`: real titles and abstracts of the corpus, "
        "synthetic topics, coordinates and embeddings)"
        if manifest.get("synthetic")
        else ""
    )
    results = outcome["results"]
    reruns = [seconds for r in results for _, seconds in r["reruns"]]
    by_kind = {
        kind: [s for r in results for k, s in r["reruns"] if k == kind] for kind in ("search", "filter")
    }
    errors = [e for r in results for e in r["errors"]] + outcome["first_errors"]
    app_errors = [e for e in errors if not e.startswith("TimeoutError")]
    tracebacks = server_log.count("Traceback")
    loads = [r["load"] for r in results if r["load"] is not None]
    rss = outcome["rss"]
    mb = 1024 * 1024
    per_session = (rss["all"] - rss["one"]) / max(1, args.sessions) / mb
    lines = [
        "# App under load",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_load.py --map {args.map} --sessions {args.sessions} "
        f"--rounds {args.rounds}`",
        f"Map: {args.map.name}, {papers:,} papers{kind}. Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average before the run {load_before:.1f} (the machine is shared).",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
        f"{args.sessions} headless Chromium sessions opened the map at once; each then searched and "
        f"picked a topic in the Topics filter {args.rounds} times, waiting for each rerun to finish.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| sessions completed without error | {sum(1 for r in results if not r['errors'])} of {len(results)} |",
        f"| app errors (page errors, Streamlit exception boxes) | {len(app_errors)} |",
        f"| browser-side timeouts ({TIMEOUT_MS // 60_000} min a step) | {len(errors) - len(app_errors)} |",
        f"| tracebacks in the server log | {tracebacks} |",
        f"| reruns measured | {len(reruns)} |",
        f"| first session alone: map open | {outcome['first_load']:.1f} s |"
        if outcome["first_load"]
        else None,
        f"| map open under load: median / slowest | {statistics.median(loads):.1f} s / {max(loads):.1f} s |"
        if loads
        else None,
    ]
    for kind, values in by_kind.items():
        if values:
            lines.append(
                f"| {kind} rerun: median / 95th pct / slowest | {statistics.median(values):.1f} s / "
                f"{percentile(values, 0.95):.1f} s / {max(values):.1f} s |"
            )
    if reruns:
        lines.append(f"| slowest rerun of all | {max(reruns):.1f} s |")
    lines += [
        f"| all sessions, wall time | {outcome['wall']:.0f} s |",
        f"| server RSS, no session | {rss['idle'] / mb:.0f} MB |",
        f"| server RSS, one session (map loaded) | {rss['one'] / mb:.0f} MB |",
        f"| server RSS, {args.sessions} more sessions | {rss['all'] / mb:.0f} MB (peak {rss['peak'] / mb:.0f} MB) |",
        f"| server RSS per session | {per_session:.1f} MB |",
        "",
    ]
    lines = [line for line in lines if line is not None]
    if errors:
        lines += ["Errors:", ""] + [f"- {e}" for e in errors[:30]] + [""]
    lines += [
        "Reruns are timed from the action (typing + Enter, or clicking a topic) until Streamlit reports the",
        "script finished again; with all sessions acting at once on 2 shared cores, they mostly measure",
        "queueing behind the other sessions' reruns. RSS is the server process tree's resident memory",
        "(`/proc/<pid>/status`); per session = (after all sessions - after one) / sessions.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--map", type=Path, default=DEFAULT_MAP, help="map folder (default benchmarks/maps/corpus-10k)"
    )
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="search + filter rounds per session")
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get("ATLAS_CORPUS") or DEFAULT_CORPUS))
    parser.add_argument("--prepare", action="store_true", help="build the 10k map from the corpus if missing")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "LOAD_RESULTS.md")
    args = parser.parse_args(argv)
    if args.prepare:
        return prepare(args.corpus, args.map)
    if not (args.map / "manifest.json").is_file():
        print(f"{args.map}: no map there; run with --prepare first (needs the shared corpus)")
        return 0
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found; install chromium (apt-get install chromium)")
        return 0
    from pipeline.artifacts import read_manifest

    manifest = read_manifest(args.map)
    load_before = os.getloadavg()[0]
    log_path = Path(tempfile.mkdtemp(prefix="bench-load-")) / "server.log"
    with open(log_path, "w") as log:
        server = StreamlitServer(args.map, Path(tempfile.mkdtemp(prefix="bench-load-maps-")), log=log)
        try:
            outcome = asyncio.run(run_sessions(server.url, args.sessions, args.rounds, server.process.pid))
        finally:
            server.stop()
    text = report(args, outcome, manifest, log_path.read_text(errors="replace"), load_before)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
