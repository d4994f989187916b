"""Hosting on a small box: the app from a venv of requirements.txt alone, in 1 GB of memory and 1 CPU.

What Streamlit Community Cloud gives a small app is simulated with a cgroup (v1 or v2) around the
Streamlit server: a hard memory limit (the kernel kills the process past it) and a CPU quota of one
core. For each map it measures, in a fresh page of headless Chromium:

- start: seconds from `streamlit run` to a healthy server;
- first paint: seconds from the request to the drawn map;
- rerun: a search typed in the box, until the redrawn map (median of a few words);
- placement: "Where does my paper fit?" until the pin is reported, the first time (loads the
  int8 model) and the second;
- memory: the cgroup's peak (anonymous memory and page cache, what the limit counts) and the
  server process's peak resident set (VmHWM), plus whether the kernel's OOM killer fired.

Maps: the committed seed map, and a map of 81,646 papers: `--big DIR` if you have one, else a synthetic
one written by `bench_app.synthesise_map` (real titles and abstracts from the shared corpus, synthetic
topics, coordinates and random embeddings) with the seed map's model recorded, so placement runs the
real int8 model against 81,646 vectors. The venv is the one `tests/test_hosting.py` builds
(`.venv-hosted/<hash of requirements.txt>`); its installed size is measured too.

    python benchmarks/bench_hosting.py            # writes benchmarks/HOSTING_RESULTS.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_app import DONE, RENDERED, WATCH, synthesise_map  # noqa: E402
from tests.devserver import StreamlitServer  # noqa: E402

# Streamlit has finished: the script is not running and no element of the previous run is stale.
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app && app.dataset.testScriptState === 'notRunning' && !document.querySelector('[data-stale="true"]');
}"""

SEED_MAP = REPO / "assets" / "maps" / "seeds"
CORPUS = Path("/work/shared/corpus/ml_abstracts.parquet")
BIG_PAPERS = 81_646
MEMORY_LIMIT = 1 << 30  # 1 GiB
WORDS = ["learning", "robot", "graph"]
ABSTRACT = (
    "We propose a new solver for entropic optimal transport between point clouds that scales to "
    "millions of points by combining multiscale Sinkhorn iterations with low-rank kernel "
    "approximations, and we show faster convergence on shape matching and domain adaptation."
)


SYNTHETIC = "synthetic (`bench_app.synthesise_map`: real abstracts, random embeddings and topics; the seed map's model)"
SECOND_ABSTRACT = (
    "A legged robot learns to walk on rough terrain from proprioception alone: a policy trained in "
    "simulation with domain randomisation transfers to hardware without fine-tuning."
)


# ----------------------------------------------------------------------------- the light venv
def light_venv() -> Path:
    """The venv of requirements.txt alone (shared with tests/test_hosting.py), built if missing."""
    requirements = REPO / "requirements.txt"
    folder = REPO / ".venv-hosted" / hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]
    if not (folder / ".complete").exists():
        venv.create(folder, with_pip=True, clear=True)
        subprocess.run(
            [folder / "bin" / "python", "-m", "pip", "install", "-q", "-r", requirements], check=True
        )
        (folder / ".complete").touch()
    return folder


def folder_megabytes(folder: Path) -> float:
    total = sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return round(total / 1e6, 1)


# ----------------------------------------------------------------------------- the small box
class Box:
    """A cgroup with a memory limit and one CPU's quota; `enter` is a `preexec_fn` for the server."""

    def __init__(self, memory: int = MEMORY_LIMIT) -> None:
        name = f"atlas-bench-{os.getpid()}"
        self.v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists()
        if self.v2:
            own = Path("/proc/self/cgroup").read_text().strip().split("::", 1)[1]
            self.folders = [Path("/sys/fs/cgroup") / own.lstrip("/") / name]
            self.folders[0].mkdir()
            (self.folders[0] / "memory.max").write_text(str(memory))
            (self.folders[0] / "memory.swap.max").write_text("0")
            (self.folders[0] / "cpu.max").write_text("100000 100000")
        else:  # v1: memory under this process's own memory cgroup, a CPU quota beside it
            lines = dict(
                line.split(":", 2)[1:] for line in Path("/proc/self/cgroup").read_text().splitlines()
            )
            memory_folder = Path("/sys/fs/cgroup/memory") / lines["memory"].lstrip("/") / name
            cpu_folder = Path("/sys/fs/cgroup/cpu") / lines.get("cpu", "/").lstrip("/") / name
            for folder in (memory_folder, cpu_folder):
                folder.mkdir()
            (memory_folder / "memory.limit_in_bytes").write_text(str(memory))
            (cpu_folder / "cpu.cfs_period_us").write_text("100000")
            (cpu_folder / "cpu.cfs_quota_us").write_text("100000")
            self.folders = [memory_folder, cpu_folder]

    def enter(self) -> None:
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def anonymous(self) -> int:
        """Anonymous memory now (what cannot be reclaimed without killing: no page cache)."""
        stat = dict(line.split() for line in (self.folders[0] / "memory.stat").read_text().splitlines())
        return int(stat["anon"] if self.v2 else stat["total_rss"])

    def watch(self) -> None:
        """Sample `anonymous()` every 0.2 s in a thread until `stop_watch()`; keeps the peak."""
        self.anonymous_peak, self._stop = 0, threading.Event()

        def sample() -> None:
            while not self._stop.is_set():
                self.anonymous_peak = max(self.anonymous_peak, self.anonymous())
                self._stop.wait(0.2)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()

    def stop_watch(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.anonymous_peak

    def peak(self) -> int:
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        return int((self.folders[0] / name).read_text())

    def oom_kills(self) -> int:
        if self.v2:
            events = dict(
                line.split() for line in (self.folders[0] / "memory.events").read_text().splitlines()
            )
            return int(events.get("oom_kill", 0))
        control = dict(
            line.split() for line in (self.folders[0] / "memory.oom_control").read_text().splitlines()
        )
        return int(control.get("oom_kill", 0))

    def remove(self) -> None:
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except OSError:  # the killed server's processes are still leaving
                    time.sleep(0.2)


def vm_hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


# ----------------------------------------------------------------------------- one map
def measure(browser, python: Path, folder: Path, scratch: Path, app: Path = REPO) -> dict:
    (scratch / "cache").mkdir(parents=True)
    (scratch / "home").mkdir()
    box = Box()
    env = {"ATLAS_CACHE_DIR": str(scratch / "cache"), "HOME": str(scratch / "home")}
    log = (scratch / f"server-{folder.name}.log").open("w")
    started = time.perf_counter()
    server = StreamlitServer(
        folder,
        scratch / "no-other-maps",
        script=app / "streamlit_app.py",
        python=python,
        env=env,
        log=log,
        timeout=300,
        preexec_fn=box.enter,
    )
    result: dict = {"map": folder.name, "start_s": round(time.perf_counter() - started, 2)}
    box.watch()
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        started = time.perf_counter()
        page.goto(server.url)
        page.wait_for_function(RENDERED, timeout=300_000, polling="raf")
        result["first_paint_s"] = round(time.perf_counter() - started, 2)
        result["after_paint_mb"] = round(box.anonymous_peak / 1e6)
        box_search = page.get_by_role("textbox", name="Search")
        reruns = []
        for word in WORDS:
            page.evaluate(WATCH)
            box_search.fill(word)
            box_search.press("Enter")
            page.wait_for_function(DONE, timeout=300_000, polling="raf")
            reruns.append(page.evaluate("(window.__done - window.__start) / 1000"))
            page.wait_for_timeout(1000)
        result["rerun_s"] = round(statistics.median(reruns), 2)
        page.get_by_text("Where does my paper fit?").click()
        for key, abstract in (("first_placement_s", ABSTRACT), ("second_placement_s", SECOND_ABSTRACT)):
            page.get_by_role("textbox", name="Abstract").fill(abstract)
            page.evaluate(WATCH)
            page.get_by_role("button", name="Place on the map").click()
            # The pin is a mark over the map (no Plotly redraw): done when the rerun has finished and
            # the panel says where the abstract was placed.
            page.wait_for_timeout(200)
            page.wait_for_function(IDLE, timeout=300_000, polling="raf")
            # Every verdict (placed in a topic, among unassigned papers, or fitting none) points to the ★.
            page.get_by_text("the ★ on the map").first.wait_for(timeout=120_000)
            result[key] = round(page.evaluate("(performance.now() - window.__start) / 1000"), 2)
        context.close()
        result["server_alive"] = server.process.poll() is None
        result["server_vmhwm_mb"] = (
            round(vm_hwm(server.process.pid) / 1e6) if result["server_alive"] else None
        )
    except Exception as exc:  # a killed server: report it instead of a traceback
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        result["server_alive"] = server.process.poll() is None
    finally:
        result["anonymous_peak_mb"] = round(box.stop_watch() / 1e6)
        result["cgroup_peak_mb"] = round(box.peak() / 1e6)
        result["oom_kills"] = box.oom_kills()
        server.stop()
        log.close()
        box.remove()
    return result


def big_map(scratch: Path, given: Path | None) -> tuple[Path, str]:
    """The 81,646-paper map: `given`, else a synthetic one recording the seed map's model."""
    if given:
        synthetic = json.loads((given / "manifest.json").read_text()).get("synthetic")
        return (
            given,
            f"{SYNTHETIC}, given with --big" if synthetic else "built by the pipeline, given with --big",
        )
    folder = synthesise_map(CORPUS, scratch / "maps" / "synthetic-81646", BIG_PAPERS)
    manifest_file = folder / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["model"] = json.loads((SEED_MAP / "manifest.json").read_text())["model"]
    manifest_file.write_text(json.dumps(manifest, indent=2))
    return folder, SYNTHETIC


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--big", type=Path, help="a real map of about 81,646 papers (default: a synthetic one)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "HOSTING_RESULTS.md")
    parser.add_argument(
        "--app", type=Path, default=REPO, help="the checkout whose streamlit_app.py is served (before/after)"
    )
    parser.add_argument(
        "--only-big", action="store_true", help="the 81,646-paper map alone, not the seed map"
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    folder = light_venv()
    load_before = os.getloadavg()
    scratch = Path(tempfile.mkdtemp(prefix="bench-hosting-"))
    try:
        big, big_kind = big_map(scratch, args.big)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
            )
            results = [
                measure(browser, folder / "bin" / "python", m, scratch / m.name, args.app.resolve())
                for m in ((big,) if args.only_big else (SEED_MAP, big))
            ]
            browser.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    venv_mb = folder_megabytes(folder)
    model = json.loads((SEED_MAP / "manifest.json").read_text())["model"]
    bundle_mb = folder_megabytes(REPO / "assets" / "models" / model["bundle"])
    write_results(args.out, results, venv_mb, bundle_mb, big_kind, load_before, os.getloadavg())
    print(args.out.read_text())
    return 0


def write_results(out: Path, results, venv_mb, bundle_mb, big_kind, load_before, load_after) -> None:
    keys = [
        ("start_s", "server start (s)"),
        ("first_paint_s", "first paint (s)"),
        ("rerun_s", "rerun: search, median of 3 (s)"),
        ("first_placement_s", "first placement, loads the model (s)"),
        ("second_placement_s", "second placement (s)"),
        ("after_paint_mb", "peak anonymous memory up to first paint (MB)"),
        ("anonymous_peak_mb", "**peak anonymous memory, whole run (MB)**"),
        ("server_vmhwm_mb", "server peak resident set, VmHWM (MB)"),
        ("cgroup_peak_mb", "cgroup peak incl. page cache (MB)"),
        ("oom_kills", "OOM kills"),
        ("server_alive", "server alive at the end"),
    ]
    lines = [
        "# Hosting on a small box: results",
        "",
        f"`python benchmarks/bench_hosting.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2-core machine, shared).",
        "",
        "The server runs from a venv of `requirements.txt` alone, in a cgroup of 1 GiB memory (hard limit) "
        "and one CPU's quota, with an empty model cache: the model comes from `assets/models/`.",
        f"Venv installed size: **{venv_mb:,.0f} MB** (target ≤ 700). Committed int8 model bundle: "
        f"{bundle_mb:,.1f} MB. Big map: {big_kind}.",
        "",
        "| | " + " | ".join(f"{r['map']}" for r in results) + " |",
        "|---|" + "---|" * len(results),
    ]
    for key, label in keys:
        lines.append(f"| {label} | " + " | ".join(str(r.get(key, "–")) for r in results) + " |")
    errors = [f"- {r['map']}: {r['error']}" for r in results if r.get("error")]
    if errors:
        lines += ["", "Errors:", *errors]
    lines += [
        "",
        "Anonymous memory (sampled every 0.2 s from the cgroup's memory.stat) is what the limit cannot "
        "reclaim: past it the kernel kills the server. VmHWM is the server's own resident peak (anonymous "
        "plus mapped files). The cgroup's own peak also counts page cache (map and model files read, "
        "reclaimed under pressure), so it runs up towards the limit on a big map. Targets: ≤ 600 MB on "
        "the seed map with placement, ≤ 1 GB on the 81,646-paper map. Times are wall-clock on a machine "
        "shared with other work: see the load average above.",
    ]
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
