"""The theme level, measured against what the same topics would give grouped by their vectors alone.

Needs the shared corpus (../shared/corpus/ml_abstracts.parquet; exits 2 with an `error:` line when
it is absent). Five maps, built with the real pipeline (`build_map`, packaged int8 encoder, stability
off) into a persistent folder (`--maps-dir`, default /work/bench-maps/<name>/, each map's input
saved beside it as <name>.parquet), with the user's embedding cache (ATLAS_CACHE_DIR, default
~/.cache/abstract-atlas):

- `eccv`: ECCV 2020 and 2022 (venue == "ECCV", year in 2020, 2022), a within-field conference;
- `random-5000`: corpus.sample(5000, random_state=5), `random-4000`: corpus.sample(4000, random_state=7)
  (bench_quality.py's random set);
- `balanced-5field`: 600 papers of each field with at least 1,000 (bench_quality.py's balanced set);
- `seeds`: the repository's seeds/ folder.

For each map's theme level, on the same paper vectors, the same topics and the same number of groups:
the map's own themes; Ward linkage on the topics' centroids (unit mean of member vectors),
`fcluster(maxclust=themes)`; KMeans in the build's own 10-D cosine UMAP of the papers (the reduction
bench_quality.py cuts in, read from the cache); and the topics themselves for reference. Each scored by
cohesion (silhouette of papers by group, cosine on the paper vectors, unassigned papers left out, one
fixed sample of at most 5,000 papers a map), NMI (arithmetic) against the corpus `field` (not for
seeds), and the largest group's share of the papers.

    python benchmarks/bench_themes.py               # rebuild every map with the current code, then measure
    python benchmarks/bench_themes.py --from-maps   # re-run only theme grouping and naming on the built maps

`--from-maps` reads each built map (papers.parquet, topics.parquet, embeddings.npy) and runs the
build's own theme stage (`pipeline.commands.build.group_into_themes`: `fit_themes` with the area
votes, then topics renamed where a theme took their name) on the stored topics: seconds, so
pipeline/modelling/themes.py and pipeline/naming/ can be changed and measured without a rebuild.
Writes benchmarks/THEMES_RESULTS.md (the figures) and the top of benchmarks/NAMES_RESULTS.md (every
theme with its topics and names, per map; the earlier round stays below it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.common import (  # noqa: E402
    CORPUS,
    EARLIER_NAMES,
    NAMES_RESULTS,
    balanced_set,
    corpus_missing,
    random_set,
    write_part,
)
from pipeline.mapfolder.manifest import Manifest  # noqa: E402

MAPS_DIR = Path("/work/bench-maps")
CORPUS_COLUMNS = ["title", "abstract", "venue", "year", "field"]


@dataclass(frozen=True)
class MapSpec:
    name: str
    about: str  # how the papers were drawn, as the results say it

    def papers(self, corpus):
        """This map's input papers (a table the build reads as a parquet file)."""
        if self.name == "eccv":
            return corpus[(corpus["venue"] == "ECCV") & corpus["year"].isin([2020, 2022])]
        if self.name == "random-5000":
            return random_set(corpus, 5000, seed=5)
        if self.name == "colm-2024-25":
            return corpus[(corpus["venue"] == "COLM") & corpus["year"].isin([2024, 2025])]
        if self.name == "random-4000":
            return random_set(corpus, 4000, seed=7)
        if self.name == "balanced-5field":
            return balanced_set(corpus)
        from pipeline.ingest import ingest

        return ingest([ROOT / "seeds"]).papers[["title", "abstract"]]


MAPS = (
    MapSpec("eccv", "ECCV 2020 + 2022 (venue ECCV, year 2020 or 2022)"),
    MapSpec("random-5000", "corpus.sample(5000, random_state=5)"),
    MapSpec("random-4000", "corpus.sample(4000, random_state=7), as bench_quality.py"),
    MapSpec("balanced-5field", "600 a field (random_state=7) of the 5 fields with >= 1,000 papers"),
    MapSpec("seeds", "the repository's seeds/ folder (57 papers)"),
)


def build_maps(specs, maps_dir: Path, corpus) -> dict[str, float]:
    """Build each map afresh with the current code (ids numbered anew, nothing carried); seconds each."""
    from pipeline.commands.build import build_map
    from pipeline.config import BuildConfig

    maps_dir.mkdir(parents=True, exist_ok=True)
    seconds = {}
    for spec in specs:
        source = maps_dir / f"{spec.name}.parquet"
        frame = spec.papers(corpus).reset_index(drop=True)
        frame[[c for c in CORPUS_COLUMNS if c in frame.columns]].to_parquet(source, index=False)
        print(f"[{spec.name}] building {len(frame):,} papers into {maps_dir / spec.name}", flush=True)
        started = time.perf_counter()
        build_map(
            [source],
            maps_dir / spec.name,
            BuildConfig(stability=False),
            name=spec.name,
            progress=False,
            previous=False,
            refit=True,
        )
        seconds[spec.name] = round(time.perf_counter() - started, 1)
        print(f"[{spec.name}] built in {seconds[spec.name]:.0f} s", flush=True)
    return seconds


@dataclass
class BuiltMap:
    """One built map as the theme stage sees it, with the themes being measured."""

    name: str
    papers: object  # papers.parquet (topic_id per paper, `field` where the input had it)
    topics: object  # topics.parquet: topic_id, label, size, centroid (names after the theme stage)
    themes: object  # the themes measured: theme_id, label, size, topic_ids, name_source, name_share
    theme_of: dict[int, int]  # topic id -> theme id
    vectors: object  # float32 paper vectors, as the build fitted on them
    manifest: Manifest
    theme_seconds: float | None = None  # time of the theme stage (--from-maps), else None


def read_built(folder: Path):
    """papers, topics, themes, float32 vectors and manifest of the map in `folder`."""
    import numpy as np

    from pipeline.mapfolder.store import read_map

    atlas = read_map(folder)
    vectors = np.asarray(atlas.embeddings, dtype=np.float32)
    return atlas.papers, atlas.topics, atlas.themes, vectors, atlas.manifest


def as_built(name: str, folder: Path) -> BuiltMap:
    """The map's own themes, as its build wrote them."""
    papers, topics, themes, vectors, manifest = read_built(folder)
    theme_of = dict(zip(topics["topic_id"].astype(int), topics["theme_id"].astype(int), strict=True))
    return BuiltMap(name, papers, topics, themes, theme_of, vectors, manifest)


def phrases_of(documents: list[str], maps_dir: Path, name: str):
    """`count_phrases(documents)` (what `fit_topics` counts for an English corpus), kept on disk under
    `maps_dir` and keyed by the abstracts and the source of pipeline/naming/: the slowest step of the
    theme stage is redone only when the papers or the naming code change."""
    import hashlib
    import pickle

    from pipeline.naming.names import count_phrases

    digest = hashlib.sha256("\0".join(documents).encode())
    for source in sorted((ROOT / "pipeline" / "naming").glob("*.py")):
        digest.update(source.read_bytes())
    path = maps_dir / ".phrases" / f"{name}-{digest.hexdigest()[:16]}.pickle"
    if path.is_file():
        with path.open("rb") as stored:
            return pickle.load(stored)  # noqa: S301 (written by this script, below)
    phrases = count_phrases(documents)
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob(f"{name}-*.pickle"):
        old.unlink()
    with path.open("wb") as out:
        pickle.dump(phrases, out)
    return phrases


def rerun_themes(name: str, folder: Path) -> BuiltMap:
    """The current code's naming and theme stage on the map's stored papers, vectors and topics:
    topics named again (`describe_topics`, the stored keywords kept), then `group_into_themes` as the
    build runs it. The partition into topics is the map's; names and themes are the current code's
    (on unchanged code they are the map's own, name for name)."""
    import numpy as np

    from pipeline.commands.build import group_into_themes
    from pipeline.embedding.embed import embed_texts
    from pipeline.modelling.sample_fit import SampleFit
    from pipeline.modelling.topics import Topics, describe_topics

    papers, topics, _, vectors, manifest = read_built(folder)
    started = time.perf_counter()
    documents = papers["abstract"].astype(str).tolist()
    labels = papers["topic_id"].to_numpy(dtype=np.int64)
    phrases = phrases_of(documents, folder.parent, name)
    words = {
        int(t): list(zip(k, w, strict=True))
        for t, k, w in zip(topics["topic_id"], topics["keywords"], topics["keyword_weights"], strict=True)
    }
    table = describe_topics(labels, words, documents, vectors, phrases=phrases)
    fit = SampleFit.of_all(
        Topics(labels=labels, table=table, knn=None, hdbscan_unassigned=0, phrases=phrases)
    )
    config = manifest.config.settings

    def encode(texts):  # the build's phrase encoder: the map's embedder, through the embedding cache
        return embed_texts(
            texts, embedder=config["embedder"], max_tokens=config["max_tokens"], progress=False
        )[0]

    themes, theme_of = group_into_themes(fit, documents, vectors, encode, manifest.model.encoder)
    seconds = time.perf_counter() - started
    table["theme_id"] = table["topic_id"].map(theme_of).fillna(-1).astype("int64")
    return BuiltMap(name, papers, table, themes, theme_of, vectors, manifest, round(seconds, 2))


def cluster_space(built: BuiltMap):
    """The build's own 10-D cosine UMAP of the papers (what its KMeans cuts topics in, and
    bench_quality.py's "KMeans UMAP-10"), from the reduction cache the build filled."""
    import numpy as np

    from pipeline._fastimport import import_topic_libraries
    from pipeline.cache import cache_dir, cached_reduction
    from pipeline.modelling.layout import umap_cache_key, umap_settings
    from pipeline.modelling.neighbours import neighbour_graph
    from pipeline.modelling.topics import CLUSTER_DIMENSIONS

    config = built.manifest.config.settings
    vectors = built.vectors
    if config["n_neighbors"] >= len(vectors) / 3:  # as fit_topics: a handful of papers is not reduced
        return np.asarray(vectors, dtype=np.float32)
    settings = umap_settings(
        CLUSTER_DIMENSIONS, n_neighbors=config["n_neighbors"], random_state=config["random_state"]
    )
    _, _, UMAP, _ = import_topic_libraries(str(cache_dir()))

    def compute():
        knn = neighbour_graph(vectors, config["n_neighbors"])
        return UMAP(**settings, precomputed_knn=knn).fit_transform(vectors)

    reduced, _ = cached_reduction(
        f"umap{CLUSTER_DIMENSIONS}", vectors, umap_cache_key(settings, knn="exact"), compute
    )
    return reduced


SILHOUETTE_SAMPLE = 5000


def partitions(built: BuiltMap) -> tuple[object, list[tuple[str, object]]]:
    """The assigned papers' rows and, on them, each partition compared (name, one group per row)."""
    import numpy as np
    from scipy.cluster.hierarchy import fcluster, linkage
    from sklearn.cluster import KMeans

    labels = built.papers["topic_id"].to_numpy(dtype=np.int64)
    rows = np.flatnonzero(labels != -1)
    topic_ids = sorted(set(labels[rows].tolist()))
    count = len(set(built.theme_of.values()))
    centroids = np.stack([built.vectors[labels == t].mean(axis=0) for t in topic_ids])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    ward_of = dict(
        zip(topic_ids, fcluster(linkage(centroids, "ward"), count, criterion="maxclust"), strict=True)
    )
    kmeans = KMeans(n_clusters=count, n_init=10, random_state=0).fit_predict(cluster_space(built))
    assigned = labels[rows]
    return rows, [
        ("map's themes", np.array([built.theme_of[t] for t in assigned])),
        ("Ward on topic centroids", np.array([ward_of[t] for t in assigned])),
        ("KMeans UMAP-10", kmeans[rows]),
        ("map's topics", assigned),
    ]


def measure(built: BuiltMap) -> list[dict]:
    """Cohesion, NMI against `field` and the largest group's share, for each partition of the map."""
    import numpy as np
    from sklearn.metrics import normalized_mutual_info_score, silhouette_score

    rows, compared = partitions(built)
    sample = np.arange(len(rows))
    if len(sample) > SILHOUETTE_SAMPLE:
        sample = np.sort(np.random.default_rng(0).choice(len(rows), SILHOUETTE_SAMPLE, replace=False))
    points = built.vectors[rows[sample]]
    points = points / np.linalg.norm(points, axis=1, keepdims=True)
    distances = np.clip(1.0 - points @ points.T, 0.0, 2.0)  # cosine, once for every partition
    np.fill_diagonal(distances, 0.0)
    field = built.papers["field"].astype(str).to_numpy()[rows] if "field" in built.papers else None
    if field is not None and len(set(field.tolist())) < 2:
        field = None  # one field (a conference): nothing for NMI to tell apart
    results = []
    for method, groups in compared:
        n_groups = len(set(groups.tolist()))
        cohesion = (
            silhouette_score(distances, groups[sample], metric="precomputed")
            if 1 < n_groups < len(sample)
            else float("nan")
        )
        results.append(
            {
                "map": built.name,
                "method": method,
                "groups": n_groups,
                "cohesion": round(float(cohesion), 3),
                "nmi": None
                if field is None
                else round(float(normalized_mutual_info_score(field, groups)), 3),
                # of all the map's papers (unassigned ones count in the total), as a reader sees it
                "largest": round(
                    float(np.bincount(np.unique(groups, return_inverse=True)[1]).max()) / len(built.papers), 3
                ),
            }
        )
    return results


THEMES_RESULTS = ROOT / "benchmarks" / "THEMES_RESULTS.md"
ISSUE_FIGURES = (
    "Figures in issue 39 (an earlier build, for orientation), cohesion of themes vs Ward: ECCV 2020+2022 "
    "0.039 vs 0.063 (largest theme 28%); a random 5,000 0.004 vs 0.063 (41%); a random 4,000 0.050 vs 0.054 (26%)."
)


def run_facts(mode: str, started: float, load_before: tuple) -> list[str]:
    """What a reader needs to judge the figures: command, commit, date, CPU kind, load, time."""
    import subprocess

    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "pipeline"], capture_output=True, text=True
    ).stdout.strip()
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    cpu = "AVX-512 VNNI (avx512_vnni)" if "avx512_vnni" in flags else "no avx512_vnni (AVX2 kernels)"
    load_after = os.getloadavg()
    return [
        f"Command: `python benchmarks/bench_themes.py{' --from-maps' if mode == 'from-maps' else ''}` "
        f"(mode: {'theme stage only, on the built maps' if mode == 'from-maps' else 'full: every map rebuilt'}). "
        f"Commit {commit}{' with uncommitted changes under pipeline/' if dirty else ''}, "
        f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, CPU {cpu}, "
        f"{os.cpu_count()} cores, load average {load_before[0]:.1f} at the start and {load_after[0]:.1f} at the end, "
        f"{time.perf_counter() - started:.0f} s in all.",
    ]


def _pct(share: float) -> str:
    return f"{share:.0%}"


def results_table(rows: list[dict], built: dict[str, BuiltMap]) -> list[str]:
    """The summary (themes vs Ward vs KMeans, per map) and every partition's figures."""
    by = {(r["map"], r["method"]): r for r in rows}
    lines = [
        "| map | papers | topics | themes | cohesion: themes / Ward / KMeans | NMI vs field: themes / Ward / KMeans "
        "| largest group: themes / Ward / KMeans |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    methods = ("map's themes", "Ward on topic centroids", "KMeans UMAP-10")
    for name, b in built.items():
        trio = [by[(name, m)] for m in methods]
        n_topics = by[(name, "map's topics")]["groups"]
        nmi = " / ".join("–" if r["nmi"] is None else f"{r['nmi']:.3f}" for r in trio)
        lines.append(
            f"| {name} | {len(b.papers):,} | {n_topics} | {trio[0]['groups']} "
            f"| **{trio[0]['cohesion']:.3f}** / {trio[1]['cohesion']:.3f} / {trio[2]['cohesion']:.3f} "
            f"| {nmi} | {' / '.join(_pct(r['largest']) for r in trio)} |"
        )
    lines += [
        "",
        "Every partition, the topics for reference:",
        "",
        "| map | partition | groups | cohesion (silhouette, cosine) | NMI vs field | largest group |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        nmi = "–" if r["nmi"] is None else f"{r['nmi']:.3f}"
        lines.append(
            f"| {r['map']} | {r['method']} | {r['groups']} | {r['cohesion']:.3f} | {nmi} | {_pct(r['largest'])} |"
        )
    return lines


def themes_page(rows, built, facts, seconds) -> str:
    lines = [
        "# Theme level against the same topics grouped by their vectors (`python benchmarks/bench_themes.py`)",
        "",
        *facts,
        "",
        "Same paper vectors (float16 as stored), same topics, same number of groups for every theme-level "
        "partition: the map's themes; Ward linkage on the topics' centroids (unit mean of member vectors, "
        "`fcluster(maxclust=themes)`); KMeans (n_init 10) in the build's 10-D cosine UMAP of the papers. "
        "Cohesion = silhouette of the papers by group (cosine on the paper vectors, at most 5,000 papers a map, "
        "one fixed sample for every partition); NMI (arithmetic) against the corpus `field` (a venue-level label; "
        "none for seeds); both on the assigned papers (unassigned left out). Largest group = its share of all "
        "the map's papers.",
        "",
        *results_table(rows, built),
        "",
        "Maps (in "
        + str(MAPS_DIR)
        + "/, each input beside it as <name>.parquet): "
        + "; ".join(f"`{s.name}` = {s.about}" for s in MAPS if s.name in built)
        + ".",
        "",
        "Seconds per map ("
        + ("build" if seconds["mode"] == "full" else "theme stage")
        + "): "
        + ", ".join(f"{k} {v:.1f}" for k, v in seconds["per_map"].items())
        + ".",
        "",
        ISSUE_FIGURES,
    ]
    return "\n".join(lines) + "\n"


def names_page(built: dict[str, BuiltMap], facts: list[str]) -> str:
    """Every theme of every map with its name, where the name came from, and its topics."""
    lines = [
        "# Theme and topic names, every map (`python benchmarks/bench_themes.py`)",
        "",
        *facts,
        "",
        "Per map, every theme: its share of the map's papers, its name, `name_source` and `name_share` "
        "(pipeline/modelling/themes.py), and its topics with their names and sizes (papers), largest first. "
        "The figures for the same maps are in THEMES_RESULTS.md.",
    ]
    for name, b in built.items():
        n_papers = len(b.papers)
        size_of = dict(zip(b.topics["topic_id"].astype(int), b.topics["size"].astype(int), strict=True))
        label_of = dict(zip(b.topics["topic_id"].astype(int), b.topics["label"].astype(str), strict=True))
        unassigned = int((b.papers["topic_id"] == -1).sum())
        lines += [
            "",
            f"## {name} ({n_papers:,} papers, {len(label_of)} topics, {len(b.themes)} themes, "
            f"{unassigned:,} unassigned)",
            "",
            "| theme | share | name | name_source | name_share | its topics (papers) |",
            "|---:|---:|---|---|---:|---|",
        ]
        for theme in b.themes.sort_values("theme_id").itertuples():
            members = sorted((int(t) for t in theme.topic_ids), key=lambda t: -size_of[t])
            share = sum(size_of[t] for t in members) / n_papers
            lines.append(
                f"| {theme.theme_id} | {_pct(share)} | {theme.label} | {theme.name_source} "
                f"| {theme.name_share:.2f} | {'; '.join(f'{label_of[t]} ({size_of[t]})' for t in members)} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--from-maps", action="store_true", help="re-run only the theme stage on the built maps"
    )
    parser.add_argument(
        "--maps",
        default=",".join(s.name for s in MAPS),
        help="a subset (results files are written only when every map is measured): %(default)s",
    )
    parser.add_argument("--maps-dir", type=Path, default=MAPS_DIR)
    args = parser.parse_args(argv)
    if corpus_missing("bench_themes.py"):
        return 2
    os.environ.setdefault("ATLAS_CACHE_DIR", str(Path.home() / ".cache" / "abstract-atlas"))
    import pandas as pd

    wanted = args.maps.split(",")
    specs = [s for s in MAPS if s.name in wanted]
    if len(specs) != len(wanted):
        print(f"error: --maps takes {', '.join(s.name for s in MAPS)}", file=sys.stderr)
        return 2
    started, load_before = time.perf_counter(), os.getloadavg()
    if args.from_maps:
        missing = [s.name for s in specs if not (args.maps_dir / s.name / "manifest.json").is_file()]
        if missing:
            print(
                f"error: no built map for {', '.join(missing)} in {args.maps_dir}: "
                "run without --from-maps first",
                file=sys.stderr,
            )
            return 2
        built = {s.name: rerun_themes(s.name, args.maps_dir / s.name) for s in specs}
        seconds = {"mode": "from-maps", "per_map": {n: b.theme_seconds for n, b in built.items()}}
    else:
        per_map = build_maps(specs, args.maps_dir, pd.read_parquet(CORPUS))
        built = {s.name: as_built(s.name, args.maps_dir / s.name) for s in specs}
        seconds = {"mode": "full", "per_map": per_map}
    rows = [row for b in built.values() for row in measure(b)]
    facts = run_facts(seconds["mode"], started, load_before)
    print("\n".join(results_table(rows, built)))
    print(facts[0])
    if len(specs) == len(MAPS):
        THEMES_RESULTS.write_text(themes_page(rows, built, facts, seconds), encoding="utf-8")
        write_part(NAMES_RESULTS, names_page(built, facts), EARLIER_NAMES, above=True)
        print(f"wrote {THEMES_RESULTS.relative_to(ROOT)} and {NAMES_RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
