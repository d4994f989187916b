"""Topic names, old and new, side by side: keyword pairs, how many papers use their name, stability cost.

    python benchmarks/bench_names.py [--datasets seeds,sample-2000,corpus-10k] [--corpus PATH]

For each dataset this builds a map with the current pipeline (embeddings come from the usual
cache, so run it after a build of the same corpus to skip the embedding) and names the very same
topics again with the naming code of the commit before issue 11 (`OLD_NAMING`, read with
`git show`), so the two columns differ only in how names are chosen. Per dataset it reports:
the share of names that are keyword pairs ("Causal · latent"), the mean share of a topic's
papers that use all its name's words, distinct names, theme names, and the stability stage's
seconds next to the whole build's. Results go to benchmarks/results/names-<dataset>.json and
benchmarks/NAMES_RESULTS.md is rewritten from all of them.

corpus-10k needs ../shared/corpus/ml_abstracts.parquet (or --corpus / ATLAS_CORPUS) and is skipped
without it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_pipeline  # noqa: E402

from pipeline.artifacts import read_map  # noqa: E402
from pipeline.build import build_map  # noqa: E402
from pipeline.naming import is_keyword_pair, name_support  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
OLD_NAMING = "ab5fc66"  # main before issue 11: names were `topic_label` + `distinct_labels` in topics.py
DATASETS = ("seeds", "sample-2000", "corpus-10k")


def old_naming() -> types.ModuleType:
    """The pre-issue-11 pipeline/topics.py as a module, from git history."""
    source = subprocess.run(
        ["git", "show", f"{OLD_NAMING}:pipeline/topics.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("old_topics")
    sys.modules["old_topics"] = module  # its dataclass looks itself up there
    exec(compile(source, f"{OLD_NAMING}:pipeline/topics.py", "exec"), module.__dict__)
    return module


def old_names(old: types.ModuleType, papers: pd.DataFrame, topics: pd.DataFrame) -> list[str]:
    """What the old code would call these same topics, from their BERTopic keywords and papers."""
    labels = [
        old.topic_label(
            list(row.keywords), papers.loc[papers["topic_id"] == row.topic_id, "abstract"].tolist()
        )
        for row in topics.itertuples()
    ]
    return old.distinct_labels(labels, [list(k) for k in topics["keywords"]])


def name_figures(names: list[str], papers: pd.DataFrame, topic_ids: list[int]) -> dict:
    coverage = [
        name_support(name, papers.loc[papers["topic_id"] == t, "abstract"].tolist())
        for name, t in zip(names, topic_ids)
    ]
    return {
        "keyword_pair_share": round(float(np.mean([is_keyword_pair(n) for n in names])), 3),
        "mean_share_of_papers_using_name": round(float(np.mean(coverage)), 3),
        "distinct_names": len({n.lower() for n in names}),
        "per_topic_share": [round(c, 2) for c in coverage],
    }


def bench(name: str, corpus: Path) -> dict | None:
    bench_pipeline.CORPUS = corpus
    docs = bench_pipeline.dataset(name)
    if docs is None:
        return None
    with tempfile.TemporaryDirectory(prefix=f"names-{name}-") as work:
        docs = docs.drop_duplicates("abstract").reset_index(drop=True)
        source = Path(work) / "docs.parquet"
        docs.to_parquet(source, index=False)
        started = time.perf_counter()
        build_map([ROOT / "seeds"] if name == "seeds" else [source], Path(work) / "map", progress=False)
        seconds = time.perf_counter() - started
        atlas = read_map(Path(work) / "map")
    papers, topics, themes = atlas.papers, atlas.topics, atlas.themes
    old = old_names(old_naming(), papers, topics)
    new = topics["label"].tolist()
    ids = topics["topic_id"].tolist()
    theme_of = dict(zip(topics["topic_id"], topics["theme_id"]))
    theme_name = dict(zip(themes["theme_id"], themes["label"]))
    return {
        "dataset": name,
        "papers": len(papers),
        "topics": len(topics),
        "themes": len(themes),
        "date": time.strftime("%Y-%m-%d"),
        "build_seconds": round(seconds, 1),
        "stability": atlas.manifest["stability"],
        "timings_seconds": atlas.manifest["timings_seconds"],
        "old": name_figures(old, papers, ids),
        "new": name_figures(new, papers, ids),
        "rows": [
            {
                "topic_id": int(t),
                "size": int(s),
                "old": o,
                "new": n,
                "theme": theme_name[theme_of[t]],
                "stability": None if pd.isna(st) else float(st),
            }
            for t, s, o, n, st in zip(ids, topics["size"], old, new, topics["stability"])
        ],
        "theme_rows": [
            {"theme_id": int(r.theme_id), "label": r.label, "size": int(r.size), "topics": len(r.topic_ids)}
            for r in themes.itertuples()
        ],
    }


def markdown(results: list[dict]) -> str:
    lines = [
        "# Topic names: before and after issue 11",
        "",
        "`python benchmarks/bench_names.py` — the same topics named by the old code (BERTopic keywords"
        f" joined by `·`, commit {OLD_NAMING}) and by `pipeline/naming.py`. *Uses name* = mean share of"
        " a topic's papers that contain every word of its name. Stability seconds are the `stability` stage"
        " of the same build (5 re-clusterings of 90% subsamples).",
        "",
        "| dataset | papers | topics | themes | keyword pairs old → new | papers using the name old → new "
        "| distinct names old → new | stability s / build s |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['dataset']} | {r['papers']:,} | {r['topics']} | {r['themes']} "
            f"| {r['old']['keyword_pair_share']:.0%} → {r['new']['keyword_pair_share']:.0%} "
            f"| {r['old']['mean_share_of_papers_using_name']:.0%} → {r['new']['mean_share_of_papers_using_name']:.0%} "
            f"| {r['old']['distinct_names']} → {r['new']['distinct_names']} "
            f"| {r['stability']['seconds']} / {r['build_seconds']} |"
        )
    for r in results:
        lines += [
            "",
            f"## {r['dataset']} ({r['papers']:,} papers, built {r['date']})",
            "",
            "Themes: "
            + "; ".join(f"{t['label']} ({t['size']} papers, {t['topics']} topics)" for t in r["theme_rows"]),
            "",
            "| topic | size | old name | new name | theme | stability |",
            "|---:|---:|---|---|---|---:|",
        ]
        for row in r["rows"]:
            stability = "" if row["stability"] is None else f"{row['stability']:.2f}"
            lines.append(
                f"| {row['topic_id']} | {row['size']} | {row['old']} | {row['new']} | {row['theme']} | {stability} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument(
        "--corpus", type=Path, default=Path(os.environ.get("ATLAS_CORPUS") or bench_pipeline.CORPUS)
    )
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in args.datasets.split(","):
        result = bench(name, args.corpus)
        if result is None:
            continue
        (RESULTS / f"names-{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        print(f"[{name}] {result['new']} (old {result['old']})", file=sys.stderr, flush=True)
    results = [
        json.loads((RESULTS / f"names-{n}.json").read_text())
        for n in DATASETS
        if (RESULTS / f"names-{n}.json").exists()
    ]
    (ROOT / "benchmarks" / "NAMES_RESULTS.md").write_text(markdown(results))


if __name__ == "__main__":
    main()
