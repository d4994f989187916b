"""Files the live map's browser side downloads once: Plotly.js, map.js, each map's point table and its
topic panel's summary.

map.js is made here (`map_script`): the constants shared with Python, generated, then the files of
`js/` by concern, in the fixed order of `MAP_SCRIPT_FILES`, as one ES module.

Streamlit serves `static/` beside the entry script at `app/static/…` (`[server] enableStaticServing`
in .streamlit/config.toml). The files are written there on first use, named by a fingerprint of their
content, so a browser caches each one and a rebuilt map gets a new name. `static/atlas/` is generated,
never committed; it works the same on Streamlit Community Cloud, whose checkout is writable.

Every rerun re-publishes the files it names (a `stat`, and a touch of the file's time), so a file
another server process pruned comes back at once. Publishing a new file prunes the files of the
same kind that no rerun has named for `STALE_SECONDS` (old builds of a map, maps no longer served).
Where `static/` is read-only, `publish` raises `OSError` and the component receives the bytes
themselves instead (see `app.map_component.served`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from app.map_component.payload import shared_constants

REPO = Path(__file__).resolve().parents[2]
ASSET_DIR = REPO / "static" / "atlas"
PLOTLY_JS = Path(__file__).resolve().parents[2] / "assets" / "plotly" / "plotly-atlas.min.js"
MAP_JS_DIR = Path(__file__).resolve().parent / "js"
# map.js's parts, in the order they are joined: each is a classic script (its names are shared by the
# parts after it, as in one file) but the last, which exports the component.
MAP_SCRIPT_FILES = (
    "protocol.js",  # JSDoc types of the view state, the events and `SHARED` (payload.ViewState, EVENTS)
    "load.js",  # downloads, the binary point file, titles, view masks
    "sampling.js",  # colour groups and the draw-order sample of a big map
    "charts.js",  # the two Plotly charts: traces, layout, showing one, their events
    "context.js",  # the faint image of the papers left out
    "fallback.js",  # without WebGL: an image of every paper, SVG points for what was asked
    "marks.js",  # topic and theme names, the opened paper's ring, the pin
    "legend.js",  # the key under the map
    "zoom.js",  # the zoom in the link (view=x0,x1,y0,y1)
    "atlas_map.js",  # the map's state and elements: the class AtlasMap, applying a view state
    "panel.js",  # the topic panel beside the map: the list and an opened topic (the class TopicPanel)
    "table.js",  # the papers table under the map (the class PapersTable)
    "select.js",  # a box or lasso drawn on the map, shown by the browser
    "entry.js",  # the component's default export
)
URL_PREFIX = "app/static/atlas/"  # relative to the page, so it also works under a base URL path
STALE_SECONDS = 3600  # a published file no rerun has named for this long is pruned


def publish(name: str, content: bytes, folder: Path = ASSET_DIR) -> str:
    """Write `content` as `folder/name` unless it is there already; the URL the browser fetches it from.

    The name is a fingerprint of the content, so an existing file is the same file. The write goes
    through a temporary file and a rename: a reader never sees half a file, and two sessions
    publishing at once both succeed.
    """
    target = folder / name
    if target.is_file():
        with contextlib.suppress(OSError):  # in use: not stale (a read-only folder is never pruned)
            os.utime(target)
        return URL_PREFIX + name
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.chmod(temporary, 0o644)  # served to anyone who opens the app anyway
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    prune(folder, name)
    return URL_PREFIX + name


def prune(folder: Path, keep: str, stale_seconds: float = STALE_SECONDS) -> list[str]:
    """Delete the files of `keep`'s kind (`points-`, `summary-`, `plotly-`, `map-`) that no rerun has named for a while.

    Returns:
        The names deleted.
    """
    kind = keep.split("-", 1)[0] + "-"
    cutoff = time.time() - stale_seconds
    deleted = []
    for path in folder.iterdir():
        name = path.name.lstrip(".")  # also half-written files an interrupted write left behind
        if path.name == keep or not name.startswith(kind):
            continue
        with contextlib.suppress(OSError):  # another process may prune it at the same moment
            if path.stat().st_mtime < cutoff:
                path.unlink()
                deleted.append(path.name)
    return deleted


def plotly_bundle() -> tuple[str, bytes]:
    """Plotly.js for the map and the topic panel, gzip'd (1.45 MB → 0.49 MB), and its file name: the
    committed bundle of plotly.js's scatter, scattergl and bar traces (assets/plotly/README.md), under a
    third of the full one the `plotly` package ships."""
    packed = gzip.compress(PLOTLY_JS.read_bytes(), compresslevel=9, mtime=0)
    return f"plotly-{hashlib.blake2b(packed, digest_size=8).hexdigest()}.min.js.gz", packed


def map_script(files: tuple[str, ...] = MAP_SCRIPT_FILES) -> str:
    """The live map's code as the browser runs it: `SHARED` (`payload.shared_constants`), then `files`
    of `js/` joined in order (tests join a few of them to run their functions alone)."""
    shared = json.dumps(shared_constants(), separators=(",", ":"))
    parts = [
        f"// Generated from app/map_component/payload.py, shared_constants\nconst SHARED = Object.freeze({shared});\n"
    ]
    parts += [f"// ---- js/{name}\n" + (MAP_JS_DIR / name).read_text(encoding="utf-8") for name in files]
    return "\n".join(parts)


def style_script() -> str:
    """map.css as map.js adds it to the page, once: a component's own `css` comes again inside every
    element of every rerun (13 KB for each of the map's instances)."""
    css = json.dumps((MAP_JS_DIR.parent / "map.css").read_text(encoding="utf-8"))
    return (
        "// Generated from app/map_component/map.css\n"
        'if (!document.getElementById("atlas-style")) {\n'
        '  const style = Object.assign(document.createElement("style"), { id: "atlas-style", textContent: '
        + css
        + " });\n  document.head.appendChild(style);\n}\n"
    )


def module_bundle() -> tuple[str, bytes]:
    """map.js (`map_script`, after `style_script`), gzip'd, and its file name: the live map's own code
    and style, loaded once per page (see `LOADER` in app/map_component/__init__.py) rather than sent
    inline with every rerun."""
    packed = gzip.compress((style_script() + map_script()).encode("utf-8"), compresslevel=9, mtime=0)
    return f"map-{hashlib.blake2b(packed, digest_size=8).hexdigest()}.js.gz", packed
