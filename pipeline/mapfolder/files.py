"""The map folder's contract: every file name and column list, spelled here once (docs/map-folder.md).

Everything else (the build, `add`, curation, lineage, the app) imports these names; a map folder
written by this project holds `MAP_FILES` and nothing else.
"""

from __future__ import annotations

from pathlib import Path

from pipeline import UserError

SCHEMA_VERSION = 2
PAPERS, TOPICS, EMBEDDINGS, MANIFEST = "papers.parquet", "topics.parquet", "embeddings.npy", "manifest.json"
LINEAGE = "lineage.parquet"  # optional: present when the build matched its topics to a previous map
THEMES = "themes.parquet"
# The full-text index of titles and abstracts (pipeline/mapfolder/search_index.py); maps written
# before it have none and get one built in the cache when searched.
SEARCH_INDEX = "search.sqlite"
CURATION = "curation.json"  # optional: a person's edits (pipeline/mapfolder/curation.py)
# Everything a build writes into a map folder; anything else there is the user's. CURATION holds
# a person's edits, carried by every writer.
MAP_FILES = frozenset({PAPERS, TOPICS, EMBEDDINGS, MANIFEST, THEMES, LINEAGE, SEARCH_INDEX, CURATION})
PAPER_COLUMNS = ["doc_id", "title", "abstract", "source", "topic_id", "x", "y"]
TOPIC_COLUMNS = [
    "topic_id",
    "label",
    "keywords",
    "keyword_weights",
    "size",
    "x",
    "y",
    "representative_doc_ids",
]
# Schema 2 (issue 11): topics carry `theme_id`, `stability` and `centroid`; themes.parquet names themes.
# Issue 62, optional (maps built before it open without them): topics carry `name_share` (the share of a
# topic's papers that write its name), themes `name_source`, `name_share` (its weakest member topic's)
# and `name_written` (its papers').
THEME_COLUMNS = ["theme_id", "label", "keywords", "size", "topic_ids", "x", "y"]
# lineage.parquet (pipeline/modelling/lineage.py); `previous_sizes` is missing from maps built before issue 21.
LINEAGE_COLUMNS = [
    "topic_id",
    "status",
    "previous_topic_ids",
    "successor_topic_ids",
    "previous_label",
    "shared_papers",
    "previous_sizes",
]
# Columns a build computes afresh: the rest of a kept paper's row (title, source, metadata) is its own.
BUILT_COLUMNS = ["topic_id", "x", "y", "added", "via_add"]
# The one limit of topic and theme ids: small whole numbers that grow by the new topics of each
# rebuild. Checked where ids are made (`new_id`, for lineage and theme lineage), where a manifest's
# `lineage.next_topic_id` and `next_theme_id` are read (`pipeline.mapfolder.manifest`) and where a
# map's tables are read (`pipeline.mapfolder.table_checks`). Anything above is damage, not a
# history: the app keeps per-id arrays, so 2**40 would ask for terabytes.
MAX_TOPIC_ID = 2**20


def new_id(next_id: int, what: str = "topic") -> int:
    """`next_id` as the id of a new topic (or theme), or a `UserError` when the map's history has
    used every id up to `MAX_TOPIC_ID` (a build never writes an id its readers refuse).

    Examples:
        >>> new_id(12)
        12
    """
    if not 0 <= next_id <= MAX_TOPIC_ID:
        raise UserError(
            f"no {what} ids are left: ids run up to {MAX_TOPIC_ID:,} and the previous maps have used them "
            f"all; build with --no-previous to number {what}s afresh"
        )
    return next_id


def holds_a_map(folder: Path) -> bool:
    """Whether `folder` holds a map we wrote: a manifest.json that is a JSON object with a schema_version."""
    from pipeline.mapfolder.bounded_json import read_json_file

    try:
        manifest = read_json_file(folder / MANIFEST, "damaged manifest")
    except UserError:
        return False
    return isinstance(manifest, dict) and "schema_version" in manifest
