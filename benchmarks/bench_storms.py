"""Randomized Back/Forward storms, many of them (issue 63): each storm of tests/test_browser_storms.py's
kind (ticks, key picks, values, topics and papers opened and closed, a box; then Back and Forward, 0-50
ms apart) must end on the page a fresh load of its own link shows (header, the papers table's count,
the papers the map shows). The test file runs a few fixed seeds; this runs `--count` seeds from
`--first` and records how many ended so, and each that did not, in benchmarks/STORMS_RESULTS.md.

    .venv/bin/python -m benchmarks.bench_storms --count 200 [--first 1000] [--out benchmarks/STORMS_RESULTS.md]
    .venv/bin/python -m benchmarks.bench_storms --seeds 1001 1041 --out /tmp/again.md   # some seeds again

About 20 s a storm on a shared 2-core machine (a fresh page for each, one browser, one server).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.helpers import CHROMIUM, themed_map, tiny_map
from tests.test_browser_storms import STEPS, VENUES, afresh, opened, settled, storm

KINDS = ["tick", "tick", "key", "value", "open", "close", "paper", "select"]
STORM = ["tick", "key", "value", "open", "close", "paper", "back", "back", "forward"]


def one_storm(browser, url: str, seed: int) -> tuple[bool, str]:
    """The random storm of `seed` (as the test file draws one); whether it ended on its link's page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        rng = np.random.default_rng(seed)
        opened(page, url)
        steps = [KINDS[k] for k in rng.integers(len(KINDS), size=STEPS // 2)]
        then = [STORM[k] for k in rng.integers(len(STORM), size=STEPS)]
        storm(page, rng, steps, then, (0, 50))
        shown, fresh = settled(page), afresh(browser, page.url)
        return shown == fresh, "" if shown == fresh else f"{page.url}: {shown} != {fresh}"
    finally:
        context.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    from pipeline.mapfolder.store import write_map
    from tests.devserver import StreamlitServer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--first", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "STORMS_RESULTS.md")
    parser.add_argument("--commit", default="", help="the commit measured (default: this checkout's)")
    parser.add_argument("--seeds", type=int, nargs="+", help="these seeds instead (e.g. to run one again)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="storms-"))
    os.environ.setdefault("ATLAS_CACHE_DIR", str(root / "cache"))
    atlas = themed_map(tiny_map(300))
    atlas.papers["venue"] = [None if i % 10 == 9 else VENUES[i % 2] for i in range(len(atlas.papers))]
    write_map(root / "storms", atlas)
    failed: list[str] = []
    started = time.perf_counter()
    commit = (
        args.commit
        or subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    )
    with StreamlitServer(root / "storms", root / "no-other-maps", timeout=60) as app, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        seeds = args.seeds or range(args.first, args.first + args.count)
        args.count = len(seeds)
        for done, seed in enumerate(seeds, start=1):
            same, why = one_storm(browser, app.url, seed)
            if not same:
                failed.append(f"- seed {seed}: {why}")
            print(f"seed {seed}: {'same' if same else 'DIFFERS'}", flush=True)
            write(args, commit.strip(), done, failed, (time.perf_counter() - started) / 60)
        browser.close()
    print(f"{args.count - len(failed)} of {args.count} the same; wrote {args.out}")


def write(args, commit: str, done: int, failed: list[str], minutes: float) -> None:
    """The results so far (written after each storm, so a run cut short still says what it found)."""
    asked = (
        f"--seeds {' '.join(map(str, args.seeds))}"
        if args.seeds
        else f"--count {args.count} --first {args.first}"
    )
    run = f"`.venv/bin/python -m benchmarks.bench_storms {asked}`"
    args.out.write_text(
        "# Back/Forward storms (issue 63)\n\n"
        f"{run} at {commit} ({minutes:.0f} min; a 300-paper themed map with a venue column; the steps of"
        " tests/test_browser_storms.py: ticks, key picks, values, topics and papers opened and closed, a box,"
        " then Back and Forward 0-50 ms apart).\n\n"
        f"**{done - len(failed)} of {done}** storms"
        + (f" (of {args.count} asked; the run was cut short)" if done < args.count else "")
        + " ended on the page a fresh load of their own link shows (header, the papers table's count, the"
        " papers the map shows).\n\n"
        + ("Storms that did not:\n\n" + "\n".join(failed) + "\n" if failed else ""),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
