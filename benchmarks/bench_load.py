"""App under load: simultaneous browser sessions on one map, each searching and filtering.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_load.py --prepare     # build benchmarks/maps/corpus-10k if missing
    .venv/bin/python benchmarks/bench_load.py                # 20 sessions, 3 rounds, on benchmarks/maps/corpus-10k
    .venv/bin/python benchmarks/bench_load.py --map DIR --sessions 20 --rounds 1

`--prepare` needs the shared corpus (default ../shared/corpus/ml_abstracts.parquet from the
repository root, or `--corpus PATH` / `ATLAS_CORPUS`): it samples 10,000 rows with a fixed seed
and builds the map at `--map` with `python -m pipeline build` (20 minutes on the shared 2-core
machine: 1,178 s on 2026-11-30). Without the corpus or the map the script says so and exits 0.
`--map` takes any map folder; the runs since 2026-12-01 used a 10,000-paper stand-in written in
seconds (real titles and abstracts, synthetic topics, coordinates and embeddings):

    .venv/bin/python -c "from pathlib import Path; from benchmarks.bench_app import synthesise_map as s; s(Path('../shared/corpus/ml_abstracts.parquet'), Path('/tmp/maps/synthetic-10000'), 10_000)"

One `streamlit run` serves the map. One session opens it alone first (the map loaded once); then
`--sessions` headless Chromium pages (each in its own browser context, so each is its own Streamlit
session) open it at the same moment; each then, `--rounds` times: types a word into the Search box
and presses Enter, and picks a topic in the sidebar's Topics filter. Each step waits until the page
shows its result as a reader sees it: the link's `q=` and `topics=`, the header's sentence naming
the words and the chosen topics ("619 of the 10,000 papers in the topic “X” match the words
“graph”"), the papers table's heading with the same number ("Papers · 619"), the last panel, and no
element left from the previous run (Streamlit marks those `data-stale="true"` while a run is under
way). Nothing about how the map is drawn is used, so the benchmark survives a change of map component.

Streamlit's script state (`data-test-script-state` on the app's root) is only counted, not waited
on: a page whose main thread is busy (drawing the map on a loaded machine) takes a whole run's
messages in one burst and React renders them at once, so the state goes from "notRunning" straight
to "notRunning" and the run is never shown as running. The harness of the 2026-12-01 04:06 results
waited for a run to be shown so, and timed out on pages that had long shown the run's result.

Reported: errors (page errors, Streamlit exception boxes, timeouts, tracebacks in the server log),
with, for a failed step, what its page showed (link, header, papers heading, stale elements, script
state, console errors, a screenshot kept next to the server log); server memory (RSS of the server's
process tree) before any session, after one, after all and at peak, with the increase per session;
the rerun times (median, 95th percentile, slowest), and how many reruns the script state never
showed as running. Results go to benchmarks/LOAD_RESULTS.md (`--out`). Each browser step may take
up to 10 minutes (`BENCH_LOAD_TIMEOUT_MS`): 20 renderers on 2 shared cores are slow, and a step that
still runs out of time is reported as a browser-side timeout, apart from the app's own errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from pipeline.mapfolder.manifest import Manifest

from tests.devserver import StreamlitServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
DEFAULT_MAP = REPO / "benchmarks" / "maps" / "corpus-10k"
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "ml_abstracts.parquet"
WORDS = ["learning", "graph", "diffusion", "reinforcement", "language", "privacy", "optimization"]
TIMEOUT_MS = int(os.environ.get("BENCH_LOAD_TIMEOUT_MS", 600_000))

# Installed before any page script: counts the runs Streamlit's script state (`data-test-script-state`
# on the app's root) shows as "running". A diagnostic only: a busy page can take a whole run in one
# render and never show it as running (see the module's docstring).
COUNT_RUNS = """(() => {
    window.__atlasRuns = 0;
    new MutationObserver((records) => {
        for (const record of records) if (record.oldValue === 'running') window.__atlasRuns += 1;
    }).observe(document, {
        attributes: true, subtree: true, attributeOldValue: true, attributeFilter: ['data-test-script-state'],
    });
})()"""
# What a reader sees, read from the page: the address bar's view (q=, topics=), the header's sentence
# under the map's name ("619 of the 10,000 papers of the map match the words “graph”"), the heading
# of the papers table ("Papers · 619 · best matches first"), whether the last panel ("About this
# map") is there, and how many elements still show the previous run (Streamlit marks them
# data-stale="true" while a run is under way).
READ_PAGE = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const texts = (selector) => (main ? [...main.querySelectorAll(selector)] : []).map((e) => e.innerText.trim());
    const params = new URLSearchParams(location.search);
    return {
        sentence: texts('.atlas-sentence')
            .find((t) => /^(Showing the |None of |[\\d,]+ of the )/.test(t)) ?? null,
        heading: texts('h4').find((t) => t.startsWith('Papers · ')) ?? null,
        about: texts('[data-testid="stExpander"] summary').some((t) => t.includes('About this map')),
        q: params.get('q'),
        topics: params.get('topics'),
        stale: document.querySelectorAll('[data-stale="true"]').length,
        url: location.href,
        scriptState: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') ?? null,
        runsShown: window.__atlasRuns ?? null,
    };
}"""
# True once the page shows the view `want` describes, all of it from one finished run: the link's
# q= and topics= (the topics chosen before, in order, and `topicCount` in all), the header's
# sentence holding each of `phrases`, the papers heading with the sentence's number, the last panel,
# and nothing stale.
SHOWS = f"""(want) => {{
    const page = ({READ_PAGE})();
    if (page.stale || !page.about || !page.sentence || !page.heading) return false;
    const topics = page.topics ? page.topics.split(',') : [];
    if (page.q !== want.q || topics.length !== want.topicCount) return false;
    if (!want.topicsBefore.every((topic, i) => topics[i] === topic)) return false;
    if (!want.phrases.every((phrase) => page.sentence.includes(phrase))) return false;
    const count = page.sentence.startsWith('None') ? '0' : page.sentence.match(/[\\d,]+/)?.[0];
    return page.heading.match(/^Papers · ([\\d,]+)/)?.[1] === count;
}}"""


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


async def until_shown(page, action) -> tuple[float, bool]:
    """Seconds from the start of `action` until the page shows the view it returns (`SHOWS`), and
    whether Streamlit's script state showed a run as "running" meanwhile (a diagnostic only)."""
    runs = await page.evaluate("() => window.__atlasRuns")
    started = time.perf_counter()
    want = await action()
    await page.wait_for_function(SHOWS, arg=want, timeout=TIMEOUT_MS, polling=100)
    seconds = time.perf_counter() - started
    return seconds, await page.evaluate("() => window.__atlasRuns") > runs


def topic_phrase(label: str, chosen: int) -> str:
    """What the header's sentence says once `chosen` topics are chosen, the last one `label`
    (`app.filters.scope_phrase`)."""
    if label == "Unassigned":
        return "and the unassigned papers" if chosen > 1 else "that no topic claimed"
    return f"in the topic “{label}”" if chosen == 1 else f"in {chosen} topics"


async def describe(page, screenshot: Path, console: list[str]) -> str:
    """What a page shows when a step failed: its link, header, papers heading, stale elements, script
    state, the runs it showed as running, its console errors and a screenshot."""
    try:
        await page.screenshot(path=str(screenshot), timeout=60_000)
        shown = await page.evaluate(READ_PAGE)
    except Exception as exc:  # a closed or hung page: say so
        return f"page not readable ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
    return (
        f"link {shown['url']}; header “{shown['sentence']}”; papers heading “{shown['heading']}”; "
        f"{shown['stale']} stale elements; script state {shown['scriptState']}; "
        f"{shown['runsShown']} runs shown as running; console errors: {console[-3:] or 'none'}; "
        f"screenshot {screenshot}"
    )


async def session(
    browser,
    url: str,
    index: int,
    rounds: int,
    loaded: asyncio.Event,
    ready: list,
    captures: Path,
    name: str = "",
) -> dict:
    """One reader: open the map, then search and filter `rounds` times. Never raises.

    A failed step is described (`describe`), with a screenshot in `captures`; `name` names the session there.
    """
    name = name or f"session {index}"
    result = {"reruns": [], "errors": [], "load": None, "page": None}
    step = "opening the map"
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    await context.add_init_script(COUNT_RUNS)
    # 20 renderers drawing a 10,000-point map on 2 cores are slow to act: a click may wait minutes.
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    console: list[str] = []
    page.on("pageerror", lambda error: result["errors"].append(f"page error: {error}"))
    page.on(
        "console", lambda message: console.append(message.text[:200]) if message.type == "error" else None
    )
    try:
        started = time.perf_counter()
        await page.goto(url, timeout=TIMEOUT_MS)
        whole_map = {
            "q": None,
            "topicsBefore": [],
            "topicCount": 0,
            "phrases": ["Showing the ", " of the map"],
        }
        await page.wait_for_function(SHOWS, arg=whole_map, timeout=TIMEOUT_MS, polling=100)
        result["load"] = time.perf_counter() - started
        ready.append(index)
        if len(ready) == 1:
            loaded.set()
        search = page.get_by_role("textbox", name="Search")
        topics = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").filter(
            has_text="Topics"
        )
        chosen: list[str] = []  # the topic ids in the link, in the order chosen
        for round_ in range(rounds):
            word = WORDS[(index + round_) % len(WORDS)]
            step = f"round {round_ + 1}: search"

            async def type_word(word=word, chosen=chosen):
                await search.fill(word)
                await search.press("Enter")
                return {
                    "q": word,
                    "topicsBefore": chosen,
                    "topicCount": len(chosen),
                    "phrases": [f"the words “{word}”"],
                }

            result["reruns"].append(("search", *await until_shown(page, type_word)))

            async def pick_topic(choice=(index + round_) % 5, word=word, chosen=chosen):
                # Click its text box, not its middle, which may hold a chosen topic's chip.
                await topics.first.get_by_role("combobox").click()
                options = page.get_by_role("option")
                await options.first.wait_for(timeout=TIMEOUT_MS)
                option = options.nth(min(choice, await options.count() - 1))
                label = re.sub(r" \([\d,]+\)$", "", (await option.inner_text()).strip())  # "Name (1,234)"
                await option.click()
                return {
                    "q": word,
                    "topicsBefore": chosen,
                    "topicCount": len(chosen) + 1,
                    "phrases": [f"the words “{word}”", topic_phrase(label, len(chosen) + 1)],
                }

            step = f"round {round_ + 1}: topic filter"
            result["reruns"].append(("filter", *await until_shown(page, pick_topic)))
            chosen = (await page.evaluate(READ_PAGE))["topics"].split(",")
            await page.keyboard.press("Escape")  # close the options list
        exceptions = await page.locator("[data-testid='stException']").count()
        if exceptions:
            result["errors"].append(f"{exceptions} Streamlit exception box(es) on the page")
    except Exception as exc:  # a timeout or a missing control is a failed session, counted
        result["errors"].append(f"{type(exc).__name__} in {step}: {str(exc).splitlines()[0][:200]}")
        shot = captures / (re.sub(r"\W+", "-", f"{name} {step}").strip("-") + ".png")
        result["page"] = f"{name}, {step}: {await describe(page, shot, console)}"
    finally:
        await context.close()
    return result


async def run_sessions(url: str, sessions: int, rounds: int, server_pid: int, captures: Path) -> dict:
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
            first = await session(
                browser, url, 0, 0, one_loaded, ready, captures, "the first session (alone)"
            )
            one_rss = process_tree_rss(server_pid)
            watch = MemoryWatch(server_pid)
            started = time.perf_counter()
            results = await asyncio.gather(
                *(session(browser, url, i, rounds, asyncio.Event(), ready, captures) for i in range(sessions))
            )
            wall = time.perf_counter() - started
            peak = watch.stop()
            all_rss = process_tree_rss(server_pid)
        finally:
            await browser.close()
    return {
        "first_load": first["load"],
        "first_errors": first["errors"],
        "first_page": first["page"],
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
    command = [sys.executable, "-m", "pipeline", "build", str(sample), "--out", str(out), "--name", out.name]
    return subprocess.call([*command, "--quiet"], cwd=REPO)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(args, outcome: dict, manifest: Manifest, log_path: Path, load_before: float) -> str:
    papers = manifest.papers
    kind = (
        " (a stand-in written by `bench_app.synthesise_map`: real titles and abstracts of the corpus, "
        "synthetic topics, coordinates and embeddings)"
        if manifest.synthetic
        else ""
    )
    results = outcome["results"]
    reruns = [seconds for r in results for _, seconds, _ in r["reruns"]]
    unshown = sum(1 for r in results for *_, shown in r["reruns"] if not shown)
    by_kind = {
        kind: [s for r in results for k, s, _ in r["reruns"] if k == kind] for kind in ("search", "filter")
    }
    errors = [e for r in results for e in r["errors"]] + outcome["first_errors"]
    app_errors = [e for e in errors if not e.startswith("TimeoutError")]
    server_log = log_path.read_text(errors="replace")
    tracebacks = server_log.count("Traceback")
    pages = [p for p in [outcome["first_page"], *(r["page"] for r in results)] if p]
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
        f"| of which the script state never showed as running | {unshown} |",
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
    if pages:
        lines += ["What the failed pages showed:", ""] + [f"- {p}" for p in pages[:30]] + [""]
    if errors or tracebacks:
        # The server's own lines, without its start and stop banners (the log is kept, with the screenshots).
        said = [
            line
            for line in server_log.splitlines()
            if line.strip()
            and not any(
                b in line for b in ("Uvicorn server started", "You can now view", "URL: ", "Stopping...")
            )
        ]
        lines += [f"Server log ({log_path}): {len(said)} lines besides its banners", ""]
        lines += ["```", *said[-20:], "```", ""] if said else []
    lines += [
        "Reruns are timed from the action (typing + Enter, or clicking a topic) until the page shows its",
        "result: the link's `q=` and `topics=`, the header's sentence naming the search words and the",
        "chosen topics, the papers table's heading with the same number, and no element of the previous",
        "run left (`data-stale`). Streamlit's script state (`data-test-script-state`) is not waited on: a",
        "page may take a whole run's messages at once and never show it as running (counted above). With",
        "all sessions acting at once on 2 shared cores, rerun times mostly measure queueing behind the",
        "other sessions' reruns. RSS is the server process tree's resident memory (`/proc/<pid>/status`);",
        "per session = (after all sessions - after one) / sessions.",
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
    from pipeline.mapfolder.manifest import read_manifest

    manifest = read_manifest(args.map)
    load_before = os.getloadavg()[0]
    scratch = Path(tempfile.mkdtemp(prefix="bench-load-"))  # the server log and failed pages' screenshots
    log_path = scratch / "server.log"
    with open(log_path, "w") as log:
        server = StreamlitServer(args.map, scratch / "no-other-maps", log=log)
        try:
            outcome = asyncio.run(
                run_sessions(server.url, args.sessions, args.rounds, server.process.pid, scratch)
            )
        finally:
            server.stop()
    text = report(args, outcome, manifest, log_path, load_before)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
