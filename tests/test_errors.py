"""The catalogue of bad and odd inputs: one `error:` line and exit 2, or a correct map; user files untouched."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.__main__ import main
from pipeline.mapfolder.manifest import AddedBlock
from pipeline.mapfolder.store import AtlasMap, read_map, write_map
from tests.helpers import ROOT, hostile_map

GOOD = "We study optimal transport between Gaussian measures and derive closed-form maps for them."
THEMES = (
    "optimal transport between Gaussian measures with entropic regularisation",
    "diffusion models that generate images by iterative denoising",
    "graph neural networks that predict the properties of molecules",
)
ZH = ("扩散模型的图像生成", "最优传输理论与计算", "图神经网络的分子性质预测")
RU = ("оптимального транспорта мер", "диффузионных моделей изображений", "графовых нейронных сетей")
JA = ("拡散モデルによる画像生成", "最適輸送の理論と計算", "グラフニューラルネットワークによる分子予測")

ZH_WORDS = ("扩散模型", "图像生成", "最优传输", "图神经网络", "分子性质预测")
JA_WORDS = ("拡散モデル", "画像生成", "最適輸送", "グラフニューラルネットワーク", "分子予測")
RU_WORDS = ("транспорта", "диффузионных", "изображений", "нейронных", "графовых", "сетей")


def english(n: int = 12) -> list[str]:
    """`n` distinct English abstracts about three themes, so topics really form."""
    return [
        f"We study {THEMES[i % 3]}. Our variant {i} comes with guarantees and experiments on benchmark {i * 7}."
        for i in range(n)
    ]


def chinese(n: int = 12) -> list[str]:
    return [
        f"我们研究{ZH[i % 3]}问题，提出第{i}种新方法，并在{i + 3}个数据集上验证了其效果。" for i in range(n)
    ]


def russian(n: int = 12) -> list[str]:
    return [
        f"Мы исследуем задачу {RU[i % 3]} и предлагаем метод номер {i} с теоретическими гарантиями."
        for i in range(n)
    ]


def japanese(n: int = 12) -> list[str]:
    return [
        f"本研究では{JA[i % 3]}について第{i}の手法を提案し、{i + 2}個の実験で有効性を示す。" for i in range(n)
    ]


def numbers(n: int = 12) -> list[str]:
    return [f"{(i % 3) * 1000 + i} {i * 7919} {2020 + i} {i * 104729 % 9973}" for i in range(n)]


@dataclass
class Setup:
    """What a case hands the CLI, and what it must get back."""

    args: list[str]
    error: list[str] | None = None  # substrings of the one error line; None: a map must be built
    check: Callable[[Path], None] | None = None  # checks on the built map (out folder)
    out: Path | None = None  # default: the previous map's folder
    extra: list[str] = field(default_factory=list)


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def csv_of(path: Path, abstracts: list[str], **columns) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"abstract": abstracts, **columns}).to_csv(path, index=False)
    return path


def titles_and_names_ok(out: Path, n: int, notice: str, words: tuple[str, ...]) -> None:
    """A map of `n` papers with short titles, topic names using the abstracts' own words, and a notice."""
    atlas = read_map(out)
    assert len(atlas.papers) == n
    assert atlas.papers["title"].str.len().between(1, 90).all()
    labels = atlas.topics["label"].tolist()
    assert labels and all(label.strip() and label != "Unnamed topic" for label in labels), labels
    assert any(notice in note for note in atlas.manifest.notes), atlas.manifest.notes
    assert any(word in " ".join(labels).lower() for word in words), labels


# ---- the cases: each takes a folder of the user's files and returns what to run ----


def case_empty(user):
    return Setup([str(write(user / "empty.txt", b""))], ["empty.txt", "empty"])


def case_whitespace(user):
    return Setup([str(write(user / "blank.txt", " \n\n\t \n"))], ["blank.txt", "whitespace"])


def case_binary(user):
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20
    return Setup([str(write(user / "image.txt", data))], ["image.txt", "binary"])


def case_latin1(user):
    data = ("Header\n\nAbstract one.\n\nCaf" + "\xe9 au lait.\n").encode("latin-1")
    return Setup([str(write(user / "latin.txt", data))], ["latin.txt", "line 5", "UTF-8"])


def case_utf16_without_bom(user):
    data = ("Header\n\n" + "\n\n".join(english())).encode("utf-16-le")
    return Setup([str(write(user / "wide.txt", data))], ["wide.txt", "UTF-16", "save it as UTF-8"])


def case_utf16_with_bom(user):
    path = write(user / "wide.txt", ("ICML 2025 Papers\n\n" + "\n\n".join(english())).encode("utf-16"))

    def check(out):
        atlas = read_map(out)
        assert sorted(atlas.papers["abstract"]) == sorted(english())
        assert set(atlas.papers["collection"]) == {"ICML 2025"}

    return Setup([str(path)], check=check)


def case_no_abstract_column(user):
    path = write(user / "papers.csv", "title,year\nA,2020\nB,2021\n")
    return Setup([str(path)], ["papers.csv", "'abstract' column", "title"])


def case_two_abstract_columns(user):
    path = write(user / "papers.csv", "abstract,Abstract\none,two\n")
    return Setup([str(path)], ["papers.csv", "abstract", "more than one"])


def case_empty_abstracts(user):
    return Setup([str(write(user / "papers.csv", "title,abstract\nA,\nB,   \n"))], ["papers.csv", "empty"])


def case_bad_jsonl(user):
    path = write(user / "papers.jsonl", json.dumps({"abstract": GOOD}) + '\n\n{"abstract": oops}\n')
    return Setup([str(path)], ["papers.jsonl", "line 3", "column"])


def case_jsonl_line_nested_deeply(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[2] = '{"abstract": "x", "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 3", "nested"])


def case_jsonl_number_too_large_for_a_float(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[1] = '{"abstract": "x", "year": 1e400}'
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 2", "1e400"])


def case_jsonl_number_of_ten_thousand_digits(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[5] = '{"abstract": "x", "year": ' + "9" * 10_000 + "}"
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 6", "number"])


def case_csv_with_the_same_abstract_header_twice(user):
    path = write(user / "papers.csv", "abstract,abstract\n" + "".join(f"{t},{t}\n" for t in english()))
    return Setup([str(path)], ["papers.csv", "abstract", "more than one"])


def case_csv_with_the_same_title_header_twice(user):
    rows = "".join(f"T{i},U{i},{t}\n" for i, t in enumerate(english()))
    path = write(user / "papers.csv", "title,title,abstract\n" + rows)
    return Setup([str(path)], ["papers.csv", "title", "more than one"])


def case_fifo_as_an_input(user):
    os.mkfifo(user / "papers.csv")
    return Setup([str(user / "papers.csv")], ["papers.csv", "named pipe", "not a file"])


def case_dev_zero_as_an_input(user):
    (user / "zero.csv").symlink_to("/dev/zero")  # a link to a device: never read without end
    return Setup([str(user / "zero.csv")], ["zero.csv", "character device", "not a file"])


def case_a_fifo_inside_an_input_folder(user):
    csv_of(user / "corpus" / "papers.csv", english())
    os.mkfifo(user / "corpus" / "more.csv")
    return Setup([str(user / "corpus")], ["more.csv", "named pipe"])


def case_categorical_title_column_in_parquet(user):
    path = user / "papers.parquet"
    titles = pd.Categorical([f"Title {i % 4}" for i in range(12)])
    pd.DataFrame({"abstract": english(), "title": titles}).to_parquet(path)

    def check(out):
        atlas = read_map(out)
        assert sorted(atlas.papers["title"]) == sorted(f"Title {i % 4}" for i in range(12))

    return Setup([str(path)], check=check)


def case_input_name_with_a_line_break(user):
    path = write(user / "bad\nname.csv", "title,year\nA,2020\n")
    return Setup([str(path)], ["bad\\nname.csv", "'abstract' column"])


def case_jsonl_line_not_object(user):
    path = write(user / "papers.jsonl", json.dumps({"abstract": GOOD}) + '\n["a list"]\n')
    return Setup([str(path)], ["papers.jsonl", "line 2", "JSON object"])


def case_jsonl_abstract_is_a_list(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[4] = json.dumps({"abstract": ["We study transport.", "It works."]})
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 5", "'abstract'", "list"])


def case_jsonl_abstract_is_an_object(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[2] = json.dumps({"abstract": {"en": "We study transport."}})
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 3", "'abstract'"])


def case_jsonl_abstract_with_a_lone_surrogate(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[3] = '{"abstract": "We study \\ud800 transport."}'
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 4", "'abstract'", "surrogate"])


def case_jsonl_title_with_a_lone_surrogate(user):
    lines = [json.dumps({"abstract": text, "title": f"T{i}"}) for i, text in enumerate(english())]
    lines[6] = json.dumps({"abstract": "x y z", "title": "A \udfff title"})
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 7", "'title'", "surrogate"])


def case_jsonl_list_of_authors_with_a_lone_surrogate(user):
    lines = [json.dumps({"abstract": text, "authors": ["Ada", "Bob"]}) for text in english()]
    lines[1] = json.dumps({"abstract": "x y z", "authors": ["Ada", "B\udc80b"]})
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 2", "'authors'", "surrogate"])


def case_jsonl_abstract_is_a_number(user):
    lines = [json.dumps({"abstract": text}) for text in english()]
    lines[4] = json.dumps({"abstract": 5})
    path = write(user / "papers.jsonl", "\n".join(lines) + "\n")
    return Setup([str(path)], ["papers.jsonl", "line 5", "'abstract'", "not text"])


def case_parquet_abstract_column_of_integers(user):
    path = user / "papers.parquet"
    pd.DataFrame({"abstract": range(40), "title": [f"T{i}" for i in range(40)]}).to_parquet(path)
    return Setup([str(path)], ["papers.parquet", "row 1", "'abstract'", "not text"])


def case_parquet_abstract_column_of_nullable_integers(user):
    path = user / "papers.parquet"
    pd.DataFrame({"abstract": pd.array([None, 7, 8], dtype="Int64")}).to_parquet(path)
    return Setup([str(path)], ["papers.parquet", "row 2", "'abstract'", "not text"])


def case_parquet_categorical_title_holding_an_empty_title(user):
    path = user / "papers.parquet"
    titles = pd.Categorical(["", "", *[f"Title {i % 4}" for i in range(10)]])
    pd.DataFrame({"abstract": english(), "title": titles}).to_parquet(path)

    def check(out):
        titles = read_map(out).papers.set_index("abstract")["title"]
        assert all(isinstance(t, str) and t.strip() for t in titles), titles
        assert titles[english()[2]] == "Title 0"

    return Setup([str(path)], check=check)


def case_bad_parquet(user):
    path = write(user / "papers.parquet", b"PAR1 this is not really parquet PAR1")
    return Setup([str(path)], ["papers.parquet", "Parquet"])


def case_parquet_binary_not_utf8(user):
    path = user / "papers.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    values = [text.encode() for text in english()]
    values[6] = "Caf\xe9 au lait".encode("latin-1")
    pq.write_table(pa.table({"abstract": pa.array(values, pa.binary())}), path)
    return Setup([str(path)], ["papers.parquet", "row 7", "UTF-8"])


def case_unsupported(user):
    return Setup([str(write(user / "paper.docx", "anything"))], ["paper.docx", "unsupported", ".docx"])


def case_header_only(user):
    return Setup([str(write(user / "seed.txt", "ICML 2025 Papers\n"))], ["seed.txt", "no abstracts"])


def case_no_supported(user):
    write(user / "notes" / "notes.md", "# not abstracts")
    return Setup([str(user / "notes")], ["notes", "no supported files"])


def case_missing(user):
    return Setup([str(user / "does-not-exist.csv")], ["does-not-exist.csv", "no such file"])


def case_too_few(user):
    path = csv_of(user / "few.csv", [f"{GOOD} Variant {i}." for i in range(3)])
    return Setup([str(path)], ["few.csv", "at least"])


def case_seed_negative(user):
    path = csv_of(user / "papers.csv", english())
    return Setup([str(path), "--seed", "-1"], ["--seed", "-1", "0"])


def case_seed_too_large(user):
    path = csv_of(user / "papers.csv", english())
    return Setup([str(path), "--seed", str(2**32)], ["--seed", str(2**32), str(2**32 - 1)])


def case_seed_not_a_number(user):
    path = csv_of(user / "papers.csv", english())
    return Setup([str(path), "--seed", "abc"], ["--seed", "abc"])


def case_out_is_the_input_folder(user):
    folder = user / "corpus"
    csv_of(folder / "papers.csv", english())
    write(folder / "notes.md", "my notes")
    return Setup([str(folder)], ["corpus", "input"], out=folder)


def case_out_is_a_folder_of_notes(user):
    csv_of(user / "papers.csv", english())
    write(user / "notes" / "todo.md", "call Ada")
    return Setup([str(user / "papers.csv")], ["notes", "not a map", "todo.md"], out=user / "notes")


def case_out_contains_the_input(user):
    path = csv_of(user / "project" / "data" / "papers.csv", english())
    return Setup([str(path)], ["project", "papers.csv"], out=user / "project")


def case_out_is_the_input_files_parent(user):
    path = csv_of(user / "inbox" / "papers.csv", english())
    return Setup([str(path)], ["inbox", "papers.csv"], out=user / "inbox")


def case_out_is_an_input_file(user):
    path = csv_of(user / "papers.csv", english())
    return Setup([str(path)], ["papers.csv", "existing file"], out=path)


def case_out_inside_an_input_file(user):
    path = csv_of(user / "papers.csv", english())
    return Setup([str(path)], ["papers.csv", "is a file"], out=path / "map")


def case_map_folder_holding_an_input(user, previous):
    """A map folder the user also keeps an input in: replacing the map would delete the input."""
    path = csv_of(previous / "more.csv", english())
    return Setup([str(path)], ["more.csv", "input"])


def case_map_folder_holding_notes(user, previous):
    """A map folder the user also keeps notes in: replacing the map would lose them."""
    write(previous / "reading notes.md", "ask about Sinkhorn")
    path = csv_of(user / "papers.csv", english())
    return Setup([str(path)], ["reading notes.md", "not part of it"])


def case_source_column(user):
    path = csv_of(user / "papers.csv", english(), source=[f"arXiv:{i}" for i in range(12)])

    def check(out):
        papers = read_map(out).papers
        assert set(papers["source"]) == {"papers.csv"}
        assert sorted(papers["input_source"]) == sorted(f"arXiv:{i}" for i in range(12))

    return Setup([str(path)], check=check)


def case_list_columns_parquet(user):
    path = user / "papers.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    authors = [["Ada Lovelace", "Alan Turing"] if i % 2 else ["Grace Hopper"] for i in range(12)]
    pd.DataFrame({"abstract": english(), "authors": authors}).to_parquet(path)

    def check(out):
        papers = read_map(out).papers.set_index("abstract")
        assert papers.loc[english()[1], "authors"] == "Ada Lovelace; Alan Turing"
        assert papers.loc[english()[0], "authors"] == "Grace Hopper"

    return Setup([str(path)], check=check)


def case_list_columns_jsonl(user):
    rows = [
        {"abstract": text, "authors": ["Ada", "Bob"] if i else "Solo", "meta": {"k": i}}
        for i, text in enumerate(english())
    ]
    path = write(user / "papers.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")

    def check(out):
        papers = read_map(out).papers.set_index("abstract")
        assert papers.loc[english()[3], "authors"] == "Ada; Bob"
        assert papers.loc[english()[0], "authors"] == "Solo"
        assert json.loads(papers.loc[english()[3], "meta"]) == {"k": 3}

    return Setup([str(path)], check=check)


def case_parquet_binary_abstracts(user):
    path = user / "papers.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    values = [text.encode() for text in english()]
    pq.write_table(pa.table({"abstract": pa.array(values, pa.binary())}), path)

    def check(out):
        assert sorted(read_map(out).papers["abstract"]) == sorted(english())

    return Setup([str(path)], check=check)


def case_chinese(user):
    path = csv_of(user / "zh.csv", chinese())
    return Setup(
        [str(path)], check=lambda out: titles_and_names_ok(out, 12, "Chinese and Japanese", ZH_WORDS)
    )


def case_russian(user):
    path = csv_of(user / "ru.csv", russian())
    return Setup([str(path)], check=lambda out: titles_and_names_ok(out, 12, "English", RU_WORDS))


def case_japanese(user):
    path = csv_of(user / "ja.csv", japanese())
    return Setup(
        [str(path)], check=lambda out: titles_and_names_ok(out, 12, "Chinese and Japanese", JA_WORDS)
    )


def case_number_only(user):
    path = csv_of(user / "numbers.csv", numbers())

    def check(out):
        atlas = read_map(out)
        assert len(atlas.papers) == 12
        assert all(label.startswith("Topic ") for label in atlas.topics["label"])
        assert any("no words" in note for note in atlas.manifest.notes), atlas.manifest.notes

    return Setup([str(path)], check=check)


def case_out_inside_the_input_folder(user, previous):
    """Rebuilding a map kept inside its input folder must not read the map's own papers.parquet."""
    folder = previous.parent
    csv_of(folder / "papers.csv", english())

    def check(out):
        atlas = read_map(out)
        assert len(atlas.papers) == 12 and set(atlas.papers["source"]) == {"papers.csv"}
        assert any("skipped" in note and "map" in note for note in atlas.manifest.notes)

    return Setup([str(folder)], check=check)


def case_out_in_new_folders_with_a_bad_input(user):
    """A failed build into folders that do not exist yet leaves none of them behind."""
    path = write(user / "papers.csv", "title,year\nA,2020\n")
    return Setup([str(path)], ["papers.csv", "'abstract' column"], out=user / "new" / "deeper" / "map")


def case_out_is_an_empty_folder(user):
    path = csv_of(user / "papers.csv", english())
    (user / "empty").mkdir()
    return Setup([str(path)], check=lambda out: read_map(out), out=user / "empty")


CASES = {name[len("case_") :]: fn for name, fn in dict(globals()).items() if name.startswith("case_")}


def file_hashes(root: Path, *, skip: Path | None = None, skip_name: str = "") -> dict[str, str]:
    """Every file under `root` (hidden ones too) with its SHA-256, except under `skip` or named `skip_name`."""
    hashes = {}
    for path in sorted(root.rglob("*")):
        if path.name == skip_name:
            continue
        if path.is_file() and not (skip and (path == skip or skip in path.parents)):
            hashes[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


# Cases whose build succeeds: they run the real model (the fast tier leaves them out).
BUILDS = {
    "categorical_title_column_in_parquet",
    "chinese",
    "japanese",
    "list_columns_jsonl",
    "list_columns_parquet",
    "number_only",
    "parquet_categorical_title_holding_an_empty_title",
    "out_inside_the_input_folder",
    "out_is_an_empty_folder",
    "parquet_binary_abstracts",
    "russian",
    "source_column",
    "utf16_with_bom",
}


@pytest.mark.parametrize(
    "case", [pytest.param(name, marks=pytest.mark.slow) if name in BUILDS else name for name in sorted(CASES)]
)
def test_catalogue(case, tmp_path, capsys):
    user, previous = tmp_path / "user", tmp_path / "work" / "map"
    user.mkdir()
    write_map(previous, hostile_map())  # the previous map a failed build must leave byte for byte
    make = CASES[case]
    setup = make(user, previous) if make.__code__.co_argcount == 2 else make(user)
    out = setup.out or previous
    lock = f".{out.name}.lock"  # the only file a build may add next to --out, and only a lock
    before = file_hashes(tmp_path, skip_name=lock)
    assert (setup.error is None) == (case in BUILDS), "BUILDS lists exactly the cases that build"
    code = main(["build", *setup.args, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    if setup.error is not None:
        assert code == 2, err
        assert len(err) == 1 and err[0].startswith("error: "), err
        for text in setup.error:
            assert text.lower() in err[0].lower(), (text, err[0])
        assert file_hashes(tmp_path, skip_name=lock) == before
        assert out.parent.exists() or not (user / "new").exists()
        read_map(previous)
    else:
        assert code == 0, err
        assert not any("Traceback" in line for line in err)
        setup.check(out)
        assert file_hashes(tmp_path, skip=out, skip_name=lock) == {
            k: v for k, v in before.items() if not (tmp_path / k == out or out in (tmp_path / k).parents)
        }
    if out.parent.is_dir():  # no staging or backup folder left behind
        assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.") and p.name != lock]


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


def test_a_map_its_own_reader_refuses_is_never_swapped_in(tmp_path, capsys, monkeypatch):
    """A build reads its output back before the swap: a map the reader refuses (here ids past the one
    limit, as a bug would write them) is one `error:` line, exit 1, and the previous map stays."""
    import pipeline.commands.build as build
    from pipeline.mapfolder.files import MAX_TOPIC_ID

    previous = tmp_path / "map"
    write_map(previous, hostile_map())
    assemble = build.assemble_tables

    def wrong_ids(*args, **kwargs):
        papers, topics, themes = assemble(*args, **kwargs)
        papers["topic_id"] = papers["topic_id"].where(papers["topic_id"] < 0, MAX_TOPIC_ID + 1)
        return papers, topics, themes

    monkeypatch.setattr(build, "assemble_tables", wrong_ids)
    path = csv_of(tmp_path / "user" / "papers.csv", english())
    before = file_hashes(tmp_path, skip_name=".map.lock")
    code = main(["build", str(path), "--out", str(previous), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and [line for line in err if line.startswith(("error: ", "Traceback"))] == err[-1:], err
    assert "would not be readable" in err[-1] and "topic_id" in err[-1] and ".tmp-" not in err[-1]
    assert file_hashes(tmp_path, skip_name=".map.lock") == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".map.") and p.name != ".map.lock"]


def test_a_rebuild_whose_new_topics_would_pass_the_id_limit_says_so(tmp_path, capsys):
    """Ids are checked where they are made: a history that used them all is exit 2, nothing written."""
    from pipeline.mapfolder.files import MAX_TOPIC_ID

    previous = tmp_path / "map"
    write_map(previous, hostile_map())
    _damaged_lineage(previous, MAX_TOPIC_ID)  # within the limit; the new topics would pass it
    path = csv_of(tmp_path / "user" / "papers.csv", english())
    before = file_hashes(tmp_path)
    code = main(["build", str(path), "--out", str(tmp_path / "m2"), "--previous", str(previous), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and [line for line in err if line.startswith(("error: ", "Traceback"))] == err[-1:], err
    assert "no topic ids are left" in err[-1] and "--no-previous" in err[-1]
    assert file_hashes(tmp_path) == before and not (tmp_path / "m2").exists()


def test_export_of_a_folder_that_is_not_a_map(tmp_path, capsys):
    code = main(["export", str(tmp_path), "--out", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "not a map folder" in err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("manifest", ["[1, 2]", '"a map"', "null", "42"])
def test_export_of_a_map_whose_manifest_is_not_an_object(manifest, tmp_path, capsys):
    write_map(tmp_path / "map", hostile_map())
    (tmp_path / "map" / "manifest.json").write_text(manifest)
    code = main(["export", str(tmp_path / "map"), "--out", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert "manifest.json" in err[0] and "JSON object" in err[0]
    assert not (tmp_path / "x.csv").exists()


def test_a_map_missing_a_file_says_which_and_what_to_do(tmp_path, capsys):
    write_map(tmp_path / "map", hostile_map())
    (tmp_path / "map" / "topics.parquet").unlink()
    code = main(["export", str(tmp_path / "map"), "--out", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0] == (
        f"error: {tmp_path / 'map' / 'topics.parquet'} is missing: the map folder is incomplete; "
        "rebuild it with python -m pipeline build INPUT... --out " + str(tmp_path / "map")
    )


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


# ---- as a user who is not root: permissions really apply ----

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def shared_folder():
    """A folder outside pytest's private (0700) temporary tree that user `nobody` can reach."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="atlas-perm-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_as_user(args: list[str], folder: Path | None) -> subprocess.CompletedProcess:
    """Run the CLI as `nobody` when we are root (else as ourselves, for whom permissions apply)."""
    env = dict(
        os.environ, HOME=str(folder or Path.home()), ATLAS_CACHE_DIR=str((folder or Path("/tmp")) / "c")
    )
    prefix = NOBODY if folder is not None else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "pipeline", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_unreadable_input_file_is_one_error_line(shared_folder, tmp_path):
    base = shared_folder or tmp_path
    path = csv_of(base / "corpus" / "papers.csv", english())
    (base / "corpus").chmod(0o777)
    path.chmod(0o000)
    result = run_as_user(["build", str(path), "--out", str(base / "map"), "--quiet"], shared_folder)
    path.chmod(0o644)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {path}: cannot read the file (permission denied)"]
    assert not (base / "map").exists()


def test_unreadable_folder_inside_an_input_folder_is_one_error_line(shared_folder, tmp_path):
    base = shared_folder or tmp_path
    csv_of(base / "corpus" / "papers.csv", english())
    (base / "corpus").chmod(0o777)
    (base / "corpus" / "private").mkdir(mode=0o000)
    result = run_as_user(
        ["build", str(base / "corpus"), "--out", str(base / "map"), "--quiet"], shared_folder
    )
    (base / "corpus" / "private").chmod(0o755)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {base / 'corpus' / 'private'}"), lines
    assert "permission denied" in lines[0]


def test_out_in_a_folder_we_may_not_write_is_one_error_line(shared_folder, tmp_path):
    base = shared_folder or tmp_path
    path = csv_of(base / "papers.csv", english())
    (base / "locked").mkdir(mode=0o555)
    result = run_as_user(
        ["build", str(path), "--out", str(base / "locked" / "map"), "--quiet"], shared_folder
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "locked" in lines[0], lines
    assert "permission denied" in lines[0]
    assert list((base / "locked").iterdir()) == []


# ---- the catalogue of the other writers and readers: add, export, rebuilds of a grown map (issue 17) ----


@dataclass
class Run:
    """A whole command line, and what it must do: one error line and no file changed, or succeed
    changing only `changes` (paths under the test's folder) and pass `check`."""

    args: list[str]
    error: list[str] | None = None
    check: Callable[[str], None] | None = None  # given stderr
    changes: tuple[Path, ...] = ()
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    no_lock: Path | None = None  # a folder that must hold no lock file afterwards


def dated_map(**columns) -> AtlasMap:
    """The tiny map with a whole-number `year` (and any other `columns`) on every paper."""
    atlas = hostile_map()
    atlas.papers["year"] = [2015 + i % 3 for i in range(len(atlas.papers))]
    for name, values in columns.items():
        atlas.papers[name] = values
    return atlas


def jsonl_of(path: Path, rows: list[dict]) -> Path:
    return write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def added_rows(folder: Path) -> pd.DataFrame:
    papers = read_map(folder).papers
    return papers[papers["added"].fillna(False).astype(bool)] if "added" in papers else papers.iloc[:0]


def grown_map(folder: Path, n_added: int = 2) -> list[str]:
    """Rewrite the map in `folder` as if `add` had placed its last `n_added` papers; their doc_ids."""
    atlas = hostile_map()
    atlas.papers["added"] = [False] * (len(atlas.papers) - n_added) + [True] * n_added
    atlas.manifest = replace(
        atlas.manifest, added=[AddedBlock(at="2026-12-01T00:00:00Z", inputs=["more.csv"], papers=n_added)]
    )
    write_map(folder, atlas)
    return atlas.papers["doc_id"].tolist()[-n_added:]


def writer_case_export_into_the_maps_papers(user, previous):
    out = previous / "papers.parquet"
    return Run(["export", str(previous), "--out", str(out), "--format", "csv"], [str(out), "map folder"])


def writer_case_export_over_the_maps_manifest(user, previous):
    out = previous / "manifest.json"
    return Run(["export", str(previous), "--out", str(out)], ["manifest.json", "inside the map folder"])


def writer_case_export_into_a_folder_inside_the_map(user, previous):
    out = previous / "exports" / "list.md"
    return Run(["export", str(previous), "--out", str(out)], ["exports", "map folder"])


def writer_case_export_into_another_map(user, previous):
    other = user / "other-map"
    write_map(other, hostile_map())
    return Run(["export", str(previous), "--out", str(other / "x.csv")], ["other-map", "map folder"])


def writer_case_export_over_an_input_of_the_map(user, previous):
    source = csv_of(user / "papers.csv", english())
    atlas = hostile_map()
    atlas.manifest = replace(atlas.manifest, inputs=[str(source)])
    write_map(previous, atlas)
    return Run(["export", str(previous), "--out", str(source)], ["papers.csv", "input of the map"])


def writer_case_export_onto_the_maps_lock_file(user, previous):
    lock = previous.parent / f".{previous.name}.lock"
    return Run(["export", str(previous), "--out", str(lock), "--format", "csv"], ["lock file", previous.name])


def writer_case_export_onto_another_maps_lock_file(user, previous):
    other = user / "other"
    write_map(other, hostile_map())
    lock = user / ".other.lock"
    return Run(["export", str(previous), "--out", str(lock), "--format", "csv"], ["lock file", "other"])


def writer_case_export_over_a_relative_input_from_another_folder(user, previous):
    """A map built in `user` from `papers.csv`; the export runs elsewhere and names that file."""
    source = csv_of(user / "papers.csv", english())
    atlas = hostile_map()
    atlas.manifest = replace(atlas.manifest, inputs=["papers.csv"], input_folder=str(user))
    write_map(previous, atlas)
    return Run(
        ["export", str(previous), "--out", str(source)],
        ["papers.csv", "input of the map"],
        cwd=previous.parent,
    )


def writer_case_export_over_an_input_of_an_older_map_built_beside_it(user, previous):
    """No `input_folder` (maps before it): inputs relative to the map's parents are refused too."""
    source = csv_of(previous.parent / "seeds" / "papers.csv", english())
    atlas = hostile_map()
    atlas.manifest = replace(atlas.manifest, inputs=["seeds/papers.csv"])
    write_map(previous, atlas)
    return Run(["export", str(previous), "--out", str(source)], ["papers.csv", "input of the map"], cwd=user)


def writer_case_export_over_a_file_added_to_the_map(user, previous):
    source = csv_of(user / "more.csv", english(2))
    atlas = hostile_map()
    atlas.manifest = replace(
        atlas.manifest,
        added=[
            AddedBlock.from_dict(
                {"at": "2026-12-01T00:00:00Z", "inputs": ["more.csv"], "input_folder": str(user)}
            )
        ],
    )
    write_map(previous, atlas)
    return Run(["export", str(previous), "--out", str(source)], ["more.csv", "input of the map"])


def writer_case_export_into_a_staging_folder_name(user, previous):
    out = previous.parent / ".map.tmp-999999-abcd" / "mine.csv"  # a later build of the map removes it
    return Run(["export", str(previous), "--out", str(out)], [".map.tmp-999999-abcd", "later build removes"])


def writer_case_export_into_a_backup_folder_name_at_any_depth(user, previous):
    out = user / ".exp.old-999999" / "deeper" / "mine.csv"
    return Run(["export", str(previous), "--out", str(out)], [".exp.old-999999", "is inside"])


def writer_case_export_onto_a_lock_file_name_of_no_map(user, previous):
    out = user / ".notes.lock"  # a writer creating the map `notes` would lock (and empty) this file
    return Run(["export", str(previous), "--out", str(out)], [".notes.lock", "lock file"])


def writer_case_export_into_a_staging_folder_through_a_link(user, previous):
    (user / ".maps.tmp-999999-x").mkdir()
    (user / "link").symlink_to(user / ".maps.tmp-999999-x")
    return Run(["export", str(previous), "--out", str(user / "link" / "mine.csv")], [".maps.tmp-999999-x"])


def writer_case_build_into_a_backup_folder_name(user, previous):
    path = csv_of(user / "papers.csv", english())
    out = previous.parent / ".map.old-999999"
    return Run(["build", str(path), "--out", str(out), "--quiet"], [".map.old-999999", "give another name"])


def writer_case_export_through_a_link_to_an_input(user, previous):
    source = csv_of(user / "papers.csv", english())
    atlas = hostile_map()
    atlas.manifest = replace(atlas.manifest, inputs=[str(source)])
    write_map(previous, atlas)
    (user / "link.csv").symlink_to(source)
    return Run(["export", str(previous), "--out", str(user / "link.csv")], ["input of the map"])


def writer_case_export_over_a_hard_link_to_an_input(user, previous):
    source = csv_of(user / "papers.csv", english())
    atlas = hostile_map()
    atlas.manifest = replace(atlas.manifest, inputs=[str(source)])
    write_map(previous, atlas)
    os.link(source, user / "same.csv")
    return Run(["export", str(previous), "--out", str(user / "same.csv")], ["input of the map"])


def writer_case_export_over_a_fifo(user, previous):
    os.mkfifo(user / "pipe.csv")
    return Run(["export", str(previous), "--out", str(user / "pipe.csv")], ["pipe.csv", "named pipe"])


def writer_case_export_over_a_device(user, previous):
    """A device file of the test's own (never /dev/null: a writer that replaces it would break the machine)."""
    import stat

    if os.geteuid() != 0:
        pytest.skip("making a device file needs root")
    os.mknod(user / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return Run(["export", str(previous), "--out", str(user / "null"), "--format", "csv"], ["null", "device"])


def writer_case_export_over_a_read_only_file(user, previous):
    kept = write(user / "kept.csv", "mine")
    kept.chmod(0o444)
    return Run(["export", str(previous), "--out", str(kept)], ["kept.csv", "read-only"])


def writer_case_export_with_a_300_character_name(user, previous):
    out = user / ("x" * 296 + ".csv")
    return Run(["export", str(previous), "--out", str(out)], ["300 bytes", "at most"])


def writer_case_export_through_a_link_writes_its_target(user, previous):
    target = write(user / "exports" / "list.csv", "old")
    (user / "latest.csv").symlink_to(target)

    def check(err):
        assert (user / "latest.csv").is_symlink() and os.readlink(user / "latest.csv") == str(target)
        assert target.read_bytes().startswith(b"\xef\xbb\xbfdoc_id")
        assert [p.name for p in target.parent.iterdir()] == ["list.csv"]  # no temporary file left

    args = ["export", str(previous), "--out", str(user / "latest.csv")]
    return Run(args, check=check, changes=(target, user / "latest.csv"))


def writer_case_export_through_a_dangling_link(user, previous):
    (user / "gone.csv").symlink_to(user / "nowhere" / "x.csv")
    return Run(["export", str(previous), "--out", str(user / "gone.csv")], ["gone.csv", "does not exist"])


def writer_case_export_turns_nul_bytes_into_visible_characters(user, previous):
    atlas = hostile_map()
    atlas.papers.loc[0, "title"] = "null\x00byte"
    write_map(previous, atlas)

    def check(err):
        data = (user / "x.csv").read_bytes()
        assert b"\x00" not in data and "null\ufffdbyte".encode() in data

    return Run(
        ["export", str(previous), "--out", str(user / "x.csv")], check=check, changes=(user / "x.csv",)
    )


def writer_case_build_into_a_link_to_a_map_replaces_the_map_and_keeps_the_link(user, previous):
    (user / "current").symlink_to(previous)
    path = csv_of(user / "papers.csv", english())

    def check(err):
        assert (user / "current").is_symlink() and len(read_map(previous).papers) == 12
        assert not [p for p in user.iterdir() if p.name.startswith(".")]  # no lock or stray beside the link

    args = ["build", str(path), "--out", str(user / "current"), "--quiet"]
    return Run(args, check=check, changes=(previous,))


def writer_case_build_with_a_300_character_out_name(user, previous):
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / ("m" * 300)), "--quiet"]
    return Run(args, ["300 bytes", "at most"])


def writer_case_failed_build_into_a_new_folder_leaves_no_lock(user, previous):
    path = write(user / "empty.txt", b"")
    return Run(["build", str(path), "--out", str(user / "new-map"), "--quiet"], ["empty.txt"], no_lock=user)


def writer_case_build_over_a_map_a_killed_curate_left_a_temporary_file_in(user, previous):
    stray = write(previous / ".curation.json.k3x_9q2a", '{"format": "abstract-atlas curation 1", "ed')
    path = csv_of(user / "papers.csv", english())

    def check(err):
        assert len(read_map(previous).papers) == 12 and not stray.exists()

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_add_to_a_map_a_killed_curate_left_a_temporary_file_in(user, previous):
    write(previous / ".curation.json.k3x_9q2a", "")
    path = csv_of(user / "more.csv", english(2))

    def check(err):
        assert len(added_rows(previous)) == 2

    return Run(["add", str(previous), str(path), "--quiet"], check=check, changes=(previous,))


def writer_case_curate_cleans_a_killed_curates_temporary_file(user, previous):
    stray = write(previous / ".curation.json.k3x_9q2a", "")

    def check(err):
        assert not stray.exists() and json.loads((previous / "curation.json").read_text())["edits"]

    return Run(["curate", str(previous), "rename", "1", "Transport"], check=check, changes=(previous,))


def _curation(previous: Path, edits_json: str) -> None:
    write(previous / "curation.json", '{"format": "abstract-atlas curation 1", "edits": ' + edits_json + "}")


def _edit_folder(previous: Path) -> None:
    """A folder where the map's curation.json belongs, holding a file of the user's."""
    write(previous / "curation.json" / "mine.txt", "my notes")


def writer_case_curate_rename_when_the_edit_file_is_a_folder(user, previous):
    _edit_folder(previous)
    return Run(["curate", str(previous), "rename", "0", "Mine"], ["curation.json", "is a folder"])


def writer_case_curate_list_when_the_edit_file_is_a_folder(user, previous):
    _edit_folder(previous)
    return Run(["curate", str(previous), "list"], ["curation.json", "is a folder"])


def writer_case_export_when_the_edit_file_is_a_folder(user, previous):
    _edit_folder(previous)
    return Run(["export", str(previous), "--out", str(user / "x.csv")], ["curation.json", "is a folder"])


def writer_case_rebuild_when_the_edit_file_is_a_folder_keeps_the_folder(user, previous):
    _edit_folder(previous)
    path = csv_of(user / "papers.csv", english())
    return Run(["build", str(path), "--out", str(previous), "--quiet"], ["curation.json", "is a folder"])


def writer_case_add_of_a_parquet_whose_title_is_categorical(user, previous):
    path = user / "more.parquet"
    titles = pd.Categorical(["Title a", None])
    pq.write_table(pa.Table.from_pandas(pd.DataFrame({"abstract": english(2), "title": titles})), path)

    def check(err):
        titles = added_rows(previous)["title"].tolist()
        assert "Title a" in titles and all(isinstance(t, str) and t for t in titles), titles

    return Run(["add", str(previous), str(path), "--quiet"], check=check, changes=(previous,))


def writer_case_export_with_a_deeply_nested_edit_file(user, previous):
    _curation(previous, "[" * 50_000 + "]" * 50_000)
    return Run(["export", str(previous), "--out", str(user / "x.csv")], ["curation.json", "nested"])


def writer_case_export_with_an_edit_whose_theme_topics_overflow(user, previous):
    _curation(
        previous, '[{"id": 1, "action": "rename-theme", "theme": 0, "theme_topics": [1e400], "name": "X"}]'
    )
    return Run(["export", str(previous), "--out", str(user / "x.csv")], ["curation.json", "1e400"])


def writer_case_add_with_a_deeply_nested_manifest(user, previous):
    manifest = (previous / "manifest.json").read_text()
    write(
        previous / "manifest.json", manifest.rstrip()[:-1] + ', "deep": ' + "[" * 50_000 + "]" * 50_000 + "}"
    )
    path = csv_of(user / "more.csv", english(2))
    return Run(["add", str(previous), str(path), "--quiet"], ["manifest.json", "nested"])


def writer_case_rebuild_over_a_map_whose_manifest_overflows_notes_it(user, previous):
    manifest = json.loads((previous / "manifest.json").read_text())
    manifest["papers"] = 1
    text = json.dumps(manifest).replace('"papers": 1', '"papers": 1e400')
    write(previous / "manifest.json", text)
    path = csv_of(user / "papers.csv", english())

    def check(err):  # a damaged map in --out is about to be replaced: a note, and the build goes on
        assert "note:" in err and "1e400" in err and "topic ids start afresh" in err
        assert len(read_map(previous).papers) == 12

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_curate_list_with_a_deeply_nested_edit_file(user, previous):
    _curation(previous, "[" * 50_000 + "]" * 50_000)
    return Run(["curate", str(previous), "list"], ["curation.json", "nested"])


def _damage(previous: Path, name: str, change: Callable[[pd.DataFrame], pd.DataFrame | None]) -> None:
    """Rewrite one table of the map in `previous` (and the checksum, so the damage is all that is wrong)."""
    from pipeline.mapfolder.store import checksum

    table = pd.read_parquet(previous / name)
    change(table)  # in place
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), previous / name)
    papers = pd.read_parquet(previous / "papers.parquet")
    manifest = json.loads((previous / "manifest.json").read_text())
    ids = [str(d) for d in papers["doc_id"]]
    manifest["checksum"] = checksum((previous / "embeddings.npy").read_bytes(), ids)
    (previous / "manifest.json").write_text(json.dumps(manifest))


def _set(column: str, row: int, value):
    def change(table):
        values = table[column].astype(object).tolist()
        values[row] = value
        table[column] = pd.Series(values, dtype=object)

    return change


def _export_refuses(previous: Path, user: Path, *words: str) -> Run:
    return Run(["export", str(previous), "--out", str(user / "x.csv")], list(words))


def writer_case_export_of_a_map_with_null_keywords(user, previous):
    _damage(previous, "topics.parquet", _set("keywords", 0, None))
    return _export_refuses(previous, user, "topics.parquet", "keywords")


def writer_case_export_of_a_map_with_a_null_doc_id(user, previous):
    _damage(previous, "papers.parquet", _set("doc_id", 2, None))
    return _export_refuses(previous, user, "papers.parquet", "doc_id", "row 3")


def writer_case_export_of_a_map_with_text_coordinates(user, previous):
    _damage(previous, "papers.parquet", lambda t: t.__setitem__("x", t["x"].astype(str)))
    return _export_refuses(previous, user, "papers.parquet", "'x'")


def writer_case_export_of_a_map_with_a_topic_id_of_2_to_the_40(user, previous):
    _damage(previous, "papers.parquet", _set("topic_id", 0, 2**40))
    return _export_refuses(previous, user, "papers.parquet", "topic_id", str(2**40))


def writer_case_export_of_a_map_with_a_topic_id_of_minus_5(user, previous):
    _damage(previous, "topics.parquet", _set("topic_id", 1, -5))
    return _export_refuses(previous, user, "topics.parquet", "topic_id", "-5")


def writer_case_export_of_a_map_with_a_one_dimensional_embeddings_file(user, previous):
    import numpy as np

    np.save(previous / "embeddings.npy", np.zeros(7, dtype=np.float32))
    return _export_refuses(previous, user, "embeddings.npy", "1-D")


def _vectors(previous: Path, change: Callable) -> None:
    """Rewrite embeddings.npy (and the checksum, so the vectors are all that is wrong)."""
    import numpy as np

    vectors = np.load(previous / "embeddings.npy")
    np.save(previous / "embeddings.npy", change(vectors))
    _damage(previous, "papers.parquet", lambda table: None)


def _nan_row(vectors):
    vectors[2, 5] = float("nan")
    return vectors


def writer_case_export_of_a_map_with_a_nan_vector(user, previous):
    _vectors(previous, _nan_row)
    return _export_refuses(previous, user, "embeddings.npy", "row 3", "NaN")


def writer_case_export_of_a_map_with_vectors_of_another_width(user, previous):
    _vectors(previous, lambda vectors: vectors[:, :10].copy())
    return _export_refuses(previous, user, "embeddings.npy", "10 numbers", "384")


def writer_case_export_of_a_map_with_a_centroid_of_another_width(user, previous):
    import numpy as np

    _damage(previous, "topics.parquet", _set("centroid", 1, np.ones(10, dtype=np.float32)))
    return _export_refuses(previous, user, "topics.parquet", "centroid", "row 2")


def writer_case_export_of_a_map_with_a_coordinate_of_3_3e38(user, previous):
    _damage(previous, "papers.parquet", _set("x", 0, 3.3e38))
    return _export_refuses(previous, user, "papers.parquet", "'x'", "3.3e+38")


def writer_case_export_of_a_map_whose_paper_names_a_topic_that_is_gone(user, previous):
    _damage(previous, "topics.parquet", lambda t: t.drop(index=0, inplace=True))  # topic 0's row gone
    return _export_refuses(previous, user, "papers.parquet", "topic_id", "holds 0", "does not hold")


def writer_case_export_of_a_map_with_fewer_keyword_weights_than_keywords(user, previous):
    def shorter(table):
        table["keyword_weights"] = [list(w)[:-1] for w in table["keyword_weights"]]

    _damage(previous, "topics.parquet", shorter)
    return _export_refuses(previous, user, "topics.parquet", "keyword_weights", "for 2 keywords")


def writer_case_export_of_a_map_whose_theme_holds_a_topic_that_is_gone(user, previous):
    _damage(previous, "themes.parquet", _set("topic_ids", 0, [0, 99]))
    return _export_refuses(previous, user, "themes.parquet", "topic_ids", "topic 99")


def writer_case_export_of_a_map_whose_topic_names_a_theme_that_is_gone(user, previous):
    _damage(previous, "topics.parquet", _set("theme_id", 0, 77))
    return _export_refuses(previous, user, "topics.parquet", "theme_id", "77")


def writer_case_export_of_a_map_with_a_theme_holding_no_topic_list(user, previous):
    _damage(previous, "themes.parquet", _set("topic_ids", 0, None))
    return _export_refuses(previous, user, "themes.parquet", "topic_ids")


def writer_case_export_of_a_map_whose_title_column_is_categorical(user, previous):
    _damage(previous, "papers.parquet", lambda t: t.__setitem__("title", t["title"].astype("category")))

    def check(err):
        table = pd.read_csv(user / "x.csv", encoding="utf-8-sig")
        assert len(table) == 7 and table["title"].notna().all()

    return Run(
        ["export", str(previous), "--out", str(user / "x.csv")], check=check, changes=(user / "x.csv",)
    )


def writer_case_rebuild_over_a_map_with_a_null_doc_id_notes_it_and_starts_afresh(user, previous):
    _damage(previous, "papers.parquet", _set("doc_id", 2, None))
    path = csv_of(user / "papers.csv", english())

    def check(err):
        assert "papers.parquet" in err and "'doc_id'" in err and "topic ids start afresh" in err
        assert len(read_map(previous).papers) == 12

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_rebuild_with_a_previous_map_whose_topic_id_is_2_to_the_40(user, previous):
    _damage(previous, "papers.parquet", _set("topic_id", 3, 2**40))
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["papers.parquet", "topic_id", str(2**40)])


def writer_case_rebuild_with_a_damaged_previous_map(user, previous):
    _damage(previous, "topics.parquet", _set("keywords", 1, None))
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["topics.parquet", "keywords"])


def writer_case_add_to_a_map_with_text_coordinates(user, previous):
    _damage(previous, "topics.parquet", lambda t: t.__setitem__("y", t["y"].astype(str)))
    path = csv_of(user / "more.csv", english(2))
    return Run(["add", str(previous), str(path), "--quiet"], ["topics.parquet", "'y'"])


def writer_case_curate_rename_to_unassigned(user, previous):
    return Run(["curate", str(previous), "rename", "1", "unassigned"], ["unassigned", "outside every topic"])


def writer_case_curate_rename_theme_to_unassigned(user, previous):
    return Run(["curate", str(previous), "rename-theme", "0", "Unassigned"], ["Unassigned", "another"])


def writer_case_curate_name_with_a_line_break_is_one_error_line(user, previous):
    return Run(["curate", str(previous), "rename", "1", "Two\nlines"], ["Two\\nlines", "line break"])


def writer_case_curate_drop_of_a_hide_that_would_give_two_topics_one_name(user, previous):
    from pipeline.commands.curate import edit_map

    edit_map(previous, "hide", topic=1)
    edit_map(previous, "rename", topic=0, name="Optimal transport")  # topic 1's name, free while hidden
    return Run(["curate", str(previous), "drop", "1"], ["cannot drop edit #1", "Optimal transport"])


def writer_case_curate_accept_that_would_give_two_topics_one_name(user, previous):
    from pipeline.commands.curate import edit_map

    edit_map(previous, "rename", topic=0, name="Sinkhorn")
    document = json.loads((previous / "curation.json").read_text())
    document["edits"][0]["review"] = "topic 0 was split by the rebuild"
    document["edits"].append({"id": 2, "action": "rename", "topic": 1, "name": "sinkhorn"})
    write(previous / "curation.json", json.dumps(document))
    return Run(["curate", str(previous), "accept", "1"], ["cannot accept edit #1", "Sinkhorn"])


def writer_case_export_with_a_hand_written_hide_into_itself(user, previous):
    _curation(previous, '[{"id": 1, "action": "hide", "topic": 1, "into": 1}]')
    return Run(["export", str(previous), "--out", str(user / "x.csv")], ["curation.json", "into itself"])


def writer_case_curate_refuses_an_edit_file_with_a_negative_id(user, previous):
    # edits are numbered from 1 (`curate list`, `accept N`, `drop N`): -3 is damage, named with its file
    _curation(previous, '[{"id": -3, "action": "note", "topic": 1, "text": "hand-written"}]')
    return Run(
        ["curate", str(previous), "list"], ["curation.json", "'id' must be a whole number of at least 1"]
    )


def writer_case_curate_drop_of_a_negative_id(user, previous):
    return Run(["curate", str(previous), "drop", "-7"], ["at least 1, got -7"])


def writer_case_build_into_a_folder_inside_a_map(user, previous):
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(previous / "inner"), "--quiet"]
    return Run(args, ["inner", "inside the map folder"])


def writer_case_export_out_whose_parent_is_a_file(user, previous):
    notes = write(user / "notes.txt", "mine")
    return Run(["export", str(previous), "--out", str(notes / "x.csv")], ["notes.txt", "is a file"])


def writer_case_export_with_a_damaged_lineage_table(user, previous):
    pd.DataFrame({"topic_id": [0], "status": ["kept"]}).to_parquet(previous / "lineage.parquet")
    return Run(["export", str(previous), "--out", str(user / "x.csv")], ["lineage.parquet", "missing column"])


def writer_case_export_with_non_integer_lineage_ids(user, previous):
    lineage = pd.DataFrame(
        {
            "topic_id": [0],
            "status": ["kept"],
            "previous_topic_ids": [["zero"]],
            "successor_topic_ids": [[]],
            "previous_label": ["x"],
            "shared_papers": [1],
        }
    )
    lineage.to_parquet(previous / "lineage.parquet")
    return Run(["export", str(previous), "--out", str(user / "x.csv")], ["lineage.parquet", "whole numbers"])


def writer_case_export_with_a_manifest_field_of_the_wrong_type(user, previous):
    manifest = json.loads((previous / "manifest.json").read_text())
    manifest["papers"] = "many"
    (previous / "manifest.json").write_text(json.dumps(manifest))
    return Run(
        ["export", str(previous), "--out", str(user / "x.csv")], ["manifest.json", "papers", "whole number"]
    )


def writer_case_add_with_a_damaged_lineage_table(user, previous):
    pd.DataFrame({"topic_id": ["a"]}).to_parquet(previous / "lineage.parquet")
    path = csv_of(user / "more.csv", english(2))
    return Run(["add", str(previous), str(path), "--quiet"], ["lineage.parquet"])


def writer_case_add_whose_year_is_na_and_venue_numeric(user, previous):
    write_map(previous, dated_map())
    path = jsonl_of(
        user / "more.jsonl",
        [{"abstract": english()[0], "year": "n/a", "venue": 2024}, {"abstract": english()[1], "year": 2025}],
    )

    def check(err):
        papers = read_map(previous).papers
        assert papers["year"].tolist()[:7] == [2015, 2016, 2017, 2015, 2016, 2017, 2015]
        assert str(papers["year"].dtype) in ("int64", "Int64")  # never 2015.0
        new = added_rows(previous).set_index("abstract")
        assert pd.isna(new.loc[english()[0], "year"]) and new.loc[english()[1], "year"] == 2025
        assert new.loc[english()[0], "venue"] == "2024" and papers["venue"].iloc[0] == "-ICML"

    return Run(["add", str(previous), str(path), "--quiet"], check=check, changes=(previous,))


def writer_case_add_of_a_file_without_year_keeps_years_whole(user, previous):
    write_map(previous, dated_map())
    path = csv_of(user / "more.csv", english(2))

    def check(err):
        papers = read_map(previous).papers
        assert str(papers["year"].dtype) == "Int64" and papers["year"].isna().sum() == 2
        assert [str(y) for y in papers["year"].dropna()] == [str(2015 + i % 3) for i in range(7)]

    return Run(["add", str(previous), str(path), "--quiet"], check=check, changes=(previous,))


def writer_case_add_of_a_sparse_new_column_makes_no_filter(user, previous):
    from app.data import facet_columns

    path = csv_of(user / "more.csv", english(2), doi=["10.1/a", "10.1/b"])

    def check(err):
        papers = read_map(previous).papers
        assert papers["doi"].tolist()[-2:] == ["10.1/a", "10.1/b"]
        assert "doi" not in facet_columns(papers) and "via_add" not in facet_columns(papers)

    return Run(["add", str(previous), str(path), "--quiet"], check=check, changes=(previous,))


def writer_case_add_updates_theme_sizes(user, previous):
    path = csv_of(user / "more.csv", english(3))

    def check(err):
        atlas = read_map(previous)
        sizes = atlas.papers[atlas.papers["topic_id"] != -1]["topic_id"].value_counts()
        assert atlas.topics["size"].tolist() == [int(sizes.get(t, 0)) for t in atlas.topics["topic_id"]]
        expected = [sum(int(sizes.get(t, 0)) for t in ids) for ids in atlas.themes["topic_ids"]]
        assert atlas.themes["size"].tolist() == expected and sum(expected) == int(sizes.sum())

    return Run(["add", str(previous), str(path), "--quiet"], check=check, changes=(previous,))


def writer_case_add_dot_from_inside_the_map(user, previous):
    path = csv_of(user / "more.csv", english(2))

    def check(err):
        assert len(added_rows(previous)) == 2
        assert not (previous / "..lock").exists() and not list(previous.glob(".*"))

    return Run(["add", ".", str(path), "--quiet"], check=check, changes=(previous,), cwd=previous)


def writer_case_build_out_dot_from_inside_the_map(user, previous):
    path = csv_of(user / "papers.csv", english())

    def check(err):
        assert len(read_map(previous).papers) == 12
        assert not (previous / "..lock").exists() and not list(previous.glob(".*"))

    return Run(["build", str(path), "--out", ".", "--quiet"], check=check, changes=(previous,), cwd=previous)


def writer_case_rebuild_keeps_the_papers_added_to_the_map(user, previous):
    kept = grown_map(previous)
    path = csv_of(user / "papers.csv", english())

    def check(err):
        papers = read_map(previous).papers
        assert len(papers) == 14 and set(kept) <= set(papers["doc_id"])
        assert papers.set_index("doc_id").loc[kept, "via_add"].all()
        assert not papers["added"].any() if "added" in papers else True  # placed by the build now
        assert "kept 2 papers added since the last build" in err

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_rebuild_with_drop_added_leaves_them_out_on_purpose(user, previous):
    kept = grown_map(previous)
    path = csv_of(user / "papers.csv", english())

    def check(err):
        papers = read_map(previous).papers
        assert len(papers) == 12 and not set(kept) & set(papers["doc_id"])
        assert "left out 2 papers added" in err

    args = ["build", str(path), "--out", str(previous), "--quiet", "--drop-added"]
    return Run(args, check=check, changes=(previous,))


def writer_case_build_from_a_table_with_source_and_input_source(user, previous):
    path = csv_of(
        user / "export.csv", english(), source=["a.csv"] * 12, input_source=[f"arXiv:{i}" for i in range(12)]
    )

    def check(err):
        papers = read_map(previous).papers
        assert set(papers["source"]) == {"export.csv"} and set(papers["input_input_source"]) == {"a.csv"}
        assert sorted(papers["input_source"]) == sorted(f"arXiv:{i}" for i in range(12))

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_build_from_a_map_folder(user, previous):
    return Run(
        ["build", str(previous), "--out", str(user / "m2"), "--quiet"], [str(previous), "is a map folder"]
    )


def writer_case_build_from_jsonl_with_a_raw_line_separator(user, previous):
    rows = [{"abstract": text} for text in english()]
    rows[3]["abstract"] = rows[3]["abstract"].replace(" Our", "\u2028Our")
    path = write(user / "papers.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    assert "\u2028" in path.read_text()

    def check(err):
        assert len(read_map(previous).papers) == 12

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def _damaged_lineage(previous: Path, value) -> None:
    manifest = json.loads((previous / "manifest.json").read_text())
    manifest["lineage"] = {"previous": None, "next_topic_id": value}
    (previous / "manifest.json").write_text(json.dumps(manifest))


def writer_case_previous_with_a_text_next_topic_id(user, previous):
    _damaged_lineage(previous, "many")
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["manifest.json", "lineage.next_topic_id", "whole number"])


def writer_case_previous_with_a_huge_next_topic_id(user, previous):
    _damaged_lineage(previous, 2**70)
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["lineage.next_topic_id"])


def writer_case_previous_whose_lineage_is_a_list(user, previous):
    manifest = json.loads((previous / "manifest.json").read_text())
    manifest["lineage"] = [1, 2]
    (previous / "manifest.json").write_text(json.dumps(manifest))
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["manifest.json", "lineage", "an object"])


def writer_case_rebuild_over_a_map_whose_next_topic_id_is_past_the_id_limit_notes_it(user, previous):
    _damaged_lineage(previous, 2**21)  # a whole number past the one id limit (2**20) the tables check
    path = csv_of(user / "papers.csv", english())

    def check(err):
        assert "lineage.next_topic_id" in err and "topic ids start afresh" in err
        rebuilt = read_map(previous)  # what it published, its own reader opens
        assert rebuilt.topics["topic_id"].max() < len(rebuilt.topics)

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_previous_with_a_next_theme_id_past_the_id_limit(user, previous):
    manifest = json.loads((previous / "manifest.json").read_text())
    manifest["lineage"] = {"previous": None, "next_theme_id": 2**21}
    (previous / "manifest.json").write_text(json.dumps(manifest))
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["manifest.json", "lineage.next_theme_id"])


def writer_case_previous_with_a_gone_theme_id_past_the_id_limit(user, previous):
    manifest = json.loads((previous / "manifest.json").read_text())
    manifest["lineage"] = {
        "themes": [{"theme_id": 2**40, "status": "gone", "label": "Old", "topic_ids": [0]}]
    }
    (previous / "manifest.json").write_text(json.dumps(manifest))
    path = csv_of(user / "papers.csv", english())
    args = ["build", str(path), "--out", str(user / "m2"), "--previous", str(previous), "--quiet"]
    return Run(args, ["manifest.json", "lineage.themes"])


def writer_case_rebuild_over_a_map_with_a_damaged_next_topic_id_notes_it(user, previous):
    _damaged_lineage(previous, 1.5)
    path = csv_of(user / "papers.csv", english())

    def check(err):
        assert "lineage.next_topic_id" in err and "topic ids start afresh" in err
        rebuilt = read_map(previous)
        lineage = json.loads((previous / "manifest.json").read_text())["lineage"]
        ids = sorted(rebuilt.topics["topic_id"].tolist())
        assert lineage["previous"] is None and ids == list(range(len(ids)))  # numbered from 0, no match
        assert lineage["next_topic_id"] == len(ids)

    return Run(["build", str(path), "--out", str(previous), "--quiet"], check=check, changes=(previous,))


def writer_case_ray_address_nobody_answers_even_when_all_is_cached(user, previous):
    pytest.importorskip("ray")
    path = csv_of(user / "papers.csv", english())
    return Run(
        ["build", str(path), "--out", str(user / "m2"), "--quiet", "--ray", "127.0.0.1:9"],
        ["--ray 127.0.0.1:9", "cannot connect"],
    )


def writer_case_ray_address_from_the_environment_is_named_so(user, previous):
    pytest.importorskip("ray")
    path = csv_of(user / "papers.csv", english())
    return Run(
        ["build", str(path), "--out", str(user / "m2"), "--quiet"],
        ["ATLAS_RAY_ADDRESS 127.0.0.1:9", "cannot connect"],
        env={"ATLAS_RAY_ADDRESS": "127.0.0.1:9"},
    )


RUNS = {
    name[len("writer_case_") :]: fn for name, fn in dict(globals()).items() if name.startswith("writer_case_")
}


@pytest.mark.parametrize("case", sorted(RUNS))
def test_writers_and_readers_catalogue(case, tmp_path, capsys, monkeypatch):
    user, previous = tmp_path / "user", tmp_path / "work" / "map"
    user.mkdir()
    write_map(previous, hostile_map())
    run = RUNS[case](user, previous)
    for name, value in run.env.items():
        monkeypatch.setenv(name, value)
    if run.cwd:
        monkeypatch.chdir(run.cwd)
    lock = f".{previous.name}.lock"  # lock files (beside any --out) are the only files a failure may leave

    def hashes():
        return {
            k: v for k, v in file_hashes(tmp_path).items() if not re.fullmatch(r"\..*\.lock", Path(k).name)
        }

    before = hashes()
    code = main(run.args)
    monkeypatch.chdir(ROOT)
    err = capsys.readouterr().err.strip()
    lines = err.splitlines()
    if run.error is not None:
        assert code == 2, err
        assert len(lines) == 1 and lines[0].startswith("error: "), lines
        for text in run.error:
            assert text.lower() in lines[0].lower(), (text, lines[0])
        assert hashes() == before  # the map and the user's files, byte for byte
    else:
        assert code == 0, err
        assert "Traceback" not in err
        run.check(err)
        changed = [
            tmp_path / k for k, v in file_hashes(tmp_path, skip_name=lock).items() if before.get(k) != v
        ]
        changed += [tmp_path / k for k in before if not (tmp_path / k).exists()]
        allowed = [c for c in changed if not any(c == p or p in c.parents for p in run.changes)]
        assert not allowed, allowed  # nothing else was written, replaced or removed
        read_map(previous)
    assert not [p for p in previous.parent.iterdir() if p.name.startswith(".map.") and p.name != lock]
    if run.no_lock is not None:
        assert not [p.name for p in run.no_lock.iterdir() if p.name.endswith(".lock")]


# ---- a rebuild over a damaged map in --out: a note, and the build goes on (issue 36) ----


@pytest.fixture(scope="module")
def built_map(tmp_path_factory) -> tuple[Path, Path]:
    """A map built from `english()` and its input: a rebuild of the same papers carries everything."""
    base = tmp_path_factory.mktemp("built")
    path = csv_of(base / "papers.csv", english())
    assert main(["build", str(path), "--out", str(base / "map"), "--quiet"]) == 0
    return path, base / "map"


def _pad_manifest(previous: Path, text: str) -> None:
    manifest = (previous / "manifest.json").read_text().rstrip()
    write(previous / "manifest.json", manifest[:-1] + f', "pad": {text}}}')


PREVIOUS_DAMAGE = {
    "nan_vector": lambda previous: _vectors(previous, _nan_row),
    "vectors_57_by_10": lambda previous: _vectors(previous, lambda v: v[:, :10].copy()),
    "centroid_of_10": lambda previous: _damage(previous, "topics.parquet", _set("centroid", 0, [1.0] * 10)),
    "x_of_3_3e38": lambda previous: _damage(previous, "papers.parquet", _set("x", 0, 3.3e38)),
    "manifest_too_deep": lambda previous: _pad_manifest(previous, "[" * 100 + "]" * 100),
    "manifest_with_1e400": lambda previous: _pad_manifest(previous, "1e400"),
    "manifest_over_64_mb": lambda previous: _pad_manifest(previous, '"' + "x" * (65 << 20) + '"'),
}


@pytest.mark.parametrize("damage", sorted(PREVIOUS_DAMAGE))
def test_a_rebuild_over_a_damaged_map_notes_it_and_goes_on(damage, built_map, tmp_path, capsys):
    path, template = built_map
    previous = tmp_path / "map"
    shutil.copytree(template, previous)
    PREVIOUS_DAMAGE[damage](previous)
    code = main(["build", str(path), "--out", str(previous), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err and "note:" in err, err
    rebuilt = read_map(previous)  # readable, every vector finite and of the model's width
    assert len(rebuilt.papers) == 12 and rebuilt.embeddings.shape == (12, 384)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".map.") and p.name != ".map.lock"]


# ---- paths the system would refuse as too long: one error line from every command (issue 36) ----

LONG = "/".join(["d" * 200] * 21)  # 4,220 bytes: past the 4,096 Linux allows a path


@pytest.mark.parametrize(
    "args",
    [
        ["build", "{long}", "--out", "{map}2"],
        ["build", "{input}", "--out", "{long}"],
        ["build", "{input}", "--out", "{map}2", "--previous", "{long}"],
        ["add", "{long}", "{input}"],
        ["add", "{map}", "{long}"],
        ["export", "{long}", "--out", "{map}.csv"],
        ["export", "{map}", "--out", "{long}.csv"],
        ["curate", "{long}", "list"],
        ["curate", "{long}", "rename", "0", "X"],
        ["build", "{input}", "--out", "{map}2/" + "n" * 256],  # one name past 255 bytes
        ["build", "{input}", "--out", "{hops}m2"],  # `../` hops the system walks, 4,200 bytes of them
        ["export", "{map}", "--out", "{hops}x.csv"],
        ["curate", "{hops}map", "note", "0", "x"],
    ],
    ids=lambda args: " ".join(args),
)
def test_a_path_too_long_for_the_system_is_one_error_line(args, tmp_path, capsys):
    previous = tmp_path / "map"
    write_map(previous, hostile_map())
    path = csv_of(tmp_path / "papers.csv", english())
    hops = f"{tmp_path}/" + "../" * 1400 + f"{str(tmp_path).lstrip('/')}/"  # names tmp_path again
    given = [a.format(long=tmp_path / LONG, map=previous, input=path, hops=hops) for a in args]
    before = file_hashes(tmp_path)
    code = main(given)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert "bytes long" in err[0] and len(err[0]) < 300, err[0]
    assert file_hashes(tmp_path) == before


# ---- a lock file that is not a plain file a writer made: refused, what it names untouched (issue 64) ----


def _planted_lock(kind: str, lock: Path, precious: Path) -> None:
    if kind == "link":
        lock.symlink_to(precious)
    elif kind == "hard link":
        os.link(precious, lock)
    elif kind == "named pipe":
        os.mkfifo(lock)
    else:
        lock.mkdir()


@pytest.mark.parametrize("kind", ["link", "hard link", "named pipe", "folder"])
@pytest.mark.parametrize("command", ["build", "add", "curate"])
def test_a_lock_file_planted_beside_a_map_is_refused_and_what_it_names_kept(command, kind, tmp_path, capsys):
    previous, user = tmp_path / "maps" / "map", tmp_path / "user"
    write_map(previous, hostile_map())
    precious = write(user / "precious.txt", "my precious notes\n")
    path = csv_of(user / "papers.csv", english(2 if command == "add" else 12))
    lock = previous.parent / ".map.lock"
    lock.unlink(missing_ok=True)  # the lock the map's own writing left
    _planted_lock(kind, lock, precious)
    args = {
        "build": ["build", str(path), "--out", str(previous), "--quiet"],
        "add": ["add", str(previous), str(path), "--quiet"],
        "curate": ["curate", str(previous), "note", "0", "x"],
    }[command]
    before = file_hashes(tmp_path, skip_name=".map.lock")
    code = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {lock}: "), err
    assert "lock file" in err[0] and "remove it" in err[0], err
    assert precious.read_text() == "my precious notes\n"
    assert file_hashes(tmp_path, skip_name=".map.lock") == before
    assert lock.is_symlink() == (kind == "link")


def test_an_input_is_hashed_for_its_fingerprint_in_chunks_never_whole(tmp_path, monkeypatch, capsys):
    """A huge input (a sparse file: no disk used) is fingerprinted 16 MB at a time, and a binary one
    is refused from its first bytes; no read of it asks for more than a chunk."""
    import pipeline.ingest as ingest
    import pipeline.mapfolder.store as store
    from pipeline.commands.build import input_fingerprint
    from pipeline.config import BuildConfig

    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as handle:
        handle.truncate(3 << 30)  # 3 GB of zeros
    sizes = []

    class Spy:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def read(self, size=-1):
            sizes.append(size)
            if len(sizes) > 3:  # a few chunks prove the point; the rest of the 3 GB is not needed
                return b""
            return self.handle.read(size)

    real_open = open
    monkeypatch.setattr(
        store, "open", lambda path, mode="r", *a, **k: Spy(real_open(path, mode, *a, **k)), raising=False
    )
    monkeypatch.setattr(ingest, "read_bytes", lambda path: pytest.fail(f"{path} read whole"))
    input_fingerprint([huge], BuildConfig())
    assert sizes and all(0 < size <= store.FILE_CHUNK for size in sizes), sizes
    code = main(["build", str(huge), "--out", str(tmp_path / "m"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: ") and "binary" in err[-1], err


def test_the_fingerprint_hashes_the_same_bytes_as_before(tmp_path):
    """Hashed in chunks, the fingerprint is the one maps already record (their --if-stale holds)."""
    import hashlib

    from pipeline import __version__
    from pipeline.commands.build import input_fingerprint
    from pipeline.config import BuildConfig
    from pipeline.mapfolder.files import SCHEMA_VERSION

    path = csv_of(tmp_path / "papers.csv", english())
    config = BuildConfig()
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode())
    digest.update(f"schema {SCHEMA_VERSION} pipeline {__version__}".encode())
    digest.update(path.name.encode() + b"\0" + path.read_bytes())
    assert input_fingerprint([path], config) == digest.hexdigest()
