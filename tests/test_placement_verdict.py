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

from app import session
from app.data import build_map_data
from app.place import Placement, placement_label, verdict_message
from pipeline.mapfolder.store import read_map, write_map
from tests.helpers import REPO, ROOT, live_map, tiny_map

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
    lines = re.findall(
        r"^  T(\d+) -> (.+) \(nearest paper ([\d.]+); (.+)\)$", cli_add(folder, texts, tmp_path), re.M
    )
    return [(topic, float(similarity), verdict) for _, topic, similarity, verdict in sorted(lines)]


def cli_add(folder, texts: list[str], tmp_path) -> str:
    """What `pipeline add` says on stderr when adding `texts` (titles T0, T1, ...)."""
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
    return result.stderr


def place_in_app(text: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=120)
    at.session_state[session.PLACEMENT_PANEL] = True  # the panel opened: a closed one's body is not made
    at.run().text_area(key=session.PASTED).input(text)
    [b for b in at.button if b.label == "Place on the map"][0].click().run()
    assert not at.exception
    return at


def live_pin(at: AppTest) -> dict:
    return live_map(at)["pin"]


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
    assert at.session_state[session.PLACEMENT].verdict == "outside every topic"
    before = read_map(seed_copy_map)
    [(topic, similarity, verdict)] = cli_verdicts(seed_copy_map, [CAKE], tmp_path)
    assert verdict == "outside every topic" and abs(similarity - app_nearest) < 0.006
    # ... and stores it as it says: unassigned, marked added, counted in no topic
    after = read_map(seed_copy_map)
    [cake] = after.papers[after.papers["abstract"] == CAKE].itertuples()
    assert topic == "Unassigned" and cake.topic_id == -1 and cake.added
    assert after.topics["size"].tolist() == before.topics["size"].tolist()
    assert after.manifest.unassigned == before.manifest.unassigned + 1


# A LiDAR paper (our own words) the seed map's topics did not hold: `place` used to say it fits
# "Diffusion models", its nearest paper only 0.40 similar (the case).
LIDAR = (
    "We present a detector of repeatable 3D keypoints in LiDAR point clouds for outdoor registration. A "
    "sparse convolutional network scores every point, and a descriptor head learns local geometry with a "
    "contrastive loss over matched scans. Keypoints and descriptors are trained jointly without manual "
    "labels, and registration with RANSAC on KITTI and nuScenes sweeps is more accurate and faster than "
    "with hand-crafted keypoints."
)


def test_thin_evidence_fits_no_topic_measured_against_the_maps_own_pairs(seed_copy_map, tmp_path):
    from pipeline.modelling.place import topic_profile

    atlas = read_map(seed_copy_map)
    vectors = atlas.embeddings.astype(np.float32)
    pairs = (vectors @ vectors.T)[np.triu_indices(len(vectors), 1)]
    at = place_in_app(LIDAR)
    nearest = [df.value for df in at.dataframe if list(df.value.columns)[:1] == ["Title"]][0]
    best = float(nearest["Similarity"].max())
    assert not at.success and live_pin(at)["topic"] in ("no topic fits it", "among the unassigned papers")
    [(topic, similarity, verdict)] = cli_verdicts(seed_copy_map, [LIDAR], tmp_path)
    assert verdict != "fits" and abs(similarity - best) < 0.006
    if verdict == "outside every topic":
        assert topic == "Unassigned" and "No topic of this map fits this abstract" in at.warning[0].value
    # the absolute floor: a topic claims a paper only with one of its papers closer than 99% of the pairs
    floor = np.percentile(pairs, 99)
    profile = topic_profile(vectors, atlas.papers["topic_id"].to_numpy())
    assert best < floor and abs(profile.fit_floor - floor) < 0.01


def test_the_app_and_add_accept_and_refuse_the_same_texts_in_the_same_words(seed_copy_map, tmp_path):
    from pipeline.modelling.place import placement_problem

    refused = ["four words right here", "扩散模型", "Pneumonoultramicroscopicsilicovolcanoconiosis" * 8]
    said = cli_add(seed_copy_map, refused, tmp_path)
    for i, text in enumerate(refused):
        problem = placement_problem(text)
        assert problem and f"  T{i} -> not placed: {problem}" in said
        at = place_in_app(text)
        shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]  # as read: Markdown escapes undone
        assert shown == [problem] and not at.success
    assert "nothing new to add" in said and len(read_map(seed_copy_map).papers) == 57
    # a Chinese abstract has no spaces but many words: both place it, with the same verdict
    chinese = "我们提出了一种新的扩散模型用于图像生成，在多个数据集上取得了更好的结果。"
    assert placement_problem(chinese) is None
    at = place_in_app(chinese)
    [(topic, similarity, verdict)] = cli_verdicts(seed_copy_map, [chinese], tmp_path)
    assert at.session_state[session.PLACEMENT].verdict == verdict


@pytest.mark.slow  # the real model
def test_an_abstract_that_fits_is_placed_in_its_topic_by_both(seed_copy_map, tmp_path):
    at = place_in_app(SINKHORN)
    [(topic, similarity, verdict)] = cli_verdicts(seed_copy_map, [SINKHORN], tmp_path)
    assert verdict == "fits"
    assert at.success and f"Placed in **{topic}**" in at.success[0].value.replace("\\", "")
    assert live_pin(at)["topic"] == topic


def placed(topic: int, verdict: str, similarity: float) -> Placement:
    """A placement in `topic` whose nearest paper is `similarity` similar, with no evidence table."""
    return Placement(0.0, 0.0, topic, verdict, "fake", (0,), (similarity,), None, 0.5, pd.DataFrame())


def test_wording_at_a_topic_edge_claims_no_close_fit(tmp_path):
    write_map(tmp_path / "tiny", tiny_map())
    data = build_map_data("tiny", tmp_path / "tiny")
    edge = placed(1, "at the edge", 0.5)
    kind, message = verdict_message(data, edge)
    assert (
        kind == "info"
        and message.startswith("At the edge of **Diffusion models**")
        and "not a close fit" in message
    )
    assert placement_label(data, edge) == "at the edge of Diffusion models"
    fits = placed(1, "fits", 0.9)
    assert verdict_message(data, fits)[0] == "success" and placement_label(data, fits) == "Diffusion models"
    outside = placed(1, "outside every topic", 0.2)
    kind, message = verdict_message(data, outside)
    assert kind == "warning" and "Diffusion" not in message
    assert placement_label(data, outside) == "no topic fits it"


DIFFUSION = "We propose a diffusion sampler that denoises faster than before."  # topic 1 of the tiny map


@pytest.mark.parametrize(
    "edits",
    [
        [("hide", {"topic": 1})],
        [("merge", {"topic": 1, "into": 3})],
        [("rename", {"topic": 1, "name": "Denoising samplers"})],
    ],
    ids=["hidden", "merged", "renamed"],
)
def test_add_on_a_curated_map_gives_the_apps_verdict_and_name(edits, tiny, tmp_path, monkeypatch, capsys):
    """The app and `add` answer from the same curated map: a hidden or merged topic is no answer of
    either, a renamed one is named as curated, and `add` stores the topic the app named."""
    from pipeline.__main__ import main
    from pipeline.commands.curate import edit_map
    from tests.helpers import FakeEncoder, open_panel, replace_packaged_model, start

    for action, fields in edits:
        edit_map(tiny, action, **fields)
    monkeypatch.setattr("app.encoder.map_encoder", lambda manifest: FakeEncoder())
    at = open_panel(start(), session.PLACEMENT_PANEL)
    at.text_area(key=session.PASTED).input(DIFFUSION)
    [b for b in at.button if b.label == "Place on the map"][0].click().run()
    assert not at.exception
    app = at.session_state[session.PLACEMENT]
    shown = read_map(tiny)  # curated, as the app reads it
    app_topic = dict(zip(shown.topics["topic_id"], shown.topics["label"], strict=True)).get(
        app.topic_id, "Unassigned"
    )

    replace_packaged_model(monkeypatch, FakeEncoder())
    source = tmp_path / "new.jsonl"
    source.write_text(json.dumps({"title": "T0", "abstract": DIFFUSION}) + "\n")
    capsys.readouterr()
    assert main(["add", str(tiny), str(source), "--quiet"]) == 0
    [(topic, verdict)] = re.findall(
        r"^  T0 -> (.+) \(nearest paper [\d.]+; (.+)\)$", capsys.readouterr().err, re.M
    )
    assert (topic, verdict) == (app_topic, app.verdict)
    assert "Diffusion models" not in topic  # hidden, merged away or renamed: never the fitted name
    stored = read_map(tiny, curated=False).papers.set_index("abstract").loc[DIFFUSION, "topic_id"]
    assert stored == app.topic_id  # a topic the curated map shows (or unassigned)
