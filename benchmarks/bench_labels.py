"""How much of the map the names hide (issue 66): the share of point centres in view under a shown
name's box, on the seed map and on synthetic maps of the shared corpus, at a desk's width (1400x900)
and a phone's (390x844, touch), for this checkout and, with --before, for an older one.

    .venv/bin/python benchmarks/bench_labels.py [--sizes 716 5000 81646] [--before /tmp/before]
        [--out benchmarks/LABELS_RESULTS.md]

`--before` is a checkout of older code (e.g. `git archive <commit> | tar -x -C /tmp/before`): its app
serves the same maps. Synthetic maps: `bench_app.synthesise_map` (real abstracts, Gaussian blobs of
topics, themes of about five topics).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_app import synthesise_map  # noqa: E402
from common import CORPUS, corpus_missing  # noqa: E402

from tests.devserver import StreamlitServer  # noqa: E402
from tests.helpers import CHROMIUM, idle, open_app  # noqa: E402
from tests.test_browser_glance import UNDER_NAMES  # noqa: E402

SCREENS = ((1400, 900), (390, 844))


def measure(app_dir: Path, folder: Path, browser) -> list[dict]:
    """Each screen's reading of `UNDER_NAMES` on the map in `folder`, served by the app in `app_dir`."""
    seen = []
    with (
        tempfile.TemporaryDirectory() as empty,
        StreamlitServer(folder, Path(empty), script=app_dir / "streamlit_app.py", timeout=180) as app,
    ):
        for width, height in SCREENS:
            touch = width < 500
            context = browser.new_context(
                viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch
            )
            page = context.new_page()
            page.set_default_timeout(180_000)
            open_app(page, app.url)
            idle(page)
            page.wait_for_timeout(1000)
            seen.append({"width": width, **page.evaluate(UNDER_NAMES)})
            context.close()
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[716, 5000])
    parser.add_argument("--before", type=Path, help="a checkout of older code to measure too")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "LABELS_RESULTS.md")
    args = parser.parse_args(argv)
    if args.sizes and corpus_missing("bench_labels.py"):
        return 2
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="labels-"))
    maps = [("seeds (57)", REPO / "assets" / "maps" / "seeds")]
    for n in args.sizes:
        maps.append((f"synthetic {n:,}", synthesise_map(CORPUS, work / f"synthetic-{n}", n)))
    apps = [("this checkout", REPO)] + ([("before", args.before)] if args.before else [])
    rows = []
    load = os.getloadavg()[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        for map_name, folder in maps:
            for app_name, app_dir in apps:
                for seen in measure(app_dir, folder, browser):
                    share = seen["covered"] / max(1, seen["shown"])
                    rows.append(
                        f"| {map_name} | {app_name} | {seen['width']} | {seen['names']} | "
                        f"{seen['covered']:,} of {seen['shown']:,} | **{share:.1%}** |"
                    )
                    print(rows[-1], flush=True)
        browser.close()
    command = "python benchmarks/bench_labels.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = [
        "# Names that leave the points visible: results",
        "",
        f"`{command.strip()}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{load:.2f} before the run (2-core machine, shared). Headless Chromium (software WebGL); the whole "
        "map as it first opens (theme names and the largest topics' names). A point is under a name when "
        "its centre lies inside a shown name's box (`tests/test_browser_glance.py`, `UNDER_NAMES`); the "
        "target is at most 10%.",
        "",
        "| map | app | width (px) | names shown | point centres under a name | share |",
        "|---|---|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    args.out.write_text("\n".join(text), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
