"""Do the map's names hold? Topic and theme name support before and after a change, on the same papers.

    python benchmarks/bench_names.py [--datasets seeds,eccv,acl] [--before COMMIT] [--corpus PATH]

For each dataset this builds a map with the current code and one with the code of `--before`
(default: main before issue 21, `BEFORE`; its source is read with `git archive` and run in a
child process), sharing one cache folder so the second build re-uses the embeddings and the UMAP
reduction: the two maps have the same papers and the same topics, and differ in names and themes.
Support is `pipeline.naming.support.name_support` through `pipeline.modelling.evaluate.name_figures`: the share of
a topic's papers (title and abstract) that use its name's words, and for a theme the same on its
weakest member topic. Targets (issue 21): at most 15% of topic names under 25% support; theme
weakest-member support median >= 25%, none under 5%. The manifest's quality figures (NPMI
coherence, diversity) are reported too: a change to names must not lower them.

Datasets: `seeds` (the committed corpus), `eccv` and `acl` (every ECCV and ACL paper of the shared
corpus, ../shared/corpus/ml_abstracts.parquet or --corpus / ATLAS_CORPUS; skipped without it),
`sample-2000` and `corpus-10k` as in bench_pipeline.py. Results go to
benchmarks/results/names-<dataset>.json; the part of benchmarks/NAMES_RESULTS.md under "Earlier round
(issue 21)" is rewritten from them (bench_themes.py writes the part above it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_pipeline  # noqa: E402

from benchmarks.common import EARLIER_NAMES, NAMES_RESULTS, write_part  # noqa: E402
from pipeline.mapfolder.store import read_map  # noqa: E402
from pipeline.modelling.evaluate import name_figures  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
BEFORE = "d83f6e4"  # main before issue 21
DATASETS = ("seeds", "eccv", "acl")
VENUES = {"eccv": "ECCV", "acl": "ACL"}


def documents(name: str, corpus: Path) -> pd.DataFrame | None:
    """The papers of a dataset (title, abstract, ...), or None when its source is absent."""
    if name in VENUES:
        if not corpus.exists():
            print(f"skipping {name}: {corpus} is not here (it is not part of a clone)", file=sys.stderr)
            return None
        table = pd.read_parquet(corpus, columns=["title", "abstract", "venue", "year"])
        return table[table["venue"] == VENUES[name]].reset_index(drop=True)
    bench_pipeline.CORPUS = corpus
    return bench_pipeline.dataset(name)


def build(source: Path, inputs: list[Path], out: Path, env: dict) -> float:
    """`python -m pipeline build` from the source tree `source`; wall seconds."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "build", *map(str, inputs), "--out", str(out), "--quiet"],
        cwd=source,
        env={**env, "PYTHONPATH": str(source)},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"build in {source} failed:\n{result.stderr[-3000:]}")
    return round(time.perf_counter() - started, 1)


def figures(folder: Path, seconds: float) -> dict:
    atlas = read_map(folder)
    result = name_figures(atlas.papers, atlas.topics, atlas.themes)
    result["quality"] = {k: atlas.manifest.quality.get(k) for k in ("coherence_npmi", "diversity")}
    result["build_seconds"] = seconds
    return result


def bench(name: str, corpus: Path, before: str) -> dict | None:
    docs = documents(name, corpus)
    if docs is None:
        return None
    with tempfile.TemporaryDirectory(prefix=f"names-{name}-") as work:
        work = Path(work)
        if name == "seeds":
            inputs = [ROOT / "seeds"]
        else:
            inputs = [work / "docs.parquet"]
            docs.drop_duplicates("abstract").reset_index(drop=True).to_parquet(inputs[0], index=False)
        old_source = work / "before-src"
        old_source.mkdir()
        archive = subprocess.run(["git", "archive", before], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_source)], input=archive, check=True)
        env = {**os.environ, "ATLAS_CACHE_DIR": os.environ.get("ATLAS_CACHE_DIR") or str(work / "cache")}
        # The first build embeds (and caches); the second re-uses the embeddings and the reduction.
        after_seconds = build(ROOT, inputs, work / "after", env)
        before_seconds = build(old_source, inputs, work / "before", env)
        return {
            "dataset": name,
            "papers": len(read_map(work / "after").papers),
            "date": time.strftime("%Y-%m-%d"),
            "before_commit": before,
            "load_average": os.getloadavg()[0],
            "before": figures(work / "before", before_seconds),
            "after": figures(work / "after", after_seconds),
        }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def markdown(results: list[dict]) -> str:
    lines = [
        "# Do the names hold? Topic and theme name support, before and after issue 21",
        "",
        "`python benchmarks/bench_names.py` — each dataset built twice on the same papers and topics: with the"
        " code before issue 21 (`before`) and with the current code (`after`). *Support* of a name on a topic"
        " = share of the topic's papers (title + abstract) that use all the words of the name or of one of its"
        " parts (`pipeline.naming.support.name_support`; acronyms the map defines count as their expansion)."
        " Targets: at most 15% of topic names under 25% support; a theme's support on its weakest member topic"
        " ≥ 25% at the median and ≥ 5% for every theme. NPMI coherence and diversity are the manifest's"
        " quality figures (keywords) and must not drop.",
        "",
        "| dataset | papers | topics | topic names under 25% | median topic support | themes "
        "| theme weakest-member support: median / least | themes under 5% | NPMI coherence | diversity |",
        "|---|---:|---:|---|---|---|---|---|---|---|",
    ]
    for r in results:
        b, a = r["before"], r["after"]
        lines.append(
            f"| {r['dataset']} | {r['papers']:,} | {a['topics']} "
            f"| {b['topic_names_under_25']} ({_pct(b['topic_names_under_25_share'])}) → "
            f"{a['topic_names_under_25']} ({_pct(a['topic_names_under_25_share'])}) "
            f"| {_pct(b['topic_support_median'])} → {_pct(a['topic_support_median'])} "
            f"| {b['themes']} → {a['themes']} "
            f"| {_pct(b['theme_weakest_median'])} / {_pct(b['theme_weakest_min'])} → "
            f"{_pct(a['theme_weakest_median'])} / {_pct(a['theme_weakest_min'])} "
            f"| {b['themes_under_5']} → {a['themes_under_5']} "
            f"| {b['quality']['coherence_npmi']} → {a['quality']['coherence_npmi']} "
            f"| {b['quality']['diversity']} → {a['quality']['diversity']} |"
        )
    for r in results:
        lines += [
            "",
            f"## {r['dataset']} ({r['papers']:,} papers, built {r['date']}, load average {r['load_average']:.1f})",
        ]
        for side in ("before", "after"):
            lines += [
                "",
                f"### Themes {side} ({r[side]['themes']})",
                "",
                "| theme | its topics | weakest member | support there |",
                "|---|---|---|---:|",
            ]
            for row in r[side]["theme_rows"]:
                lines.append(
                    f"| {row['name']} | {'; '.join(row['topics'])} | {row['weakest_topic']} "
                    f"| {_pct(row['weakest_support'])} |"
                )
        lines += ["", "### Topic names", "", "| topic | size | before | support | after | support |"]
        lines.append("|---:|---:|---|---:|---|---:|")
        before_rows = {row["topic_id"]: row for row in r["before"]["topic_rows"]}
        for row in r["after"]["topic_rows"]:
            old = before_rows.get(row["topic_id"], {"name": "", "support": None})
            lines.append(
                f"| {row['topic_id']} | {row['size']} | {old['name']} | {_pct(old['support'])} "
                f"| {row['name']} | {_pct(row['support'])} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with (default: %(default)s)")
    parser.add_argument(
        "--corpus", type=Path, default=Path(os.environ.get("ATLAS_CORPUS") or bench_pipeline.CORPUS)
    )
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in args.datasets.split(","):
        result = bench(name, args.corpus, args.before)
        if result is None:
            continue
        (RESULTS / f"names-{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        summary = {k: v for k, v in result["after"].items() if not k.endswith("_rows")}
        print(f"[{name}] after: {summary}", file=sys.stderr, flush=True)
    results = [
        json.loads((RESULTS / f"names-{n}.json").read_text())
        for n in (*DATASETS, "sample-2000", "corpus-10k")
        if (RESULTS / f"names-{n}.json").exists()
    ]
    # Below bench_themes.py's tables of every theme, one heading level down.
    earlier = "\n".join(
        "#" + line if line.startswith("#") else line for line in markdown(results).splitlines()
    )
    write_part(NAMES_RESULTS, "\n" + earlier + "\n", EARLIER_NAMES, above=False)


if __name__ == "__main__":
    main()
