"""Editing a map from the app: off unless switched on and writable; edits go through the same checks
as `python -m pipeline curate`, land in curation.json, and the page shows the curated map."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from pipeline.mapfolder.files import CURATION
from pipeline.mapfolder.store import read_map
from tests import helpers
from tests.helpers import opened_topic, panel_summary, texts, topic_table


def start(topic: int) -> AppTest:
    """The app with `topic` opened."""
    return helpers.start({"topic": str(topic)}, panels=("edit_panel",))


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def field(widgets, label: str):
    return next(w for w in widgets if w.label == label)


def test_editing_is_off_unless_switched_on(tiny, monkeypatch):
    monkeypatch.delenv("ATLAS_EDITING", raising=False)
    at = start(2)
    assert opened_topic(at) == "Reinforcement learning"
    assert not [e for e in at.expander if e.label == "Edit this topic"]
    assert not [b for b in at.button if b.label == "Rename topic"]


def test_rename_note_and_merge_from_the_app_are_saved_and_shown(tiny, monkeypatch):
    monkeypatch.setenv("ATLAS_EDITING", "1")
    at = start(2)
    field(at.text_input, "Name").input("Curated RL")
    button(at, "Rename topic").click().run()
    assert opened_topic(at) == "Curated RL"
    assert [s.value for s in at.success if "rename topic 2" in s.value]
    field(at.text_area, "Note").input("Mostly <b>policy</b> papers")
    button(at, "Save note").click().run()
    notes = [t["note"] for t in panel_summary(at)["topics"] if t["id"] == 2]
    assert notes == ["Mostly <b>policy</b> papers"]  # as written: the panel shows it as text, not HTML
    edits = json.loads((tiny / CURATION).read_text())["edits"]
    assert [(e["action"], e["topic"]) for e in edits] == [("rename", 2), ("note", 2)]

    assert field(at.selectbox, "Merge into").value is None  # no merge target chosen for the curator
    button(at, "Merge topic").click().run()
    assert [w.value for w in at.warning if "Choose the topic to merge it into" in w.value]
    assert [e["action"] for e in json.loads((tiny / CURATION).read_text())["edits"]] == ["rename", "note"]
    field(at.selectbox, "Merge into").set_value(0)
    button(at, "Merge topic").click().run()
    topics = topic_table(at)  # the topic list beside the map
    assert "Curated RL" not in set(topics["Topic"])
    sizes = dict(zip(topics["Topic"], topics["Papers"]))
    assert sizes["Graph neural networks"] == 26  # 13 + the merged topic's 13
    assert json.loads((tiny / CURATION).read_text())["edits"][-1] == {
        **json.loads((tiny / CURATION).read_text())["edits"][-1],
        "action": "merge",
        "topic": 2,
        "into": 0,
    }


def test_a_bad_name_from_the_app_is_refused_and_changes_nothing(tiny, monkeypatch):
    monkeypatch.setenv("ATLAS_EDITING", "1")
    at = start(2)
    field(at.text_input, "Name").input("<script>x</script>")
    button(at, "Rename topic").click().run()
    assert [e.value for e in at.error if "markup" in e.value]
    assert not (tiny / CURATION).exists()
    assert opened_topic(at) == "Reinforcement learning"


def test_an_edit_flagged_by_a_rebuild_can_be_accepted_from_the_app(tiny, monkeypatch):
    monkeypatch.setenv("ATLAS_EDITING", "1")
    flagged = {
        "id": 1,
        "action": "rename",
        "topic": 2,
        "name": "Curated RL",
        "review": "topic 2 was split by the rebuild",
    }
    (tiny / CURATION).write_text(json.dumps({"format": "abstract-atlas curation 1", "edits": [flagged]}))
    at = start(2)
    assert opened_topic(at) == "Reinforcement learning"  # a flagged edit is not applied
    assert [w.value for w in at.warning if "split by the rebuild" in w.value]
    button(at, "Accept").click().run()
    assert opened_topic(at) == "Curated RL"
    assert "review" not in json.loads((tiny / CURATION).read_text())["edits"][0]


def test_about_this_map_shows_the_agreement_at_the_topic_counts_the_build_tried(tiny):
    manifest = json.loads((tiny / "manifest.json").read_text())
    manifest["quality"]["agreement_at_nearby_topic_counts"] = {"8": 0.61, "9": 0.7, "10": 0.74, "12": 0.52}
    manifest["quality"]["chosen_topic_count"] = 10
    manifest["config"].update(n_topics=9, choose_n_topics=True)
    (tiny / "manifest.json").write_text(json.dumps(manifest))
    at = helpers.start(panels=("about_panel",))
    assert (
        "**Agreement of re-clusterings at nearby topic counts** · 8 topics → 0.61 · 9 topics → 0.70 · "
        "**10 topics → 0.74** · 12 topics → 0.52"
    ) in texts(at)
    # the topic count in plain words, read against the map's table (issue 66: "n_topics = 18 asked: 14
    # chosen by re-clustering agreement, 23 topics on the map"), and no "n_topics =" among the settings
    shown = len(read_map(tiny).topics)
    [line] = [line for line in texts(at).splitlines() if line.startswith("**Topics**")]
    assert line.startswith(
        f"**Topics** · {shown} on the map · the build tried counts near 9 and cut the papers into 10"
    )
    assert "n_topics" not in texts(at)
