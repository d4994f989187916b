"""In a real browser, the topic panel beside the map (js/panel.js): the list's counts, an opened topic's
name, size, share, keywords and central titles, its keywords' bars (the page's own list) and its venue
chart (Plotly bars: names, values, counts, the list a screen reader reads), each against the map's own
tables, markup in a keyword or venue shown as typed; opening and closing a topic with the mouse and
the keyboard, Back and Forward, links, a phone's width. None of these steps redraws the map's part of the page: the map's charts are the
same elements, its draws counted."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from app.data import build_map_data
from app.topic_summary import central_papers, topic_summary
from pipeline.mapfolder.store import write_map
from tests.devserver import StreamlitServer
from tests.helpers import (
    GRAPH,
    Received,
    draws,
    idle,
    open_app,
    themed_map,
    wait_for_redraw,
    write_merged_map,
)

pytestmark = pytest.mark.browser
LIST = ".atlas-panel-list"
OPENED = ".atlas-panel-topic"


# Venues by paper (i % 3): markup and an entity, to be shown as typed, and a name longer than a bar's label.
VENUES = ("<b>x</b>", "&amp;", "Proceedings of the International Conference on Learning Representations")
BAR_LABEL = 28  # js/panel.js: a longer name is shortened beside its bar, whole in its hover and the list
LONG_KEYWORD = "with a tail of words far too long to be written whole beside its bar"


def panel_map():
    """The themed tiny map with venues, markup and an entity in each topic's first two keywords, and a
    third too long for its room beside the bars."""
    atlas = themed_map()
    atlas.papers["venue"] = [VENUES[i % 3] for i in range(len(atlas.papers))]
    atlas.topics["keywords"] = [
        [f"<b>{a}</b>", f"{b} &amp; co", f"{c} {LONG_KEYWORD}", *rest]
        for a, b, c, *rest in atlas.topics["keywords"]
    ]
    # Issue 62: the share of each topic's papers that write its name, as the build stores it.
    atlas.topics["name_share"] = [0.64 - 0.1 * i for i in range(len(atlas.topics))]
    return atlas


@pytest.fixture(scope="module")
def panel_app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-panel")
    folder = root / "themed"
    write_map(folder, panel_map())
    app = StreamlitServer(folder, root / "no-other-maps", timeout=60)
    yield app, build_map_data("themed", folder)
    app.stop()


def listed(page) -> list[tuple[str, str]]:
    """The list's topics as the reader sees them: (name, count)."""
    page.locator(f"{LIST} .atlas-topic").first.wait_for(timeout=30_000)
    names = page.locator(f"{LIST} .atlas-topic-name").all_inner_texts()
    counts = page.locator(f"{LIST} .atlas-topic-count").all_inner_texts()
    return list(zip(names, counts, strict=True))


def header(page) -> str:
    texts = page.locator("[data-testid='stMain'] .atlas-sentence").all_inner_texts()
    return next(
        t.strip() for t in texts if t.strip().startswith(("Showing the ", "None of ")) or " of the " in t
    )


def wait_for_header(page, text: str) -> None:
    page.locator("[data-testid='stMain'] .atlas-sentence", has_text=text).first.wait_for(timeout=30_000)
    idle(page)


TICKS = """(gd) => [...gd.querySelectorAll('.ytick text')]
    .map((t) => [t.getBoundingClientRect().y, t.textContent]).sort((a, b) => a[0] - b[0]).map((t) => t[1])"""


def bars_as_drawn(page) -> dict:
    """The opened topic's bar chart as Plotly drew it: each bar's name beside it (the SVG's tick texts,
    top to bottom), length, text beside it and hover (shown by moving the mouse onto it, top to
    bottom), its colour, its title, the list a screen reader reads instead of the drawing, and the
    names not wholly in sight beside the bars (`cut`)."""
    panel = page.locator(OPENED)
    panel.locator(".atlas-bars .ytick text").first.wait_for(timeout=30_000)
    chart = panel.locator(".atlas-bars")
    drawn = chart.evaluate(
        f"""(gd) => ({{
            ticks: ({TICKS})(gd),
            texts: [...gd.querySelectorAll('.point')].map((p) => p.querySelector('.bartext').textContent),
            traces: gd._fullData.map((t) => [t.type, t.orientation, t.x, t.y]),
            colour: gd._fullData[0].marker.color,
            hidden: gd.getAttribute('aria-hidden'),
            // names cut off: beyond the chart's left edge, or reaching into its bars' area
            cut: [...gd.querySelectorAll('.ytick text')].filter((t) => {{
                const name = t.getBoundingClientRect(), chart = gd.getBoundingClientRect();
                return name.left < chart.left || name.right > chart.left + gd._fullLayout._size.l;
            }}).map((t) => t.textContent),
        }})"""
    )
    hovers = []
    for bar in sorted(chart.locator(".point path").all(), key=lambda b: b.bounding_box()["y"]):
        bar.scroll_into_view_if_needed()  # the panel scrolls: a hover needs the bar in sight
        box = bar.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        shown = page.wait_for_function(
            """([gd, before]) => {
                const tips = gd.querySelectorAll('.hoverlayer .hovertext');
                return tips.length === 1 && tips[0].textContent !== before ? tips[0].textContent : null;
            }""",
            arg=[chart.element_handle(), hovers[-1] if hovers else ""],
            timeout=10_000,
        )
        hovers.append(shown.json_value())
    page.mouse.move(0, 0)
    titles = panel.locator(".atlas-tab-panel .atlas-chart-title").all_inner_texts()
    return {
        **drawn,
        "hovers": hovers,
        "title": titles[0] if titles else "",
        "read": panel.locator(".atlas-tab-panel .atlas-chart-data li").all_text_contents(),
    }


def short(name: str) -> str:
    """A name as js/panel.js writes it beside its bar."""
    return name if len(name) <= BAR_LABEL else name[: BAR_LABEL - 1].rstrip() + "…"


def keywords_as_drawn(page) -> dict:
    """The opened topic's keywords as the page draws them: each line's name, the bar's length as a share
    of the longest and its colour, the weight beside it; the names wider than their room (cut short by
    an ellipsis), whether each has its whole name as its tooltip, the bars' least room (a share of the
    list's width); what a screen reader reads."""
    panel = page.locator(OPENED)
    panel.locator(".atlas-keyword").first.wait_for(timeout=30_000)
    return panel.locator(".atlas-keywords").evaluate(
        r"""(list) => {
            const lines = [...list.querySelectorAll('.atlas-keyword')];
            const widths = lines.map((l) => l.querySelector('.atlas-keyword-bar').getBoundingClientRect().width);
            const names = lines.map((l) => l.querySelector('.atlas-keyword-name'));
            return {
                names: names.map((n) => n.textContent),
                shares: widths.map((w) => w / Math.max(...widths)),
                colours: [...new Set(lines.map((l) => getComputedStyle(l.querySelector('.atlas-keyword-bar')).backgroundColor))],
                weights: lines.map((l) => l.querySelector('.atlas-keyword-weight').textContent),
                cut: names.filter((n) => n.scrollWidth > n.clientWidth).map((n) => n.textContent),
                room: Math.min(...lines.map((l) => l.querySelector('.atlas-keyword-track').clientWidth)) / list.clientWidth,
                tooltips: names.every((n) => n.title === n.textContent),
                markup: list.querySelectorAll('.atlas-keyword-name *').length,
                read: [list.getAttribute('aria-label'), lines.map((l) => l.innerText.replace(/\s+/g, ' ').trim())],
            };
        }"""
    )


def opened_as_shown(page) -> dict:
    panel = page.locator(OPENED)
    panel.locator(".atlas-keyword").first.wait_for(timeout=30_000)
    return {
        "name": panel.locator("h4").inner_text(),
        "caption": panel.locator(".atlas-caption").first.inner_text(),
        "written": panel.locator(".atlas-written").inner_text(),
        "keywords": panel.locator(".atlas-keyword-name").all_text_contents(),
        "central": panel.locator(".atlas-paper").all_text_contents(),
    }


def expected(data, topic: int) -> dict:
    size = data.sizes[topic]
    return {
        "name": data.label(topic),
        "caption": f"{size} papers · {100 * size / data.n:.1f}% of the map · topic {topic}",
        "written": f"Its name is written by {round(100 * data.topics.loc[topic, 'name_share'])}% of its papers.",
        "keywords": [str(k) for k in data.topics.loc[topic, "keywords"]],
        "central": data.papers["title"].iloc[central_papers(data, topic)].tolist(),
    }


def test_the_list_counts_each_topic_s_papers_and_those_in_view_under_a_filter(page, panel_app):
    app, data = panel_app
    open_app(page, app.url)
    sizes = data.topics["size"].to_dict()
    shown = listed(page)
    assert sorted(shown) == sorted(
        [(data.label(t), str(sizes[t])) for t in data.topic_order] + [("Unassigned", str(data.sizes[-1]))]
    )
    # Laid out as the page's style says (map.css): each entry a row, its name, then its count apart from it.
    first = page.locator(f"{LIST} .atlas-topic").first
    assert first.evaluate("e => getComputedStyle(e).display") == "flex"
    name, count = (
        first.locator(".atlas-topic-name").bounding_box(),
        first.locator(".atlas-topic-count").bounding_box(),
    )
    assert count["x"] >= name["x"] + name["width"] and abs(count["y"] - name["y"]) < name["height"]
    heads = [" ".join(h.split()) for h in page.locator(f"{LIST} .atlas-section-head").all_inner_texts()]
    themes = data.themes.set_index("theme_id")
    assert {h.split(" · ")[0] for h in heads} == {*themes["label"], "Unassigned"}  # names as written
    assert any(h.startswith("<b>Generative</b> models · ") for h in heads)

    open_app(page, app.url + "?f.year=2024")  # a filter: each topic's papers in view, from papers.parquet
    year = data.papers["year"].astype(str) == "2024"
    in_view = {data.label(t): int((year & (data.topic_ids == t)).sum()) for t in [*data.topic_order, -1]}
    page.locator(f"{LIST} .atlas-section-head", has_text="in view").first.wait_for(timeout=30_000)
    assert dict((n, int(c)) for n, c in listed(page)) == in_view
    for head in page.locator(f"{LIST} .atlas-section-head").all_inner_texts():
        head = " ".join(head.split())  # the name and the count, each in its own box (a flex row)
        label = head.split(" · ")[0]
        members = (
            [-1]
            if label == "Unassigned"
            else [int(t) for t in themes.loc[themes["label"] == label].iloc[0]["topic_ids"]]
        )
        assert head.endswith(f" · {sum(in_view[data.label(t)] for t in members)} in view"), head


def test_an_opened_topic_is_the_map_s_own_and_opening_it_redraws_only_the_map_s_highlight(page, panel_app):
    app, data = panel_app
    received = Received(page)
    open_app(page, app.url)
    idle(page)
    page.evaluate("document.querySelectorAll('.atlas-map-chart').forEach((c) => (c.__original = true))")
    received.take()
    before = draws(page)
    topic = data.topic_order[0]
    page.locator(f"{LIST} .atlas-topic[data-topic='{topic}']").click()
    assert opened_as_shown(page) == expected(data, topic)
    page.wait_for_function("(t) => location.search === `?topic=${t}`", arg=topic, timeout=30_000)
    wait_for_header(page, f"Showing the {data.sizes[topic]} papers in the topic “{data.label(topic)}”")
    assert page.locator("h4", has_text="Papers ·").first.inner_text() == f"Papers · {data.sizes[topic]}"
    wait_for_redraw(page, before)  # the browser's redraw may end after the server's header on a busy machine
    idle(page)  # ... and a redraw from the server, were there one, would have come by now
    highlighted = page.evaluate(
        f"document.querySelector('{GRAPH}')._fullData.filter((t) => t.name === 'highlight' && t.visible)"
        ".reduce((n, t) => n + t.x.length, 0)"
    )
    assert highlighted == data.sizes[topic]  # the topic stands out on the map, the rest dimmed
    assert draws(page) == before + 1  # the browser redrew the highlight itself ...
    kept = page.evaluate(
        "[...document.querySelectorAll('.atlas-map-chart')].map((c) => c.__original === true)"
    )
    assert kept == [True, True]  # ... in the map's own two charts
    drawn = {(place, kind) for place, kind, _ in received.take()}
    # the downloads drawn again (the header's sentence is the browser's), nothing in the sidebar
    assert drawn == {("main", "download_button")}

    near = page.locator(f"{OPENED} .atlas-near-list .atlas-topic").first  # a nearest topic opens in place
    other = int(near.get_attribute("data-topic"))
    near.click()
    assert opened_as_shown(page) == expected(data, other)
    page.wait_for_function("(t) => location.search === `?topic=${t}`", arg=other, timeout=30_000)
    page.get_by_role("button", name="Back to the topic list").click()
    page.locator(f"{LIST} .atlas-topic").first.wait_for(timeout=30_000)
    page.wait_for_function("() => location.search === ''", timeout=30_000)
    wait_for_header(page, f"Showing the {data.n} papers of the map")


# What the page sent, and what it had drawn then: whether the panel showed an opened topic at each message.
WATCH_SENDS = """
window.__sends = [];
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  const opened = document.querySelector('.atlas-panel-topic');
  window.__sends.push(opened ? !opened.hidden : null);
  return send.call(this, data);
};
"""


def test_the_server_is_told_of_an_opened_topic_before_the_page_draws_it(page, panel_app):
    app, data = panel_app
    page.add_init_script(WATCH_SENDS)
    open_app(page, app.url)
    idle(page)
    page.evaluate("window.__sends = []")
    topic = data.topic_order[0]
    page.locator(f"{LIST} .atlas-topic[data-topic='{topic}']").click()
    assert opened_as_shown(page) == expected(data, topic)
    wait_for_header(page, f"Showing the {data.sizes[topic]} papers in the topic “{data.label(topic)}”")
    # The step's one message left before the browser drew the topic (and dimmed the map): the server
    # works out the header and the downloads meanwhile.
    assert page.evaluate("window.__sends") == [False]
    page.keyboard.press("Escape")
    page.locator(f"{LIST} .atlas-topic").first.wait_for(timeout=30_000)
    wait_for_header(page, f"Showing the {data.n} papers of the map")
    assert page.evaluate("window.__sends") == [False, True]  # Back told while the topic was still shown


def fixed(x: float, places: int) -> str:
    """As JavaScript's toFixed: the exact value rounded half up (Python's format rounds half to even)."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def rgb(colour: str) -> str:
    """A #rrggbb colour as the browser's computed style writes it."""
    r, g, b = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_an_opened_topic_s_keywords_are_bars_and_its_venues_plotly_bars_of_its_summary(page, panel_app):
    app, data = panel_app
    topic = data.topic_order[0]
    entry = next(t for t in topic_summary(data, None)["topics"] if t["id"] == topic)
    open_app(page, app.url + f"?topic={topic}")
    keywords = keywords_as_drawn(page)
    assert keywords.pop("room") > 0.2  # ... and the bars keep their room
    weights = [fixed(w, 3) for w in entry["weights"]]
    assert entry["keywords"][0].startswith("<b>") and "&amp;" in entry["keywords"][1]  # typed so, shown so
    assert keywords == {
        "names": entry["keywords"],
        "shares": pytest.approx([w / max(entry["weights"]) for w in entry["weights"]], abs=0.01),
        "colours": [rgb(entry["colour"])],
        "weights": weights,
        "cut": [entry["keywords"][2]],  # cut short by an ellipsis, whole in its tooltip ...
        "tooltips": True,
        "markup": 0,
        "read": [
            "Keywords, weight (c-TF-IDF)",
            [f"{k} {w}" for k, w in zip(entry["keywords"], weights, strict=True)],
        ],
    }

    page.get_by_role("tab", name="Venues").click()
    page.locator(f"{OPENED} .atlas-chart-title", has_text="Share of each venue's papers").wait_for()
    venues = bars_as_drawn(page)
    shares = [fixed(v["share"] * 100, 1) + "%" for v in entry["venues"]]
    said = [
        f"{v['venue']}: {s} ({v['papers']} of {v['total']})"
        for v, s in zip(entry["venues"], shares, strict=True)
    ]
    assert {v["venue"] for v in entry["venues"]} == set(VENUES)
    assert venues == {
        "ticks": [short(v["venue"]) for v in entry["venues"]],
        "texts": shares,
        "traces": [["bar", "h", [v["share"] * 100 for v in entry["venues"]], list(range(len(VENUES)))]],
        "colour": entry["colour"],
        "hidden": "true",
        "cut": [],
        "hovers": said,
        "title": "Share of each venue's papers",
        "read": said,
    }
    assert short(VENUES[2]) != VENUES[2] and "<b>x</b>" in venues["ticks"] and "&amp;" in venues["ticks"]
    bold = page.locator(f"{OPENED} .atlas-bars").evaluate(
        "(gd) => gd.querySelectorAll('tspan[style*=bold]').length"
    )
    assert bold == 0  # markup in a name is never Plotly's markup
    # Each venue's papers in the topic and in the map, counted from papers.parquet.
    venue, topic_ids = data.papers["venue"], data.topic_ids
    assert [(v["papers"], v["total"]) for v in entry["venues"]] == [
        (int(((venue == v["venue"]) & (topic_ids == topic)).sum()), int((venue == v["venue"]).sum()))
        for v in entry["venues"]
    ]


def test_the_keyboard_opens_and_closes_a_topic(page, panel_app):
    app, data = panel_app
    open_app(page, app.url)
    idle(page)
    for _ in range(80):  # Tab from the page's start to the list
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('atlas-topic')"):
            break
    focused = page.evaluate(
        "[document.activeElement.dataset.topic, document.activeElement.getAttribute('aria-label')]"
    )
    topic = int(focused[0])
    assert focused[1] == f"{data.label(topic)}, {data.sizes[topic]} papers"  # a screen reader's name
    page.keyboard.press("Enter")
    assert opened_as_shown(page)["name"] == data.label(topic)
    assert page.evaluate("document.activeElement.classList.contains('atlas-back')")  # focus on the way back
    page.wait_for_function("(t) => location.search === `?topic=${t}`", arg=topic, timeout=30_000)
    page.keyboard.press("Escape")
    page.locator(f"{LIST} .atlas-topic").first.wait_for(timeout=30_000)
    assert page.evaluate("document.activeElement.dataset.topic") == str(topic)  # back on its line
    page.wait_for_function("() => location.search === ''", timeout=30_000)


def test_back_and_forward_restore_the_list_and_the_topic_and_a_link_opens_it(page, panel_app):
    """Back and Forward between the list and topics opened in the panel are the browser's, as the
    clicks were: the server draws the header (and the table's heading) again, not the map, the panel,
    the table or the sidebar, which a rerun of the whole page for the entry's link would; so is Back
    from a search to the view without it (no hits needed)."""
    app, data = panel_app
    topic = data.topic_order[1]
    received = Received(page)
    open_app(page, app.url + f"?topic={topic}")  # a link opens the topic
    assert opened_as_shown(page) == expected(data, topic)
    page.get_by_role("button", name="Back to the topic list").click()
    page.wait_for_function("() => location.search === ''", timeout=30_000)
    idle(page)
    entries = page.evaluate("history.length")
    page.locator(f"{LIST} .atlas-topic[data-topic='{data.topic_order[0]}']").click()
    page.wait_for_function(
        "(t) => location.search === `?topic=${t}`", arg=data.topic_order[0], timeout=30_000
    )
    idle(page)
    assert page.evaluate("history.length") == entries + 1  # one entry a step: the server adds none

    def drawn_by_the_browser(step, header: str) -> None:
        received.take()
        step()
        wait_for_header(page, header)  # the browser's sentence, at once
        idle(page)
        drawn = received.take()
        assert {place for place, _, _ in drawn} == {"main"}, drawn  # nothing in the sidebar ...
        assert "bidi_component" not in {kind for _, kind, _ in drawn}  # ... nor the map, panel, table

    in_topic = "Showing the {} papers in the topic “{}”".format
    drawn_by_the_browser(page.go_back, f"Showing the {data.n} papers of the map")
    page.locator(f"{LIST} .atlas-topic").first.wait_for(timeout=30_000)
    assert page.evaluate("location.search") == ""
    drawn_by_the_browser(page.go_back, in_topic(data.sizes[topic], data.label(topic)))
    assert opened_as_shown(page)["name"] == data.label(topic)
    assert page.evaluate("location.search") == f"?topic={topic}"
    drawn_by_the_browser(page.go_forward, f"Showing the {data.n} papers of the map")
    first = data.topic_order[0]
    drawn_by_the_browser(page.go_forward, in_topic(data.sizes[first], data.label(first)))
    assert opened_as_shown(page)["name"] == data.label(first)
    assert page.evaluate("location.search") == f"?topic={first}"
    assert page.evaluate("history.length") == entries + 1  # Back and Forward added none
    # The server knows it: a search now keeps the topic in the link and the header.
    box = page.get_by_role("textbox", name="Search")
    box.fill("diffusion")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('q=diffusion')", timeout=30_000)
    assert f"topic={data.topic_order[0]}" in page.evaluate("location.search")
    # Back to the topic without the search: a view that needs no hits, drawn by the browser too (the
    # server draws the sidebar's search box again, empty, and the header).
    wait_for_header(page, "diffusion")
    received.take()
    page.go_back()
    wait_for_header(page, in_topic(data.sizes[first], data.label(first)))
    assert "bidi_component" not in {kind for _, kind, _ in received.take()}
    assert page.evaluate("location.search") == f"?topic={first}" and box.input_value() == ""
    assert opened_as_shown(page)["name"] == data.label(first)


def test_a_topic_picked_in_what_changed_opens_in_the_panel_with_its_link(page, tmp_path):
    """A rebuilt map's "Changes since the previous build": a row picked opens its topic, the server's
    step, which writes the link in its callback; the topic panel follows the link (the map's part does
    not rerun for a topic alone: no map, panel or table from the server), one history entry, and the
    page reads as a fresh load of that link."""
    folder = write_merged_map(tmp_path / "merged")
    data = build_map_data("merged", folder)
    app = StreamlitServer(folder, tmp_path / "no-other-maps", timeout=90)
    try:
        received = Received(page)
        open_app(page, app.url)
        page.get_by_text("Changes since the previous build").click()
        table = page.locator("[data-testid='stDataFrame']", has=page.locator("th", has_text="Change")).last
        table.wait_for(timeout=30_000)
        table.scroll_into_view_if_needed()
        idle(page)
        entries = page.evaluate("history.length")
        received.take()
        box = table.bounding_box()
        page.mouse.click(box["x"] + 15, box["y"] + 38 + 10)  # the first row's selector (the header: 38 px)
        page.wait_for_function("() => location.search.startsWith('?topic=')", timeout=30_000)
        idle(page)
        topic = int(page.evaluate("location.search").removeprefix("?topic="))
        assert "bidi_component" not in {kind for _, kind, _ in received.take()}  # no map, panel, table sent
        assert page.locator(f"{OPENED} h4").inner_text() == data.label(topic)
        assert header(page) == f"Showing the {data.sizes[topic]} papers in the topic “{data.label(topic)}”"
        assert page.evaluate("history.length") == entries + 1

        def read(at) -> tuple[str, str, str]:  # the panel's topic, the header, the papers table's heading
            return (
                at.locator(f"{OPENED} h4").inner_text(),
                header(at),
                at.locator(".atlas-table h4").first.inner_text(),
            )

        shown = read(page)
        fresh = page.context.new_page()
        open_app(fresh, page.url)
        idle(fresh)
        fresh.locator(f"{OPENED} h4").wait_for(timeout=30_000)
        assert read(fresh) == shown
    finally:
        app.stop()


def test_at_a_phone_s_width_the_panel_is_under_the_map_and_reads_whole(browser, panel_app):
    app, data = panel_app
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        open_app(page, app.url)
        listed(page)
        panel = page.locator(".atlas-panel").bounding_box()
        graph = page.locator(GRAPH).bounding_box()
        assert panel["y"] >= graph["y"] + graph["height"] - 1 and panel["x"] >= 0  # under the map
        assert panel["x"] + panel["width"] <= 390
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        cut = page.evaluate(
            "[...document.querySelectorAll('.atlas-panel-list .atlas-topic-name')]"
            ".filter((el) => el.scrollWidth > el.clientWidth + 1).length"
        )
        assert cut == 0
        topic = data.topic_order[0]
        page.locator(f"{LIST} .atlas-topic[data-topic='{topic}']").click()
        assert opened_as_shown(page) == expected(data, topic)
        width = page.locator(OPENED).bounding_box()["width"]
        assert panel["width"] - 8 <= width <= panel["width"]  # the panel's whole width
    finally:
        context.close()


def test_the_unassigned_papers_open_as_a_topic_of_their_own(page, panel_app):
    app, data = panel_app
    open_app(page, app.url)
    page.locator(f"{LIST} .atlas-topic[data-topic='-1']").click()
    panel = page.locator(OPENED)
    panel.locator(".atlas-info").wait_for(timeout=30_000)
    size = data.sizes[-1]
    assert panel.locator("h4").inner_text() == "Unassigned"
    assert (
        panel.locator(".atlas-caption").first.inner_text()
        == f"{size} papers · {100 * size / data.n:.1f}% of the map"
    )
    rows = np.flatnonzero(data.topic_ids == -1)[:50]
    panel.locator(".atlas-paper").first.wait_for(timeout=30_000)
    assert panel.locator(".atlas-paper").all_text_contents() == data.papers["title"].iloc[rows].tolist()


def test_counts_a_search_changes_read_as_a_fresh_load_of_the_link(page, browser, panel_app):
    """A search over a filter keeps the list's lines and writes their counts anew (not drawing the list
    again: at a million papers that took a quarter of a second): the topics' and the themes' counts
    then read as a fresh load of the page's link draws them."""
    app, _ = panel_app

    def heads(p) -> list[str]:
        return [" ".join(h.split()) for h in p.locator(f"{LIST} .atlas-section-head").all_inner_texts()]

    open_app(page, app.url + "?f.year=2024")
    page.locator(f"{LIST} .atlas-section-head", has_text="in view").first.wait_for(timeout=30_000)
    before = listed(page), heads(page)
    page.evaluate("document.querySelector('.atlas-panel-list .atlas-topic').dataset.drawn = 'before'")
    box = page.get_by_role("textbox", name="Search")
    box.fill("diffusion")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('q=diffusion')", timeout=30_000)
    page.wait_for_function(
        "(before) => [...document.querySelectorAll('.atlas-panel-list .atlas-topic-count')].map((c) => c.textContent).join() !== before",
        arg=",".join(count for _, count in before[0]),
        timeout=30_000,
    )
    idle(page)
    after = listed(page), heads(page)
    assert page.locator(f"{LIST} .atlas-topic[data-drawn='before']").count() == 1  # the same lines
    fresh = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        open_app(fresh, page.evaluate("location.href"))
        fresh.locator(f"{LIST} .atlas-section-head", has_text="in view").first.wait_for(timeout=30_000)
        idle(fresh)
        assert after == (listed(fresh), heads(fresh)) and after != before
    finally:
        fresh.close()
