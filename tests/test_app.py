"""The Streamlit app driven headlessly with AppTest: load, filters, search, views, URL state, export, hostile text."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest

from app import session
from app.data import build_map_data
from app.nearest import nearest_papers
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import (
    FakeEncoder,
    live_map,
    map_doc_ids,
    map_names,
    open_panel,
    opened_paper,
    page_bytes,
    panel_summary,
    panel_topic,
    paper_text,
    papers_table,
    plain,
    points,
    rows_of,
    select_box,
    start,
    table,
    texts,
    tiny_map,
    topic_table,
    url,
    walk,
    whole_page,
    write_tiny_map,
)

HOSTILE = "<img src=x onerror=alert(1)>"
MARKUP = "$x^2$ **bold** [x](y)"


def test_default_load_shows_the_map_topics_and_papers(tiny):
    at = start()
    assert not at.exception
    assert at.markdown[0].value == "## Tiny test map"
    assert "60 papers · 4 topics · 8 unassigned" in texts(at)
    assert len(map_doc_ids(at)) == 60
    assert [label["text"] for label in map_names(at)["topics"]] == [
        "Graph neural networks",
        "Diffusion models",
        "Reinforcement learning",
        "Multi-view clustering",
    ]
    topics = topic_table(at)
    assert topics["Topic"].tolist()[-1] == "Unassigned" and topics["Papers"].tolist() == [13, 13, 13, 13, 8]
    assert len(table(at)) == 50  # the first page
    assert papers_table(at)["caption"].startswith("Papers 1–50 of 60 · page 1 of 2.")
    assert not at.warning
    assert [b.label for b in at.get("download_button")] == [  # two columns, left one first
        "Download these 60 papers (CSV)",
        "Reading list of these 60 (Markdown)",
        "Download the whole map · 60 (CSV)",
        "These 60 as BibTeX",
    ]
    assert url(at) == {}


def test_topic_filter_shows_exactly_its_papers_and_unassigned_ones_only_when_chosen(tiny):
    papers = read_map(tiny).papers
    in_topic = int((papers["topic_id"] == 1).sum())
    unassigned = int((papers["topic_id"] == -1).sum())
    at = start()
    at.multiselect(key="w_topics").select(1).run()
    whole_page(at)  # the map and the table: the browser draws them from the link; the server, the same
    shown = table(at)
    assert len(shown) == in_topic and set(shown["Topic"]) == {"Diffusion models"}
    assert len(map_doc_ids(at)) == in_topic
    assert f"Showing the {in_topic} papers in the topic “Diffusion models”" in plain(at)
    assert not [t for t in at.toggle if t.key == "w_unassigned"]  # in a topic view: "Unassigned" under Topics
    whole_page(at).multiselect(key="w_topics").select(-1).run()  # the reader asks for the unassigned papers
    shown = table(whole_page(at))
    assert len(shown) == in_topic + unassigned and set(shown["Topic"]) == {"Diffusion models", "Unassigned"}
    assert (
        f"Showing the {in_topic + unassigned} papers in the topic “Diffusion models” and the unassigned"
        in plain(at)
    )
    assert url(at)["topics"] == ["1,-1"]
    whole_page(at).multiselect(key="w_topics").unselect(-1).run()
    whole_page(at).multiselect(key="w_f_year").select("2024").run()
    in_2024 = int(((papers["topic_id"] == 1) & (papers["year"] == 2024)).sum())
    shown = table(whole_page(at))
    assert len(shown) == in_2024 and set(shown["Year"]) == {"2024"}
    assert url(at)["topics"] == ["1"] and url(at)["f.year"] == ["2024"]


def test_unassigned_switch_hides_them_from_the_whole_map(tiny):
    papers = read_map(tiny).papers
    at = start()
    whole_page(at.toggle(key="w_unassigned").set_value(False).run())
    assigned = int((papers["topic_id"] != -1).sum())
    assert len(map_doc_ids(at)) == assigned and "Unassigned" not in set(table(at)["Topic"])
    assert f"Showing the {assigned} papers in a topic" in plain(at)
    assert url(at)["unassigned"] == ["hide"]
    whole_page(at).multiselect(key="w_topics").select(2).run()  # a topic view: the switch is not drawn...
    whole_page(at).multiselect(key="w_topics").unselect(2).run()
    assert at.toggle(key="w_unassigned").value is False  # ...and keeps the reader's choice


def test_search_matches_whole_words_ranks_and_highlights(tiny):
    at = start()
    whole_page(at.text_input(key="w_search").input("DIFFUSION study 1").run())
    assert table(at)["Title"].tolist() == ["Diffusion study 1"]  # "1" is a word: not 13, 17, 21 or 41
    assert map_doc_ids(at) == {"doc0001"}
    assert "1 of the 60 papers of the map matches the words “DIFFUSION study 1”" in plain(at)
    assert url(at)["q"] == ["DIFFUSION study 1"] and "kind" not in url(at)
    whole_page(whole_page(at).text_input(key="w_search").input("diffusion").run())
    expected = {f"doc{i:04d}" for i in range(60) if i % 4 == 1}  # every Diffusion paper, assigned or not
    assert map_doc_ids(at) == expected
    assert "15 of the 60 papers of the map match the words “diffusion”" in plain(at)
    assert set(table(at)["Match"]) == {"exact word"}  # as typed (pipeline.mapfolder.query)
    at.session_state["paper"] = "doc0005"
    at.run()
    paper = opened_paper(at)  # the matches marked (js/panel.js draws them as <mark>), the rest as written
    assert paper["title"] == [["Diffusion", True], [" study 5", False]]
    assert paper["abstract"] == [
        ["We study ", False],
        ["diffusion", True],
        [" with denoising in paper 5. Costs are $O(n)$.", False],
    ]
    assert paper["match"] == {
        "kind": "words",
        "text": "Found by its words (#2 of 15): the matches are highlighted.",
    }


def test_topic_view_shows_keywords_representatives_and_nearest_topics(tiny):
    at = start(
        {"topic": "2"}
    )  # the panel beside the map opens the link's topic (tests/test_browser_panel.py)
    assert panel_topic(at) == 2 and url(at)["topic"] == ["2"]
    [topic] = [t for t in panel_summary(at)["topics"] if t["id"] == 2]
    assert topic["name"] == "Reinforcement learning" and topic["size"] == 13
    assert topic["keywords"][0] == "policy"  # the strongest keyword first
    titles = [p["title"] for p in topic["central"]]  # representatives first
    assert titles[:3] == ["Policy study 2", "Policy study 10", "Policy study 14"]
    assert len(titles) == 10 and all(t.startswith("Policy study") for t in titles)
    nearest = [n["id"] for n in topic["nearest"]]
    assert len(nearest) == 3 and 2 not in nearest
    assert [n["similarity"] for n in topic["nearest"]] == sorted(
        (n["similarity"] for n in topic["nearest"]), reverse=True
    )
    assert "Showing the 13 papers in the topic “Reinforcement learning”" in plain(at)  # the server's header


def test_paper_view_shows_abstract_topic_and_nearest_papers(tiny):
    at = start({"paper": "doc0005"})
    paper = opened_paper(at)  # drawn by js/panel.js in the topic list's place
    assert paper["back"] == "Back to the topic list" and paper["title"] == [["Diffusion study 5", False]]
    assert paper["abstract"] == [["We study diffusion with denoising in paper 5. Costs are $O(n)$.", False]]
    assert paper["topic_name"] == "Diffusion models" and paper["match"] is None and paper["url"] is None
    assert not [b for b in at.button if b.key == "back_to_list"] and "Diffusion study 5" not in texts(at)
    nearest = paper["nearest"]  # row, title as written, topic where they differ
    data = build_map_data("tiny", tiny)
    rows, similarity = nearest_papers(data, 5)
    topics = {data.label(int(t)) for t in data.topic_ids[rows]}
    assert len(nearest) == 8 and 5 not in [n["row"] for n in nearest]
    assert nearest == [
        {
            "row": int(row),
            "title": data.papers["title"].iloc[row],
            "topic": data.label(int(data.topic_ids[row])) if len(topics) > 1 else None,
            "similarity": round(s, 4),
        }
        for row, s in zip(rows, similarity, strict=True)
    ]
    assert topics <= {"Diffusion models", "Unassigned"}
    assert [n["similarity"] for n in nearest] == sorted((n["similarity"] for n in nearest), reverse=True)
    assert live_map(at)["paper"] == 5  # the opened paper's row, ringed on the map
    assert live_map(at)["neighbours"] == [n["row"] for n in nearest]  # the same papers ringed


def test_view_is_restored_from_query_params(tiny):
    params = {
        "q": "study",
        "topics": "0,3",
        "unassigned": "hide",
        "f.year": "2023",
        "topic": "3",
        "paper": "doc0007",
    }
    at = start(params)
    assert not at.warning and not at.exception
    assert at.text_input(key="w_search").value == "study"
    assert at.multiselect(key="w_topics").value == [0, 3]
    assert (
        at.session_state["w_unassigned"] is False
    )  # kept for the whole-map view (no switch in a topic view)
    assert at.multiselect(key="w_f_year").value == ["2023"]
    papers = table(at)  # the opened paper's topic's papers: its panel leads back to the topic
    assert set(papers["Topic"]) == {"Multi-view clustering"}
    assert set(papers["Year"]) == {"2023"}
    assert opened_paper(at)["title"] == [["Clustering ", False], ["study", True], [" 7", False]]  # marked
    assert {k: v[-1] for k, v in url(at).items()} == params  # unchanged: the link reproduces itself


def test_malformed_query_params_are_ignored_with_a_visible_notice(tiny):
    at = start(
        {
            "topics": "abc,99",
            "paper": "../../etc/passwd",
            "unassigned": "maybe",
            "f.year": "1850",
            "f.nope": "1",
            "topic": "1e9",
            "map": "elsewhere",
            "debug": "1",
            "q": "graph",
        }
    )
    assert not at.exception
    notice = at.warning[0].value
    for fragment in ("abc", "99", "etc/passwd", "maybe", "1850", "nope", "1e9", "elsewhere", "debug"):
        assert fragment in notice
    assert len(table(at)) == 15  # the valid part (search "graph") still applies
    assert url(at) == {"q": ["graph"], "map": ["tiny"]}  # the address bar is cleaned
    at.button(key="dismiss_notices").click().run()
    assert not at.warning


def test_export_downloads_the_current_view_and_the_whole_map_spreadsheet_safe(
    tmp_path, monkeypatch, downloads
):
    titles = ['=HYPERLINK("http://evil")'] + [f"Paper {i}" for i in range(1, 60)]
    folder = write_tiny_map(tmp_path / "tiny", titles=titles)
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    at = start({"topics": "0", "unassigned": "hide"})
    view = rows_of(downloads["Download these 13 papers (CSV)"])
    assert len(view) == 13 and {r["topic"] for r in view} == {"Graph neural networks"}
    assert {r["doc_id"] for r in view} == {f"doc{i:04d}" for i in range(0, 60, 4) if i % 7 != 6}
    assert view[0]["title"] == '\'=HYPERLINK("http://evil")'  # neutralised, as `python -m pipeline export`
    assert list(view[0])[:8] == [
        "doc_id",
        "title",
        "abstract",
        "topic_id",
        "topic",
        "topic_keywords",
        "theme",
        "source",
    ]
    whole = rows_of(downloads["Download the whole map · 60 (CSV)"])
    assert len(whole) == 60 and sum(r["topic"] == "Unassigned" for r in whole) == 8
    from pipeline.exports.export import export_frame, to_csv_bytes
    from pipeline.mapfolder.store import read_map

    atlas = read_map(folder)
    assert downloads["Download the whole map · 60 (CSV)"]() == to_csv_bytes(
        export_frame(atlas.papers, atlas.topics)
    )
    assert not at.exception  # the page ran to the end with both buttons


def test_map_selection_fills_the_paper_table(tiny):
    at = start()
    inside = select_box(at, ("doc0003", "doc0001"))
    titles = tiny_map().papers.set_index("doc_id").loc[inside, "title"].tolist()
    assert 2 <= len(inside) < 60 and papers_table(at)["heading"] == f"Selected on the map · {len(inside)}"
    assert table(at)["Title"].tolist() == titles  # in the map's order
    assert [b.label for b in at.get("download_button")][0] == f"Download these {len(inside)} papers (CSV)"
    assert url(at)["select"] == [at.session_state["selection"]]  # the link keeps the selection
    at.session_state["selection"] = (
        ""  # as the table's "Clear selection" leaves it (tests/test_panel_events.py)
    )
    at.run()
    assert len(table(at)) == 50 and papers_table(at)["heading"] == "Papers · 60"


def test_the_topic_list_counts_the_papers_a_selection_holds(tiny):
    at = start()
    inside = select_box(at, ("doc0003", "doc0001", "doc0042"))
    atlas = tiny_map()
    per_topic = atlas.papers.set_index("doc_id").loc[inside, "topic_id"].value_counts()
    names = dict(zip(atlas.topics["topic_id"], atlas.topics["label"], strict=True)) | {-1: "Unassigned"}
    listed = topic_table(at)
    assert list(listed.columns)[-1] == "In view"
    assert dict(zip(listed["Topic"], listed["In view"], strict=True)) == {
        name: int(per_topic.get(topic, 0)) for topic, name in names.items()
    }


def test_a_paper_opened_from_a_topic_keeps_the_header_on_the_topic(tiny):
    at = start({"topic": "1", "paper": "doc0001"})
    assert "Showing the 13 papers in the topic “Diffusion models”" in texts(at).replace("**", "")
    assert opened_paper(at)["back"] == "Back to Diffusion models"


def test_downloads_say_this_paper_for_one_and_offer_no_empty_file(tiny):
    at = start()
    assert select_box(at, ("doc0003",)) == ["doc0003"]
    assert [b.label for b in at.get("download_button")] == [
        "Download this paper (CSV)",
        "Reading list of this paper (Markdown)",
        "Download the whole map · 60 (CSV)",
        "This paper as BibTeX",
    ]
    at.session_state["selection"] = ""
    at.text_input(key="w_search").input("zebrafish").run()  # no paper writes it
    assert "0 of the 60 papers of the map match the words “zebrafish”" in texts(at).replace("**", "")
    assert [b.label for b in at.get("download_button")] == ["Download the whole map · 60 (CSV)"]
    assert "No papers in view to download." in texts(at)


def test_hostile_titles_and_labels_are_shown_as_text(tmp_path, monkeypatch):
    titles = [HOSTILE, MARKUP] + [f"Paper {i}" for i in range(2, 60)]
    folder = write_tiny_map(tmp_path / "tiny", titles=titles, labels=["<b>Bold</b> topic", "B", "C", "D"])
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    at = start({"paper": "doc0001"})
    assert not at.exception and not at.get("html")
    assert opened_paper(at)["title"] == [[MARKUP, False]]  # set as text by js/panel.js: shown literally
    table_text = json.dumps(points(at), ensure_ascii=False)  # what Plotly's hover labels draw
    assert "<img" not in table_text and "<b>Bold" not in table_text
    assert points(at)["title"][0] == "&lt;img src=x onerror=alert(1)&gt;"
    assert "&lt;b&gt;Bold&lt;/b&gt; topic" in points(at)["topic_names"]
    assert map_names(at)["topics"][0]["text"] == "<b>Bold</b> topic"  # names are set as text, not markup
    assert HOSTILE in table(at)["Title"].tolist()  # dataframes show the raw text, never as HTML
    at = start()  # no paper open: the topic list is beside the map
    assert "<b>Bold</b> topic" in topic_table(at)["Topic"].tolist()


def test_where_does_my_paper_fit_pins_an_abstract_without_storing_it(tiny, monkeypatch):
    monkeypatch.setattr("app.encoder.map_encoder", lambda manifest: FakeEncoder())
    before = sorted(p.name for p in tiny.iterdir())
    at = open_panel(start(), session.PLACEMENT_PANEL)
    at.text_area(key=session.PASTED).input("We propose a diffusion sampler that denoises faster than before.")
    [b for b in at.button if b.label == "Place on the map"][0].click().run()
    assert not at.exception
    assert "Placed in **Diffusion models**" in at.success[0].value
    pinned = live_map(at)["pin"]
    assert pinned["x"] > 0.5 and pinned["y"] > 0.5  # among topic 1, around (2, 2)
    neighbours = table(at, index=0)
    assert len(neighbours) == 10 and neighbours["Similarity"].iloc[0] > 0.8  # place.NEIGHBOURS
    assert sorted(p.name for p in tiny.iterdir()) == before
    assert url(at) == {}  # the abstract is in no link


def test_several_maps_offer_a_selector_and_the_map_is_in_the_url(tmp_path, monkeypatch):
    write_tiny_map(tmp_path / "maps" / "seeds")
    write_tiny_map(tmp_path / "maps" / "other", labels=["Other A", "Other B", "Other C", "Other D"])
    monkeypatch.delenv("ATLAS_MAP", raising=False)
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "maps"))
    at = start()
    assert at.selectbox(key="map_choice").options == [
        "Tiny test map (seeds)",
        "Tiny test map (other)",
    ]  # one name: folders tell apart
    assert at.selectbox(key="map_choice").value == "seeds"
    assert url(at)["map"] == ["seeds"]
    at.selectbox(key="map_choice").select("other").run()
    assert topic_table(at)["Topic"].tolist()[0] == "Other A"
    assert url(at)["map"] == ["other"]
    whole_page(at).multiselect(key="w_topics").select(1).run()  # the link written in the filter's callback
    assert url(at) == {"map": ["other"], "topics": ["1"]}
    again = start({"map": "other", "topic": "1"})
    assert panel_topic(again) == 1 and "papers in the topic “Other B”" in texts(again)


def test_the_map_selector_names_each_map_as_its_manifest_does(tmp_path, monkeypatch):
    """The selector says the maps' names ("COLM 2024"), not their folders'; the link keeps the folder."""
    for folder, name in (("seeds", "ICML 2025"), ("colm", "COLM 2024")):
        write_tiny_map(tmp_path / "maps" / folder)
        manifest = tmp_path / "maps" / folder / "manifest.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "name": name}))
        assert read_map(tmp_path / "maps" / folder).manifest.name == name
    monkeypatch.delenv("ATLAS_MAP", raising=False)
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "maps"))
    at = start()
    assert at.selectbox(key="map_choice").options == ["ICML 2025", "COLM 2024"]
    at.selectbox(key="map_choice").select("colm").run()
    assert url(at)["map"] == ["colm"] and at.markdown[0].value == "## COLM 2024"


def test_a_rebuilt_map_is_reloaded(tiny):
    at = start()
    assert topic_table(at)["Topic"].tolist()[0] == "Graph neural networks"
    write_tiny_map(tiny, labels=["Renamed", "B", "C", "D"])
    at.run()
    assert topic_table(at)["Topic"].tolist()[0] == "Renamed"


def test_a_broken_map_folder_shows_an_error_not_a_traceback(tmp_path, monkeypatch):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{not json")
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "broken"))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    at = start()
    assert not at.exception
    assert "damaged manifest" in at.error[0].value


def test_about_this_map_shows_the_manifest(tiny):
    at = start()
    assert not at.metric  # a closed panel's body is not made
    open_panel(at, "about_panel")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {
        "Unassigned share": "15.0%",
        "Largest topic share": "25.0%",
        "Coherence (NPMI)": "0.120",
        "Topic diversity": "1.000",
        "Build speed": "17.1 /s",
    }
    about = texts(at)
    assert "**Tiny test map** · 60 papers · 4 topics · 8 unassigned" in about
    assert "embed 1.5 s · topics 2.0 s · total 3.5 s" in about
    assert "Model sentence\\-transformers/all\\-MiniLM\\-L6\\-v2 · encoder synthetic" in about


def test_big_views_page_the_table_send_little_per_rerun_and_export_everything(
    tmp_path, monkeypatch, downloads
):
    monkeypatch.setenv("ATLAS_MAP", str(write_tiny_map(tmp_path / "big", n=1500)))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    at = start()
    assert len(table(at)) == 50
    assert papers_table(at)["caption"].startswith("Papers 1–50 of 1,500 · page 1 of 30.")
    assert len(rows_of(downloads["Download these 1,500 papers (CSV)"])) == 1500
    assert points(at)["webgl"] is True and len(points(at)["x"]) == 1500
    assert papers_table(at)["rows"]["Title"].iloc[50] == "Policy study 50"  # page 2 (the browser turns it)
    whole_page(whole_page(at).text_input(key="w_search").input("policy").run())
    assert (
        papers_table(at)["caption"].startswith("Papers 1–50 of")
        and table(at)["Title"].iloc[0] == "Policy study 2"
    )
    assert page_bytes(at) < 20_000  # the whole page: map view state, topic list, the table's view (11 KB)
    # map.css and map.js come once a page as files (assets.style_script), not inside every element
    # of every rerun: each of the component's four elements (the map, the topic panel, the papers
    # table, the header's sentence) carries only the loader and its data.
    elements = [e.proto for e in walk(at._tree) if getattr(e, "type", "") == "bidi_component"]
    assert len(elements) == 4 and all(e.css_content == "" and len(e.js_content) < 3_000 for e in elements)


def test_metadata_column_names_are_shown_literally(tmp_path, monkeypatch):
    atlas = tiny_map()
    atlas.papers["$x$ **venue**"] = ["A", "B"] * 30
    write_map(tmp_path / "odd", atlas)
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "odd"))
    at = start({"f.$x$ **venue**": "B"})
    assert not at.exception and not at.warning
    facet = at.multiselect(key="w_f_$x$ **venue**")
    assert facet.label == "\\$x\\$ \\*\\*venue\\*\\*" and facet.value == ["B"]
    assert len(table(at)) == 30


def test_a_map_without_unassigned_papers_hides_that_state(tmp_path, monkeypatch):
    atlas = tiny_map()
    atlas.papers["topic_id"] = atlas.papers["topic_id"].replace(-1, 0)
    write_map(tmp_path / "full", atlas)
    monkeypatch.setenv("ATLAS_MAP", str(tmp_path / "full"))
    at = start({"topic": "-1"})
    assert not at.exception
    assert "Unassigned" not in topic_table(at)["Topic"].tolist()
    assert not [t for t in at.toggle if t.key == "w_unassigned"]
    assert "topic\\=\\'\\-1\\'" in at.warning[0].value  # shown literally: topic='-1'


def test_bidi_controls_in_titles_and_names_are_shown_not_obeyed(tmp_path, monkeypatch):
    rlo = "Invoice \u202egpj.exe"
    titles = [rlo] + [f"Paper {i}" for i in range(1, 60)]
    folder = write_tiny_map(tmp_path / "tiny", titles=titles, labels=["Topic \u2067A\u2069", "B", "C", "D"])
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    at = start({"paper": "doc0000"})
    assert not at.exception
    page = json.dumps(
        [texts(at), paper_text(at), points(at), panel_summary(at)["topics"], table(at)["Title"].tolist()],
        ensure_ascii=False,
    )
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", page)
    assert "Invoice \ufffdgpj.exe" in table(at)["Title"].tolist()
    assert opened_paper(at)["title"] == [["Invoice \ufffdgpj.exe", False]]
    at = start()  # no paper open: the topic list is beside the map
    assert "Topic \ufffdA\ufffd" in topic_table(at)["Topic"].tolist()


def test_deleting_the_open_map_among_several_says_so(tmp_path, monkeypatch):
    write_tiny_map(tmp_path / "maps" / "seeds")
    write_tiny_map(tmp_path / "maps" / "other", labels=["Other A", "Other B", "Other C", "Other D"])
    monkeypatch.delenv("ATLAS_MAP", raising=False)
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "maps"))
    at = start({"map": "other"})
    assert topic_table(at)["Topic"].tolist()[0] == "Other A"
    shutil.rmtree(tmp_path / "maps" / "other")
    at.run()
    assert not at.exception
    assert topic_table(at)["Topic"].tolist()[0] == "Graph neural networks"
    said = [i.value for i in at.info]
    assert any("no longer there" in v and "other" in v and "seeds" in v for v in said), said


def test_a_link_with_30000_topic_ids_gives_a_short_notice(tiny):
    at = start({"topics": ",".join(str(1000 + i) for i in range(30_000))})
    assert not at.exception
    notice = at.warning[0].value
    assert "and 29,990 more" in notice and len(notice) < 600, len(notice)


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: (folder / "manifest.json").write_text(
            json.dumps(dict(json.loads((folder / "manifest.json").read_text()), papers="many", model=3))
        ),
        lambda folder: pd.DataFrame({"topic_id": ["x"], "status": ["kept"]}).to_parquet(
            folder / "lineage.parquet"
        ),
    ],
    ids=["manifest-field-types", "lineage-columns"],
)
def test_a_damaged_manifest_or_lineage_shows_one_error_not_a_traceback(tmp_path, monkeypatch, damage):
    folder = write_tiny_map(tmp_path / "tiny")
    damage(folder)
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "none"))
    at = start()
    assert not at.exception
    shown = at.error[0].value.replace("\\", "")  # markdown-escaped on the page
    assert len(at.error) == 1 and (
        "manifest.json: damaged" in shown or "lineage.parquet: missing" in shown
    ), shown
