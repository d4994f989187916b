"""Ingest: the seed format, tables with metadata, titles, ids and de-duplication."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from pipeline.ingest import collection_name, derive_title, doc_id_for, ingest
from tests.helpers import ROOT, SEEDS

ABSTRACT_A = "We study optimal transport between Gaussian measures and derive closed-form maps for them."
ABSTRACT_B = "Diffusion models generate images by denoising; we propose D-Fusion, a faster sampler for them."


def test_seed_files_give_57_abstracts_of_one_collection():
    corpus = ingest([SEEDS])
    papers = corpus.papers
    assert len(papers) == 57
    assert papers.groupby("source").size().tolist() == [19, 19, 19]
    # The Chinese header ("ICML 2025 论文列表") names the same collection as "ICML 2025 Papers".
    assert set(papers["collection"]) == {"ICML 2025"}
    assert not papers["abstract"].str.startswith("ICML 2025").any()


def test_seed_text_is_kept_verbatim_including_markdown_and_latex():
    papers = ingest([SEEDS]).papers
    assert papers["abstract"].str.contains(r"$\mathbf{x}$", regex=False).any()
    assert papers["abstract"].str.contains("**", regex=False).any()


@pytest.mark.parametrize(
    "header, name",
    [
        ("ICML 2025 Papers", "ICML 2025"),
        ("ICML 2025 论文列表", "ICML 2025"),
        ("NeurIPS 2024", "NeurIPS 2024"),
    ],
)
def test_collection_name_drops_list_words(header, name):
    assert collection_name(header) == name


@pytest.mark.parametrize(
    "abstract, title",
    [
        (
            "LLMs fail at X. Here, we introduce MuLan, Multi-Language adapter, a lightweight adapter.",
            "MuLan: Multi-Language adapter, a lightweight adapter",
        ),
        (
            "Moderation is hard. We present SafetyAnalyst, a novel AI safety moderation framework. More.",
            "SafetyAnalyst: a novel AI safety moderation framework",
        ),
        (ABSTRACT_B, "D-Fusion: a faster sampler for them"),
        (
            "We propose SMAAT, which improves the scalability of adversarial training.",
            "SMAAT improves the scalability of adversarial training",
        ),
        (
            "Despite the success of diffusion models in data generation, they fail. We study why.",
            "Despite the success of diffusion models in data generation, they fail",
        ),
        (
            "Inference-time techniques, such as repeated sampling or iterative revisions, are emerging as "
            "powerful ways to enhance large-language models at test time. We study them.",
            "Inference-time techniques, such as repeated sampling or iterative revisions, are…",
        ),
    ],
)
def test_derived_titles_name_the_method_or_take_the_first_sentence(abstract, title):
    assert derive_title(abstract) == title


def test_derived_titles_are_short_for_every_seed():
    titles = ingest([SEEDS]).papers["title"]
    assert titles.str.len().max() <= 90
    assert (titles.str.len() >= 10).all()
    assert "MuLan" in " ".join(titles) and "SafetyAnalyst" in " ".join(titles)


def test_doc_id_ignores_whitespace_and_file_but_not_text():
    assert doc_id_for("a  b\nc") == doc_id_for(" a b c ")
    assert doc_id_for("a b c") != doc_id_for("a b d")
    assert len(doc_id_for("x")) == 16


def test_tables_find_abstract_column_in_any_case_and_keep_metadata(tmp_path):
    csv_file = tmp_path / "papers.csv"
    pd.DataFrame(
        {
            "Title": ["Gaussian OT", ""],
            "ABSTRACT": [ABSTRACT_A, ABSTRACT_B],
            "year": [2024, 2025],
            "venue": ["ICML", "NeurIPS"],
        }
    ).to_csv(csv_file, index=False)
    jsonl_file = tmp_path / "more.jsonl"
    jsonl_file.write_text(
        json.dumps({"abstract": "Graph neural networks for molecules " * 3, "url": "u"}) + "\n"
    )
    parquet_file = tmp_path / "extra.parquet"
    pd.DataFrame({"abstract": ["Bandits with delayed feedback and regret bounds " * 2]}).to_parquet(
        parquet_file
    )
    tsv_file = tmp_path / "tab.tsv"
    tsv_file.write_text("abstract\tauthors\nSparse autoencoders for interpretability of models\tAda\n")
    papers = ingest([tmp_path]).papers
    assert len(papers) == 5
    assert papers.loc[papers["abstract"] == ABSTRACT_A, "title"].item() == "Gaussian OT"
    assert papers.loc[papers["abstract"] == ABSTRACT_B, "title"].item().startswith("D-Fusion")
    assert {"year", "venue", "url", "authors"} <= set(papers.columns)
    assert papers.loc[papers["abstract"] == ABSTRACT_A, "year"].item() == 2024
    assert set(papers["source"]) == {"papers.csv", "more.jsonl", "extra.parquet", "tab.tsv"}


def test_identical_abstracts_are_merged_and_reported(tmp_path):
    (tmp_path / "a.txt").write_text(f"Header\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    (tmp_path / "b.txt").write_text(f"Header\n\n{ABSTRACT_A.replace(' ', '  ')}\n")
    corpus = ingest([tmp_path])
    assert len(corpus.papers) == 2
    assert "merged 1 duplicate abstract(s)" in corpus.notes


def test_reserved_input_columns_are_renamed_not_lost(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"abstract": [ABSTRACT_A], "x": [5], "topic": ["mine"]}).to_csv(path, index=False)
    papers = ingest([path]).papers
    assert papers["input_x"].item() == 5 and papers["input_topic"].item() == "mine"


def test_title_of_a_one_megabyte_abstract_is_derived_in_linear_time(tmp_path):
    """One repeated sentence of 1 MB used to take hours (quadratic); run it in a child with a guard."""
    script = (
        "from pipeline.ingest import derive_title\n"
        "sentence = 'We propose a new method for optimal transport, which improves speed. '\n"
        "text = sentence * (1_000_000 // len(sentence))\n"
        "print(derive_title(text))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "We propose a new method for optimal transport, which improves speed"


def test_a_one_megabyte_abstract_is_ingested_with_a_short_title(tmp_path):
    path = tmp_path / "huge.csv"
    huge = "We introduce FastOT, a solver that scales transport. " * 20_000
    pd.DataFrame({"abstract": [huge, ABSTRACT_A]}).to_csv(path, index=False)
    papers = ingest([path]).papers
    assert papers["title"].tolist()[0] == "FastOT: a solver that scales transport"
    assert len(papers["abstract"].iloc[0]) > 1_000_000


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_files_with_a_byte_order_mark_are_read(tmp_path, encoding):
    text = f"abstract,year\n{ABSTRACT_A},2024\n汉语摘要：最优传输,2025\n"
    bom = {"utf-16": b"", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[encoding]
    (tmp_path / "wide.csv").write_bytes(bom + text.encode(encoding))
    papers = ingest([tmp_path / "wide.csv"]).papers
    assert papers["abstract"].tolist() == [ABSTRACT_A, "汉语摘要：最优传输"]
    assert papers["year"].tolist() == [2024, 2025]


def test_hidden_folders_and_maps_inside_input_folders_are_not_read(tmp_path):
    (tmp_path / "a.txt").write_text(f"Header\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    for hidden in (".map.tmp-123-abc", ".git"):
        (tmp_path / hidden).mkdir()
        pd.DataFrame({"abstract": ["Staged copy " * 5]}).to_parquet(tmp_path / hidden / "papers.parquet")
    (tmp_path / "old-map").mkdir()
    pd.DataFrame({"abstract": ["A map's own papers " * 5]}).to_parquet(
        tmp_path / "old-map" / "papers.parquet"
    )
    (tmp_path / "old-map" / "manifest.json").write_text('{"schema_version": 1}')
    corpus = ingest([tmp_path])
    assert sorted(corpus.papers["abstract"]) == sorted([ABSTRACT_A, ABSTRACT_B])
    assert any("skipped 1 map folder" in note and "old-map" in note for note in corpus.notes)


def test_metadata_named_like_our_columns_is_kept_under_input_names(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"abstract": [ABSTRACT_A], "source": ["arXiv"], "added": ["yes"], "theme_id": [3]}).to_csv(
        path, index=False
    )
    papers = ingest([path]).papers
    assert papers["source"].item() == "t.csv" and papers["input_source"].item() == "arXiv"
    assert papers["input_added"].item() == "yes" and papers["input_theme_id"].item() == 3


def test_a_categorical_title_column_with_empty_titles_gets_titles_derived_like_any_other(tmp_path):
    from pipeline.ingest import ingest

    path = tmp_path / "papers.parquet"
    abstracts = [
        "We study optimal transport. It is fast.",
        "Diffusion models denoise images. Yes.",
        "Third one.",
    ]
    for written in (["", "Kept", "Kept"], ["", None, "Kept"]):
        pd.DataFrame({"abstract": abstracts, "title": pd.Categorical(written)}).to_parquet(path)
        titles = ingest([path]).papers.set_index("abstract")["title"]
        assert titles[abstracts[0]] == "We study optimal transport"
        assert titles[abstracts[1]] in ("Kept", "Diffusion models denoise images")
        assert titles[abstracts[2]] == "Kept"
