"""The manifest's one field table: the check, `from_dict` and `to_dict` all read it."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline import UserError
from pipeline.mapfolder.manifest import (
    MANIFEST_FIELDS,
    AddedBlock,
    LineageBlock,
    Manifest,
    ModelBlock,
    read_manifest,
)
from tests.helpers import REPO, SEED_MAP

PATH = Path("maps/m/manifest.json")


@pytest.mark.parametrize(
    ("raw", "field", "kind"),
    [
        ({"papers": "many"}, "papers", "a whole number"),
        ({"papers": True}, "papers", "a whole number"),
        ({"abstracts_per_second": "fast"}, "abstracts_per_second", "a number"),
        ({"name": 5}, "name", "text"),
        ({"lineage": [1, 2]}, "lineage", "an object"),
        (
            {"lineage": {"next_topic_id": 2**40}},
            "lineage.next_topic_id",
            "a whole number from 0 to 1,048,577",
        ),
        ({"lineage": {"previous": {"name": 3}}}, "lineage.previous.name", "text"),
        ({"lineage": {"refit": "yes"}}, "lineage.refit", "true or false"),
        ({"model": {"encoder": ["x"]}}, "model.encoder", "text"),
        ({"config": {"max_tokens": -1}}, "config.max_tokens", "a whole number"),
        ({"notes": ["fine", 3]}, "notes[1]", "text"),
        ({"added": ["a record"]}, "added[0]", "an object"),
        ({"added": [{"papers": "four"}]}, "added[0].papers", "a whole number"),
        ({"timings_seconds": {"embed": "slow"}}, "timings_seconds", "an object of seconds by stage"),
        ({"timings_seconds": [61.0]}, "timings_seconds", "an object of seconds by stage"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_naming_it(raw, field, kind):
    with pytest.raises(UserError) as refused:
        Manifest.from_dict({"schema_version": 2, **raw}, PATH)
    message = str(refused.value)
    assert message.startswith(f"{PATH}: damaged manifest ({field} is ")
    assert f"not {kind}); rebuild the map" in message


@pytest.mark.parametrize("field", ["next_topic_id", "next_theme_id"])
def test_next_ids_are_read_within_the_one_id_limit_the_tables_use(field):
    from pipeline.mapfolder.files import MAX_TOPIC_ID

    fits = Manifest.from_dict({"schema_version": 2, "lineage": {field: MAX_TOPIC_ID + 1}}, PATH)
    assert getattr(fits.lineage, field) == MAX_TOPIC_ID + 1  # ids up to MAX_TOPIC_ID were used
    with pytest.raises(UserError, match=f"lineage.{field} is {MAX_TOPIC_ID + 2}, not a whole number from 0"):
        Manifest.from_dict({"schema_version": 2, "lineage": {field: MAX_TOPIC_ID + 2}}, PATH)


@pytest.mark.parametrize("field", ["papers", "topics", "themes", "unassigned", "kept_added"])
def test_null_where_a_field_may_not_be_null_is_refused(field):
    with pytest.raises(UserError, match=rf"\({re.escape(field)} is null, not a whole number\)"):
        Manifest.from_dict({field: None}, PATH)


def test_null_where_allowed_reads_as_the_default_and_is_written_back_null():
    raw = {"name": None, "model": {"name": None}, "lineage": {"previous": None, "next_topic_id": None}}
    manifest = Manifest.from_dict(raw, PATH)
    assert manifest.name == "" and manifest.model.name == ""
    assert manifest.lineage.previous is None and manifest.lineage.next_topic_id == 0
    assert manifest.to_dict() == raw


def test_without_a_path_a_mistyped_field_reads_as_its_default():
    manifest = Manifest.from_dict({"papers": "many", "name": 5, "lineage": [1], "notes": ["a", 2]})
    assert manifest.papers == 0 and manifest.name == "" and manifest.lineage == LineageBlock.empty()
    assert manifest.notes == ["a"]


def test_every_field_has_one_default_whatever_the_file_lacks():
    empty = Manifest.from_dict({})
    assert empty.to_dict() == {}
    assert (empty.name, empty.papers, empty.themes, empty.inputs, empty.added) == ("", 0, None, [], [])
    assert (empty.model.name, empty.model.encoder, empty.model.bundle) == ("", "", None)
    assert (empty.config.embedder, empty.max_tokens) == ("onnx-int8", 256)
    assert (empty.lineage.next_topic_id, empty.previous_name, empty.curation) == (0, None, None)
    assert empty == Manifest(), "a missing block and a block made in code read alike"
    names = [row.name for row in MANIFEST_FIELDS]
    assert len(names) == len(set(names)) and "lineage.next_topic_id" in names and "added[].papers" in names


def test_keys_the_table_does_not_know_are_kept_where_they_were():
    raw = {
        "schema_version": 2,
        "name": "m",
        "model": {"name": "a/b", "quantiser": "q8"},
        "lineage": {"next_topic_id": 3, "note": {"why": "kept"}},
        "added": [{"at": "t", "papers": 2, "by": "someone"}],
        "from_the_future": [1, 2],
    }
    manifest = Manifest.from_dict(raw, PATH)
    assert manifest.model.name == "a/b" and manifest.lineage.next_topic_id == 3
    assert manifest.added == [AddedBlock.from_dict({"at": "t", "papers": 2, "by": "someone"})]
    assert manifest.to_dict() == raw
    changed = replace(manifest, papers=7).to_dict()
    assert changed["from_the_future"] == [1, 2] and changed["model"]["quantiser"] == "q8"


def test_a_block_made_in_code_leaves_its_optional_fields_out():
    made = Manifest(
        name="m",
        model=ModelBlock(name="a/b", encoder="e", max_tokens=192),
        lineage=LineageBlock(next_topic_id=4),
    )
    written = made.to_dict()
    assert "added" not in written and "checksum" not in written and "curation" not in written
    assert written["model"] == {"name": "a/b", "encoder": "e", "max_tokens": 192}
    assert written["lineage"]["previous"] is None  # written: null says "numbered afresh"
    assert "synthetic" not in written and written["lineage"]["next_topic_id"] == 4
    grown = replace(made, added=[AddedBlock(at="t", papers=1)], checksum="c").to_dict()
    assert grown["added"][0]["papers"] == 1 and grown["checksum"] == "c"


def test_the_committed_seed_manifest_reads_and_writes_back_byte_for_byte():
    text = (SEED_MAP / "manifest.json").read_text()
    manifest = read_manifest(SEED_MAP)
    assert json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n" == text
    assert manifest.model.bundle and manifest.lineage.next_topic_id == manifest.topics


def test_map_folder_doc_names_every_manifest_field():
    doc = (REPO / "docs" / "map-folder.md").read_text()
    missing = [row.name for row in MANIFEST_FIELDS if f"`{row.name}`" not in doc]
    assert not missing, f"docs/map-folder.md does not document: {missing}"
