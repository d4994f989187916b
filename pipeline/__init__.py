"""Abstract Atlas offline pipeline: abstract files in, topic-map artifact folder out.

Where things live: `__main__` (CLI) -> `build.build_map`, which calls the stages in order:
`ingest` -> `embed` -> `topics` (on all papers, or `sample_fit` on a sample) -> `lineage` (ids kept
across rebuilds) -> `themes` -> `layout` -> `evaluate` -> `artifacts` (the map folder: write, lock,
read). `add`/`place` put new papers on a map, `export`/`reading_list` write it out. The full table
is in docs/architecture.md.
"""

__version__ = "0.1.0"


class UserError(Exception):
    """A problem the user can fix (bad input file, bad option); shown as one `error:` line."""
