"""In a real browser, the papers table under the map (js/table.js): what it draws, cell by cell, against
what the app sent it (`papers_table`, the same link run in AppTest): pages, a search's order and how each
paper matched, sorting by title, an opened topic, a selection, a row opening its paper, hostile text."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest

from app.data import build_map_data
from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import (
    REPO,
    box_around,
    header_sentence,
    hostile_map,
    idle,
    open_app,
    papers_table,
    start,
    tiny_map,
)
from tests.test_browser import point_position

pytestmark = pytest.mark.browser
TABLE = ".atlas-table"

# What the table shows: its heading, the notice and caption, its column heads, and every cell's text
# (textContent: as set, nothing collapsed), each row with the map row it lists.
DRAWN = """() => {
    const root = document.querySelector('.atlas-table');
    const kids = [...root.children], at = kids.findIndex((e) => e.matches('.atlas-table-scroll'));
    const before = (at < 0 ? kids : kids.slice(0, at)).filter((e) => e.matches('.atlas-caption, .atlas-info'));
    const after = at < 0 ? [] : kids.slice(at + 1).map((e) => (e.matches('.atlas-caption') ? e : e.querySelector('.atlas-caption')));
    const body = [...root.querySelectorAll('.atlas-papers tbody tr')];
    return {
        heading: root.querySelector('.atlas-table-title')?.textContent ?? null,
        notice: before.length ? before[0].textContent : null,
        caption: after.filter(Boolean).length ? after.filter(Boolean)[0].textContent : null,
        columns: [...root.querySelectorAll('.atlas-papers th')].map((th) => th.dataset.column),
        rows: body.map((tr) => [...tr.cells].map((td) => td.textContent)),
        mapRows: body.map((tr) => Number(tr.dataset.row)),
    };
}"""


def titles_map(folder: Path) -> Path:
    """The tiny map with 120 papers, every third title starting in lower case (a plain sort would put
    them after every capital)."""
    atlas = tiny_map(120)
    atlas.papers["title"] = [t.lower() if i % 3 == 0 else t for i, t in enumerate(atlas.papers["title"])]
    write_map(folder, atlas)
    return folder


HOSTILE_TITLES = [
    "<b>bold</b> & <i>not</i>",
    "&amp; &lt;em&gt; stays as written",
    "right\u202eto\u202cleft \u2067isolate\u2069",
    '<img src=x onerror="window.__pwned = 1">',
    "two  spaces\nand a line",
    '=HYPERLINK("http://evil","x")',
    "<script>window.__pwned = 2</script>",
]
HOSTILE_VENUES = [
    "<u>ICML</u>",
    "&amp;",
    "\u202eSPIRUEN",
    "<svg onload=window.__pwned=3>",
    "-ICML",
    "",
    "a<br>b",
]


# Characters a page would obey or hide instead of show: NUL, other C0 and C1 controls, bidi controls.
CONTROLS = "\x00\x07\x1b\x7f\x85\x9b\u202e\u2066\u200f"


def controls_map():
    """The hostile map with a control character in every text the browser draws: each title (the
    unassigned paper's too, listed from the point table), topic and theme names, keywords, venues."""
    atlas = hostile_map()
    atlas.papers["title"] = [f"Title{c}{i} ends" for i, c in enumerate(CONTROLS[:7])]
    atlas.papers["venue"] = [f"Venue{c}" for c in CONTROLS[2:9]]
    atlas.topics["label"] = ["Evil\x00topic", "Optimal\u202etransport"]
    atlas.topics["keywords"] = [["nul\x00word", "b"], ["escape\x1bword", "optimal transport"]]
    atlas.themes["label"] = ["Trans\x85port", "Evil\x00theme"]
    return atlas


@pytest.fixture(scope="module")
def maps(tmp_path_factory):
    """The two maps (120 papers with mixed-case titles; a hostile one), each served once a module."""
    root = tmp_path_factory.mktemp("browser-table")
    folders = {"titles": titles_map(root / "titles")}
    atlas = hostile_map()
    atlas.papers["title"] = HOSTILE_TITLES
    atlas.papers["venue"] = HOSTILE_VENUES
    atlas.topics["label"] = ["<b>Evil</b> topic &amp;", "Optimal transport"]
    write_map(root / "hostile", atlas)
    folders["hostile"] = root / "hostile"
    write_map(root / "controls", controls_map())
    folders["controls"] = root / "controls"
    servers = {
        name: StreamlitServer(folder, root / "no-other-maps", timeout=90) for name, folder in folders.items()
    }
    yield {name: (servers[name], folder) for name, folder in folders.items()}
    for server in servers.values():
        server.stop()


def mirror(folder: Path, params: dict | None = None) -> dict:
    """What the table must show for this link: the app run once in AppTest (`papers_table`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATLAS_MAP", str(folder))
        patch.setenv("ATLAS_MAPS_DIR", str(folder.parent / "no-other-maps"))
        return papers_table(start(params))


def cells(frame) -> list[list[str]]:
    """A mirror's rows as the table writes them: numbers as js/table.js formats them."""
    out = []
    for row in frame.itertuples(index=False):
        line = []
        for name, value in zip(frame.columns, row, strict=True):
            if isinstance(value, float):
                value = f"{value:.1f}% of pairs" if name == "Closer than" else f"{value:.2f}"
            line.append(value)
        out.append(line)
    return out


def drawn(page, heading: str | None = None) -> dict:
    """The table as drawn, once its heading is `heading` (when given) and Streamlit is idle."""
    page.locator(f"{TABLE} .atlas-table-title").first.wait_for(timeout=30_000)
    if heading is not None:
        page.wait_for_function(
            "(h) => document.querySelector('.atlas-table .atlas-table-title')?.textContent === h",
            arg=heading,
            timeout=30_000,
        )
    idle(page)
    return page.evaluate(DRAWN)


def test_each_page_shows_the_cells_the_app_sent_byte_for_byte(page, maps):
    app, folder = maps["titles"]
    want = mirror(folder)
    rows, count = want["rows"], len(want["rows"])
    assert count == 120 and want["heading"] == "Papers · 120"
    open_app(page, app.url)
    shown = drawn(page, want["heading"])
    assert shown["columns"] == list(rows.columns)
    assert (shown["notice"], shown["caption"]) == (want["notice"], want["caption"])
    assert shown["rows"] == cells(want["page"])  # 50 rows, every cell
    previous = page.get_by_role("button", name="← Previous", exact=True)
    assert previous.is_disabled()
    page.get_by_role("button", name="Next →", exact=True).click()
    shown = drawn(page)
    assert shown["heading"] == want["heading"]
    assert shown["caption"] == want["caption"].replace("Papers 1–50", "Papers 51–100").replace(
        "page 1 of", "page 2 of"
    )
    assert shown["rows"] == cells(rows.iloc[50:100])
    assert previous.is_enabled()
    page.get_by_role("button", name="Next →", exact=True).click()
    shown = drawn(page)
    assert shown["rows"] == cells(rows.iloc[100:])  # the last page's 20
    assert page.get_by_role("button", name="Next →", exact=True).is_disabled()
    previous.click()
    assert drawn(page)["rows"] == cells(rows.iloc[50:100])


def test_the_keyboard_turns_the_pages_and_keeps_its_place_on_the_pager(page, maps):
    """Enter on "Next →" shows the next page with the focus still on the button (pressed again, the
    page after); on the last page, where it is disabled, the focus is on "← Previous". A column's
    button keeps it too."""
    app, folder = maps["titles"]
    want = mirror(folder)
    rows = want["rows"]
    open_app(page, app.url)
    drawn(page, want["heading"])
    focused = "document.activeElement.textContent"
    page.get_by_role("button", name="Next →", exact=True).focus()
    page.keyboard.press("Enter")
    assert drawn(page)["rows"] == cells(rows.iloc[50:100]) and page.evaluate(focused) == "Next →"
    page.keyboard.press("Enter")
    assert drawn(page)["rows"] == cells(rows.iloc[100:]) and page.evaluate(focused) == "← Previous"
    page.keyboard.press("Enter")
    assert drawn(page)["rows"] == cells(rows.iloc[50:100]) and page.evaluate(focused) == "← Previous"
    page.locator(f"{TABLE} th[data-column='Title'] button").focus()  # a column's order, the same way
    page.keyboard.press("Enter")
    drawn(page, "Papers · 120 · by title, ascending")
    assert page.evaluate("document.activeElement.dataset.column") == "Title"


def test_a_screen_reader_is_told_what_the_table_lists_when_it_changes(page, maps):
    """A live region (role=status) beside the table says its heading when a step changes it (here the
    order; a filter, a search or a pick in the key the same way), and nothing on the first drawing."""
    app, folder = maps["titles"]
    want = mirror(folder)
    open_app(page, app.url)
    drawn(page, want["heading"])
    status = page.locator(".atlas-status[role='status']")
    assert status.count() == 1 and status.text_content() == ""
    page.locator(f"{TABLE} th[data-column='Title'] button").click()
    drawn(page, "Papers · 120 · by title, ascending")
    assert status.text_content() == "Papers · 120 · by title, ascending"
    assert status.bounding_box()["width"] <= 1  # read, not drawn
    page.get_by_role("button", name="Next →", exact=True).click()
    drawn(page)
    assert status.text_content() == "Papers · 120 · by title, ascending"  # a page turned: the same listing


def test_a_search_link_lists_best_matches_first_with_how_each_matched(page, maps):
    app, folder = maps["titles"]
    want = mirror(folder, {"q": "diffusion"})
    assert want["heading"].endswith(" · best matches first") and "Match" in want["rows"].columns
    open_app(page, app.url + "?q=diffusion")
    shown = drawn(page, want["heading"])
    assert shown["columns"] == list(want["rows"].columns)
    match = shown["columns"].index("Match")
    assert [r[match] for r in shown["rows"]] == want["page"]["Match"].tolist()
    assert shown["rows"] == cells(want["page"])
    assert (shown["notice"], shown["caption"]) == (want["notice"], want["caption"])


def test_a_search_by_a_description_lists_each_paper_with_its_evidence_and_the_header_counts_them(
    page, tmp_path
):
    """On the seed map with its own model: the header counts every paper the table lists, in the words
    of the Match column, and every listed paper says why it is there (writes the words, close in meaning)."""
    seeds = REPO / "assets" / "maps" / "seeds"
    params = {"q": "multi-view clustering", "kind": "meaning"}  # a link from before the one list
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATLAS_MAP", str(seeds))
        patch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
        at = start(params)
        [header] = header_sentence(at)  # the view's, on the map ATLAS_MAP names
    want = papers_table(at)
    header = re.sub(r"\\(.)", r"\1", header).replace("**", "")
    listed = len(want["rows"])
    assert header.startswith(f"{listed} of the 57 papers of the map match “multi-view clustering”: ")
    labels = want["rows"]["Match"].tolist()
    writes, close = sum("writes" in m for m in labels), sum("close in meaning" in m for m in labels)
    assert all("writes" in m or "close in meaning" in m for m in labels)
    assert (
        f"{close} " + ("is" if close == 1 else "are") + " close in meaning" in header
        and f"{writes} write" in header
    )
    server = StreamlitServer(seeds, tmp_path / "no-other-maps", timeout=90)
    try:
        open_app(page, server.url + "?q=multi-view+clustering&kind=meaning")
        shown = drawn(page, want["heading"])
        assert shown["rows"] == cells(want["page"]) and len(want["page"]) == listed
        sentence = page.locator(".atlas-sentence", has_text=header.split(":")[0])
        sentence.wait_for(timeout=30_000)
        assert sentence.inner_text() == header  # the browser's sentence, as Python's rule writes it
    finally:
        server.stop()


def sort_state(page) -> str:
    return page.locator(f"{TABLE} th[data-column='Title']").get_attribute("aria-sort")


def test_sorting_by_title_ascending_descending_and_back_to_the_table_s_order(page, maps):
    app, folder = maps["titles"]
    want = mirror(folder)
    titles = want["rows"]["Title"].tolist()
    ordered = sorted(titles, key=lambda t: (t.casefold(), t))  # table.py's title_rank
    assert ordered != sorted(titles)  # the lower-case titles sort among the others, not after them
    open_app(page, app.url)
    drawn(page, want["heading"])
    assert sort_state(page) == "none"
    sort = page.locator(f"{TABLE} th[data-column='Title'] button")
    sort.click()
    shown = drawn(page, "Papers · 120 · by title, ascending")
    assert [r[0] for r in shown["rows"]] == ordered[:50] and sort_state(page) == "ascending"
    page.get_by_role("button", name="Next →", exact=True).click()
    assert [r[0] for r in drawn(page)["rows"]] == ordered[50:100]  # the order goes on across pages
    sort.click()
    shown = drawn(page, "Papers · 120 · by title, descending")
    assert [r[0] for r in shown["rows"]] == ordered[::-1][:50] and sort_state(page) == "descending"
    assert "page 1 of 3" in shown["caption"]  # a new order starts at its first page
    sort.click()
    shown = drawn(page, "Papers · 120")
    assert shown["rows"] == cells(want["page"]) and sort_state(page) == "none"


def test_an_opened_topic_lists_exactly_its_papers_and_back_lists_them_all(page, maps):
    app, folder = maps["titles"]
    data = build_map_data("titles", folder)
    want = mirror(folder)
    topic = data.topic_order[0]
    size = int(data.topics.set_index("topic_id").loc[topic, "size"])  # topics.parquet's own count
    members = want["rows"][want["rows"]["Topic"] == data.label(topic)]
    assert len(members) == size and 0 < size < 50
    open_app(page, app.url)
    drawn(page, want["heading"])
    page.locator(f".atlas-panel-list .atlas-topic[data-topic='{topic}']").click()
    shown = drawn(page, f"Papers · {size}")
    assert shown["rows"] == cells(members)  # its papers, in the map's order, and no other
    assert shown["caption"] == "Select a row to read the paper."
    page.get_by_role("button", name="Back to the topic list").click()
    shown = drawn(page, want["heading"])
    assert shown["rows"] == cells(want["page"]) and shown["caption"] == want["caption"]


def opened_title(page) -> str:
    """The title of the paper open beside the map (js/panel.js, drawPaper: its heading)."""
    heading = page.locator(".atlas-panel-paper:not([hidden]) h4").first
    heading.wait_for(timeout=30_000)
    return heading.text_content()


def test_a_row_clicked_or_its_title_chosen_with_the_keyboard_opens_that_paper(page, maps):
    app, folder = maps["titles"]
    papers = build_map_data("titles", folder).papers
    open_app(page, app.url)
    shown = drawn(page, "Papers · 120")
    row, k = shown["mapRows"][7], 7
    page.locator(f"{TABLE} tbody tr").nth(k).locator("td[data-column='Topic']").click()
    page.wait_for_function(
        "(id) => location.search.includes(`paper=${id}`)", arg=papers["doc_id"].iloc[row], timeout=30_000
    )
    idle(page)
    assert opened_title(page) == papers["title"].iloc[row] == shown["rows"][k][0]
    assert page.locator(f"{TABLE} tbody tr").nth(k).get_attribute("aria-selected") == "true"

    open_app(page, app.url)
    shown = drawn(page, "Papers · 120")
    page.locator(f"{TABLE} th[data-column='Title'] button").focus()
    for _ in range(20):  # Tab from the column heads to the first row's title
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('atlas-row-title')"):
            break
    first = page.evaluate("document.activeElement.closest('tr').dataset.row")
    assert int(first) == shown["mapRows"][0]
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(id) => location.search.includes(`paper=${id}`)",
        arg=papers["doc_id"].iloc[int(first)],
        timeout=30_000,
    )
    idle(page)
    assert opened_title(page) == papers["title"].iloc[int(first)] == shown["rows"][0][0]


def test_escape_closes_the_opened_paper_but_not_while_typing_in_the_search_box(page, maps):
    """A paper opened from the table (its panel is the server's, beside the map): Escape closes it, back
    to the topic list, as it closes an opened topic; the focus stays on the row's title, so the next
    row is a Tab away. Escape in the search box is the box's own and leaves the paper open."""
    app, folder = maps["titles"]
    papers = build_map_data("titles", folder).papers
    open_app(page, app.url)
    shown = drawn(page, "Papers · 120")
    row = shown["mapRows"][3]
    title = page.locator(f"{TABLE} tbody tr").nth(3).locator(".atlas-row-title")
    title.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(id) => location.search.includes(`paper=${id}`)", arg=papers["doc_id"].iloc[row], timeout=30_000
    )
    idle(page)
    assert opened_title(page) == papers["title"].iloc[row]
    assert page.locator(".atlas-panel-list").is_hidden()  # the paper in the list's place

    search = page.get_by_label("Search", exact=True)
    search.focus()
    page.keyboard.press("Escape")
    idle(page)
    assert "paper=" in page.evaluate("location.search") and opened_title(page) == papers["title"].iloc[row]

    title.focus()
    page.keyboard.press("Escape")
    page.wait_for_function("() => !location.search.includes('paper=')", timeout=30_000)
    page.locator(".atlas-panel-list").wait_for(timeout=30_000)  # the topic list back beside the map
    idle(page)
    assert page.locator(".atlas-panel-paper").is_hidden()
    assert marked(page) == []
    assert page.evaluate("document.activeElement.closest('tr')?.dataset.row") == str(row)


def marked(page) -> list[int]:
    """The map rows of the table's rows marked as the paper open beside the map."""
    return page.evaluate(
        f"[...document.querySelectorAll('{TABLE} tbody tr[aria-selected=true]')].map((tr) => Number(tr.dataset.row))"
    )


def test_the_paper_opened_on_the_map_or_by_a_link_is_marked_in_the_table(page, maps):
    app, folder = maps["titles"]
    papers = build_map_data("titles", folder).papers
    open_app(page, app.url)
    shown = drawn(page, "Papers · 120")
    assert marked(page) == []
    row = shown["mapRows"][4]
    page.mouse.move(*point_position(page, row))
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    page.mouse.down()
    page.mouse.up()
    page.wait_for_function("() => location.search.includes('paper=')", timeout=30_000)
    idle(page)
    doc_id = parse_qs(page.evaluate("location.search.slice(1)"))["paper"][0]
    opened = int(
        np.flatnonzero(papers["doc_id"].to_numpy() == doc_id)[0]
    )  # the nearest paper under the mouse
    assert opened_title(page) == papers["title"].iloc[opened]
    assert marked(page) == ([opened] if opened in shown["mapRows"] else [])
    page.get_by_role("button", name="Back to the topic list").click()
    page.wait_for_function("() => !location.search.includes('paper=')", timeout=30_000)
    idle(page)
    assert marked(page) == []

    open_app(page, app.url + f"?paper={papers['doc_id'].iloc[row]}")  # a shared link to a paper
    drawn(page, "Papers · 120")
    assert opened_title(page) == papers["title"].iloc[row]
    assert marked(page) == [row]


def test_hostile_titles_venues_and_topic_names_show_as_written_and_make_no_element(page, maps):
    app, folder = maps["hostile"]
    data = build_map_data("hostile", folder)  # the map's text as the app shows it (bidi controls made inert)
    want = mirror(folder)
    open_app(page, app.url)
    shown = drawn(page, want["heading"])
    assert shown["rows"] == cells(want["page"]) and len(shown["rows"]) == len(HOSTILE_TITLES)
    columns = shown["columns"]
    by_row = dict(zip(shown["mapRows"], shown["rows"], strict=True))
    for row in range(len(HOSTILE_TITLES)):
        cells_of = dict(zip(columns, by_row[row], strict=True))
        assert cells_of["Title"] == data.papers["title"].iloc[row]
        assert cells_of["Venue"] == data.papers["venue"].iloc[row]
        assert cells_of["Topic"] == data.label(int(data.topic_ids[row]))
    assert by_row[0][0] == HOSTILE_TITLES[0] and "\u202e" not in by_row[2][0]
    made = page.evaluate(
        "[...document.querySelectorAll('.atlas-table *')].map((e) => e.localName)"
        ".filter((n) => !['section', 'div', 'h4', 'p', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'button', 'span'].includes(n))"
    )
    assert made == []  # no <b>, <img>, <script>, <svg>, <br> ... from the text
    assert page.evaluate("window.__pwned === undefined")


def test_a_selection_link_lists_the_selection_and_clear_selection_empties_it(page, maps):
    app, folder = maps["titles"]
    papers = build_map_data("titles", folder).papers
    around = papers["doc_id"][papers["topic_id"] == 1].iloc[:6]
    box, inside = box_around(papers, around)
    want = mirror(folder, {"select": box})
    assert want["heading"] == f"Selected on the map · {len(inside)}" and len(inside) >= 6
    assert want["rows"]["Title"].tolist() == papers.set_index("doc_id").loc[inside, "title"].tolist()
    open_app(page, f"{app.url}?select={box}")
    shown = drawn(page, want["heading"])
    assert shown["rows"] == cells(want["page"])
    assert (shown["notice"], shown["caption"]) == (want["notice"], want["caption"])
    page.get_by_role("button", name="Clear selection").click()
    shown = drawn(page, "Papers · 120")
    page.wait_for_function("() => !location.search.includes('select=')", timeout=30_000)
    assert shown["rows"] == cells(mirror(folder)["page"])


# Every text the page holds: text nodes (the map's SVG labels included) and the attributes a browser
# shows (title, aria-label, placeholder, value), each with where it is.
EVERY_TEXT = """() => {
    const out = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!node.parentElement.closest('script, style')) out.push([node.parentElement.className.baseVal ?? node.parentElement.className, node.data]);
    }
    for (const el of document.body.querySelectorAll('*')) {
        for (const name of ['title', 'aria-label', 'placeholder', 'value']) {
            if (el.hasAttribute(name)) out.push([name, el.getAttribute(name)]);
        }
    }
    return out;
}"""


@pytest.mark.parametrize("link", ["", "?topic=0", "?topic=-1", "?paper=0000000000000002"])
def test_no_control_character_from_the_data_reaches_any_element_the_browser_draws(page, maps, link):
    """A NUL, an escape or a bidi control in a title, topic or theme name, keyword or value is shown
    as U+FFFD in the table, the topic list, an opened topic's papers (central ones, and the unassigned
    list drawn from the point table), an opened paper and the map's labels and key: never raw."""
    app, folder = maps["controls"]
    open_app(page, app.url + link)
    drawn(page)
    if link == "?topic=-1":
        page.locator(".atlas-paper-list li").first.wait_for(timeout=30_000)
    if link == "?paper=0000000000000002":
        page.locator(".atlas-panel-paper:not([hidden]) h4").first.wait_for(timeout=30_000)
    idle(page)
    texts = page.evaluate(EVERY_TEXT)
    raw = [(where, text) for where, text in texts if any(c in text for c in CONTROLS)]
    assert raw == [], raw
    table_titles = [row[0] for row in drawn(page)["rows"]]
    assert len(table_titles) >= 1 and all("\ufffd" in title for title in table_titles), table_titles
    if link in ("?topic=0", "?topic=-1"):
        listed = page.locator(".atlas-paper-list li").all_text_contents()
        assert listed and all("\ufffd" in item for item in listed), listed
