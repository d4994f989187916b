"""The house rules, read from the code's own imports (every import, including those made inside a
function): no import circles in `pipeline`, no upward imports between its packages, `pipeline` never
imports the app or Streamlit, and the pure modules never import Streamlit. And docs/architecture.md,
the map of where things live, names every module of `pipeline/` and `app/` and no file that is not
there."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# pipeline's units (a sub-package, or a top-level module), lowest first. A unit imports only
# itself and units of lower layers; units of one layer never import each other.
LAYERS = [
    ["pipeline"],  # the package itself: `UserError` and the version
    ["pipeline.config", "pipeline.cache", "pipeline._fastimport", "pipeline.text", "pipeline.workers"],
    ["pipeline.naming", "pipeline.embedding"],
    ["pipeline.mapfolder"],
    ["pipeline.ingest", "pipeline.modelling"],
    ["pipeline.exports"],
    ["pipeline.commands"],
    ["pipeline.__main__"],
]
# Modules that hold no Streamlit: every pipeline module, and the app's helpers the panels compose.
PURE_APP = [
    "app",
    "app.changes",
    "app.data",
    "app.filters",
    "app.palette",
    "app.search",
    "app.state",
    "app.text",
    "app.themes",
    "app.trends",
    "app.map_component.assets",
    "app.map_component.payload",
]
OUTSIDE_PIPELINE = ("app", "streamlit", "streamlit_app", "tests", "benchmarks")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, Path]:
    """Every module of `package` (a folder under the repository root) by dotted name."""
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules `path` (module `name`) imports anywhere in its body: a `from X import y` counts as
    importing `X.y` when that is a module of ours, else `X`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (itself left out)."""
    found = {**modules("pipeline"), **modules("app")}
    known = set(found)
    return {
        name: {other for other in imported(path, name, known) if other != name}
        for name, path in found.items()
        if name == package or name.startswith(package + ".")
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: its strongly connected components of more than one node (or a
    node importing itself), each sorted (Tarjan's algorithm).

    Examples:
        >>> cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
        [['a', 'b', 'c']]
        >>> cycles({"a": {"b"}, "b": set()})
        []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in graph:
                continue
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def unit_of(module: str) -> str:
    """The layer unit a pipeline module belongs to: its sub-package, or itself at the top level."""
    return ".".join(module.split(".")[:2])


def unit_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        own = unit_of(module)
        units.setdefault(own, set()).update(
            unit_of(t) for t in targets if t.split(".")[0] == "pipeline" and unit_of(t) != own
        )
    return units


def upward_imports(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """`module -> target` for every import of a unit of the same or a higher layer.

    Examples:
        >>> upward_imports({"p.low.a": {"p.high.b"}, "p.high.b": {"p.low.a"}}, [["p.low"], ["p.high"]])
        ['p.low.a -> p.high.b']
    """
    layer = {unit: n for n, units in enumerate(layers) for unit in units}

    def unit(module: str) -> str:
        return next(
            (u for u in sorted(layer, key=len, reverse=True) if module == u or module.startswith(u + ".")),
            module,
        )

    wrong = []
    for module, targets in sorted(graph.items()):
        own = unit(module)
        for target in sorted(targets):
            other = unit(target)
            if other == own or other not in layer:
                continue
            if layer[other] >= layer[own]:
                wrong.append(f"{module} -> {target}")
    return wrong


@pytest.fixture(scope="module")
def pipeline_graph() -> dict[str, set[str]]:
    return import_graph("pipeline")


def test_pipeline_has_no_import_circles(pipeline_graph):
    assert cycles(pipeline_graph) == []
    assert cycles(unit_graph(pipeline_graph)) == []


def test_every_pipeline_unit_has_a_layer(pipeline_graph):
    placed = {unit for units in LAYERS for unit in units}
    assert {unit_of(module) for module in pipeline_graph} <= placed


def test_pipeline_imports_only_downwards(pipeline_graph):
    assert upward_imports(pipeline_graph, LAYERS) == []


def test_pipeline_never_imports_the_app_or_streamlit(pipeline_graph):
    wrong = [
        f"{module} -> {target}"
        for module, targets in sorted(pipeline_graph.items())
        for target in sorted(targets)
        if target.split(".")[0] in OUTSIDE_PIPELINE
    ]
    assert wrong == []


def test_pure_modules_never_import_streamlit():
    graph = {**import_graph("pipeline"), **import_graph("app")}
    pure = set(PURE_APP) | {m for m in graph if m.split(".")[0] == "pipeline"}
    wrong = []
    for module in sorted(pure):
        for target in sorted(graph[module]):
            if target.split(".")[0] == "streamlit":
                wrong.append(f"{module} -> {target}")
            elif target.split(".")[0] == "app" and target in graph and target not in pure:
                wrong.append(f"{module} -> {target} (which is not pure)")
    assert wrong == []


def test_the_checks_see_a_circle_closed_inside_a_function(tmp_path):
    """The graph reader sees an import made inside a function, which is how circles hide."""
    (tmp_path / "a.py").write_text("def f():\n    from pipeline.mapfolder.store import read_map\n")
    found = imported(tmp_path / "a.py", "pipeline.mapfolder.files", {"pipeline.mapfolder.store"})
    graph = {"pipeline.mapfolder.files": found, "pipeline.mapfolder.store": {"pipeline.mapfolder.files"}}
    assert cycles(graph) == [["pipeline.mapfolder.files", "pipeline.mapfolder.store"]]


# ------------------------------------------------------------------ docs/architecture.md
ARCHITECTURE = ROOT / "docs" / "architecture.md"
NAMED_FILE = re.compile(r"`([\w./-]+\.(?:py|js))`")
# Where a named path may start besides the repository root: the doc writes pipeline's modules
# relative to `pipeline/` (`naming/names.py`).
PATH_ROOTS = ("", "pipeline/")
SEARCHED = ("pipeline", "app", "tests", "benchmarks")


def documented_modules() -> list[Path]:
    """What the doc must name: every Python module of `pipeline/` and `app/` (a package's
    `__init__.py` only when it holds more than its docstring) and every script of the map component."""
    found = []
    for package in ("pipeline", "app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            body = ast.parse(path.read_text(encoding="utf-8")).body
            if path.name == "__init__.py" and all(
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body
            ):
                continue
            found.append(path)
    return found + sorted((ROOT / "app" / "map_component" / "js").glob("*.js"))


def named_files(text: str, root: Path = ROOT) -> tuple[set[Path], list[str]]:
    """The files a doc names in backquotes (`name.py`, `name.js`), and the names that are no file.

    A name with a folder is read from the repository root or from `pipeline/`; a bare name is in the
    folder of the path named last before it on the same line ("`embedding/onnx_build.py`,
    `onnx_encoder.py`"), else it must be the only file of that name in the code.

    Examples:
        >>> named_files("`pipeline/nowhere.py`")[1]
        ['pipeline/nowhere.py']
    """
    by_name: dict[str, list[Path]] = {}
    for folder in SEARCHED:
        for path in (root / folder).rglob("*"):
            by_name.setdefault(path.name, []).append(path)
    for path in root.glob("*.py"):
        by_name.setdefault(path.name, []).append(path)
    named, stale = set(), []
    for line in text.splitlines():
        folder = None
        for name in NAMED_FILE.findall(line):
            if "/" in name:
                found = next(
                    (root / start / name for start in PATH_ROOTS if (root / start / name).is_file()), None
                )
            elif folder is not None and (folder / name).is_file():
                found = folder / name
            else:
                matches = by_name.get(name, [])
                found = matches[0] if len(matches) == 1 else None
            if found is None:
                stale.append(name)
                continue
            named.add(found.resolve())
            if "/" in name:
                folder = found.parent
    return named, stale


def test_the_architecture_doc_names_every_module():
    named, _ = named_files(ARCHITECTURE.read_text(encoding="utf-8"))
    missing = [str(p.relative_to(ROOT)) for p in documented_modules() if p.resolve() not in named]
    assert missing == [], "docs/architecture.md does not say where these live"


def test_the_architecture_doc_names_no_file_that_is_not_there():
    _, stale = named_files(ARCHITECTURE.read_text(encoding="utf-8"))
    assert stale == [], "docs/architecture.md names files that do not exist (or, bare, more than one)"


def test_the_doc_check_sees_a_missing_and_a_stale_name(tmp_path):
    """The check is not vacuous: a module the doc leaves out is missing, a moved one is stale, a bare
    name is read in the folder of the path before it."""
    (tmp_path / "pipeline" / "naming").mkdir(parents=True)
    for name in ("names.py", "support.py", "other.py"):
        (tmp_path / "pipeline" / "naming" / name).write_text("")
    for folder in SEARCHED[1:]:
        (tmp_path / folder).mkdir()
    doc = "| `naming/names.py`, `support.py` | `pipeline/names.py` |"
    named, stale = named_files(doc, tmp_path)
    assert named == {(tmp_path / "pipeline" / "naming" / n).resolve() for n in ("names.py", "support.py")}
    assert stale == ["pipeline/names.py"]


# ------------------------------------------------------------------ the map's browser code (js/)
def js_graph(folder: Path) -> dict[str, set[str]]:
    """Each module of the map's browser code -> the modules it imports (`assets.read_modules`: every
    `import` line; a form map.js cannot join fails there)."""
    from app.map_component.assets import read_modules

    return {name: set(module.imports) for name, module in read_modules(folder).items()}


def test_the_map_s_modules_have_no_import_circles_and_import_only_what_is_there():
    graph = js_graph(ROOT / "app" / "map_component" / "js")
    assert cycles(graph) == []
    unknown = [
        f"{name} -> {target}"
        for name, targets in sorted(graph.items())
        for target in sorted(targets - set(graph))
    ]
    assert unknown == []
    assert len(graph) > 10 and sum(map(len, graph.values())) > 30  # read, not empty


def test_the_js_checks_see_a_circle_and_an_unknown_import(tmp_path):
    """The graph reader sees each import line; a circle and a missing module are found."""
    (tmp_path / "a.js").write_text('// @ts-check\nimport { b } from "./b.js";\nexport function a() {}\n')
    (tmp_path / "b.js").write_text(
        'import { a } from "./a.js";\nimport { c } from "./c.js";\nexport const b = 1;\n'
    )
    graph = js_graph(tmp_path)
    assert cycles(graph) == [["a.js", "b.js"]]
    assert graph["b.js"] - set(graph) == {"c.js"}


def test_the_map_s_code_is_type_checked_strictly():
    """`tsc --strict` over js/ (its tsconfig.json) reports nothing: the TypeScript the Makefile
    installs (`npm ci`, package.json), or skipped where Node is not installed."""
    import shutil
    import subprocess

    if not shutil.which("node"):
        pytest.skip("Node is not installed")
    tsc = ROOT / "node_modules" / ".bin" / "tsc"
    assert tsc.exists(), "TypeScript is not installed: `npm ci` (make test and make lint run it)"
    config = json.loads((ROOT / "app" / "map_component" / "js" / "tsconfig.json").read_text())
    assert config["compilerOptions"]["strict"] and config["compilerOptions"]["checkJs"]
    done = subprocess.run([str(tsc), "-p", "app/map_component/js"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
