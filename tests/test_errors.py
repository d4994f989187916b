"""Every user error: exit code 2, one `error:` line naming the file (and line), nothing written."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from pipeline.__main__ import main
from tests.conftest import ROOT

GOOD = "We study optimal transport between Gaussian measures and derive closed-form maps for them."


def bad_inputs(tmp_path):
    """(name, path to pass, text the error must contain) for each kind of bad input."""
    cases = {}

    def make(name, filename, content, *expected):
        path = tmp_path / name / filename
        path.parent.mkdir(parents=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content, encoding="utf-8")
        cases[name] = (path, [filename, *expected])

    make("empty", "empty.txt", "", "empty")
    make("whitespace", "blank.txt", " \n\n\t \n", "whitespace")
    make("binary", "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20, "binary")
    make(
        "latin1",
        "latin.txt",
        ("Header\n\nAbstract one.\n\nCaf" + "\xe9 au lait.\n").encode("latin-1"),
        "line 5",
        "UTF-8",
    )
    make("no_abstract_column", "papers.csv", "title,year\nA,2020\nB,2021\n", "'abstract' column", "title")
    make("empty_abstracts", "papers.csv", "title,abstract\nA,\nB,   \n", "empty")
    make(
        "bad_jsonl",
        "papers.jsonl",
        json.dumps({"abstract": GOOD}) + '\n\n{"abstract": oops}\n',
        "line 3",
        "column",
    )
    make("bad_parquet", "papers.parquet", b"PAR1 this is not really parquet PAR1", "Parquet")
    make("unsupported", "paper.docx", "anything", "unsupported", ".docx")
    make("header_only", "seed.txt", "ICML 2025 Papers\n", "no abstracts")
    (tmp_path / "no_supported").mkdir()
    (tmp_path / "no_supported" / "notes.md").write_text("# not abstracts")
    cases["no_supported"] = (tmp_path / "no_supported", ["no_supported", "no supported files"])
    cases["missing"] = (tmp_path / "does-not-exist.csv", ["does-not-exist.csv", "no such file"])
    few = tmp_path / "few" / "few.csv"
    few.parent.mkdir()
    pd.DataFrame({"abstract": [f"{GOOD} Variant {i}." for i in range(3)]}).to_csv(few, index=False)
    cases["too_few"] = (few, ["few.csv", "at least"])
    return cases


@pytest.fixture
def existing_map(tmp_path):
    """A folder standing in for a previous map; a failed build must leave it byte for byte."""
    out = tmp_path / "map"
    out.mkdir()
    (out / "manifest.json").write_text('{"previous": true}')
    return out


CASES = [
    "empty",
    "whitespace",
    "binary",
    "latin1",
    "no_abstract_column",
    "empty_abstracts",
    "bad_jsonl",
    "bad_parquet",
    "unsupported",
    "header_only",
    "no_supported",
    "missing",
    "too_few",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_clear_error_and_no_output(case, tmp_path, existing_map, capsys):
    path, expected = bad_inputs(tmp_path)[case]
    code = main(["build", str(path), "--out", str(existing_map), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: "), err
    for text in expected:
        assert text.lower() in err[0].lower(), (text, err[0])
    assert [p.name for p in existing_map.iterdir()] == ["manifest.json"]
    assert (existing_map / "manifest.json").read_text() == '{"previous": true}'
    assert not list(tmp_path.glob(".map.tmp-*"))


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--min-topic-size", "0"], "--min-topic-size"),
        (["--min-topic-size", "many"], "--min-topic-size"),
        (["--neighbors", "-3"], "--neighbors"),
        (["--embedder", "gpt"], "--embedder"),
        (["--min-topic-size", "500"], "--min-topic-size 500"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_option_values_name_the_option(options, expected, tmp_path, capsys):
    code = main(["build", str(ROOT / "seeds"), "--out", str(tmp_path / "m"), "--quiet", *options])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ")
    assert expected in err[0]
    assert not (tmp_path / "m").exists()


def test_out_that_is_an_existing_file_is_refused(tmp_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    code = main(["build", str(ROOT / "seeds"), "--out", str(target), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "notes.txt" in err and "existing file" in err
    assert target.read_text() == "keep me"


def test_export_of_a_folder_that_is_not_a_map(tmp_path, capsys):
    code = main(["export", str(tmp_path), "--out", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "not a map folder" in err
    assert not (tmp_path / "x.csv").exists()


def test_missing_command_and_missing_out_are_user_errors(capsys):
    assert main([]) == 2
    assert main(["build", "seeds"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines)


def test_real_process_exits_2_with_one_line_and_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "build", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "m")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope.csv'}: no such file or folder"]
    assert "Traceback" not in result.stderr
