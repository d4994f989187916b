"""Topic and theme names are one line of visible text (issue 36, item 7): a name that breaks a line,
shows nothing or reads as "Unassigned" is refused on the way in (`curate`, the app's panel, both through
`pipeline.mapfolder.curation.check_name`) and on read (`curation.json` damaged by hand), and a map's own
tables are shown on one line; `curate list` escapes what a terminal would act on."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline import UserError
from pipeline.__main__ import main
from pipeline.mapfolder.curation import FORMAT, Edit, carry_edits
from pipeline.mapfolder.files import CURATION
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import themed_map

BAD_NAMES = {
    "line separator U+2028": "Graph\u2028networks",
    "paragraph separator U+2029": "Graph\u2029networks",
    "next line U+0085": "Graph\u0085networks",
    "C1 control U+009B": "Graph\u009b31mnetworks",
    "bidi override U+202E": "Graph\u202enetworks",
    "only zero-width characters": "\u200b\u200c\u2060",
    "only combining marks": "\u0301\u0308",
    "Hangul filler U+3164": "\u3164\u3164",
    "fullwidth Unassigned": "Ｕｎａｓｓｉｇｎｅｄ",
    "Unassigned and U+200B": "Unassigned\u200b",
    "Unassigned and a joiner": "unassigned\u200d",
}


@pytest.fixture
def folder(tmp_path) -> Path:
    write_map(tmp_path / "map", themed_map())
    return tmp_path / "map"


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()  # splitlines() also breaks at U+2028, U+0085, ...
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def write_edits(folder: Path, edits: list[dict]) -> None:
    (folder / CURATION).write_text(json.dumps({"format": FORMAT, "edits": edits}), encoding="utf-8")


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
@pytest.mark.parametrize("action", ["rename", "rename-theme"])
def test_a_name_that_breaks_a_line_or_shows_nothing_is_refused_by_curate(folder, capsys, action, name):
    assert main(["curate", str(folder), action, "0", name]) == 2
    line = one_error_line(capsys)
    assert "give" in line
    assert not (folder / CURATION).exists()


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_a_bad_name_written_by_hand_in_the_edit_file_is_refused_on_read(folder, capsys, tmp_path, name):
    write_edits(folder, [{"id": 1, "action": "rename", "topic": 0, "name": name}])
    with pytest.raises(UserError, match=CURATION):
        read_map(folder)
    assert main(["export", str(folder), "--out", str(tmp_path / "x.csv")]) == 2
    assert CURATION in one_error_line(capsys)


@pytest.mark.parametrize(
    "edits, words",
    [
        (
            [
                {"id": 1, "action": "rename", "topic": 0, "name": "Same"},
                {"id": 2, "action": "rename", "topic": 2, "name": "same"},
            ],
            'topics 0 and 2 would both be called "same"',
        ),
        (  # the name a fitted topic has, under another spelling
            [{"id": 1, "action": "rename", "topic": 0, "name": "ＤＩＦＦＵＳＩＯＮ models"}],
            "topics 0 and 1 would both be called",
        ),
        (
            [
                {"id": 1, "action": "rename-theme", "theme": 0, "theme_topics": [1, 2], "name": "Same"},
                {"id": 2, "action": "rename-theme", "theme": 1, "theme_topics": [0, 3], "name": "Same"},
            ],
            "themes 0 and 1 would both be called",
        ),
        (
            [{"id": -5, "action": "note", "topic": 0, "text": "x"}],
            "'id' must be a whole number of at least 1",
        ),
        ([{"id": 0, "action": "hide", "topic": 0, "into": -1}], "at least 1"),
        (
            [{"id": 1, "action": "hide", "topic": 0, "into": -2}],
            "'into' must be a whole number of at least -1",
        ),
    ],
)
def test_an_edit_file_giving_two_topics_one_name_or_a_bad_number_is_refused(folder, capsys, edits, words):
    write_edits(folder, edits)
    with pytest.raises(UserError, match=CURATION) as refused:
        read_map(folder)
    assert words in str(refused.value)
    assert (
        main(
            ["curate", str(folder), "list"]
            if edits[0]["id"] < 1
            else ["curate", str(folder), "note", "1", "x"]
        )
        == 2
    )
    assert words in one_error_line(capsys)


@pytest.mark.parametrize("previous", [False, True], ids=["map in --out", "--previous"])
@pytest.mark.parametrize(
    "edits",
    [
        [
            {"id": 1, "action": "rename", "topic": 0, "name": "Same"},
            {"id": 2, "action": "rename", "topic": 2, "name": "Same"},
        ],
        [
            {"id": 1, "action": "rename-theme", "theme": 0, "theme_topics": [1, 2], "name": "Same"},
            {"id": 2, "action": "rename-theme", "theme": 1, "theme_topics": [0, 3], "name": "same"},
        ],
    ],
    ids=["topics", "themes"],
)
def test_a_rebuild_refuses_an_edit_file_giving_two_topics_one_name_before_any_work(
    folder, capsys, monkeypatch, tmp_path, edits, previous
):
    """As `export`, `add` and the app do: one error line naming the file, exit 2, before reading the
    abstracts (no fit, no embedding), and the map left as it was."""

    def no_work(*args, **kwargs):
        raise AssertionError("the build read its inputs before refusing the edit file")

    monkeypatch.setattr("pipeline.commands.build.read_corpus", no_work)
    write_edits(folder, edits)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    inputs = tmp_path / "papers.csv"
    pd.DataFrame({"abstract": [f"We study topic {i} with care." for i in range(12)]}).to_csv(
        inputs, index=False
    )
    out = ["--out", str(tmp_path / "new"), "--previous", str(folder)] if previous else ["--out", str(folder)]
    assert main(["build", str(inputs), *out, "--quiet"]) == 2
    line = one_error_line(capsys)
    assert CURATION in line and "would both be called" in line, line
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_names_in_a_maps_tables_are_shown_on_one_line_or_as_topic_n(tmp_path):
    atlas = themed_map()
    atlas.topics["label"] = [
        "Graph\u2028neural\u0085networks",
        "\u200b\u3164",
        "Ｕｎａｓｓｉｇｎｅｄ",
        "Plain",
    ]
    atlas.themes["label"] = ["Gen\u202eerative", "\u0301"]
    write_map(tmp_path / "map", atlas)
    read = read_map(tmp_path / "map")
    assert read.topics["label"].tolist() == ["Graph neural networks", "Topic 1", "Topic 2", "Plain"]
    assert read.themes["label"].tolist() == [
        "Gen\ufffderative",
        "Theme 1",
    ]  # a bidi control shown, as everywhere


def test_curate_list_writes_bidi_controls_and_line_breaks_as_escapes(folder, capsys):
    write_edits(folder, [{"id": 1, "action": "note", "topic": 0, "text": "see \u202etxt.exe\nand\u2028more"}])
    assert main(["curate", str(folder), "list"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\u2028" not in out
    assert out.splitlines()[0] == "#1 note on topic 0: see \\u202etxt.exe\\nand\\u2028more"


def test_curate_says_what_it_saved_with_bidi_controls_and_line_breaks_as_escapes(folder, capsys):
    assert main(["curate", str(folder), "note", "0", "see \u202etxt.exe\nand\u2028more"]) == 0
    out = capsys.readouterr().err
    assert "\u202e" not in out and "\u2028" not in out
    assert out.startswith("#1 note on topic 0: see \\u202etxt.exe\\nand\\u2028more; saved in "), out


def test_a_rebuild_flags_a_theme_rename_another_rebuilt_theme_is_now_called():
    themes = pd.DataFrame({"theme_id": [0, 1], "label": ["Kept", "Generative"], "topic_ids": [[0, 1], [2]]})
    edit = Edit(1, "rename-theme", theme=0, theme_topics=(0, 1), name="generative")
    carried = carry_edits([edit], lineage=None, previous_topic_of={}, doc_ids=[], labels=[], themes=themes)
    assert carried[0].review.endswith('theme 1 is now called "generative" too')


def test_curate_refused_by_a_running_add_says_what_runs_and_what_to_do(folder, capsys):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pipeline.mapfolder.lock import out_lock\n"
         f"with out_lock({str(folder)!r}, command='add'):\n    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["curate", str(folder), "rename", "0", "A new name"]) == 2
        line = one_error_line(capsys)
        assert f"cannot edit now: an add (pid {holder.pid}) is writing this map" in line
        assert "run this edit again when it has finished" in line and "build" not in line
    finally:
        holder.communicate("")
    assert not (folder / CURATION).exists()
