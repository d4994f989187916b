"""The app's house rules, read from its sources: panels do not import panels, session state is touched
only in `app/session.py` (every key a named constant there), and every link setting is declared once
in `app.state.SETTINGS`."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import app.session
import app.state
from app.state import SETTINGS, ViewState, Vocabulary, parse_view, to_params

APP = Path(__file__).resolve().parents[1] / "app"
ENTRY = APP.parent / "streamlit_app.py"
# The parts of the page `streamlit_app.py` composes; what they share lives in non-panel modules
# (app.widgets, app.nearest, app.place, app.view, app.session, ...).
PANELS = {
    "about",
    "changes_panel",
    "controls",
    "curation_panel",
    "downloads",
    "map_panel",
    "papers_panel",
    "paper_view",
    "placement",
}


def app_imports(path: Path) -> set[str]:
    """The `app` modules a file imports (anywhere in it), by their name under `app`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app"):
            parts = node.module.split(".")
            found |= {parts[1]} if len(parts) > 1 else {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("app.")}
    return found


def test_every_panel_is_a_module_and_no_panel_imports_another():
    modules = {p.stem for p in APP.glob("*.py")}
    assert modules >= PANELS
    for panel in PANELS:
        assert not app_imports(APP / f"{panel}.py") & PANELS, panel


def test_session_state_is_touched_only_in_app_session():
    sources = [*APP.rglob("*.py"), ENTRY]
    touching = {p.relative_to(APP.parent).as_posix() for p in sources if "session_state" in p.read_text()}
    assert touching == {"app/session.py"}


def inline_session_keys(source: str) -> list[str]:
    """Keys spelled inline where the session state is read or written: `st.session_state.x`,
    `st.session_state["x"]`, `st.session_state.get("x")` (and `pop`, `setdefault`)."""
    accessors = {"get", "pop", "setdefault"}

    def is_state(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "session_state"

    found = []
    for node in ast.walk(ast.parse(source)):
        method = node.func if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
        if isinstance(node, ast.Attribute) and is_state(node.value) and node.attr not in accessors:
            found.append(f"line {node.lineno}: session_state.{node.attr}")
        elif (
            isinstance(node, ast.Subscript) and is_state(node.value) and isinstance(node.slice, ast.Constant)
        ):
            found.append(f"line {node.lineno}: session_state[{node.slice.value!r}]")
        elif method and is_state(method.value) and node.args and isinstance(node.args[0], ast.Constant):
            found.append(f"line {node.lineno}: session_state.{method.attr}({node.args[0].value!r})")
    return found


def test_every_session_key_is_a_named_constant_of_app_session_and_none_is_used_twice():
    assert inline_session_keys("st.session_state.page = st.session_state.get('page', 0)") == [
        "line 1: session_state.page",
        "line 1: session_state.get('page')",
    ]
    assert inline_session_keys((APP / "session.py").read_text()) == []
    keys = [
        v for k, v in vars(app.session).items() if k.isupper() and isinstance(v, str) and k != "FACET_PREFIX"
    ]
    settings = [s.session for s in SETTINGS if s.session]
    assert len(keys) > 20 and len(set(keys + settings)) == len(keys) + len(settings)  # no key twice
    assert not any(key.startswith(app.session.FACET_PREFIX) for key in keys)


def test_every_view_setting_is_declared_once_with_its_url_and_session_key():
    names = [s.name for s in SETTINGS if s.in_state]
    assert sorted(names) == sorted(f.name for f in dataclasses.fields(ViewState))
    urls = [s.url for s in SETTINGS]
    sessions = [s.session for s in SETTINGS if s.session]
    assert len(set(urls)) == len(urls) and len(set(sessions)) == len(sessions)
    doc = app.state.__doc__
    for url in urls:  # each key is documented for readers of links
        assert f"    {url}" in doc, url


def test_a_view_with_every_setting_chosen_round_trips_through_the_link():
    state = ViewState(
        search="graph nets",
        topics=(2, -1),
        show_unassigned=False,
        filters=(("year", ("2024",)),),
        topic=2,
        paper="doc0002",
        themes=(1,),
        sort="rising",
        added_only=True,
        colour="year",
    )
    vocabulary = Vocabulary(
        topic_ids=frozenset({-1, 2}),
        facets={"year": ("2023", "2024")},
        doc_ids=frozenset({"doc0002"}),
        theme_ids=frozenset({1}),
        sorts=("size", "rising"),
        has_added=True,
        colour_columns=("year",),
        topic_themes={2: 1},
    )
    params = {key: value if isinstance(value, list) else [value] for key, value in to_params(state).items()}
    assert parse_view(params, vocabulary) == (state, [])
    assert to_params(ViewState()) == {}
