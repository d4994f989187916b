"""The vocabularies naming reads from data files, and the one reader they share.

`words/*.txt` hold the word lists (one word or phrase a line; `#` lines say what a list is for);
`areas.tsv` the research areas (see `areas.read_areas`). The files sit beside this module and are
found from its path, so they ship wherever the package does. Each file is read once per process.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

WORDS = Path(__file__).with_name("words")


@cache
def data_lines(path: Path) -> tuple[str, ...]:
    """A data file's lines, stripped, blank lines left out (`#` comment lines kept: some carry data,
    such as `areas.tsv`'s `# grain:` lines)."""
    return tuple(s for line in path.read_text(encoding="utf-8").splitlines() if (s := line.strip()))


def word_list(name: str) -> tuple[str, ...]:
    """The words of `words/NAME.txt` in the order written, comment lines left out.

    Examples:
        >>> word_list("connectors")
        ('of', 'for', 'and', 'to', 'in')
    """
    return tuple(line for line in data_lines(WORDS / f"{name}.txt") if not line.startswith("#"))
