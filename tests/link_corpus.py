"""A corpus of links and the view each opens, recorded from the app before the browser became the view's
one owner (issue 63): every link that opened a view then opens the same view now.

Each link is opened as a first load (AppTest, the page's own run) on the committed seed map and on the
tiny map with themes (tests.helpers: years, sources, unassigned papers). What a reader sees of it is
kept: the address bar after the load, the header's sentence, the link's notices, the papers the map
shows in colour (narrowed to the opened topic, as the topic panel does in the browser), the opened
topic and paper, and the papers table's heading and count. `tests/test_link_corpus.py` opens each
again and compares. `python -m tests.link_corpus write` records them (tests/fixtures/link_corpus.json):
only after a deliberate change of what a link opens.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.helpers import (
    REPO,
    header_sentence,
    live_map,
    map_shown,
    panel_topic,
    papers_table,
    start,
    themed_map,
    url,
)

CORPUS = Path(__file__).resolve().parent / "fixtures" / "link_corpus.json"
SEEDS_MAP = REPO / "assets" / "maps" / "seeds"
SEED_PAPER = "bb35d8ee08b3b231"  # a paper of the seed map (topic 4)

# (map, link's query string): "seeds" is the committed seed map, "tiny" the tiny map with themes.
LINKS = [
    ("seeds", ""),
    ("seeds", "topics=0,3"),
    ("seeds", "topics=3,0&unassigned=hide"),
    ("seeds", "unassigned=hide"),
    ("seeds", "theme=0,2"),
    ("seeds", "theme=1&topics=0"),
    ("seeds", "theme=1&topics=4"),  # a topic outside the theme: ignored with a notice
    ("seeds", "topic=3"),
    ("seeds", "theme=1&topic=0"),
    ("seeds", f"paper={SEED_PAPER}"),
    ("seeds", f"topic=4&paper={SEED_PAPER}"),
    ("seeds", "q=%22diffusion%22"),
    ("seeds", "q=%22diffusion%22&topics=0,1"),
    ("seeds", "q=diffus*&theme=1"),
    ("seeds", "q=%22nothing+writes+this%22"),
    ("seeds", "sort=rising"),  # no years: ignored
    ("seeds", "select=box:-1,1,-1,1"),
    ("seeds", "select=box:-1,1,-1,1&theme=0"),
    ("seeds", "select=lasso:-1,-1,1,-1,1,1,-1,1"),
    ("seeds", "view=-1,1,-1,1&topics=2"),
    ("seeds", "topics=99,x&topic=abc&paper=nope&theme=9"),
    ("seeds", "f.source=000_d810000eb6448a23.txt&unknown=1"),
    ("seeds", "view=1,2&select=box:bad&colour=nope"),
    ("seeds", "kind=meaning&q=%22diffusion%22"),
    ("seeds", "added=only"),
    ("tiny", ""),
    ("tiny", "f.year=2023"),
    ("tiny", "f.year=2023&f.year=2024&f.source=alpha.txt"),
    ("tiny", "f.source=beta.txt&topics=1,-1"),
    ("tiny", "colour=year"),
    ("tiny", "colour=year&f.year=2024"),
    ("tiny", "colour=source&theme=0"),
    ("tiny", "theme=1&unassigned=hide"),
    ("tiny", "topics=-1"),
    ("tiny", "topics=0,-1&theme=1"),
    ("tiny", "topic=-1"),
    ("tiny", "topic=2&f.year=2024"),
    ("tiny", "paper=doc0005&topics=1"),
    ("tiny", "q=%22graph%22&f.year=2023"),
    ("tiny", "sort=rising&topics=2"),
    ("tiny", "f.year=1999"),
    ("tiny", "select=box:-3,0,0,3&f.source=alpha.txt"),
]


def query_params(query: str) -> dict[str, list[str]]:
    from urllib.parse import parse_qsl

    params: dict[str, list[str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        params.setdefault(key, []).append(value)
    return params


def opened(at) -> dict:
    """What the first load of a link shows a reader."""
    view, table = live_map(at), papers_table(at)
    shown = map_shown(at)  # an opened topic's papers alone
    topic = panel_topic(at)  # the panel opens the link's topic
    warnings = [w.value for w in at.warning]
    return {
        "address": url(at),
        "header": header_sentence(at)[0],
        "notices": warnings,
        "shown": np.flatnonzero(shown).tolist(),
        "topic": topic,
        "paper": view["paper"],
        "colour": view["colour"],
        "selection": view["selection"],
        "table": [table["heading"], len(table["rows"])],
    }


def open_link(folder: Path, query: str) -> dict:
    """The first load of `query` on the map in `folder` (the page opens the map `ATLAS_MAP` names)."""
    at = start(query_params(query))
    assert not at.exception, at.exception
    return opened(at)


def maps(root: Path) -> dict[str, Path]:
    """The corpus's two maps: the committed seed map, and the tiny map with themes written under `root`."""
    from pipeline.mapfolder.store import write_map

    tiny = root / "tiny"
    if not tiny.exists():
        write_map(tiny, themed_map())
    return {"seeds": SEEDS_MAP, "tiny": tiny}


def record() -> list[dict]:
    os.environ["ATLAS_MAPS_DIR"] = str(Path(tempfile.mkdtemp()) / "no-other-maps")
    folders = maps(Path(tempfile.mkdtemp()))
    found = []
    for name, query in LINKS:
        os.environ["ATLAS_MAP"] = str(folders[name])
        found.append({"map": name, "link": query, **open_link(folders[name], query)})
    return found


if __name__ == "__main__" and sys.argv[1:] == ["write"]:
    CORPUS.write_text(json.dumps(record(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {CORPUS} ({len(LINKS)} links)")
