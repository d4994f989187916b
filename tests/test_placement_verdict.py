"""Placement that admits when there is none: the app and `python -m pipeline add` give the same verdict
(`pipeline.modelling.place.verdict`) on the real seed map with the real model, and the app claims a topic only
for an abstract that fits it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app.data import build_map_data
from app.pin import pin_label, verdict_message
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import REPO, ROOT, tiny_map

SEED_MAP = ROOT / "assets" / "maps" / "seeds"
CAKE = (
    "Preheat the oven to 180 degrees. Cream the butter and sugar until pale, beat in four eggs one at a "
    "time, fold in the flour and a pinch of salt, and bake the sponge for 25 minutes until golden. Cool "
    "on a rack before icing with lemon glaze."
)
SINKHORN = pd.read_csv(ROOT / "tests" / "fixtures" / "extra_abstracts.csv")["abstract"].iloc[0]


@pytest.fixture
def seed_copy_map(tmp_path, monkeypatch):
    target = tmp_path / "seeds"
    shutil.copytree(SEED_MAP, target)
    monkeypatch.setenv("ATLAS_MAP", str(target))
    monkeypatch.setenv("ATLAS_MAPS_DIR", str(tmp_path / "no-other-maps"))
    return target


def cli_verdicts(folder, texts: list[str], tmp_path) -> list[tuple[str, float, str]]:
    """(topic, nearest similarity, verdict) that `pipeline add` prints for each text, in order."""
    source = tmp_path / "new.jsonl"
    source.write_text(
        "".join(json.dumps({"title": f"T{i}", "abstract": t}) + "\n" for i, t in enumerate(texts))
    )
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "add", str(folder), str(source), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = re.findall(r"^  T(\d+) -> (.+) \(nearest paper ([\d.]+); (.+)\)$", result.stderr, re.M)
    return [(topic, float(similarity), verdict) for _, topic, similarity, verdict in sorted(lines)]


def place_in_app(text: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=120).run()
    at.text_area(key="fit_text").input(text)
    [b for b in at.button if b.label == "Place on the map"][0].click().run()
    assert not at.exception
    return at


def live_pin(at: AppTest) -> dict:
    def walk(node):
        for child in getattr(node, "children", {}).values():
            yield child
            yield from walk(child)

    [element] = [e for e in walk(at._tree) if getattr(e, "type", "") == "bidi_component"]
    return json.loads(element.proto.json)["pin"]


@pytest.mark.slow  # the real model
def test_a_cake_recipe_fits_no_topic_in_the_app_and_in_add(seed_copy_map, tmp_path):
    at = place_in_app(CAKE)
    assert not at.success  # no green "Placed in ..."
    warning = at.warning[0].value
    assert "No topic of this map fits this abstract" in warning
    labels = set(read_map(seed_copy_map).topics["label"])
    assert not any(f"**{label}**" in warning for label in labels)  # no topic claimed
    assert live_pin(at)["topic"] == "no topic fits it"
    nearest = [df.value for df in at.dataframe if list(df.value.columns)[:1] == ["Title"]][0]
    evidence = [df.value for df in at.dataframe if "To its centre" in df.value.columns][0]
    assert len(nearest) == 10 and nearest["Similarity"].max() < 0.3
    assert (evidence["To its centre"] < evidence["Its papers reach"]).all()  # the numbers behind the verdict
    # `add` on the same map says the same, with the same nearest similarity
    app_nearest = float(nearest["Similarity"].iloc[0])
    [(topic, similarity, verdict)] = cli_verdicts(seed_copy_map, [CAKE], tmp_path)
    assert verdict == "outside every topic" and abs(similarity - app_nearest) < 0.006


@pytest.mark.slow  # the real model
def test_an_abstract_that_fits_is_placed_in_its_topic_by_both(seed_copy_map, tmp_path):
    at = place_in_app(SINKHORN)
    [(topic, similarity, verdict)] = cli_verdicts(seed_copy_map, [SINKHORN], tmp_path)
    assert verdict == "fits"
    assert at.success and f"Placed in **{topic}**" in at.success[0].value.replace("\\", "")
    assert live_pin(at)["topic"] == topic


def test_wording_at_a_topic_edge_claims_no_close_fit(tmp_path):
    write_map(tmp_path / "tiny", tiny_map())
    data = build_map_data("tiny", tmp_path / "tiny")
    edge = {"topic": 1, "verdict": "at the edge", "similarities": [0.5]}
    kind, message = verdict_message(data, edge)
    assert (
        kind == "info"
        and message.startswith("At the edge of **Diffusion models**")
        and "not a close fit" in message
    )
    assert pin_label(data, edge) == "at the edge of Diffusion models"
    fits = {"topic": 1, "verdict": "fits", "similarities": [0.9]}
    assert verdict_message(data, fits)[0] == "success" and pin_label(data, fits) == "Diffusion models"
    outside = {"topic": 1, "verdict": "outside every topic", "similarities": np.array([0.2]).tolist()}
    kind, message = verdict_message(data, outside)
    assert kind == "warning" and "Diffusion" not in message and pin_label(data, outside) == "no topic fits it"
