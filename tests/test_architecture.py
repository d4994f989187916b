"""The house rules, read from the code's own imports (every import, including those made inside a
function): no import circles in `pipeline`, no upward imports between its packages, `pipeline` never
imports the app or Streamlit, and the pure modules never import Streamlit. See docs/architecture.md."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# pipeline's units (a sub-package, or a top-level module), lowest first. A unit imports only
# itself and units of lower layers; units of one layer never import each other.
LAYERS = [
    ["pipeline"],  # the package itself: `UserError` and the version
    ["pipeline.config", "pipeline.cache", "pipeline._fastimport"],
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
