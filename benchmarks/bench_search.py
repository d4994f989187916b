"""Search speed at 81,646 papers, server side: the full-text index (build time, size, word queries) and
search by meaning (query embedding + ranking), with whole-word counts checked against the text.

Usage (from the repository root; needs the shared corpus, exits when it is absent):

    .venv/bin/python benchmarks/bench_search.py [--corpus ../shared/corpus/ml_abstracts.parquet]

What it measures, each on this machine with its load average reported next to the figures:
- index build: `pipeline.mapfolder.search_index.write_index` over every title and abstract (what `build` and
  `add` write into the map folder, and what the app builds once in the cache for an older map),
  and the file's size;
- word queries: `SearchIndex.search` plus the app's cut to the filtered papers
  (`app.search.word_search`), for hand-picked queries (common and rare words, phrases, prefixes,
  several words, a Chinese term) and for 300 words and 100 word pairs drawn from titles;
- searches (words and meaning in one list, `app.search.fused_search`): the word search, the query
  embedded with the map's encoder (ONNX int8, as the app loads it), cosine similarity against
  81,646 x 384 vectors and the fused list; beside it the search by meaning it replaced, timed the
  same way (the word search it also ran, the embedding, the similarity and its close papers sorted).
  The vectors are random unit rows (embedding the corpus takes 20 minutes): the time of a matrix
  product does not depend on the values;
- whole-word counts: papers the index finds for "pose", "ot", "gan", "art" against a regular
  expression over the text, and how many the old substring search matched.
Results go to benchmarks/SEARCH_RESULTS.md. This is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.search import fused_search, meaning_text, within, word_search  # noqa: E402
from pipeline.mapfolder.search_index import SearchIndex, write_index  # noqa: E402
from pipeline.modelling.floors import pair_similarities  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "ml_abstracts.parquet"
RESULTS = REPO / "benchmarks" / "SEARCH_RESULTS.md"
FIXED_QUERIES = [
    "video",
    "pose",
    "diffusion",
    "reinforcement learning",
    "graph neural networks",
    '"neural radiance field"',
    '"optimal transport"',
    "rank*",
    "robot* grasp*",
    "transformer attention efficient",
    "model",
    "learning",
    "network",
    "data",
    "gan",
    "ot",
    "Sinkhorn",
    "扩散模型",
    'NEAR( "unbalanced',
    "x" * 300,
]
MEANING_QUERIES = [
    "making networks robust to small input changes",
    "keeping language models from saying harmful things",
    "robots that learn to pick up objects they have never seen",
    "estimating the pose of a human body from a single image",
    "faster training of large models on many machines",
    "speeding up LLM inference with a small draft model that proposes tokens",
    "speculative decoding",
    "graph neural networks",
]
WORD_FORMS = {"pose": "pose|poses|posed|posing", "ot": "ot|ots", "gan": "gan|gans", "art": "art|arts"}


def paired(first, second, repeat: int = 15) -> tuple[float, float, object]:
    """Median seconds of `repeat` calls of each, alternated (after one warm-up each), so that a busy
    machine's load falls on both alike; and the first's last result."""
    result, _ = first(), second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for function, spent in ((first, times[0]), (second, times[1])):
            started = time.perf_counter()
            value = function()
            spent.append(time.perf_counter() - started)
            result = value if function is first else result
    return statistics.median(times[0]), statistics.median(times[1]), result


def timed(function, repeat: int = 5) -> tuple[float, object]:
    """Median seconds of `repeat` calls (after one warm-up) and the last result."""
    result = function()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def load_papers(corpus: Path) -> pd.DataFrame:
    """The corpus as the build reads it (`pipeline.ingest`): deduplicated, with doc_ids."""
    from pipeline.ingest import ingest

    return ingest([corpus]).papers.reset_index(drop=True)


def sample_queries(papers: pd.DataFrame, seed: int = 0) -> tuple[list[str], list[str]]:
    """300 single words and 100 word pairs drawn from titles (letters only, 3+ characters)."""
    rng = np.random.default_rng(seed)
    titles = papers["title"].astype(str).to_numpy()
    words, pairs = [], []
    while len(words) < 300 or len(pairs) < 100:
        tokens = [t for t in re.findall(r"[A-Za-z]{3,}", titles[rng.integers(len(titles))])]
        if len(tokens) >= 1 and len(words) < 300:
            words.append(tokens[rng.integers(len(tokens))])
        if len(tokens) >= 2 and len(pairs) < 100:
            first = rng.integers(len(tokens) - 1)
            pairs.append(f"{tokens[first]} {tokens[first + 1]}")
    return words, pairs


def summary(seconds: list[float]) -> str:
    ms = np.array(seconds) * 1000
    return f"median {np.median(ms):.1f} ms · p90 {np.percentile(ms, 90):.1f} ms · max {ms.max():.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not args.corpus.is_file():
        sys.exit(f"{args.corpus} not found: this benchmark needs the shared corpus")

    load_before = os.getloadavg()
    papers = load_papers(args.corpus)
    n = len(papers)
    print(f"{n:,} papers", file=sys.stderr)
    lines = [
        "# Search benchmark",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_search.py` · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"SQLite {__import__('sqlite3').sqlite_version} · load average at start "
        f"{load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} (1/5/15 min; the machine is "
        "shared, so times are upper bounds)",
        f"Corpus: {n:,} papers (the shared corpus as `pipeline.ingest` reads it), titles and abstracts.",
        "",
    ]

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "search.sqlite"
        started = time.perf_counter()
        write_index(path, papers)
        build_seconds = time.perf_counter() - started
        size = path.stat().st_size
        index = SearchIndex(path, n)
        in_filter = np.ones(n, dtype=bool)

        def word(query: str):
            return within(word_search(index.search(query), query), in_filter)

        lines += [
            "## Index (written into the map folder by `build` and `add`)",
            "",
            f"- build: {build_seconds:.1f} s for {n:,} papers",
            f"- size: {size / 1e6:.1f} MB (`search.sqlite`)",
            "",
            "## Word queries (server side: index query + cut to the papers in view)",
            "",
            "| query | papers | time (median of 5) |",
            "|---|---:|---:|",
        ]
        fixed_times = []
        for query in FIXED_QUERIES:
            seconds, result = timed(lambda q=query: word(q))
            fixed_times.append(seconds)
            shown = query if len(query) <= 40 else query[:20] + f"… ({len(query)} characters)"
            lines.append(f"| `{shown}` | {len(result.rows):,} | {seconds * 1000:.1f} ms |")
        words, pairs = sample_queries(papers)
        word_times = [timed(lambda q=q: word(q), repeat=3)[0] for q in words]
        pair_times = [timed(lambda q=q: word(q), repeat=3)[0] for q in pairs]
        slowest = sorted(zip(word_times, words), reverse=True)[:5]
        lines += [
            "",
            f"- {len(words)} single title words: {summary(word_times)}; slowest: "
            + ", ".join(f"`{w}` {t * 1000:.0f} ms ({len(word(w).rows):,} papers)" for t, w in slowest),
            f"- {len(pairs)} title word pairs: {summary(pair_times)}",
            f"- the {len(FIXED_QUERIES)} queries above: {summary(fixed_times)}",
            "",
            "## Whole words, counted against the text",
            "",
            "| word | index finds | papers with the word (regex over its forms) | old substring search |",
            "|---|---:|---:|---:|",
        ]
        text = (papers["title"].fillna("") + " " + papers["abstract"].fillna("")).str.lower()
        differences = []
        for term, forms in WORD_FORMS.items():
            found = set(index.search(term).rows.tolist())
            holding = text.str.contains(rf"\b(?:{forms})\b", regex=True).to_numpy()
            substring = int(text.str.contains(term, regex=False).sum())
            lines.append(f"| {term} | {len(found):,} | {int(holding.sum()):,} | {substring:,} |")
            for row in sorted(found ^ set(np.flatnonzero(holding).tolist()))[:4]:
                words_here = re.finditer(r"[^\W_]+", text.iat[row])  # word breaks as unicode61 makes them
                where = next(
                    (m for m in words_here if m.group().startswith(term) and len(m.group()) <= len(term) + 3),
                    None,
                )
                start = max(0, where.start() - 30) if where else 0
                snippet = " ".join(text.iat[row][start : start + 70].split())
                side = "index only" if row in found else "regex only"
                differences.append(f"- `{term}`, {side}: “…{snippet}…”")
        if differences:
            lines += [
                "",
                "Where the two disagree (Porter stems and unicode61 word breaks):",
                "",
                *differences,
            ]
        lines += ["", "## Searches: words and meaning in one list (server side)", ""]
        from pipeline.embedding.embed import load_encoder

        started = time.perf_counter()
        encoder = load_encoder("onnx-int8")
        load_seconds = time.perf_counter() - started
        rng = np.random.default_rng(0)
        vectors = rng.standard_normal((n, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        pairs = pair_similarities(vectors)  # what the app measures at load for a map without them
        lines += [
            f"Encoder: {encoder.name} (loaded once per server in {load_seconds:.1f} s). Vectors: {n:,} x 384 "
            "random unit rows in float32 (the app's `MapData.vectors`).",
            "",
            "| query | listed | one list: words + embed + similarity + fusion | search by meaning before (same run, alternated) |",
            "|---|---:|---:|---:|",
        ]
        totals, before = [], []
        for query in MEANING_QUERIES:

            def fused(q=query):
                hits = index.search(
                    q, labels=False
                )  # as the app's one list asks (it labels its papers itself)
                similarity = vectors @ encoder.encode([meaning_text(hits.query)])[0]
                return fused_search(index, hits, similarity, pairs, q)

            def meaning(q=query):  # the search by meaning it replaced (app.search.meaning_search, as it was)
                words = index.search(q).rows
                similarity = vectors @ encoder.encode([q])[0]
                floor, related_floor = pairs.at(99.5), pairs.at(90.0)
                candidates = np.flatnonzero(in_filter & (similarity >= floor))
                related = np.flatnonzero(in_filter & (similarity >= related_floor) & (similarity < floor))
                related = related[np.argsort(-similarity[related], kind="stable")]
                rows = candidates[np.argsort(-similarity[candidates], kind="stable")]
                return (
                    rows,
                    pairs.percentile(similarity[rows].astype(np.float64)),
                    np.isin(rows, words),
                    related,
                )

            seconds, old_seconds, result = paired(fused, meaning)
            totals.append(seconds)
            before.append(old_seconds)
            lines.append(
                f"| {query} | {len(result.rows):,} | {seconds * 1000:.1f} ms | {old_seconds * 1000:.1f} ms |"
            )
        index.close()
    load_after = os.getloadavg()
    lines += [
        "",
        f"- one list (words and meaning): {summary(totals)}",
        f"- search by meaning before: {summary(before)}",
        "",
        f"Load average at the end: {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f}.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
