"""Shared fixtures: a private cache and home for every test, the real seed corpus and one real seed
map, the tiny map (written once a session, copied for each test), the page's downloads, Chromium.

The fast tier (`make test-fast`, `pytest -m "not slow"`) leaves out every test marked `slow`: those
marked by hand, and, marked here, every test that uses a browser, Ray or a fixture in `SLOW_FIXTURES`
(the real model or a real pipeline build of the seeds).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import pipeline  # noqa: F401  (first: it picks the numeric code paths NumPy and Numba load with)
from tests.helpers import CHROMIUM, SEEDS, write_tiny_map

# Fixtures that run the real model or a real build of the seeds: a test using one is slow.
SLOW_FIXTURES = frozenset(
    {"seed_map", "grown_map", "added_map", "rebuilds", "written_map", "browser", "page"}
)
# The exported ONNX model and Numba's compiled kernels take a minute to make; tests share them
# across sessions in a folder of the system's temporary directory (never the user's own cache).
TEST_CACHE = Path(tempfile.gettempdir()) / f"abstract-atlas-test-cache-{os.getuid()}"


@pytest.fixture(scope="session", autouse=True)
def hermetic_environment(tmp_path_factory):
    """Point the cache and HOME at temporary folders, for this process and every subprocess it starts."""
    home = tmp_path_factory.mktemp("home")
    saved = {name: os.environ.get(name) for name in ("ATLAS_CACHE_DIR", "HOME", "NUMBA_CACHE_DIR")}
    TEST_CACHE.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        ATLAS_CACHE_DIR=str(TEST_CACHE), HOME=str(home), NUMBA_CACHE_DIR=str(TEST_CACHE / "numba")
    )
    yield home
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def seed_map(tmp_path_factory) -> Path:
    """A map of the real seeds, built with the real packaged model (shared by end-to-end tests)."""
    from pipeline.commands.build import build_map

    out = tmp_path_factory.mktemp("maps") / "seeds"
    build_map([SEEDS], out, progress=False, log=lambda message: None)
    return out


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    """A private copy of the seed folder a test may add files to."""
    target = tmp_path / "seeds"
    shutil.copytree(SEEDS, target)
    return target


@pytest.fixture(autouse=True)
def fresh_encoder_cache():
    """AppTests run in this process and share the app's loaded encoders: a fake encoder one test puts in
    `load_encoder_once` must not answer another test's placement (a load the page started is let end first)."""
    yield
    import threading

    from app import encoder

    for thread in threading.enumerate():
        if thread.name == "atlas-encoder-warm":
            thread.join()
    encoder._LOADED.clear()
    encoder._WARMED.clear()


def pytest_collection_modifyitems(items):
    for item in items:
        heavy = SLOW_FIXTURES & set(getattr(item, "fixturenames", ()))
        if heavy or item.get_closest_marker("browser") or item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def tiny_template(tmp_path_factory) -> Path:
    """The tiny map (`tests.helpers.tiny_map`), written once a session; tests use copies (`tiny`)."""
    return write_tiny_map(tmp_path_factory.mktemp("template") / "tiny")


@pytest.fixture
def tiny(tiny_template, tmp_path, monkeypatch) -> Path:
    """A private copy of the tiny map, the only map the app offers (`ATLAS_MAP`)."""
    folder = tmp_path / "tiny"
    shutil.copytree(tiny_template, folder)
    monkeypatch.setenv("ATLAS_MAP", str(folder))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return folder


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """What each download button would hand the browser, by label (calling deferred data like a click)."""
    from streamlit.elements.widgets.button import ButtonMixin

    captured: dict[str, bytes] = {}
    original = ButtonMixin.download_button

    def recording(self, label, data, *args, **kwargs):
        captured[label] = data
        return original(self, label, data, *args, **kwargs)

    monkeypatch.setattr(ButtonMixin, "download_button", recording)
    return captured


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium, driven by Playwright (never `playwright install`)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: `make test` installs it with apt-get")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    context.close()


@pytest.fixture
def fresh_session():
    """An empty Streamlit session state before and after the test (tests that call the session's
    callbacks directly, outside an AppTest run)."""
    import streamlit as st

    for key in list(st.session_state):
        del st.session_state[key]
    yield
    for key in list(st.session_state):
        del st.session_state[key]
