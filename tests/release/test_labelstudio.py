"""Label Studio interchange: labeling config, task export, export import, and the round trip."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD

from vadscene.core.catalogue import AMBIGUOUS, Catalogue, parse_catalogue
from vadscene.release.labelstudio import (
    LabelStudioError,
    export_tasks,
    import_export,
    labeling_config,
    write_labelstudio,
)
from vadscene.store.workspace import STORE_NAME, Workspace

# ``annotated`` (tests/conftest.py): several annotators, a consensus on NORMAL, an auto factor
# with an override on ARSON, and on ROAD only the auto pole and a cleared decision.


def _dump(workspace: Workspace) -> list[str]:
    with sqlite3.connect(workspace.root / STORE_NAME) as db:
        return list(db.iterdump())


def _human_values(workspace: Workspace) -> dict[tuple[str, str, str], tuple[str, str]]:
    return {
        (d.video_id, d.factor, d.annotator): (d.value, d.source)
        for d in workspace.store.current_decisions()
        if d.value is not None and d.source != "auto"
    }


# --- labeling config ------------------------------------------------------------------------


def test_labeling_config_has_one_choices_per_factor(catalogue: Catalogue) -> None:
    view = ET.fromstring(labeling_config(catalogue))
    assert view.tag == "View"
    assert view.find("Video").attrib == {"name": "video", "value": "$video"}
    controls = view.findall("Choices")
    assert [c.get("name") for c in controls] == list(catalogue.keys)
    for control, factor in zip(controls, catalogue.factors, strict=True):
        assert (control.get("toName"), control.get("choice")) == ("video", "single")
        assert [c.get("value") for c in control] == [*factor.values, AMBIGUOUS]
    headers = [h.get("value") for h in view.findall("Header")]
    assert headers == [text for f in catalogue.factors for text in (f.name, f.criterion)]


def test_labeling_config_escapes_text_and_refuses_a_clashing_key() -> None:
    factor = {
        "key": "light",
        "name": 'Light <"day" & night>',
        "level": "recording",
        "values": ["day", "night & dusk"],
        "criterion": "Sun > 0 & 'lamps' < 1",
        "source": "manual",
    }
    view = ET.fromstring(labeling_config(parse_catalogue({"name": "x", "factors": [factor]})))
    headers = [h.get("value") for h in view.findall("Header")]
    assert headers == [factor["name"], factor["criterion"]]
    assert [c.get("value") for c in view.find("Choices")] == ["day", "night & dusk", AMBIGUOUS]
    clash = parse_catalogue({"name": "x", "factors": [{**factor, "key": "video"}]})
    with pytest.raises(LabelStudioError, match="factor key 'video'"):
        labeling_config(clash)


# --- export ---------------------------------------------------------------------------------


def test_export_shape(annotated: Workspace) -> None:
    tasks = json.loads(json.dumps(export_tasks(annotated, base_url="http://host:8501/")))
    assert [t["id"] for t in tasks] == [1, 2, 3, 4]
    by_id = {t["data"]["video_id"]: t for t in tasks}
    assert sorted(by_id) == [ABUSE, ARSON, NORMAL, ROAD]
    assert by_id[ABUSE]["data"] == {
        "video": f"http://host:8501/vadscene/video/{ABUSE}",
        "video_id": ABUSE,
        "category": "Abuse",
    }
    normal = by_id[NORMAL]["annotations"]
    assert [(a["completed_by"], a["ground_truth"]) for a in normal] == [
        ({"email": "ana"}, False),
        ({"email": "ben"}, False),
        ({"email": "carla"}, False),
        ({"email": "carla"}, True),  # the consensus decision is the ground-truth annotation
    ]
    assert normal[3]["result"] == [
        {
            "id": "crowd",
            "from_name": "crowd",
            "to_name": "video",
            "type": "choices",
            "value": {"choices": ["many"]},
        }
    ]
    ana = by_id[ABUSE]["annotations"][0]
    assert ana["was_cancelled"] is False
    assert ana["created_at"] < ana["updated_at"] and ana["updated_at"].endswith("Z")
    assert {r["from_name"]: r["value"]["choices"] for r in ana["result"]} == {
        "color": ["grayscale"],
        "crowd": ["few"],
    }
    arson = by_id[ARSON]["annotations"]  # ana's override is in her annotation, with her color
    assert [a["completed_by"]["email"] for a in arson] == ["ana", "ben"]
    assert {r["from_name"] for r in arson[0]["result"]} == {"color", "resolution"}
    # ben cleared his only decision on ROAD, nobody else decided it: no annotation at all
    assert by_id[ROAD]["annotations"] == []
    for video_id, pole in ((ABUSE, "high"), (ARSON, "low"), (ROAD, "low")):
        (prediction,) = by_id[video_id]["predictions"]
        assert prediction["model_version"] == "vadscene-auto"
        assert prediction["score"] is None
        assert [(r["from_name"], r["type"], r["value"]) for r in prediction["result"]] == [
            ("resolution", "choices", {"choices": [pole]})
        ]


# --- import ---------------------------------------------------------------------------------

# Shaped like the JSON export in Label Studio's docs ("Label Studio JSON format of annotated
# tasks"): user 10 annotates two videos (one named only by its uploaded file's URL) and skips
# one; user 11 is given as an object, as some versions export it.
LABEL_STUDIO_EXPORT = """
[
  {
    "id": 1,
    "created_at": "2021-03-09T21:52:49.513742Z",
    "updated_at": "2021-03-09T22:16:08.746926Z",
    "project": 83,
    "data": {"video": "/vadscene/video/Abuse001_x264", "video_id": "Abuse001_x264"},
    "meta": {},
    "annotations": [
      {
        "id": 1001,
        "result": [
          {"from_name": "color", "id": "Dx_aB91ISN", "to_name": "video", "type": "choices",
           "origin": "manual", "value": {"choices": ["grayscale"]}},
          {"from_name": "resolution", "id": "Dx_aB91ISM", "to_name": "video",
           "type": "choices", "value": {"choices": ["low"]}}
        ],
        "was_cancelled": false,
        "ground_truth": false,
        "created_at": "2021-03-09T22:16:08.728353Z",
        "updated_at": "2021-03-09T22:16:08.728378Z",
        "lead_time": 4.288,
        "result_count": 0,
        "task": 1,
        "completed_by": 10
      },
      {
        "id": 1002,
        "result": [
          {"from_name": "color", "id": "a1", "to_name": "video", "type": "choices",
           "value": {"choices": ["color"]}}
        ],
        "was_cancelled": false,
        "ground_truth": true,
        "created_at": "2021-03-10T08:00:00.000000Z",
        "updated_at": "2021-03-10T08:30:00.000000Z",
        "lead_time": 2.5,
        "task": 1,
        "completed_by": {"id": 11, "email": "lead@lab.org", "first_name": "", "last_name": ""}
      }
    ],
    "predictions": [
      {"created_ago": "3 hours", "model_version": "vadscene-auto", "score": null,
       "result": [{"from_name": "resolution", "id": "t5sp3TyXPo", "to_name": "video",
                   "type": "choices", "value": {"choices": ["high"]}}]}
    ]
  },
  {
    "id": 2,
    "created_at": "2021-03-09T21:52:49.513742Z",
    "updated_at": "2021-03-09T22:20:00.000000Z",
    "project": 83,
    "data": {"video": "/data/upload/83/8f3a2b1c-Arson002_x264.mp4"},
    "meta": {},
    "annotations": [
      {
        "id": 1003,
        "result": [
          {"from_name": "crowd", "id": "b1", "to_name": "video", "type": "choices",
           "value": {"choices": ["ambiguous"]}}
        ],
        "was_cancelled": false,
        "ground_truth": false,
        "created_at": "2021-03-09T22:19:00.000000Z",
        "updated_at": "2021-03-09T22:20:00.000000Z",
        "lead_time": 60.0,
        "task": 2,
        "completed_by": 10
      }
    ],
    "predictions": []
  },
  {
    "id": 3,
    "created_at": "2021-03-09T21:52:49.513742Z",
    "updated_at": "2021-03-09T22:21:00.000000Z",
    "project": 83,
    "data": {"video": "/vadscene/video/Not_In_This_Workspace"},
    "meta": {},
    "annotations": [
      {
        "id": 1004,
        "result": [],
        "was_cancelled": true,
        "ground_truth": false,
        "created_at": "2021-03-09T22:21:00.000000Z",
        "updated_at": "2021-03-09T22:21:00.000000Z",
        "lead_time": 1.0,
        "task": 3,
        "completed_by": 10
      }
    ],
    "predictions": []
  }
]
"""


def test_import_a_label_studio_json_export(annotated: Workspace) -> None:
    store = annotated.store
    auto_abuse = store.current_decisions(video_id=ABUSE, annotator="auto")
    counts = import_export(annotated, json.loads(LABEL_STUDIO_EXPORT))
    assert (counts.annotations, counts.cancelled, counts.decisions_added) == (3, 1, 4)
    user = {
        (d.video_id, d.factor): d for d in store.current_decisions(annotator="labelstudio-user-10")
    }
    assert {key: (d.value, d.source) for key, d in user.items()} == {
        (ABUSE, "color"): ("grayscale", "manual"),
        (ABUSE, "resolution"): ("low", "override"),
        (ARSON, "crowd"): (AMBIGUOUS, "manual"),
    }
    override = user[ABUSE, "resolution"]
    assert (override.replaced_auto_value, override.replaced_measurement) == ("high", 80.0)
    assert override.decided_at == "2021-03-09T22:16:08.728378+00:00"  # the annotation's time
    (lead,) = store.current_decisions(annotator="lead@lab.org")
    assert (lead.video_id, lead.factor, lead.value, lead.source) == (
        ABUSE,
        "color",
        "color",
        "consensus",
    )
    assert store.current_decisions(video_id=ABUSE, annotator="auto") == auto_abuse
    again = import_export(annotated, json.loads(LABEL_STUDIO_EXPORT))
    assert (again.decisions_added, again.decisions_already_present) == (0, 4)


def test_round_trip_preserves_every_decision(
    annotated: Workspace, small_videos: Path, tmp_path: Path
) -> None:
    tasks_path, config_path = write_labelstudio(annotated, tmp_path / "ls")
    assert ET.parse(config_path).getroot().tag == "View"
    with Workspace.create(tmp_path / "fresh", video_root=small_videos) as fresh:
        fresh.scan()
        counts = import_export(fresh, json.loads(tasks_path.read_text(encoding="utf-8")))
        assert counts.decisions_added == len(_human_values(annotated))
        assert _human_values(fresh) == _human_values(annotated)
        latest: dict[tuple[str, str, bool], str] = {}
        for d in annotated.store.current_decisions():
            key = (d.video_id, d.annotator, d.source == "consensus")
            latest[key] = max(latest.get(key, ""), d.decided_at)
        for d in fresh.store.current_decisions():
            assert d.decided_at == latest[d.video_id, d.annotator, d.source == "consensus"]
        assert import_export(fresh, export_tasks(fresh)).decisions_added == 0


def test_bad_input_lists_every_problem_and_writes_nothing(annotated: Workspace) -> None:
    def annotation(*results: tuple[str, str]) -> dict:
        return {
            "completed_by": 7,
            "was_cancelled": False,
            "result": [
                {"from_name": f, "to_name": "video", "type": "choices", "value": {"choices": [v]}}
                for f, v in results
            ],
        }

    tasks = [
        {"data": {"video_id": ABUSE}, "annotations": [annotation(("color", "color"))]},
        {"data": {"video_id": ARSON}, "annotations": [annotation(("colour", "color"))]},
        {
            "data": {"video_id": NORMAL},
            "annotations": [{**annotation(("crowd", "some")), "was_cancelled": True}],
        },
        {
            "data": {"video_id": ROAD},
            "annotations": [annotation(("crowd", "few")), annotation(("crowd", "several"))],
        },
        {"data": {"video": "/vadscene/video/Nowhere001_x264"}, "annotations": [annotation()]},
    ]
    before = _dump(annotated)
    with pytest.raises(LabelStudioError) as caught:
        import_export(annotated, tasks)
    assert caught.value.problems == [
        "$[1].annotations[0].result[0].from_name: unknown factor 'colour' (catalogue "
        f"'ucf-crime' has: {', '.join(annotated.catalogue.keys)})",
        "$[3].annotations[1].result[0].value.choices: 'several' is not a value of factor "
        "'crowd' (expected one of: few, many, ambiguous)",
        "$[4].data: unknown video 'Nowhere001_x264' (from data.video "
        "'/vadscene/video/Nowhere001_x264')",
    ]
    assert "nothing was imported" in str(caught.value)
    with pytest.raises(LabelStudioError, match=r"\$\[0\]\.annotations\[0\]\.completed_by"):
        import_export(annotated, [{"data": {"video_id": ABUSE}, "annotations": [{"result": []}]}])
    assert _dump(annotated) == before


def test_cli_round_trip_through_label_studio_files(
    annotated: Workspace, tmp_path: Path, small_videos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.cli import run

    assert run(["labelstudio-export", str(annotated.root), "--out", str(tmp_path / "ls")]) == 0
    assert {p.name for p in (tmp_path / "ls").iterdir()} == {"tasks.json", "labeling_config.xml"}
    with Workspace.create(tmp_path / "other", video_root=small_videos) as other:
        other.scan()
    assert (
        run(["labelstudio-import", str(tmp_path / "other"), str(tmp_path / "ls" / "tasks.json")])
        == 0
    )
    assert "decisions added" in capsys.readouterr().out
    assert run(["labelstudio-import", str(tmp_path / "other"), str(tmp_path / "nope.json")]) == 1
