"""Files the live map's browser side downloads once: Plotly.js, map.js, each map's point table and its
topic panel's summary.

map.js is made here (`map_script`): the ES modules of `js/`, one a concern, joined into one file,
each after the modules it imports (`module_order`: no import circles, no name declared twice), the
constants shared with Python generated as the first (`shared.js`).

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
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from app.map_component.payload import shared_constants

REPO = Path(__file__).resolve().parents[2]
ASSET_DIR = REPO / "static" / "atlas"
PLOTLY_JS = Path(__file__).resolve().parents[2] / "assets" / "plotly" / "plotly-atlas.min.js"
MAP_JS_DIR = Path(__file__).resolve().parent / "js"
ENTRY = "entry.js"  # the module whose default export is the component
SHARED_MODULE = "shared.js"  # generated (`SHARED`, `payload.shared_constants`); typed by js/shared.d.ts
# What map.js's joining reads of a module: its imports (one line each, names without renaming, from a
# file of js/), its top-level names, and which it exports.
IMPORT = re.compile(r'^import \{ ([\w$, ]+) \} from "\./([\w.-]+\.js)";\n', re.M)
ANY_IMPORT = re.compile(r"^\s*import\b|^\s*export\s*(?:\{|\*)|\bimport\s*\(", re.M)
DECLARED = re.compile(r"^(export )?(?:async )?(?:function\*? |class |const |let |var )([\w$]+)", re.M)


@dataclass(frozen=True)
class Module:
    """One file of js/: what it imports (module -> names) and its top-level names (name -> exported)."""

    imports: dict[str, tuple[str, ...]]
    declared: dict[str, bool]


def read_module(text: str) -> Module:
    r"""The imports and top-level names of a module's source.

    Examples:
        >>> m = read_module('import { a, b } from "./x.js";\nexport function c() {}\nconst d = 1;\n')
        >>> m.imports, m.declared
        ({'x.js': ('a', 'b')}, {'c': True, 'd': False})
    """
    imports: dict[str, tuple[str, ...]] = {}
    for names, module in IMPORT.findall(text):
        imports[module] = imports.get(module, ()) + tuple(name.strip() for name in names.split(","))
    rest = IMPORT.sub("", text)
    if ANY_IMPORT.search(rest):
        line = ANY_IMPORT.search(rest).group(0).strip()
        raise ValueError(
            f'an import or export map.js cannot join: {line!r} (write `import {{ a, b }} from "./x.js";`)'
        )
    return Module(imports, {name: bool(export) for export, name in DECLARED.findall(text)})


def read_modules(folder: Path = MAP_JS_DIR) -> dict[str, Module]:
    """Every module of `folder`, by file name; the generated `shared.js` among them."""
    found = {path.name: read_module(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.js"))}
    found[SHARED_MODULE] = Module({}, {"SHARED": True})
    return found


def module_order(modules: dict[str, Module], wanted: tuple[str, ...]) -> list[str]:
    """`wanted` and every module they import, each after the modules it imports (ties by name).

    Raises:
        ValueError: an import of a module that is not there, or of a name it does not export; an
            import circle (named); a top-level name declared by two of the modules (they are joined
            into one scope).

    Examples:
        >>> m = {"a.js": Module({"b.js": ("f",)}, {}), "b.js": Module({}, {"f": True})}
        >>> module_order(m, ("a.js",))
        ['b.js', 'a.js']
        >>> module_order({**m, "b.js": Module({"a.js": ()}, {"f": True})}, ("a.js",))
        Traceback (most recent call last):
        ...
        ValueError: an import circle in js/: a.js -> b.js -> a.js
    """
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(
                "an import circle in js/: " + " -> ".join([*visiting[visiting.index(name) :], name])
            )
        visiting.append(name)
        for target, names in sorted(modules[name].imports.items()):
            if target not in modules:
                raise ValueError(f"js/{name} imports {target}, which is not in js/")
            missing = [n for n in names if not modules[target].declared.get(n)]
            if missing:
                raise ValueError(
                    f"js/{name} imports {', '.join(missing)} from {target}, which does not export it"
                )
            visit(target)
        visiting.pop()
        order.append(name)

    for name in wanted:
        visit(name)
    owner: dict[str, str] = {}
    for name in order:
        for declared in modules[name].declared:
            if declared in owner:
                raise ValueError(
                    f"{declared} is declared by both js/{owner[declared]} and js/{name}: map.js joins them in one scope"
                )
            owner[declared] = name
    return order


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


def map_script(wanted: tuple[str, ...] = (ENTRY,)) -> str:
    """The live map's code as the browser runs it: the modules of js/ that `wanted` needs (the entry's:
    all of them but the types), each after those it imports, joined into one scope, their imports
    taken out and `export` kept only for the entry's default; `SHARED` (`payload.shared_constants`)
    first, generated. Without the entry it is a classic script (tests run a few modules' functions
    alone). Raises `ValueError` on a module map.js cannot join (`module_order`)."""
    modules = read_modules()
    parts = []
    for name in module_order(modules, wanted):
        if name == SHARED_MODULE:
            shared = json.dumps(shared_constants(), separators=(",", ":"))
            parts.append(
                f"// Generated from app/map_component/payload.py, shared_constants\nconst SHARED = Object.freeze({shared});\n"
            )
            continue
        code = IMPORT.sub("", (MAP_JS_DIR / name).read_text(encoding="utf-8"))
        parts.append(f"// ---- js/{name}\n" + re.sub(r"^export (?!default )", "", code, flags=re.M))
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
