"""How long each text path takes on one long word (issue 64): the exports (CSV, Markdown, BibTeX) of a
map whose titles and abstracts are one word each, and the helpers the app draws text with, at 10 KB,
100 KB and 1 MB. Linear patterns grow ten times a step; one that rescans from every position grows a
hundred times (a 100 KB title took 574 s in a Markdown list before).

    python benchmarks/bench_long_words.py   # writes benchmarks/LONG_WORDS_RESULTS.md
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app import text  # noqa: E402
from pipeline.__main__ import main  # noqa: E402
from pipeline.exports.reading_list import markdown_text, summary  # noqa: E402
from pipeline.ingest import derive_title  # noqa: E402
from pipeline.mapfolder.store import write_map  # noqa: E402
from tests.helpers import hostile_map, long_words  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
HELPERS = {
    "markdown_text (md titles)": markdown_text,
    "summary (md abstracts)": summary,
    "derive_title (ingest)": derive_title,
    "markdown_literal (page)": text.markdown_literal,
    "plotly_wrap (hover)": text.plotly_wrap,
    "visible (every element)": text.visible,
}


def slowest(draw, words: list[str]) -> float:
    times = []
    for word in words:
        start = time.perf_counter()
        draw(word)
        times.append(time.perf_counter() - start)
    return max(times)


def export_seconds(words: list[str], folder: Path) -> dict[str, float]:
    atlas = hostile_map()
    atlas.papers["title"] = words[:7]
    atlas.papers["abstract"] = words[-7:]
    write_map(folder / "map", atlas)
    seconds = {}
    for fmt in ("csv", "md", "bib"):
        start = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):
            assert (
                main(["export", str(folder / "map"), "--out", str(folder / f"x.{fmt}"), "--format", fmt]) == 0
            )
        seconds[fmt] = time.perf_counter() - start
    return seconds


def run() -> str:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in SIZES:
            words = long_words(size)
            cells = {name: slowest(draw, words) for name, draw in HELPERS.items()}
            cells.update(
                {
                    f"export --format {k}": v
                    for k, v in export_seconds(words, Path(scratch) / str(size)).items()
                }
            )
            rows.append((size, cells))
    names = list(rows[0][1])
    lines = [
        "# One long word in every text path (issue 64)",
        "",
        "`python benchmarks/bench_long_words.py`: seconds, the slowest of the 12 words of `tests.helpers.long_words`",
        "(letters, dots, digits, `a@`, `a-`, `/a`, `www.`, quotes, ...) for each helper; each export holds 7 titles",
        "and 7 abstracts of that size. On the shared 2-core machine, other jobs running. Before the patterns",
        "were made linear (issue 64), `export --format md` of one title took 4.9 s at 10 KB, 61 s at 40 KB and",
        "574 s at 100 KB.",
        "",
        "| | " + " | ".join(f"{size // 1000:,} KB" for size, _ in rows) + " |",
        "|---|" + "---:|" * len(rows),
    ]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(f"{cells[name]:.2f}" for _, cells in rows) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    result = run()
    (ROOT / "benchmarks" / "LONG_WORDS_RESULTS.md").write_text(result, encoding="utf-8")
    print(result)
