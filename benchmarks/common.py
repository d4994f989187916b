"""The shared corpus and the subsets the quality benchmarks draw from it, defined once.

`bench_quality.py` and `bench_themes.py` cut the same random and balanced sets, so a figure in
one results file can be read against the other.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "ml_abstracts.parquet"
# A field with at least this many papers takes part in the balanced set, with `PER_FIELD` of them.
BALANCED_MIN_FIELD = 1000
PER_FIELD = 600
# benchmarks/NAMES_RESULTS.md: bench_themes.py writes the part above this heading, bench_names.py the rest.
NAMES_RESULTS = ROOT / "benchmarks" / "NAMES_RESULTS.md"
EARLIER_NAMES = "# Earlier round (issue 21)"


def run_facts(command: str, started: float) -> str:
    """What a results page says of its run: the command, the commit (and whether pipeline/ had
    uncommitted changes), when, on what machine, and the seconds since `started` (perf_counter)."""
    import platform
    import subprocess
    import time

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = " with uncommitted changes under pipeline/" if git("status", "--porcelain", "pipeline") else ""
    return (
        f"Command: `{command}`. Commit {git('rev-parse', '--short', 'HEAD')}{dirty}, "
        f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
        f"{time.perf_counter() - started:.0f} s in all."
    )


def corpus_missing(benchmark: str = "this benchmark") -> bool:
    """True (after an `error:` line on stderr) when the shared corpus is not here; the caller exits 2."""
    if CORPUS.exists():
        return False
    print(f"error: {CORPUS} is missing: {benchmark} needs the shared corpus", file=sys.stderr)
    return True


def random_set(corpus, size: int, seed: int):
    """`size` papers drawn from the whole corpus with a fixed seed (rows are grouped by source file)."""
    return corpus.sample(size, random_state=seed)


def balanced_set(corpus, seed: int = 7):
    """`PER_FIELD` papers of every field holding at least `BALANCED_MIN_FIELD` (5 fields today)."""
    import pandas as pd

    fields = [
        g.sample(PER_FIELD, random_state=seed)
        for _, g in corpus.groupby("field")
        if len(g) >= BALANCED_MIN_FIELD
    ]
    return pd.concat(fields)


def write_part(path: Path, text: str, marker: str, *, above: bool) -> None:
    """Rewrite the part of `path` above the heading `marker` (`above`) or from it on, keeping the
    other part; a file without the heading is all the other part."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    top, found, bottom = old.partition(marker + "\n")
    if not found:
        top, bottom = (old, "") if not above else ("", old)
    if above:
        path.write_text(text.rstrip("\n") + "\n\n" + marker + "\n" + bottom, encoding="utf-8")
    else:
        path.write_text(top + marker + "\n" + text, encoding="utf-8")
