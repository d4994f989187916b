"""Rebuilds that keep what still holds: topic ids kept, positions moved and quality, before and after.

    python benchmarks/bench_rebuild.py [--base 900] [--seed 2026] [--corpus PATH]

Samples a base corpus from the shared corpus (seeded), builds a map of it, then rebuilds it with
+10% and +33% more papers of the same population, once as the pipeline did before (`--refit`: a
fresh fit whose ids are matched by lineage) and once as it does now (the default: the previous
map's settings and reductions carried). A third scenario adds a new area on purpose: the base
leaves one field out and the +33% papers all come from it, so they should form new topics.

Also: the identical rebuild (the base map rebuilt twice into its folder from the same input:
papers keeping their topic, names equal, the largest layout shift, the largest stability change),
and on every base map the unassigned papers that sit in dense groups (`dense_groups`: each other's
nearest neighbours, apart from every topic; the goal is none).

Reported per rebuild: share of old papers (assigned before) that keep their topic id, median
(p90, max) displacement of old papers as a share of the map's extent (diagonal of the old map's bounding
box), topics, NMI/ARI against the venue-level `field` (held out: the fit never sees it), and the
unassigned share; for the fresh fits the same quality figures. Real encoder (int8 ONNX
all-MiniLM-L6-v2) through the pipeline's cache: set ATLAS_CACHE_DIR to reuse it between runs.
Results: benchmarks/results/rebuild-<seed>.json and benchmarks/REBUILD_RESULTS.md (every stored seed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_tokens import corpus_path  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
REPORT = ROOT / "benchmarks" / "REBUILD_RESULTS.md"
SEEDS = (2026, 2027)  # corpus samples; each run stores results/rebuild-<seed>.json
NEW_FIELD = "NLP"
SAMPLED_FIT = 400


def scenarios(
    corpus: Path, base: int, seed: int = SEEDS[0]
) -> dict[str, tuple[pd.DataFrame, dict[str, pd.DataFrame]]]:
    """name -> (base papers, {"+10%": added papers, "+33%": added papers}), all seeded."""
    full = pd.read_parquet(corpus, columns=["title", "abstract", "venue", "year", "field"])
    full = full.drop_duplicates("abstract").sample(frac=1.0, random_state=seed).reset_index(drop=True)
    extra = round(base / 3)
    same = full.iloc[: base + extra]
    others = full[full["field"] != NEW_FIELD]
    new_area = full[full["field"] == NEW_FIELD]
    return {
        "same population": (
            same.iloc[:base],
            {"+10%": same.iloc[base : base + round(base / 10)], "+33%": same.iloc[base:]},
        ),
        "new area": (others.iloc[:base], {"+33%": new_area.iloc[:extra]}),
        # The default past 40,000 papers is a fit on a sample with the rest assigned; the same
        # corpus fitted on a third of its papers stands in for it.
        f"same population, fit on a sample of {SAMPLED_FIT}": (same.iloc[:base], {"+33%": same.iloc[base:]}),
    }


def write_input(frame: pd.DataFrame, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.parquet"
    frame.to_parquet(path, index=False)
    return path


def old_paper_changes(before, after) -> dict:
    """Ids kept and positions moved for the papers of `before` that `after` still holds."""
    old = before.papers.set_index("doc_id")
    new = after.papers.set_index("doc_id").loc[old.index]
    assigned = old["topic_id"] != -1
    kept = float((new.loc[assigned, "topic_id"] == old.loc[assigned, "topic_id"]).mean())
    xy_old, xy_new = old[["x", "y"]].to_numpy(), new[["x", "y"]].to_numpy()
    extent = float(np.linalg.norm(xy_old.max(axis=0) - xy_old.min(axis=0)))
    moved = np.linalg.norm(xy_new - xy_old, axis=1) / extent
    theme_before = old["topic_id"].map(dict(zip(before.topics["topic_id"], before.topics["theme_id"])))
    theme_after = new["topic_id"].map(dict(zip(after.topics["topic_id"], after.topics["theme_id"])))
    themes_kept = float((theme_after[assigned] == theme_before[assigned]).mean())
    return {
        "ids_kept": round(kept, 4),
        "theme_ids_kept": round(themes_kept, 4),
        "moved_median": round(float(np.median(moved)), 4),
        "moved_p90": round(float(np.quantile(moved, 0.9)), 4),
        "moved_max": round(float(moved.max()), 4),
    }


def identical_rebuild(base_file: Path, base_map: Path, work: Path, config) -> dict:
    """The base map rebuilt twice into (a copy of) its folder from the same input and options."""
    import shutil

    from pipeline.commands.build import build_map
    from pipeline.mapfolder.store import read_map

    out = work / "identical"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(base_map, out)
    before = read_map(out)
    result = {}
    for run in (1, 2):
        lines: list[str] = []
        started = time.perf_counter()
        build_map([base_file], out, config, progress=False, log=lines.append)
        after = read_map(out)
        changes = old_paper_changes(before, after)
        names = dict(zip(before.topics["topic_id"], before.topics["label"], strict=True))
        stability = (
            after.topics.set_index("topic_id")["stability"] - before.topics.set_index("topic_id")["stability"]
        )
        result[f"run {run}"] = {
            "ids_kept": changes["ids_kept"],
            "theme_ids_kept": changes["theme_ids_kept"],
            "names_equal": names == dict(zip(after.topics["topic_id"], after.topics["label"], strict=True)),
            "moved_max": changes["moved_max"],
            "stability_change_max": round(float(stability.abs().max()), 4)
            if stability.notna().any()
            else None,
            "kept_as_it_was": any("nothing changed" in line for line in lines),
            "seconds": round(time.perf_counter() - started, 1),
        }
        before = after
    return result


def unassigned_in_groups(atlas) -> dict:
    """Unassigned papers of a map, and how many of them sit in dense groups (`dense_groups`)."""
    from pipeline.modelling.neighbours import neighbour_graph
    from pipeline.modelling.topics import dense_group_size, dense_groups

    labels = atlas.papers["topic_id"].to_numpy()
    size = dense_group_size(int(atlas.manifest.config.settings["min_topic_size"]))
    neighbours = neighbour_graph(atlas.embeddings.astype(np.float32), size)[0]
    groups = dense_groups(labels, neighbours, size)
    return {
        "unassigned": int((labels == -1).sum()),
        "unassigned_share": round(float((labels == -1).mean()), 4),
        "in_dense_groups": int(sum(len(g) for g in groups)),
        "dense_groups": len(groups),
    }


def new_papers_together(atlas, new_ids: set[str], k: int = 10) -> float:
    """Mean share of a new paper's k nearest papers on the 2-D map that are new too (do they form a region?)."""
    xy = atlas.papers[["x", "y"]].to_numpy(dtype=np.float64)
    is_new = atlas.papers["doc_id"].isin(new_ids).to_numpy()
    if not is_new.any():
        return float("nan")
    distances = ((xy[is_new][:, None, :] - xy[None, :, :]) ** 2).sum(axis=2)
    nearest = np.argsort(distances, axis=1)[:, 1 : k + 1]
    return round(float(is_new[nearest].mean()), 4)


def quality(atlas, fields: dict[str, str]) -> dict:
    from pipeline.modelling.evaluate import agreement

    labels = atlas.papers["topic_id"].to_numpy()
    truth = atlas.papers["doc_id"].map(fields).tolist()
    scores = agreement(labels, truth)
    return {
        "topics": len(atlas.topics),
        "nmi": round(scores["nmi"], 4),
        "ari": round(scores["ari"], 4),
        "unassigned": round(float((labels == -1).mean()), 4),
        "cliffs": atlas.manifest.quality.get("agreement_at_nearby_topic_counts"),
    }


def run(corpus: Path, base_size: int, seed: int) -> dict:
    from pipeline.commands.build import build_map
    from pipeline.config import BuildConfig
    from pipeline.ingest import ingest
    from pipeline.mapfolder.store import read_map

    plain = BuildConfig(stability=False)
    stable = BuildConfig()  # the identical rebuild also compares stability scores
    rows, identical, groups = [], {}, {}
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for scenario, (base, extras) in scenarios(corpus, base_size, seed).items():
            config = replace(plain, fit_sample=SAMPLED_FIT) if "sample of" in scenario else plain
            base_file = write_input(base, work / scenario, "base")
            base_map = work / scenario / "base-map"
            build_map([base_file], base_map, config, progress=False, log=lambda m: None)
            before = read_map(base_map)
            groups[scenario] = unassigned_in_groups(before)
            if scenario == "same population":
                stable_map = work / scenario / "base-map-stability"
                build_map([base_file], stable_map, stable, progress=False, log=lambda m: None)
                identical = identical_rebuild(base_file, stable_map, work, stable)
                print(json.dumps({"identical": identical, "groups": groups}), file=sys.stderr, flush=True)
            for grown_by, extra in extras.items():
                extra_file = write_input(extra, work / scenario, f"extra{grown_by}")
                papers = ingest([base_file, extra_file]).papers
                everything = pd.concat([base, extra])
                fields = dict(
                    zip(papers["doc_id"], everything.set_index("abstract").loc[papers["abstract"], "field"])
                )
                new_ids = set(papers["doc_id"]) - set(before.papers["doc_id"])
                result = {
                    "scenario": scenario,
                    "base": len(before.papers),
                    "grown_by": grown_by,
                    "papers": len(papers),
                }
                fresh = build_map(
                    [base_file, extra_file],
                    work / "fresh",
                    config,
                    previous=False,
                    progress=False,
                    log=lambda m: None,
                )
                result["fresh"] = quality(fresh, fields)
                result["base_map"] = quality(before, fields)
                for mode, refit in (("before (--refit)", True), ("after", False)):
                    out = work / f"rebuild-{refit}"
                    started = time.perf_counter()
                    rebuilt = build_map(
                        [base_file, extra_file],
                        out,
                        config,
                        previous=base_map,
                        refit=refit,
                        progress=False,
                        log=lambda m: None,
                    )
                    seconds = time.perf_counter() - started
                    atlas = read_map(out)
                    new_rows = atlas.papers["doc_id"].isin(new_ids)
                    old_topics = set(before.topics["topic_id"])
                    landed = atlas.papers.loc[new_rows, "topic_id"]
                    result[mode] = {
                        **old_paper_changes(before, atlas),
                        **quality(atlas, fields),
                        "new_papers_in_new_topics": round(
                            float((~landed.isin(old_topics) & (landed != -1)).mean()), 4
                        ),
                        "new_topics": int(len(set(atlas.topics["topic_id"]) - old_topics)),
                        "new_papers_together": new_papers_together(atlas, new_ids),
                        "statuses": rebuilt.lineage["status"].value_counts().to_dict(),
                        "seconds": round(seconds, 1),
                    }
                rows.append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
    return {
        "rows": rows,
        "identical": identical,
        "unassigned_groups": groups,
        "load": [round(x, 2) for x in os.getloadavg()],
        "base": base_size,
        "seed": seed,
    }


def render(runs: list[dict]) -> str:
    stored = runs[0]
    lines = [
        "# Rebuilds that keep what still holds",
        "",
        "Produced by `python benchmarks/bench_rebuild.py` on the shared corpus (real int8 ONNX encoder,",
        f"stability scoring off). A base map of {stored['base']} papers is rebuilt with more papers",
        "of the same population (+10%, +33%), and, for the *new area* scenario, a base without any NLP",
        "paper rebuilt with +33% NLP papers. *before* is the pipeline as it was (a fresh fit whose ids are",
        "matched by lineage; today's `--refit`), *after* the default rebuild (settings carried, previous",
        "topics as semi-supervised UMAP targets and as anchors for the clusters, layout started from the",
        "previous positions and aligned to them).",
        "",
        "- ids kept: share of the old papers (assigned before) whose topic id is unchanged; theme ids kept:",
        "  the same for their theme id (themes are formed afresh and matched by `pipeline/modelling/theme_lineage.py`).",
        "- moved: median (p90, max) displacement of old papers as a share of the old map's bounding-box diagonal.",
        "- NMI/ARI against the venue-level `field`, which no fit sees (held out); unassigned share.",
        "- new papers in new topics: share of the added papers in a topic id the base map did not have.",
        "- new papers' map neighbours new: mean share of an added paper's 10 nearest papers on the 2-D map",
        "  that are added papers too (high when the new area forms a region of its own).",
        "- base map: the map being rebuilt, scored on its own papers.",
        "",
        "| scenario | papers | rebuild | ids kept | theme ids kept | moved median (p90, max) | topics | NMI | ARI | unassigned | new papers in new topics | new topics | new papers' map neighbours new | s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = [dict(r, seed=run["seed"]) for run in runs for r in run["rows"]]
    for r in rows:
        label = f"{r['scenario']} {r['grown_by']} (sample {r['seed']})"
        for name, f in (("base map", r["base_map"]), ("fresh fit (no previous)", r["fresh"])):
            lines.append(
                f"| {label} | {r['base']} → {r['papers']} | {name} | | | | {f['topics']} | {f['nmi']} | "
                f"{f['ari']} | {f['unassigned']:.1%} | | | | |"
            )
        for mode in ("before (--refit)", "after"):
            m = r[mode]
            lines.append(
                f"| {label} | | {mode} | {m['ids_kept']:.1%} | {m.get('theme_ids_kept', float('nan')):.1%} | {m['moved_median']:.3f} ({m['moved_p90']:.3f}, {m.get('moved_max', float('nan')):.3f}) | "
                f"{m['topics']} | {m['nmi']} | {m['ari']} | {m['unassigned']:.1%} | {m['new_papers_in_new_topics']:.1%} | "
                f"{m['new_topics']} | {m['new_papers_together']:.1%} | {m['seconds']} |"
            )
    lines += [
        "",
        "Agreement of re-clusterings at the topic counts the fresh fits tried (`quality.agreement_at_nearby_topic_counts`):",
        "",
    ]
    for r in rows:
        lines.append(f"- {r['scenario']} {r['grown_by']} (sample {r['seed']}): {r['fresh']['cliffs']}")
    lines += [
        "",
        "## The identical rebuild",
        "",
        "The base map of the *same population* scenario (built with stability on), rebuilt twice into its",
        "folder from the same input and options: share of papers keeping their topic and theme id, whether",
        "every topic name is equal, the largest layout shift (share of the span) and the largest change of a",
        "topic's stability score; *kept* says the build found nothing changed and kept the topics and layout.",
        "",
        "| sample | run | ids kept | theme ids kept | names equal | largest shift | largest stability change | kept | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        for name, r in (run.get("identical") or {}).items():
            lines.append(
                f"| {run['seed']} | {name} | {r['ids_kept']:.1%} | {r['theme_ids_kept']:.1%} | {r['names_equal']} | "
                f"{r['moved_max']:.4f} | {r['stability_change_max']} | {r['kept_as_it_was']} | {r['seconds']} |"
            )
    lines += [
        "",
        "## Unassigned papers in dense groups",
        "",
        "On each base map: unassigned papers, and those of them in a group of at least 8 (or the smallest",
        "topic size if smaller, at least 5) that are each other's nearest neighbours and apart from every",
        "topic (`pipeline.modelling.topics.dense_groups`). Goal: none; the unassigned share at most 3%.",
        "",
        "| sample | map | unassigned | share | in dense groups | groups |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        for name, g in (run.get("unassigned_groups") or {}).items():
            lines.append(
                f"| {run['seed']} | {name} | {g['unassigned']} | {g['unassigned_share']:.1%} | "
                f"{g['in_dense_groups']} | {g['dense_groups']} |"
            )
    lines += [""]
    for run in runs:
        lines.append(f"Load average after the sample {run['seed']} run (1, 5, 15 min): {run['load']}.")
    lines += [""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=900)
    parser.add_argument("--corpus")
    parser.add_argument("--seed", type=int, default=SEEDS[0], help="corpus sample seed")
    args = parser.parse_args()
    corpus = corpus_path(args.corpus)
    if not corpus.exists():
        print(f"skipping: {corpus} is not here (it is not part of a clone)", file=sys.stderr)
        return
    print(f"load before: {os.getloadavg()}", file=sys.stderr)
    stored = run(corpus, args.base, args.seed)
    (RESULTS / f"rebuild-{args.seed}.json").write_text(json.dumps(stored, indent=2) + "\n")
    runs = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("rebuild-*.json"))]
    REPORT.write_text(render(runs))
    print(REPORT.read_text())


if __name__ == "__main__":
    main()
