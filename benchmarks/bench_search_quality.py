"""Search quality: words only, meaning only and the fused list, on hand-judged questions.

Two maps of the shared corpus (../shared/corpus/ml_abstracts.parquet), built with the real pipeline
by bench_themes.py's `build_maps` into `--maps-dir` (default /work/bench-maps) when absent:
`colm-2024-25` (venue COLM, years 2024 and 2025) and `random-5000` (corpus.sample(5000, random_state=5)).
The questions and the papers judged relevant to each (by hand, from titles and abstracts; its "how" says
how) are read from benchmarks/data/search_questions.json. The search was tuned on the COLM questions;
random-5000 is the held-out check, reported separately.

For each question, three lists over the whole map:
- words only: the word search as it ranks (`SearchIndex.search`: every word, as typed first, BM25);
- meaning only: the papers closer to the question than `CLOSE_PERCENTILE`% of the map's pairs, nearest first;
- fused: `app.search.fused_search` (reciprocal rank fusion), and the calibrated score it was measured
  against (`calibrated`: the paper's pair percentile / 100 + the share of the words it writes).

Recall@20 (share of the judged relevant papers in the first 20 listed) and precision@10 (share of
the first 10 listed that are relevant; 0 for a question listing nothing), averaged per class;
off-domain questions must list nothing. Writes benchmarks/SEARCH_QUALITY.md.

    .venv/bin/python benchmarks/bench_search_quality.py [--maps-dir DIR] [--pool]

`--pool` prints, for each question, the first 20 of each list with their titles (what was judged).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pipeline  # noqa: E402, F401  (first: the numeric code paths)
from benchmarks.common import CORPUS, corpus_missing  # noqa: E402

QUESTIONS = ROOT / "benchmarks" / "data" / "search_questions.json"
RESULTS = ROOT / "benchmarks" / "SEARCH_QUALITY.md"
MAPS = ("colm-2024-25", "random-5000")
SYSTEMS = ("words", "meaning", "fused", "calibrated")


def maps_ready(maps_dir: Path) -> None:
    """Build the maps that are not in `maps_dir` yet (bench_themes.py's builder)."""
    from benchmarks.bench_themes import MapSpec, build_maps

    missing = [MapSpec(name, name) for name in MAPS if not (maps_dir / name / "manifest.json").is_file()]
    if missing:
        import pandas as pd

        build_maps(missing, maps_dir, pd.read_parquet(CORPUS))


class Searcher:
    """One map's search parts: its index, vectors, pair similarities and encoder."""

    def __init__(self, folder: Path) -> None:
        from app.encoder import bundle_folder
        from pipeline.embedding.onnx_encoder import OnnxEncoder
        from pipeline.mapfolder.search_index import SearchIndex
        from pipeline.mapfolder.store import read_map
        from pipeline.modelling.floors import map_pair_similarities

        atlas = read_map(folder)
        self.titles = atlas.papers["title"].astype(str).tolist()
        self.texts = (
            (atlas.papers["title"].fillna("") + " " + atlas.papers["abstract"].fillna(""))
            .str.lower()
            .tolist()
        )
        self.vectors = np.asarray(atlas.embeddings, dtype=np.float32)
        self.pairs = map_pair_similarities(atlas.manifest, self.vectors)
        self.index = SearchIndex(folder / "search.sqlite", len(self.titles))
        self.encoder = OnnxEncoder(
            bundle=str(bundle_folder(atlas.manifest)), max_tokens=atlas.manifest.max_tokens, threads=1
        )

    def lists(self, question: str) -> dict[str, np.ndarray]:
        from app.search import COMMON_SHARE, content_words, fused_search, meaning_text, some_words
        from pipeline.modelling.floors import CLOSE_PERCENTILE

        hits = self.index.search(question)
        similarity = self.vectors @ self.encoder.encode([meaning_text(hits.query)])[0]
        fused = fused_search(self.index, hits, similarity, self.pairs, question)
        close = np.flatnonzero(similarity >= self.pairs.at(CLOSE_PERCENTILE))
        meaning = close[np.argsort(-similarity[close], kind="stable")]
        # The calibrated score: the same listed papers, ranked by pair percentile / 100 + share of words.
        words = content_words(hits.query)
        found = self.index.word_papers(words, int(COMMON_SHARE * len(similarity))) if words else {}
        share = some_words(
            found, len(similarity), self.index.title_papers([w for w, r in found.items() if r is not None])
        )
        every = np.isin(fused.rows, hits.rows)
        score = (
            self.pairs.percentile(similarity[fused.rows].astype(np.float64)) / 100 + share[fused.rows] + every
        )
        calibrated = fused.rows[np.argsort(-score, kind="stable")]
        nearest = np.argsort(-similarity, kind="stable")[:30]
        return {
            "words": hits.rows,
            "meaning": meaning,
            "fused": fused.rows,
            "calibrated": calibrated,
            "nearest": nearest,
        }


def judged(item: dict, titles: list[str], texts: list[str], missing: list[str]) -> set[int]:
    """The rows judged relevant to a question: title prefixes ("relevant"), or patterns over the lower-cased
    title ("pattern.title") and title and abstract ("pattern.text"), less the titles read and judged not ("not")."""
    import re

    rows = set()
    for prefix in item.get("relevant", []):
        found = [i for i, t in enumerate(titles) if t.startswith(prefix)]
        rows.update(found) if found else missing.append(prefix)
    patterns = item.get("pattern", {})
    if patterns:
        for i, (title, text) in enumerate(zip(titles, texts, strict=True)):
            if all(re.search(p, {"title": title.lower(), "text": text}[k]) for k, p in patterns.items()):
                rows.add(i)
    refused = tuple(item.get("not", []))
    return {i for i in rows if not titles[i].startswith(refused)} if refused else rows


def scores(listed: np.ndarray, relevant: set[int]) -> tuple[float, float]:
    """(recall@20, precision@10) of one list."""
    top10, top20 = listed[:10].tolist(), listed[:20].tolist()
    recall = len(relevant & set(top20)) / len(relevant) if relevant else float("nan")
    precision = len(relevant & set(top10)) / len(top10) if top10 else 0.0
    return recall, precision


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps-dir", type=Path, default=Path("/work/bench-maps"))
    parser.add_argument("--pool", action="store_true", help="print each list's first 20 titles")
    args = parser.parse_args(argv)
    if corpus_missing():
        return 2
    maps_ready(args.maps_dir)
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    started = time.perf_counter()
    rows, per_class, per_map = [], {}, {}
    missing_titles, checks = [], []
    for name in MAPS:
        searcher = Searcher(args.maps_dir / name)
        for item in (q for q in questions if q["map"] == name):
            lists = searcher.lists(item["question"])
            if args.pool:
                print(f"\n=== [{name}] {item['question']} ({item['class']})")
                shown = ("words", "nearest", "fused")
                pool = dict.fromkeys(r for s in shown for r in lists[s][:20].tolist())
                for r in pool:
                    where = "".join(s[0] for s in shown if r in lists[s][:20].tolist())
                    print(f"  {where:5s} {searcher.titles[r]}")
                continue
            relevant = judged(item, searcher.titles, searcher.texts, missing_titles)
            cells = []
            for system in SYSTEMS:
                listed = lists[system]
                if item["class"] == "off-domain":
                    cells.append(f"{len(listed):,} listed")
                    per_class.setdefault((item["class"], system), []).append((float(len(listed) == 0),) * 2)
                    continue
                recall, precision = scores(listed, relevant)
                per_class.setdefault((item["class"], system), []).append((recall, precision))
                per_map.setdefault((name, system), []).append((recall, precision))
                cells.append(f"{recall:.2f} / {precision:.2f}")
            for prefix in item.get("must_list", []):  # papers the issue names, in the fused list's first 20
                at = [
                    k
                    for k, r in enumerate(lists["fused"][:20].tolist())
                    if searcher.titles[r].startswith(prefix)
                ]
                found = f"#{at[0] + 1} in the fused list" if at else "NOT in the fused list's first 20"
                checks.append(f"- “{item['question']}”: {prefix} {found}")
            rows.append(
                f"| {name} | {item['class']} | {item['question']} | {len(relevant)} | "
                + " | ".join(cells)
                + " |"
            )
    if args.pool:
        return 0
    if missing_titles:
        print("error: judged titles not on their map: " + "; ".join(missing_titles[:5]), file=sys.stderr)
        return 2
    classes = list(dict.fromkeys(c for c, _ in per_class))
    summary = []
    for kind in classes:
        cells = []
        for system in SYSTEMS:
            values = np.array(per_class[(kind, system)], dtype=np.float64)
            if kind == "off-domain":
                cells.append(f"{int(values[:, 0].sum())} of {len(values)} list nothing")
            else:
                cells.append(f"{np.nanmean(values[:, 0]):.2f} / {np.nanmean(values[:, 1]):.2f}")
        summary.append(f"| {kind} | {len(per_class[(kind, 'words')])} | " + " | ".join(cells) + " |")
    for name in MAPS:
        role = "tuned on" if name == MAPS[0] else "held out"
        cells = [np.nanmean(np.array(per_map[(name, system)]), axis=0) for system in SYSTEMS]
        summary.append(
            f"| every in-domain question of {name} ({role}) | {len(per_map[(name, 'words')])} | "
            + " | ".join(f"{r:.2f} / {p:.2f}" for r, p in cells)
            + " |"
        )
    overall = []
    for system in SYSTEMS:
        values = np.array(
            [v for (kind, s), vals in per_class.items() if kind != "off-domain" and s == system for v in vals]
        )
        overall.append(f"{np.nanmean(values[:, 0]):.2f} / {np.nanmean(values[:, 1]):.2f}")
    from app.search import COLLOCATION, PHRASE_SHARE, RRF_K, SOME_PERCENTILE, SOME_SHARE, TITLE_BONUS
    from pipeline.modelling.floors import CLOSE_PERCENTILE

    load = os.getloadavg()[0]
    text = "\n".join(
        [
            "# Search quality: words, meaning and the fused list",
            "",
            f"Written by `benchmarks/bench_search_quality.py` ({time.strftime('%Y-%m-%d %H:%M')} UTC, load average "
            f"{load:.1f}, {time.perf_counter() - started:.0f} s). Close in meaning: closer than "
            f"{CLOSE_PERCENTILE}% of the map's pairs, and writing one of its words where the map has them; several of its words: "
            f"{SOME_SHARE:.0%} by rarity (a word in the title counting {1 + TITLE_BONUS:g} times), related in meaning (closer than {SOME_PERCENTILE:g}%), or two of them next to each other "
            f"as a phrase of the map (in at most 1 in {1 / PHRASE_SHARE:.0f} papers, {COLLOCATION:.0%} of those writing its rarer word); "
            f"RRF k = {RRF_K}. Tuned on the COLM questions; random-5000 is held out. "
            "Each cell: recall@20 / precision@10 (off-domain: how many papers are listed, nothing is right).",
            "",
            "| class | questions | words only | meaning only | fused (RRF) | calibrated score |",
            "|---|---:|---:|---:|---:|---:|",
            *summary,
            "| every in-domain question | | " + " | ".join(overall) + " |",
            "",
            "| map | class | question | judged relevant | words only | meaning only | fused (RRF) | calibrated score |",
            "|---|---|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            "Papers the issue names for the draft-model question, in the fused list:",
            "",
            *checks,
            "",
        ]
    )
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
