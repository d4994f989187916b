"""App speed: request -> map rendered, and the rerun after a filter change, in headless Chromium.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_app.py                       # the default maps below
    .venv/bin/python benchmarks/bench_app.py --maps DIR [DIR ...]  # any map folders
    .venv/bin/python benchmarks/bench_app.py --synthesise-from ../shared/corpus/ml_abstracts.parquet

Default maps: assets/maps/seeds and the maps `bench_pipeline.py` keeps, benchmarks/maps/corpus-10k and
benchmarks/maps/corpus-full (81,646 papers); a missing
folder is skipped with a message. `--synthesise-from` stands in for missing 10k/80k maps with maps
written directly (real titles and abstracts from the given table, synthetic topics, coordinates and
embeddings) so the app's cost can be measured before real maps of that size are built; the results
file says which maps were synthetic.

For each map a fresh `streamlit run` serves it, and Chromium measures:
- first paint, cold server: first request on a fresh server (the map is read and precomputed)
  until the Plotly map has drawn, in a fresh browser profile;
- first paint, first visit: a fresh browser profile (nothing cached) once the server has the map;
- first paint, returning reader: a second tab of that profile (Streamlit's and Plotly's bundles
  in the HTTP cache), as for a reader opening a shared link to an app they have used;
- search rerun: type a word into Search, then from the Enter keydown until the first frame showing
  the map redrawn with the highlights (both timed inside the page);
- filter rerun: from the click choosing the largest topic in the Topics filter until the first frame
  showing the redrawn map (likewise).
- bytes per rerun: what the page received over Streamlit's WebSocket for the search and filter reruns.
The same is measured for the previous map alone (a page holding only the previous map figure in
`st.plotly_chart` with selections, a Search box and a Topics filter: benchmarks/baseline_map.py), the
baseline the live map component replaces, and for a bare Streamlit page with one small chart (the floor).
Each figure is the median of `--repeat` runs. Results go to benchmarks/APP_RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline.mapfolder.files import SCHEMA_VERSION  # noqa: E402
from pipeline.mapfolder.manifest import Manifest, read_manifest  # noqa: E402
from pipeline.mapfolder.store import AtlasMap, write_map  # noqa: E402
from tests.devserver import StreamlitServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
DEFAULT_MAPS = [
    REPO / "assets" / "maps" / "seeds",
    REPO / "benchmarks" / "maps" / "corpus-10k",
    REPO / "benchmarks" / "maps" / "corpus-full",
]
SYNTHETIC_SIZES = {"corpus-10k": 10_000, "corpus-full": 81_646}
RENDERED = """() => {
    const gd = document.querySelector('.js-plotly-plot');
    if (!gd || !gd._fullData || !gd._fullData.length) return false;
    return !!(gd.querySelector('.scatterlayer .trace') || gd.querySelector('canvas'));
}"""
# Streamlit either redraws the same Plotly element (plotly_afterplot fires on it) or, when the figure's
# identity changes, mounts a new one; either way the map has updated when one of the two is drawn.
# Both ends are timed in the page (performance.now): the Enter keydown or the click that starts the
# rerun, and the first animation frame in which the updated map is drawn, so Playwright's own
# round trips are not counted.
WATCH = """() => {
    window.__plotted = 0;
    window.__start = 0;
    window.__done = 0;
    const start = (event) => {
        if (!window.__start && (event.type === 'click' || event.key === 'Enter')) window.__start = performance.now();
    };
    document.addEventListener('keydown', start, {capture: true, once: false});
    document.addEventListener('click', start, {capture: true, once: false});
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
        gd.__benchOld = true;
        gd.on('plotly_afterplot', () => { window.__plotted = performance.now(); });
    }
    const updated = () => {
        if (window.__plotted > 0) return true;
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            if (!gd.__benchOld && gd._fullData && gd._fullData.length &&
                (gd.querySelector('.scatterlayer .trace') || gd.querySelector('canvas'))) return true;
        }
        return false;
    };
    const frame = () => {
        if (window.__start && updated()) { window.__done = performance.now(); return; }
        requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
}"""
DONE = "() => window.__done > 0"


# ----------------------------------------------------------------------------- synthetic maps
def synthesise_map(corpus: Path, out: Path, n: int, seed: int = 0) -> Path:
    """A map of `n` real abstracts with synthetic topics (about sqrt(n)/1.6 Gaussian blobs, 12% unassigned),
    grouped into themes of about five topics (so the sidebar's first filter is Themes and the map has a key);
    it records the shipped model's bundle, so a search on it is a built map's (words and meaning fused:
    the query embedded, every paper ranked by cosine), not the words-alone fallback of a map without one."""
    rng = np.random.default_rng(seed)
    table = pd.read_parquet(corpus)
    # Past the table's size (the million-paper map) abstracts repeat: the app's costs do not depend on them.
    rows = rng.choice(len(table), size=n if n > len(table) else min(n, len(table)), replace=n > len(table))
    papers = table.iloc[np.sort(rows)].reset_index(drop=True)
    n = len(papers)
    n_topics = int(max(8, round(math.sqrt(n) / 1.6)))
    sizes = rng.dirichlet(np.full(n_topics, 1.2)) * n
    topic_ids = rng.choice(n_topics, size=n, p=sizes / sizes.sum())
    order = np.argsort(-np.bincount(topic_ids, minlength=n_topics))
    topic_ids = np.argsort(order)[topic_ids]  # topic 0 = largest, as the pipeline numbers them
    centres = rng.normal(0, 1.0, (n_topics, 2)) * 1.2
    xy = centres[topic_ids] + rng.normal(0, 0.12, (n, 2))
    unassigned = rng.random(n) < 0.12
    topic_ids = np.where(unassigned, -1, topic_ids)
    xy[unassigned] = rng.normal(0, 1.3, (int(unassigned.sum()), 2))
    directions = rng.normal(size=(n_topics, 384)).astype(np.float32)
    vectors = np.empty((n, 384), dtype=np.float16)
    for start in range(0, n, 100_000):  # in slices: a million float64 rows would take 3 GB at once
        part = directions[np.clip(topic_ids[start : start + 100_000], 0, None)]
        part = part + rng.normal(0, 1.0, part.shape).astype(np.float32)
        vectors[start : start + 100_000] = part / np.linalg.norm(part, axis=1, keepdims=True)
    words = [
        "learning",
        "graphs",
        "robots",
        "vision",
        "language",
        "diffusion",
        "bandits",
        "privacy",
        "optimisation",
        "3D scenes",
        "speech",
        "causality",
        "transformers",
        "control",
        "retrieval",
    ]
    labels = [f"{words[t % len(words)].capitalize()} {t}" for t in range(n_topics)]
    papers = papers.assign(
        doc_id=[f"s{seed}-{i:06d}" for i in range(n)],
        topic_id=topic_ids,
        x=xy[:, 0].astype(np.float32),
        y=xy[:, 1].astype(np.float32),
    )
    papers["source"] = papers["venue"].astype(str) if "venue" in papers else "corpus"
    topics = pd.DataFrame(
        {
            "topic_id": range(n_topics),
            "label": labels,
            "keywords": [[words[(t + k) % len(words)] for k in range(8)] for t in range(n_topics)],
            "keyword_weights": [[round(0.3 - 0.02 * k, 3) for k in range(8)] for _ in range(n_topics)],
            "size": [int((topic_ids == t).sum()) for t in range(n_topics)],
            "x": centres[:, 0],
            "y": centres[:, 1],
            "representative_doc_ids": [
                papers.loc[topic_ids == t, "doc_id"].head(5).tolist() for t in range(n_topics)
            ],
        }
    )
    n_themes = max(2, n_topics // 5)
    topics["theme_id"] = topics["topic_id"] % n_themes
    members = [topics[topics["theme_id"] == k] for k in range(n_themes)]  # each theme's topics
    themes = pd.DataFrame(
        {
            "theme_id": range(n_themes),
            "label": [f"{words[(3 * k) % len(words)].capitalize()} area {k}" for k in range(n_themes)],
            "keywords": [[words[(3 * k + j) % len(words)] for j in range(8)] for k in range(n_themes)],
            "size": [int(m["size"].sum()) for m in members],
            "topic_ids": [m["topic_id"].tolist() for m in members],
            "x": [float(m["x"].mean()) for m in members],
            "y": [float(m["y"].mean()) for m in members],
        }
    )
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "name": f"Synthetic {n:,} (benchmark only)",
        "papers": n,
        "topics": n_topics,
        "themes": n_themes,
        "unassigned": int(unassigned.sum()),
        "config": {"embedder": "onnx-int8"},
        # The shipped model's bundle (assets/models/), so that a search embeds its words and ranks every
        # paper by meaning as on a built map (the vectors are random: the ranking is not, the work is).
        "model": {
            **json.loads((REPO / "assets/maps/seeds/manifest.json").read_text())["model"],
            "encoder": "synthetic random vectors",
        },
        "notes": [
            "synthetic topics, coordinates and embeddings over real abstracts, for app benchmarks only"
        ],
        "quality": {},
        "timings_seconds": {},
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "synthetic": True,
    }
    write_map(
        out,
        AtlasMap(
            papers=papers,
            topics=topics,
            themes=themes,
            embeddings=vectors.astype(np.float16),
            manifest=Manifest.from_dict(manifest),
        ),
    )
    return out


# ----------------------------------------------------------------------------- measuring
BASELINE_APP = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
st.markdown("## Baseline")
rng = np.random.default_rng(0)
st.plotly_chart(go.Figure(go.Scatter(x=rng.random(57), y=rng.random(57), mode="markers")), key="map")
"""


# The floor for each map: a page holding only the app's map (same figure, same `st.plotly_chart` call
# with selections) and the two controls the benchmark drives, a Search box and a Topics filter.
MAP_ALONE_APP = f"""
import os
import sys
from pathlib import Path

import numpy as np
import streamlit as st

sys.path.insert(0, {str(REPO)!r})
from app.data import build_map_data
from benchmarks.baseline_map import MAP_CONFIG, map_figure
from app.filters import filter_mask


@st.cache_resource
def load(path):
    return build_map_data("map", Path(path))


st.set_page_config(layout="wide")
data = load(os.environ["ATLAS_MAP"])
query = st.sidebar.text_input("Search")
topics = st.sidebar.multiselect("Topics", data.topic_order, format_func=data.label, select_all=False)
in_view = filter_mask(data.topic_ids, topics=topics)
if query.strip():
    hits = np.zeros(data.n, dtype=bool)
    hits[data.search_index.search(query).rows] = True
    in_view &= hits
    st.markdown(f"{{int(in_view.sum()):,}} papers match the words")
st.plotly_chart(
    map_figure(data, in_view, search_active=bool(query.strip())),
    key="map",
    on_select="rerun",
    selection_mode=("points", "box", "lasso"),
    config=MAP_CONFIG,
)
"""


# The same page with the live map component instead (the issue-9 map alone): what the component
# itself costs, without the rest of the app's page.
def serve(folder: Path, script: Path = REPO / "streamlit_app.py") -> StreamlitServer:
    """The app (or `script`) serving `folder` as the only map."""
    return StreamlitServer(folder, Path(tempfile.mkdtemp(prefix="bench-app-")), script=script)


def first_paint(browser_or_context, url: str) -> tuple[float, object]:
    """Seconds from request to drawn map in a new page: of a fresh profile when given the browser
    (a first visit), or of an existing context, whose HTTP cache holds the bundles (a returning reader)."""
    context = browser_or_context
    if not hasattr(context, "browser"):
        context = browser_or_context.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    count_frames(page)
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_function(RENDERED, timeout=180_000, polling="raf")
    return time.perf_counter() - started, page


def count_frames(page) -> None:
    """Count the bytes of every WebSocket frame the page receives (Chrome DevTools Protocol)."""
    page.received = [0]
    session = page.context.new_cdp_session(page)
    session.send("Network.enable")

    def frame(event: dict) -> None:
        response = event["response"]
        data = response.get("payloadData", "")
        page.received[0] += len(data) * 3 // 4 if response.get("opcode") == 2 else len(data.encode())

    session.on("Network.webSocketFrameReceived", frame)


def returning_paint(page, url: str) -> float:
    """First paint in a second tab of `page`'s profile (bundles cached); closes that tab."""
    seconds, second = first_paint(page.context, url)
    second.close()
    return seconds


def rerun(page, action, expect_text: str | None) -> tuple[float, int]:
    """Seconds from the keystroke or click to the first frame showing the redrawn map (timed in the
    page), and the bytes the page received over its WebSocket for that rerun (counted until idle)."""
    page.evaluate(WATCH)
    before = page.received[0]
    action()
    if expect_text:
        page.get_by_text(expect_text).first.wait_for(timeout=120_000)
    page.wait_for_function(DONE, timeout=120_000, polling="raf")
    seconds = page.evaluate("(window.__done - window.__start) / 1000")
    page.wait_for_timeout(1500)  # the rest of the rerun's messages (tables below the map) arrive
    return seconds, page.received[0] - before


def measure_baseline(browser, repeat: int) -> dict:
    """First paint of a bare Streamlit page holding one 57-point Plotly chart: the floor on this machine."""
    script = Path(tempfile.mkdtemp(prefix="bench-baseline-")) / "baseline_app.py"
    script.write_text(BASELINE_APP)
    server = serve(script.parent, script)
    try:
        cold, page = first_paint(browser, server.url)
        page.context.close()
        warm, returning = [], []
        for _ in range(repeat):
            seconds, page = first_paint(browser, server.url)
            warm.append(seconds)
            returning.append(returning_paint(page, server.url))
            page.context.close()
        return {"cold": cold, "warm": statistics.median(warm), "returning": statistics.median(returning)}
    finally:
        server.stop()


def script_timings(folder: Path, repeat: int) -> dict:
    """The app's own Python time (no browser): first run with a cold cache, then reruns, via AppTest."""
    from streamlit.testing.v1 import AppTest

    saved = {k: os.environ.get(k) for k in ("ATLAS_MAP", "ATLAS_MAPS_DIR")}
    os.environ.update(ATLAS_MAP=str(folder), ATLAS_MAPS_DIR=tempfile.mkdtemp(prefix="bench-app-"))
    try:
        app = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=900)
        started = time.perf_counter()
        app.run()
        cold = time.perf_counter() - started
        if app.exception:
            raise RuntimeError(f"{folder}: the app raised {app.exception[0].message}")
        searches, toggles = [], []
        for attempt in range(repeat):
            started = time.perf_counter()
            app.text_input(key="w_search").input(["learning", "model", "data"][attempt % 3]).run()
            searches.append(time.perf_counter() - started)
            started = time.perf_counter()
            app.multiselect(key="w_topics").set_value(
                [] if attempt % 2 else [0]
            ).run()  # topic 0: the largest
            toggles.append(time.perf_counter() - started)
        return {
            "script_cold": cold,
            "script_search": statistics.median(searches),
            "script_filter": statistics.median(toggles),
        }
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def measure(browser, folder: Path, repeat: int, script: Path = REPO / "streamlit_app.py") -> dict:
    server = serve(folder, script)
    try:
        cold, page = first_paint(browser, server.url)
        page.context.close()
        warm, returning, searches, toggles, search_bytes, filter_bytes = [], [], [], [], [], []
        words = ["learning", "model", "data"]
        for attempt in range(repeat):
            seconds, page = first_paint(browser, server.url)
            warm.append(seconds)
            returning.append(returning_paint(page, server.url))
            page.wait_for_timeout(500)
            box = page.get_by_role("textbox", name="Search")
            word = words[attempt % len(words)]

            def search(box=box, word=word):
                box.fill(word)
                box.press("Enter")

            seconds, received = rerun(page, search, "match the words")
            searches.append(seconds)
            search_bytes.append(received)
            page.wait_for_timeout(300)
            # The filter every map has: pick the largest topic in the sidebar's Topics multiselect.
            page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first.click()
            option = page.get_by_role("option").first
            option.wait_for(timeout=30_000)
            seconds, received = rerun(page, option.click, None)
            toggles.append(seconds)
            filter_bytes.append(received)
            page.context.close()
        return {
            "cold": cold,
            "warm": statistics.median(warm),
            "returning": statistics.median(returning),
            "search": statistics.median(searches),
            "filter": statistics.median(toggles),
            "search_kb": statistics.median(search_bytes) / 1000,
            "filter_kb": statistics.median(filter_bytes) / 1000,
        }
    finally:
        server.stop()


def screenshot(folder: Path, out: Path) -> int:
    """The README's picture: the default view of `folder`, 1400x900, hover and toolbar out of the way."""
    from playwright.sync_api import sync_playwright

    server = serve(folder)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(server.url)
            page.wait_for_function(RENDERED, timeout=180_000, polling="raf")
            page.mouse.move(1300, 40)
            page.wait_for_timeout(2500)
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.stop()
    print(f"wrote {out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", nargs="+", type=Path, default=DEFAULT_MAPS, metavar="DIR")
    parser.add_argument(
        "--synthesise-from",
        type=Path,
        metavar="PARQUET",
        help="write stand-in 10,000/81,646-paper maps from this abstracts table when those folders are missing",
    )
    parser.add_argument(
        "--synthetic-dir", type=Path, default=Path(tempfile.gettempdir()) / "atlas-bench-maps"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--app-only", action="store_true", help="measure the app and the floor, not the previous map alone"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "APP_RESULTS.md")
    parser.add_argument(
        "--screenshot",
        type=Path,
        metavar="PNG",
        help="only save a 1400x900 screenshot of the first map (the README's picture) and exit",
    )
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2

    folders: list[tuple[Path, bool]] = []
    for folder in args.maps:
        if (folder / "manifest.json").is_file():
            folders.append((folder, False))
        elif args.synthesise_from and folder.name in SYNTHETIC_SIZES:
            stand_in = args.synthetic_dir / f"synthetic-{folder.name}"
            if not (stand_in / "manifest.json").is_file():
                print(
                    f"{folder}: missing; synthesising {stand_in} from {args.synthesise_from}", file=sys.stderr
                )
                synthesise_map(args.synthesise_from, stand_in, SYNTHETIC_SIZES[folder.name])
            folders.append((stand_in, True))
        else:
            print(f"{folder}: no map there, skipped", file=sys.stderr)

    from playwright.sync_api import sync_playwright

    if args.screenshot:
        return screenshot(folders[0][0], args.screenshot)
    load_before = os.getloadavg()[0]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        print("measuring the baseline (bare Streamlit + one Plotly chart)...", file=sys.stderr)
        baseline = measure_baseline(browser, args.repeat)
        print("  " + ", ".join(f"{k} {v:.2f} s" for k, v in baseline.items()), file=sys.stderr)
        # Streamlit serves static/ beside the page's script (and not through a symlink): the pages live
        # beside the app's entry script while the benchmark runs, where the map writes its files.
        map_alone = REPO / ".bench_map_alone_app.py"
        map_alone.write_text(MAP_ALONE_APP)
        try:
            results = measure_maps(browser, folders, args, map_alone)
        finally:
            map_alone.unlink(missing_ok=True)
        browser.close()
    write_results(args.out, results, args.repeat, baseline, load_before)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def measure_maps(browser, folders: list[tuple[Path, bool]], args, map_alone: Path) -> list[dict]:
    """The app on each map, and unless `--app-only` the previous map alone. (The live map alone was
    measured too till session 13: it draws the link's view from the page's facts, which a page
    without the app's header has not.)"""
    results = []
    for folder, synthetic in folders:
        manifest = read_manifest(folder)
        print(f"measuring {folder} ({manifest.papers:,} papers)...", file=sys.stderr)
        timing = measure(browser, folder, args.repeat) | script_timings(folder, args.repeat)
        if not args.app_only:
            alone = measure(browser, folder, args.repeat, map_alone)
            timing |= {f"alone_{key}": value for key, value in alone.items()}
        results.append(
            {
                "folder": folder,
                "papers": manifest.papers,
                "topics": manifest.topics,
                "synthetic": synthetic or manifest.synthetic,
                **timing,
            }
        )
        print("  " + ", ".join(f"{k} {v:.2f} s" for k, v in timing.items()), file=sys.stderr)
    return results


BROWSER_KEYS = ["warm", "returning", "search", "filter", "search_kb", "filter_kb"]
BROWSER_COLUMNS = [
    "first paint, first visit",
    "first paint, returning reader",
    "search rerun",
    "topic filter rerun",
    "KB per search rerun",
    "KB per filter rerun",
]
TARGETS = {10_000: 0.35, 81_646: 0.6}  # search and filter rerun, seconds, keystroke to redrawn map


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table: the first column left-aligned, the others (numbers) right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def seconds(timing: dict, *keys: str) -> list[str]:
    return [f"{timing[key]:.2f}" if not key.endswith("_kb") else f"{timing[key]:,.1f}" for key in keys]


def ratios(new: dict, old: dict, keys: list[str]) -> list[str]:
    return [f"×{new[k] / old[k]:.2f}" if old.get(k) else "–" for k in keys]


def verdicts(results: list[dict], baseline: dict) -> list[str]:
    """One line per target of issue 9, met or not, with the figure."""
    lines = []
    for r in results:
        limit = next((v for n, v in TARGETS.items() if abs(r["papers"] - n) <= 0.01 * n), None)
        if limit is None:
            continue
        for key in ("search", "filter"):
            met = "met" if r[key] <= limit else "**not met**"
            lines.append(f"- {r['papers']:,} papers, {key} rerun {r[key]:.2f} s ≤ {limit} s: {met}")
        if limit == TARGETS[10_000]:
            ceiling = baseline["warm"] + 1.0
            met = "met" if r["warm"] <= ceiling else "**not met**"
            lines.append(
                f"- {r['papers']:,} papers, first paint {r['warm']:.2f} s ≤ bare page {baseline['warm']:.2f} s"
                f" + 1.0 s: {met}"
            )
        lines.append(f"- {r['papers']:,} papers, bytes per rerun ≤ 150 KB: "
                     + ("met" if max(r["search_kb"], r["filter_kb"]) <= 150 else "**not met**")
                     + f" ({r['search_kb']:,.1f} / {r['filter_kb']:,.1f} KB)")  # fmt: skip
    return lines


def write_results(out: Path, results: list[dict], repeat: int, baseline: dict, load_before: float) -> None:
    names = [r["folder"].name + (" (synthetic)" if r["synthetic"] else "") for r in results]
    rows = []
    for name, r in zip(names, results, strict=True):
        if "alone_warm" not in r:  # --app-only
            rows.append([f"**{name}: the app, live map**", f"{r['papers']:,}", *seconds(r, *BROWSER_KEYS)])
            continue
        old = {k: r[f"alone_{k}"] for k in BROWSER_KEYS}
        rows += [
            [
                f"{name}: previous map alone (`st.plotly_chart`)",
                f"{r['papers']:,}",
                *seconds(old, *BROWSER_KEYS),
            ],
            [f"**{name}: the app, live map**", f"{r['papers']:,}", *seconds(r, *BROWSER_KEYS)],
            [f"{name}: app ÷ previous map alone", "", *ratios(r, old, BROWSER_KEYS)],
        ]
    rows.append(
        ["*floor: bare Streamlit page, one 57-point Plotly chart*", "57", *seconds(baseline, "warm", "returning"),
         "–", "–", "–", "–"]
    )  # fmt: skip
    lines = [
        "# App speed",
        "",
        "Produced by `benchmarks/bench_app.py` (see its docstring for what each column measures): a fresh",
        "`streamlit run` per page and map, driven by headless Chromium, all in one run on one machine.",
        f"Seconds, median of {repeat} runs. Machine: {os.cpu_count()} CPU cores",
        f"(1-minute load average {load_before:.1f} before the run and {os.getloadavg()[0]:.1f} when it ended;",
        f"the run itself keeps about 2 cores busy), Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}.",
        "",
        "In the browser (request, or keystroke, until the map has drawn; bytes: everything the page",
        "received over Streamlit's WebSocket for that rerun):",
        "",
        *table(["page", "papers", *BROWSER_COLUMNS], rows),
        "",
        "Issue 9's targets on this machine:",
        "",
        *verdicts(results, baseline),
        "",
        "The app's own Python time per run (AppTest, no browser): the first run reads the map and builds",
        "its caches (and writes the map's point file); a rerun after a change is what the server adds to",
        "every interaction.",
        "",
        *table(
            ["map", "first run (cold cache)", "rerun after Search", "rerun after a topic filter"],
            [
                [name, *seconds(r, "script_cold", "script_search", "script_filter")]
                for name, r in zip(names, results, strict=True)
            ],
        ),
        "",
        "## Reading these numbers",
        "",
        "- The floor row is what any Streamlit + Plotly page pays here: a first visit downloads and",
        "  compiles Streamlit's bundle and Plotly's 4.8 MB chart bundle. Each first visit uses a fresh",
        "  browser profile (as when someone opens a shared link); a returning reader has the bundles cached",
        "  (the live map keeps Plotly.js and the map's points in the browser's Cache Storage, by fingerprint).",
        "- *Previous map alone* is a page holding only the previous map figure in `st.plotly_chart` with",
        "  selections, a Search box and a Topics filter: the floor for any app built on that call, which",
        "  re-sends the whole figure and mounts a new chart on every view change. *Live map alone* is the",
        "  same page with the live map component instead: one chart that receives the point table once per",
        "  map and a few KB of view state per rerun. The app row is the whole new app (map, topic list,",
        "  paper table, detail panel, sidebar filters), which Streamlit redraws around the map on a rerun.",
        "- Rerun times run from the Enter keydown or the click to the first animation frame showing the",
        "  redrawn map, both timed inside the page (Playwright's own round trips are not counted).",
        "- Chromium runs headless without a GPU, so WebGL (used above 1,000 papers) is emulated in",
        "  software; a reader's browser draws the same points on the GPU, many times faster.",
        "- Browser, server and benchmark share the machine's cores with other jobs: on a busy machine every",
        "  browser figure grows (see the load average above).",
    ]
    if any(r["synthetic"] for r in results):
        lines += [
            "",
            "Maps marked *synthetic* were written directly with `pipeline.mapfolder.store.write_map`: real titles",
            "and abstracts from the shared corpus, but synthetic topics, coordinates and random embeddings,",
            "because real maps of that size were not on this machine. The app's cost depends on the number",
            "of papers and topics, not on how they were computed; rerun with real maps when they exist.",
        ]
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
