"""Export safety with hostile cells, and the artifact folder's atomic swap and validation."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from pipeline import UserError
from pipeline.__main__ import main
from pipeline.exports.export import export_frame, to_csv_bytes
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import hostile_map


def read_csv_rows(data: bytes) -> list[dict]:
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 with BOM
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def test_no_exported_text_cell_starts_like_a_formula():
    atlas = hostile_map()
    rows = read_csv_rows(to_csv_bytes(export_frame(atlas.papers, atlas.topics, themes=atlas.themes)))
    assert len(rows) == 7
    for row in rows:
        for column, value in row.items():
            if column in ("topic_id", "x", "y"):  # numbers, not text: a spreadsheet reads -0.38 as a number
                float(value)
            else:
                assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), (column, value)
    assert rows[0]["title"] == '\'=HYPERLINK("http://evil","x")'
    assert rows[0]["source"].startswith("'=cmd")
    assert rows[0]["topic"] == "'=Evil topic" and rows[4]["topic"] == "Unassigned"
    assert rows[0]["theme"] == "'@Evil theme" and rows[2]["theme"] == "Transport" and rows[4]["theme"] == ""
    assert rows[4]["topic_id"] == "-1"  # a number, not text: left as is
    assert "中文" in rows[0]["abstract"] and rows[0]["venue"] == "'-ICML"
    assert list(rows[0])[:8] == [
        "doc_id",
        "title",
        "abstract",
        "topic_id",
        "topic",
        "topic_keywords",
        "theme",
        "source",
    ]


def test_header_cells_are_neutralised_like_data_cells(tmp_path):
    """An input column named like a formula is data too: its header cell must not run (CLI and app)."""
    atlas = hostile_map()
    atlas.papers['=HYPERLINK("http://evil","x")'] = "fine"
    atlas.papers["@col"] = "+1"
    atlas.papers["-2+3"] = 1
    write_map(tmp_path / "map", atlas)
    assert main(["export", str(tmp_path / "map"), "--out", str(tmp_path / "x.csv")]) == 0
    for data in ((tmp_path / "x.csv").read_bytes(), to_csv_bytes(export_frame(atlas.papers, atlas.topics))):
        header = next(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
        assert not [cell for cell in header if cell.startswith(("=", "+", "-", "@", "\t", "\r"))], header
        assert {'\'=HYPERLINK("http://evil","x")', "'@col", "'-2+3"} <= set(header)


def test_cli_export_of_one_topic(tmp_path, capsys):
    write_map(tmp_path / "map", hostile_map())
    assert main(["export", str(tmp_path / "map"), "--out", str(tmp_path / "t1.csv"), "--topic", "1"]) == 0
    rows = read_csv_rows((tmp_path / "t1.csv").read_bytes())
    assert [r["doc_id"] for r in rows] == ["0000000000000002", "0000000000000003", "0000000000000006"]
    assert {r["topic"] for r in rows} == {"Optimal transport"} and {r["theme"] for r in rows} == {"Transport"}
    assert main(["export", str(tmp_path / "map"), "--out", str(tmp_path / "t9.csv"), "--topic", "9"]) == 2
    assert "no topic 9" in capsys.readouterr().err
    assert not (tmp_path / "t9.csv").exists()


def test_map_round_trips_and_checksum_ties_embeddings_to_papers(tmp_path):
    write_map(tmp_path / "map", hostile_map())
    atlas = read_map(tmp_path / "map")
    assert atlas.papers["doc_id"].tolist() == hostile_map().papers["doc_id"].tolist()
    assert atlas.topics["keywords"].iloc[1] == ["transport", "optimal transport"]
    assert atlas.themes["topic_ids"].tolist() == [[1], [0]] and atlas.themes["label"].iloc[1] == "@Evil theme"
    assert np.array_equal(atlas.topics["centroid"].iloc[1], hostile_map().topics["centroid"].iloc[1])
    assert np.isnan(atlas.topics["stability"].iloc[1])
    # A map folder without themes.parquet (written before themes) still reads, without themes.
    (tmp_path / "map" / "themes.parquet").unlink()
    assert read_map(tmp_path / "map").themes is None
    papers = atlas.papers.iloc[::-1]
    papers.to_parquet(tmp_path / "map" / "papers.parquet", index=False)  # rows no longer match vectors
    with pytest.raises(UserError, match="checksum"):
        read_map(tmp_path / "map")


def test_failed_write_leaves_previous_map_untouched(tmp_path, monkeypatch):
    out = tmp_path / "map"
    write_map(out, hostile_map())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    changed = hostile_map()
    changed.manifest = replace(changed.manifest, name="changed")

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", crash)
    with pytest.raises(OSError):
        write_map(out, changed)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".map.lock", "map"]  # no staging folder left
    monkeypatch.undo()
    write_map(out, changed)
    assert json.loads((out / "manifest.json").read_text())["name"] == "changed"
