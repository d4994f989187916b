"""Hosting is light: the committed seed map served from a venv of requirements.txt alone, in Chromium.

The venv is what Streamlit Community Cloud installs. It is built once per content of
requirements.txt under `.venv-hosted/` (gitignored) and reused by later runs. The app must draw the
map and place an abstract with the map's own vectors there, and the serving process must never
import the build stack: checked in the light venv (where it is not installed) and in the full one
(where it is, so a fallback import would go unnoticed by the light venv alone).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import textwrap
import venv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.devserver import StreamlitServer
from tests.helpers import POINTS, REPO, SEED_MAP, live_map, open_app, start, whole_page, write_tiny_map

HEAVY = (
    "torch",
    "sentence_transformers",
    "transformers",
    "bertopic",
    "umap",
    "hdbscan",
    "pynndescent",
    "numba",
    "ray",
    "sklearn",
    "scipy",
    "onnx",
)


@pytest.fixture(scope="session")
def light_python() -> Path:
    """Python of a venv with requirements.txt alone, built on first use for this requirements.txt."""
    requirements = REPO / "requirements.txt"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]
    folder = REPO / ".venv-hosted" / digest
    python = folder / "bin" / "python"
    if not (folder / ".complete").exists():
        venv.create(folder, with_pip=True, clear=True)
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "-r", requirements], check=True, timeout=1200
        )
        (folder / ".complete").touch()
    return python


def hosted_environment(tmp_path: Path) -> dict[str, str]:
    """A fresh clone's view: no model cache and an empty home, so the model must come from assets/models."""
    (tmp_path / "cache").mkdir()
    (tmp_path / "home").mkdir()
    return {"ATLAS_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


@pytest.mark.slow
def test_the_light_venv_has_no_build_stack_and_gives_the_maps_own_vectors(light_python, tmp_path):
    # Import every module of the app and embed the seed abstracts as a placement would.
    script = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np, pandas as pd
        sys.path.insert(0, {str(REPO)!r})
        import pkgutil, importlib, app
        for module in pkgutil.iter_modules(app.__path__):
            importlib.import_module("app." + module.name)
        from app.encoder import encode_queries
        from pipeline.mapfolder.manifest import read_manifest
        folder = {str(SEED_MAP)!r}
        manifest = read_manifest(folder)
        texts = pd.read_parquet(folder + "/papers.parquet")["abstract"].tolist()
        vectors = encode_queries(manifest, texts)
        stored = np.load(folder + "/embeddings.npy").astype(np.float32)
        print(json.dumps({{
            "vectors": vectors.tolist(),
            "modules": sorted({{name.split(".")[0] for name in sys.modules}}),
        }}))
        """
    )
    done = subprocess.run(
        [light_python, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=hosted_environment(tmp_path),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert not set(report["modules"]) & set(HEAVY)
    # The same encoder as the build's: on this machine, the same vectors as the full venv's encoder...
    from app.encoder import encode_queries
    from pipeline.mapfolder.manifest import read_manifest

    manifest = read_manifest(SEED_MAP)
    texts = pd.read_parquet(SEED_MAP / "papers.parquet")["abstract"].tolist()
    light = np.asarray(report["vectors"], dtype=np.float32)
    assert np.abs(light - encode_queries(manifest, texts)).max() < 1e-5
    # ...and the map's own vectors, to within what int8 kernels change between CPUs (AVX2 against
    # AVX-512 VNNI: up to 0.012 an element, cosine >= 0.997 on the seeds) and float16 storage.
    stored = np.load(SEED_MAP / "embeddings.npy").astype(np.float32)
    assert ((light * stored).sum(axis=1) > 0.99).all()
    assert (np.argmax(light @ stored.T, axis=1) == np.arange(len(texts))).all()  # each finds itself
    installed = subprocess.run(
        [light_python, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True, check=True
    )
    names = {row["name"].lower() for row in json.loads(installed.stdout)}
    assert not names & {"torch", "sentence-transformers", "bertopic", "umap-learn", "hdbscan", "ray"}


def place_a_seed_abstract(page, url: str) -> str:
    """Open the app, paste the first seed paper's abstract into "Where does my paper fit?", place it."""
    papers = pd.read_parquet(SEED_MAP / "papers.parquet")
    open_app(page, url)
    assert page.locator(POINTS).count() == len(papers)
    page.get_by_text("Where does my paper fit?").click()
    page.get_by_role("textbox", name="Abstract").fill(papers["abstract"].iloc[0])
    page.get_by_role("button", name="Place on the map").click()
    placed = page.get_by_text("Placed in")
    placed.wait_for(timeout=120_000)
    return page.locator("[data-testid='stMain']").inner_text()


@pytest.mark.browser
@pytest.mark.slow
def test_the_seed_map_serves_and_places_from_requirements_txt_alone(page, light_python, tmp_path):
    log = tmp_path / "server.log"
    with (
        log.open("w") as out,
        StreamlitServer(
            SEED_MAP,
            tmp_path / "no-other-maps",
            python=light_python,
            env=hosted_environment(tmp_path),
            log=out,
        ) as server,
    ):
        text = place_a_seed_abstract(page, server.url)
    manifest = json.loads((SEED_MAP / "manifest.json").read_text())
    assert f"Embedded with {manifest['model']['encoder']}" in text
    assert "could not be loaded" not in text and "is missing" not in text
    assert "Traceback" not in log.read_text()


@pytest.mark.browser
@pytest.mark.slow
def test_the_serving_process_imports_no_build_stack_even_where_it_is_installed(page, tmp_path):
    pytest.importorskip("torch", reason="the full venv (requirements-pipeline.txt) has the build stack")
    log = tmp_path / "server.log"
    with (
        log.open("w") as out,
        StreamlitServer(
            SEED_MAP,
            tmp_path / "no-other-maps",
            env=hosted_environment(tmp_path),
            log=out,
            python_options=["-X", "importtime"],
        ) as server,
    ):
        place_a_seed_abstract(page, server.url)
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in log.read_text().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "onnxruntime" in imported  # the check sees the placement's imports
    assert sorted(imported & set(HEAVY)) == []


def test_the_committed_seed_map_records_the_committed_model():
    model = json.loads((SEED_MAP / "manifest.json").read_text())["model"]
    bundle = REPO / "assets" / "models" / model["bundle"]
    assert hashlib.sha256((bundle / "model.onnx").read_bytes()).hexdigest() == model["sha256"]
    assert (bundle / "model.onnx").stat().st_size < 30_000_000  # int8 word embeddings: about 23 MB
    assert {"tokenizer.json", "meta.json"} <= {p.name for p in bundle.iterdir()}


def test_publishing_prunes_files_of_its_kind_that_no_rerun_named_for_an_hour(tmp_path):
    import os
    import time

    from app.map_component.assets import publish

    hour_ago = time.time() - 3700
    for name in (
        "points-old.json.gz",
        "plotly-old.min.js.gz",
        ".points-new.json.gz.half",
        "points-used.json.gz",
    ):
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (hour_ago, hour_ago))
    publish("points-used.json.gz", b"x", tmp_path)  # named by a rerun: touched, so kept
    publish("points-new.json.gz", b"new", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "plotly-old.min.js.gz",  # another kind: pruned when a new Plotly.js is published
        "points-new.json.gz",
        "points-used.json.gz",
    ]


def test_about_this_map_names_no_server_folder(tiny):  # noqa: F811
    at = start(panels=("about_panel",))
    captions = " ".join(c.value for c in at.caption)
    assert "folder tiny" in captions and str(tiny.parent) not in captions


def read_only_static(*_args, **_kwargs):
    raise PermissionError(30, "Read-only file system")


def test_a_read_only_static_folder_sends_the_files_once_through_the_component(tiny, monkeypatch):  # noqa: F811
    import base64
    import gzip

    monkeypatch.setattr("app.map_component.publish", read_only_static)
    at = start()
    first = live_map(at)
    from app.map_component.payload import decode_points

    table = decode_points(gzip.decompress(base64.b64decode(first["points_data"])))
    assert table["meta"]["n"] == 60 and first["points"].endswith(".bin.gz")
    assert gzip.decompress(base64.b64decode(first["plotly_data"])).startswith(b"/**")
    assert b"export default function" in gzip.decompress(base64.b64decode(first["module_data"]))  # map.js
    whole_page(at.text_input(key="w_search").input("diffusion").run())  # the map drawn again
    again = live_map(at)
    assert (
        not {"points_data", "plotly_data", "module_data"} & set(again) and again["points"] == first["points"]
    )


@pytest.mark.browser
def test_the_map_draws_when_static_is_read_only(page, tmp_path):
    """The app run from a folder with no static/ at all, and publishing refused: nothing is served."""
    folder = write_tiny_map(tmp_path / "tiny")
    script = tmp_path / "read_only_app.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import runpy, sys
            sys.path.insert(0, {str(REPO)!r})
            import app.map_component

            def read_only(*args, **kwargs):
                raise PermissionError(30, "Read-only file system")

            app.map_component.publish = read_only
            runpy.run_path({str(REPO / "streamlit_app.py")!r}, run_name="__main__")
            """
        )
    )
    with StreamlitServer(folder, tmp_path / "no-other-maps", script=script) as server:
        open_app(page, server.url)
        assert page.locator(POINTS).count() == 60
        page.get_by_role("textbox", name="Search").fill("diffusion")
        page.get_by_role("textbox", name="Search").press("Enter")
        page.get_by_text("Papers · 15").first.wait_for(
            timeout=30_000
        )  # the search's rerun, not the old header
        # the rerun, without the files, redraws the map: the 15 matches as points (the rest dimmed beneath)
        page.wait_for_function(f"document.querySelectorAll({POINTS!r}).length === 15", timeout=30_000)
        # the papers table decoded its file from the component's data (`table_data`): the 15, drawn
        page.wait_for_function(
            "document.querySelectorAll('.atlas-papers tbody tr').length === 15", timeout=30_000
        )
        assert page.locator(".atlas-papers tbody td[data-column='Title']").first.text_content()


@pytest.mark.slow
def test_a_build_under_the_maps_folder_publishes_the_model_it_embedded_with(tmp_path, monkeypatch):
    from pipeline.embedding import onnx_build

    monkeypatch.setattr(onnx_build, "REPO", tmp_path)
    monkeypatch.setattr(onnx_build, "REPO_MAPS", tmp_path / "maps")
    monkeypatch.setattr(onnx_build, "REPO_MODELS", tmp_path / "models")
    said: list[str] = []
    record = onnx_build.map_bundle(tmp_path / "elsewhere" / "x", said.append)
    assert not (tmp_path / "models").exists() and said == []  # a map outside maps/: nothing written
    published = tmp_path / "models" / record["bundle"]

    assert onnx_build.map_bundle(tmp_path / "maps" / "x", said.append) == record
    assert sorted(p.name for p in published.iterdir()) == ["meta.json", "model.onnx", "tokenizer.json"]
    assert hashlib.sha256((published / "model.onnx").read_bytes()).hexdigest() == record["sha256"]
    assert said == [f"int8 model for hosting written to models/{record['bundle']}: commit it with the map"]

    (published / "model.onnx").write_bytes(b"another machine's export")
    onnx_build.map_bundle(tmp_path / "maps" / "y", said.append)
    assert hashlib.sha256((published / "model.onnx").read_bytes()).hexdigest() == record["sha256"]
    assert said[-1].startswith(f"replaced models/{record['bundle']} with this build's int8 model")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [record["bundle"]]  # no leftovers


def test_a_map_without_its_model_says_what_to_commit(tmp_path):
    from app.encoder import EncoderUnavailable, bundle_folder
    from pipeline.mapfolder.manifest import Manifest

    manifest = Manifest.from_dict({"model": {"bundle": "x86-ort0-0000"}})
    with pytest.raises(EncoderUnavailable, match="commit the folder assets/models/x86-ort0-0000"):
        bundle_folder(manifest, {"ATLAS_CACHE_DIR": str(tmp_path)})
    with pytest.raises(EncoderUnavailable, match="rebuild it"):
        bundle_folder(Manifest.from_dict({"model": {"encoder": "all-MiniLM-L6-v2/onnx-int8-x86"}}), {})


def test_placing_on_a_map_without_its_model_says_why_in_the_panel(tiny):  # noqa: F811
    from app import session

    at = start(panels=(session.PLACEMENT_PANEL,))
    at.text_area(key=session.PASTED).input("We propose a diffusion sampler that denoises faster than before.")
    [b for b in at.button if b.label == "Place on the map"][0].click().run()
    assert not at.exception
    assert "does not record an int8 model" in at.warning[0].value
    assert live_map(at)["pin"] is None


def test_the_server_deflates_the_page_s_websocket_where_the_browser_offers_it(tmp_path):
    """.streamlit/config.toml turns on Streamlit's WebSocket compression: a connection to the page's
    stream that offers permessage-deflate (as browsers do) gets it, so a rerun's JSON and base64 travel
    deflated (benchmarks/WIRE_RESULTS.md); one that offers nothing still connects."""
    from websockets.sync.client import connect

    folder = write_tiny_map(tmp_path / "tiny")
    with StreamlitServer(folder, tmp_path / "no-other-maps", timeout=60) as server:
        url = server.url.replace("http://", "ws://") + "_stcore/stream"
        with connect(url, compression="deflate", open_timeout=30) as socket:
            agreed = [type(extension).__name__ for extension in socket.protocol.extensions]
        with connect(url, compression=None, open_timeout=30) as socket:
            plain = list(socket.protocol.extensions)
    assert agreed == ["PerMessageDeflate"] and plain == []
