"""Where a paper comes from, in a reader's terms (issue 18): input file names ("000_d810000eb6448a23.txt")
are never a filter nor what the papers table calls a source; the collection, venue or year are."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import (
    REPO,
    link_in_view,
    opened_paper,
    paper_text,
    papers_table,
    points,
    start,
    table,
    texts,
    tiny_map,
    url,
    whole_page,
)

SEED_MAP = REPO / "assets" / "maps" / "seeds"


@pytest.fixture
def seeds(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ATLAS_MAP", str(SEED_MAP))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return SEED_MAP


def open_map(atlas, folder: Path, monkeypatch) -> None:
    write_map(folder, atlas)
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(folder.parent / "no-other-maps"))


def sidebar_filters(at) -> dict[str, list[str]]:
    """Every multiselect of the sidebar: its label -> the options it offers, as the reader reads them."""
    return {m.label: list(m.options) for m in at.sidebar.multiselect}


def test_the_seed_map_offers_no_file_names_and_says_its_papers_are_from_icml_2025(seeds):
    papers = read_map(SEED_MAP).papers
    assert papers["source"].str.endswith(".txt").all()  # three seed files...
    assert set(papers["collection"]) == {"ICML 2025"}  # ...of one collection: nothing to filter by
    at = start()
    assert not at.exception and not at.warning
    filters = sidebar_filters(at)
    assert set(filters) == {"Themes", "Topics"}  # no "Input file", no "Source", no "Collection"
    assert not [o for options in filters.values() for o in options if ".txt" in o]
    shown = table(at)
    assert set(shown["Source"]) == {"ICML 2025"}
    assert not shown.astype(str).apply(lambda c: c.str.contains(r"\.txt", regex=True)).any().any()
    assert points(at)["sources"] == ["ICML 2025"]  # the hover says the same
    at.session_state["paper"] = str(papers["doc_id"].iloc[0])
    at.run()
    assert opened_paper(at)["details"] == "ICML 2025"  # and so does the paper view
    assert ".txt" not in texts(at) + paper_text(at)


def test_an_old_link_with_a_file_name_source_filter_opens_the_whole_map_with_a_notice(seeds):
    n = len(read_map(SEED_MAP).papers)
    at = start({"f.source": "000_d810000eb6448a23.txt", "colour": "source"})
    assert not at.exception
    [notice] = [w.value for w in at.warning]
    assert "Ignored filter 'source': this map has no such filter." in notice.replace("\\", "")
    assert "colour='source'" in notice.replace("\\", "")  # colouring by file was on offer too
    assert link_in_view(at).all()  # every paper in colour: no filter applied
    assert (
        papers_table(at)["caption"].startswith(f"Papers 1–50 of {n} · page 1 of 2.") and len(table(at)) == 50
    )
    assert "f.source" not in url(at) and "colour" not in url(at)  # the address bar is cleaned
    at.button(key="dismiss_notices").click().run()
    assert not at.warning


def test_two_collections_are_a_filter_and_input_files_are_not(tmp_path, monkeypatch):
    atlas = tiny_map()  # source: "alpha.txt" or "beta.txt", as ingest names input files
    atlas.papers["collection"] = ["ICML 2025", "NeurIPS 2024"] * 30
    open_map(atlas, tmp_path / "two", monkeypatch)
    at = start()
    assert not at.exception
    filters = sidebar_filters(at)
    assert filters["Collection"] == ["ICML 2025", "NeurIPS 2024"] and filters["Year"] == ["2023", "2024"]
    assert "Source" not in filters and "Input file" not in filters
    at.multiselect(key="w_f_collection").select("NeurIPS 2024").run()
    shown = table(whole_page(at))  # the table: the browser's from the link; the server's, the same
    assert len(shown) == 30 and all(s.endswith("NeurIPS 2024") for s in shown["Source"])
    assert url(at)["f.collection"] == ["NeurIPS 2024"]


def test_a_source_that_names_no_file_stays_a_filter_called_source(tmp_path, monkeypatch):
    atlas = tiny_map()
    atlas.papers["source"] = ["arXiv", "OpenReview"] * 30  # e.g. a benchmark map: source = venue
    open_map(atlas, tmp_path / "venues", monkeypatch)
    at = start({"f.source": "arXiv"})
    assert not at.exception and not at.warning
    assert sidebar_filters(at)["Source"] == ["arXiv", "OpenReview"]
    assert at.multiselect(key="w_f_source").value == ["arXiv"] and len(table(at)) == 30
    assert set(table(at)["Source"]) == {"arXiv · 2023", "arXiv · 2024"}  # as the hover says it
    assert "arXiv · 2023" in points(at)["sources"]


def test_no_source_column_repeats_the_venue_and_year_columns_beside_it(tmp_path, monkeypatch):
    """Issue 66: "COLM · 2025" in a Source column beside the Venue and Year columns."""
    atlas = tiny_map()  # source: input file names
    atlas.papers["venue"] = "COLM"
    open_map(atlas, tmp_path / "colm", monkeypatch)
    at = start()
    shown = table(at)
    assert "Source" not in shown.columns and {"Venue", "Year"} <= set(shown.columns)
    row = shown.iloc[0]
    assert points(at)["sources"] and set(points(at)["sources"]) == {
        "COLM · 2023",
        "COLM · 2024",
    }  # the hover says it
    assert f"COLM · {row['Year']}" in points(at)["sources"]


def test_a_paper_whose_authors_are_a_list_opens_and_names_them(tmp_path, monkeypatch):
    """JSONL input may carry authors as a list: the paper view names them (it raised ValueError before)."""
    atlas = tiny_map()
    atlas.papers["authors"] = [["Ada Lovelace", "Alan Turing"]] + [["Grace Hopper"]] * (len(atlas.papers) - 1)
    open_map(atlas, tmp_path / "authors", monkeypatch)
    at = start()
    at.session_state["paper"] = "doc0000"
    at.run()
    assert not at.exception
    assert opened_paper(at)["details"].endswith(" · Ada Lovelace, Alan Turing")
