"""Every link in the corpus recorded before the browser became the view's one owner (issue 63) opens the
same view: the address bar, the header, the notices, the papers the map shows, the opened topic and
paper, the papers table (tests/link_corpus.py)."""

from __future__ import annotations

import json

import pytest

from tests.link_corpus import CORPUS, LINKS, maps, open_link

RECORDED = json.loads(CORPUS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def folders(tmp_path_factory, monkeypatch_module):
    monkeypatch_module.setenv("ATLAS_MAPS_DIR", str(tmp_path_factory.mktemp("none") / "no-other-maps"))
    return maps(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_the_corpus_is_the_list_of_links():
    assert [(e["map"], e["link"]) for e in RECORDED] == LINKS


@pytest.mark.parametrize("entry", RECORDED, ids=[f"{e['map']}:{e['link'] or 'whole map'}" for e in RECORDED])
def test_a_link_opens_the_view_it_opened(entry, folders, monkeypatch_module):
    monkeypatch_module.setenv("ATLAS_MAP", str(folders[entry["map"]]))
    recorded = {k: v for k, v in entry.items() if k not in ("map", "link")}
    assert open_link(folders[entry["map"]], entry["link"]) == recorded
