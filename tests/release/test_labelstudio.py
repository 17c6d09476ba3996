"""Label Studio interchange: labeling config, task export, export import, and the round trip."""

from __future__ import annotations

import json
import math
import sqlite3
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import av
import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD, copy_demo, write_video

from vadscene.core.catalogue import AMBIGUOUS, Catalogue, parse_catalogue
from vadscene.release.labelstudio import (
    USERS_HELP,
    LabelStudioError,
    LabelStudioUsers,
    UserMapping,
    export_tasks,
    import_export,
    labeling_config,
    write_labelstudio,
)
from vadscene.store.workspace import STORE_NAME, Workspace

# ``annotated`` (tests/conftest.py): several annotators, a consensus on NORMAL, an auto factor
# with an override on ARSON, and on ROAD only the auto pole and a cleared decision.

TEAM = LabelStudioUsers.gather(["ana=ana@lab.org", "ben=ben@lab.org", "carla=carla@lab.org"])
"""The ``annotated`` workspace's annotators as Label Studio users."""


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
    assert view.find("Video").attrib == {"name": "video", "value": "$video", "frameRate": "$fps"}
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
    tasks = json.loads(
        json.dumps(export_tasks(annotated, base_url="http://host:8501/", users=TEAM))
    )
    assert [t["id"] for t in tasks] == [1, 2, 3, 4]
    by_id = {t["data"]["video_id"]: t for t in tasks}
    assert sorted(by_id) == [ABUSE, ARSON, NORMAL, ROAD]
    assert by_id[ABUSE]["data"] == {
        "video": f"http://host:8501/vadscene/video/{ABUSE}",
        "video_id": ABUSE,
        "category": "Abuse",
        "fps": 25.0,  # helpers.write_video's rate
    }
    normal = by_id[NORMAL]["annotations"]
    assert [(a["completed_by"], a["ground_truth"]) for a in normal] == [
        ({"email": "ana@lab.org"}, False),
        ({"email": "ben@lab.org"}, False),
        ({"email": "carla@lab.org"}, False),
        ({"email": "carla@lab.org"}, True),  # the consensus is the ground-truth annotation
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
    assert [a["completed_by"]["email"] for a in arson] == ["ana@lab.org", "ben@lab.org"]
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


# Label Studio's user list as ``GET /api/users/`` returns it (trimmed): how a JSON export's
# numeric ``completed_by`` becomes an e-mail.
LABEL_STUDIO_USERS = [
    {"id": 10, "first_name": "", "last_name": "", "username": "dora", "email": "dora@lab.org"},
    {"id": 11, "first_name": "", "last_name": "", "username": "lead", "email": "lead@lab.org"},
]


def _users_file(tmp_path: Path, content: object, name: str = "ls-users.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


def test_import_a_label_studio_json_export(annotated: Workspace, tmp_path: Path) -> None:
    store = annotated.store
    auto_abuse = store.current_decisions(video_id=ABUSE, annotator="auto")
    users = LabelStudioUsers.gather(
        [*(f"{m.name}={m.email}" for m in TEAM.mappings), "dora=dora@lab.org"],
        [_users_file(tmp_path, LABEL_STUDIO_USERS)],
    )
    counts = import_export(annotated, json.loads(LABEL_STUDIO_EXPORT), users=users)
    assert (counts.annotations, counts.cancelled, counts.decisions_added) == (3, 1, 4)
    # user 11 is named by no mapping; every annotator here has an e-mail, so none of them
    # can be user 11: a newcomer, under their e-mail
    assert counts.new_annotators == {"lead@lab.org": 1}
    user = {(d.video_id, d.factor): d for d in store.current_decisions(annotator="dora")}
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
    again = import_export(annotated, json.loads(LABEL_STUDIO_EXPORT), users=users)
    assert (again.decisions_added, again.decisions_already_present) == (0, 4)


def test_import_refuses_users_it_cannot_tell_apart_from_known_annotators(
    annotated: Workspace,
) -> None:
    """User 10 is named by id only; lead@lab.org could be ben, whose e-mail is unknown:
    importing either under a made-up name could count one person twice."""
    before = _dump(annotated)
    users = LabelStudioUsers.gather(["ana=ana@lab.org", "carla=carla@lab.org"])
    with pytest.raises(LabelStudioError) as caught:
        import_export(annotated, json.loads(LABEL_STUDIO_EXPORT), users=users)
    assert caught.value.problems == [
        "Label Studio user 10 (2 annotation(s)): the export names them by id only; give "
        "Label Studio's user list (GET /api/users/, saved as a .json file) with --users, or "
        "their e-mail in a --users file with an id column",
        "Label Studio user 11 lead@lab.org (1 annotation(s)): no annotator is mapped to this "
        "e-mail, and it may be one of those whose e-mail is unknown (ben); map it with "
        "--email NAME=lead@lab.org (a newcomer too: their name in this workspace)",
    ]
    assert "nothing was imported" in str(caught.value)
    assert _dump(annotated) == before


def _resolution_shape(workspace: Workspace) -> dict[tuple[str, str], int]:
    """(video, factor) → how many people's current human decisions it has (1 is a single
    decision, 2 or more an agreement or a disagreement)."""
    people: dict[tuple[str, str], set[str]] = {}
    for d in workspace.store.current_decisions():
        if d.value is not None and d.source in ("manual", "override"):
            people.setdefault((d.video_id, d.factor), set()).add(d.annotator)
    return {key: len(names) for key, names in people.items()}


def _as_label_studio_exports_it(tasks: list[dict], user_ids: dict[str, int]) -> list[dict]:
    """Our tasks as Label Studio's JSON export gives them back after importing them: users
    by numeric id, every annotation dated now (Label Studio dates imported annotations by
    the import), predictions by id (the shape the real server's export had in the slow
    test, tests/release/test_labelstudio_server.py)."""
    at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    exported = []
    for n, task in enumerate(tasks, start=1):
        annotations = [
            {
                "id": 100 * n + k,
                "completed_by": user_ids[a["completed_by"]["email"]],
                "result": a["result"],
                "was_cancelled": False,
                "ground_truth": a["ground_truth"],
                "created_at": at,
                "updated_at": at,
                "lead_time": None,
                "task": n,
            }
            for k, a in enumerate(task["annotations"])
        ]
        exported.append(
            {
                "id": n,
                "annotations": annotations,
                "predictions": list(range(len(task["predictions"]))),
                "data": task["data"],
            }
        )
    return exported


def test_merging_back_from_label_studio_counts_each_person_once(
    demo_template: Path, tmp_path: Path
) -> None:
    """The defect: annotators came back as ``labelstudio-user-<id>``, so merged into the
    workspace they came from each person counted twice (single decisions turned into
    agreements). Mapped by e-mail both ways, the same people hold the same decisions."""
    root = copy_demo(demo_template, tmp_path / "demo")
    emails = ["demo-ana=ana@lab.org", "demo-ben=ben@lab.org"]
    ls_users = [{"id": 2, "email": "ana@lab.org"}, {"id": 3, "email": "ben@lab.org"}]
    with Workspace.open(root) as workspace:
        before = _resolution_shape(workspace)
        values = _human_values(workspace)
        tasks = export_tasks(workspace, users=LabelStudioUsers.gather(emails))
        exported = _as_label_studio_exports_it(tasks, {"ana@lab.org": 2, "ben@lab.org": 3})
        users = LabelStudioUsers.gather(emails, [_users_file(tmp_path, ls_users)])
        counts = import_export(workspace, exported, users=users)
        assert counts.annotations == sum(len(t["annotations"]) for t in tasks)
        assert counts.new_annotators == {}
        assert sorted(workspace.store.annotators()) == ["demo-ana", "demo-ben"]
        assert _resolution_shape(workspace) == before
        assert _human_values(workspace) == values
        assert 1 in before.values() and 2 in before.values()  # both kinds are at stake


def test_round_trip_preserves_every_decision(
    annotated: Workspace, small_videos: Path, tmp_path: Path
) -> None:
    tasks_path, config_path = write_labelstudio(annotated, tmp_path / "ls", users=TEAM)
    assert ET.parse(config_path).getroot().tag == "View"
    with Workspace.create(tmp_path / "fresh", video_root=small_videos) as fresh:
        fresh.scan()
        tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
        counts = import_export(fresh, tasks, users=TEAM)
        assert counts.decisions_added == len(_human_values(annotated))
        assert counts.new_annotators == {}
        assert _human_values(fresh) == _human_values(annotated)
        latest: dict[tuple[str, str, bool], str] = {}
        for d in annotated.store.current_decisions():
            key = (d.video_id, d.annotator, d.source == "consensus")
            latest[key] = max(latest.get(key, ""), d.decided_at)
        for d in fresh.store.current_decisions():
            assert d.decided_at == latest[d.video_id, d.annotator, d.source == "consensus"]
        assert (
            import_export(fresh, export_tasks(fresh, users=TEAM), users=TEAM).decisions_added == 0
        )


def test_a_fresh_workspace_takes_label_studio_users_under_their_emails(
    annotated: Workspace, small_videos: Path, tmp_path: Path
) -> None:
    """Nobody in an empty workspace can be a Label Studio user: each comes in under their
    e-mail, and the summary lists them."""
    tasks = export_tasks(annotated, users=TEAM)
    with Workspace.create(tmp_path / "fresh", video_root=small_videos) as fresh:
        fresh.scan()
        counts = import_export(fresh, tasks)
        per_email = {"ana@lab.org": 0, "ben@lab.org": 0, "carla@lab.org": 0}
        for task in tasks:
            for annotation in task["annotations"]:
                per_email[annotation["completed_by"]["email"]] += 1
        assert counts.new_annotators == per_email
        assert sorted(fresh.store.annotators()) == sorted(per_email)


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
    users = LabelStudioUsers(
        (*TEAM.mappings, UserMapping("ana@lab.org", user_id=7, where="a test"))
    )
    before = _dump(annotated)
    with pytest.raises(LabelStudioError) as caught:
        import_export(annotated, tasks, users=users)
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


def test_import_reports_progress_over_the_tasks(annotated: Workspace) -> None:
    tasks = export_tasks(annotated, users=TEAM) * 150  # 600 tasks: three progress steps
    seen: list[tuple[int, int]] = []
    import_export(
        annotated, tasks, users=TEAM, progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(0, 600), (256, 600), (512, 600), (600, 600)]


# --- who is who -----------------------------------------------------------------------------


def test_export_refuses_annotators_without_an_email_and_writes_nothing(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Label Studio answers `400 Unknown annotator's email ana` to an annotation by a name:
    every annotator needs their Label Studio user's e-mail, and all those missing are named."""
    with pytest.raises(LabelStudioError) as caught:
        write_labelstudio(
            annotated, tmp_path / "ls", users=LabelStudioUsers.gather(["ben=b@x.org"])
        )
    # ana: GOOD color and crowd, BAD color and resolution, NORMAL crowd and location
    # carla: NORMAL crowd (consensus) and activity
    assert caught.value.problems == ["ana: 6 decision(s)", "carla: 2 decision(s)"]
    assert "--email NAME=ADDRESS" in str(caught.value) and "nothing was written" in str(
        caught.value
    )
    assert not (tmp_path / "ls").exists()
    from vadscene.cli import run

    root = annotated.root
    annotated.close()
    assert run(["labelstudio-export", str(root), "--out", str(tmp_path / "ls")]) == 1
    err = capsys.readouterr().err
    assert "ana: 6 decision(s)" in err and "ben: " in err and "carla: 2 decision(s)" in err
    assert not (tmp_path / "ls").exists()


def test_export_takes_registry_emails_and_names_that_are_emails(annotated: Workspace) -> None:
    store = annotated.store
    store.register_annotator("Ana", email="Ana.Lopez@Lab.org")
    store.record_decision(ROAD, "crowd", "few", annotator="dora@lab.org")
    # a given e-mail wins over the registry's for the same annotator; names match canonically
    users = LabelStudioUsers.gather(["BEN=ben@lab.org", "carla=carla@lab.org"])
    tasks = export_tasks(annotated, users=users)
    who = {a["completed_by"]["email"] for task in tasks for a in task["annotations"]}
    assert who == {"ana.lopez@lab.org", "ben@lab.org", "carla@lab.org", "dora@lab.org"}
    # and back: the registry's e-mail and the given ones name the same annotators again
    with_ids = _as_label_studio_exports_it(
        tasks,
        {"ana.lopez@lab.org": 1, "ben@lab.org": 2, "carla@lab.org": 3, "dora@lab.org": 4},
    )
    ls_users = LabelStudioUsers(
        (
            *users.mappings,
            UserMapping("Ana.Lopez@lab.org", user_id=1),
            UserMapping("ben@lab.org", user_id=2),
            UserMapping("carla@lab.org", user_id=3),
            UserMapping("dora@lab.org", user_id=4),
        )
    )
    before = _resolution_shape(annotated)
    counts = import_export(annotated, with_ids, users=ls_users)
    assert counts.new_annotators == {}
    assert _resolution_shape(annotated) == before
    assert sorted(store.annotators()) == ["ana", "ben", "carla", "dora@lab.org"]


def test_users_files_in_each_format(tmp_path: Path) -> None:
    csv_file = _users_file(
        tmp_path,
        "\ufeffName,E-mail,Email,ID\nana,,ana@lab.org,2\n\n Ben ,,ben@lab.org,\n",
        "team.csv",
    )
    object_file = _users_file(tmp_path, {"carla": "carla@lab.org"}, "team.json")
    list_file = _users_file(tmp_path, LABEL_STUDIO_USERS)
    users = LabelStudioUsers.gather(["dora=d@lab.org"], [csv_file, object_file, list_file])
    assert [(m.name, m.email, m.user_id, m.where) for m in users.mappings] == [
        ("dora", "d@lab.org", None, "--email dora=d@lab.org"),
        ("ana", "ana@lab.org", 2, f"{csv_file}, line 2"),
        ("Ben", "ben@lab.org", None, f"{csv_file}, line 4"),
        ("carla", "carla@lab.org", None, f"{object_file}, key 'carla'"),
        (None, "dora@lab.org", 10, f"{list_file}, entry 0"),
        (None, "lead@lab.org", 11, f"{list_file}, entry 1"),
    ]


def test_bad_mappings_are_listed_together(tmp_path: Path) -> None:
    csv_file = _users_file(
        tmp_path, "name,email,id\nana,not-an-address,\n,b@x.org,\n,c@x.org,7x\n", "t.csv"
    )
    no_header = _users_file(tmp_path, "ana,ana@x.org\n", "h.csv")
    json_file = _users_file(tmp_path, [{"email": "a@x.org", "id": True}, "ana", {"name": "x"}])
    with pytest.raises(LabelStudioError) as caught:
        LabelStudioUsers.gather(
            ["ana", "ana=", "ana=ana at lab"],
            [
                csv_file,
                no_header,
                json_file,
                tmp_path / "none.csv",
                _users_file(tmp_path, "", "u.txt"),
            ],
        )
    assert caught.value.problems == [
        "--email ana: expected NAME=ADDRESS, e.g. ana=ana@lab.org",
        "--email ana=: expected NAME=ADDRESS, e.g. ana=ana@lab.org",
        "--email ana=ana at lab: 'ana at lab' is not an e-mail address",
        f"{csv_file}, line 2: expected an e-mail address, got 'not-an-address'",
        f"{csv_file}, line 3: expected a name or a Label Studio user id beside the e-mail",
        f"{csv_file}, line 4: expected a Label Studio user id (a whole number), got '7x'",
        f"{no_header}: line 1 must name the columns name and email (optional: id)",
        f"{json_file}, entry 0: expected a Label Studio user id (a whole number), got True",
        f"{json_file}, entry 1: expected an e-mail address, got None",
        f"{json_file}, entry 2: expected an e-mail address, got None",
        f"{tmp_path / 'none.csv'}: users file not found",
        f"{tmp_path / 'u.txt'}: expected a .csv or .json users file: {USERS_HELP}",
    ]


def test_contradictory_mappings_are_refused(annotated: Workspace) -> None:
    annotated.store.register_annotator("carla", email="carla@lab.org")
    users = LabelStudioUsers(
        (
            UserMapping("a1@lab.org", name="ana", where="--email ana=a1@lab.org"),
            UserMapping("a2@lab.org", name="ANA", where="--email ANA=a2@lab.org"),
            UserMapping("carla@lab.org", name="ben", where="--email ben=carla@lab.org"),
            UserMapping("x@lab.org", user_id=5, where="users.json, entry 0"),
            UserMapping("y@lab.org", user_id=5, where="users.json, entry 1"),
            UserMapping("z@lab.org", name="auto", where="--email auto=z@lab.org"),
        )
    )
    with pytest.raises(LabelStudioError) as caught:
        export_tasks(annotated, users=users)
    assert caught.value.problems == [
        "--email ANA=a2@lab.org: maps 'ANA' to a2@lab.org, but --email ana=a1@lab.org maps "
        "it to a1@lab.org",
        "--email auto=z@lab.org: 'auto' is measurement, not a user",
        "the annotator registry ('carla'): maps 'carla' to carla@lab.org, which --email "
        "ben=carla@lab.org gives 'ben'; one Label Studio user is one annotator",
        "users.json, entry 1: gives Label Studio user 5 the e-mail y@lab.org, but users.json, "
        "entry 0 gives it x@lab.org",
    ]


# --- frame rate -----------------------------------------------------------------------------


def test_label_studio_counts_the_frames_of_a_360_frame_clip(tmp_path: Path) -> None:
    """Label Studio's frame counter shows ceil(duration × frameRate) (its video player's
    `Math.ceil(n.duration*v)`, with v read from `frameRate`); its default rate of 24 made a
    360-frame clip at 30 fps read 288. The config takes the rate from each task's data."""
    clip = write_video(tmp_path / "videos" / "Arrest001_x264.mp4", "libx264", frames=360, fps=30)
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        duration = float(stream.duration * stream.time_base)  # what a browser reports
    with Workspace.create(tmp_path / "ws", video_root=tmp_path / "videos") as workspace:
        workspace.scan()
        view = ET.fromstring(labeling_config(workspace.catalogue))
        (task,) = export_tasks(workspace)
    rate_field = view.find("Video").get("frameRate")
    assert rate_field.startswith("$")
    frame_rate = task["data"][rate_field[1:]]
    assert math.ceil(duration * frame_rate) == 360
    assert math.ceil(duration * 24) == 288  # the count without a frameRate


# --- CLI ------------------------------------------------------------------------------------


def test_cli_round_trip_through_label_studio_files(
    annotated: Workspace, tmp_path: Path, small_videos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.cli import run

    team_csv = _users_file(tmp_path, "name,email\nana,ana@lab.org\nben,ben@lab.org\n", "team.csv")
    mapping = ["--users", str(team_csv), "--email", "carla=carla@lab.org"]
    out_dir = tmp_path / "ls"
    assert run(["labelstudio-export", str(annotated.root), "--out", str(out_dir), *mapping]) == 0
    assert {p.name for p in out_dir.iterdir()} == {"tasks.json", "labeling_config.xml"}
    with Workspace.create(tmp_path / "other", video_root=small_videos) as other:
        other.scan()
        other.store.record_decision(ROAD, "crowd", "few", annotator="ana")
    tasks_file = str(out_dir / "tasks.json")
    capsys.readouterr()
    assert run(["labelstudio-import", str(tmp_path / "other"), tasks_file, *mapping]) == 0
    assert "decisions added" in capsys.readouterr().out
    with Workspace.open(tmp_path / "other") as other:
        assert _human_values(other) == {
            **_human_values(annotated),
            (ROAD, "crowd", "ana"): ("few", "manual"),
        }
    # without the mapping, each user could be any of the annotators now here: refused
    assert run(["labelstudio-import", str(tmp_path / "other"), tasks_file]) == 1
    err = capsys.readouterr().err
    assert "ben@lab.org" in err and "whose e-mail is unknown (ana, ben, carla)" in err
    assert run(["labelstudio-import", str(tmp_path / "other"), str(tmp_path / "nope.json")]) == 1
    bad = ["labelstudio-import", str(tmp_path / "other"), tasks_file, "--email", "ana"]
    assert run(bad) == 1
    assert "--email ana: expected NAME=ADDRESS" in capsys.readouterr().err


def test_cli_import_lists_newcomers(
    annotated: Workspace, tmp_path: Path, small_videos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.cli import run

    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps(export_tasks(annotated, users=TEAM)), "utf-8")
    with Workspace.create(tmp_path / "fresh", video_root=small_videos) as fresh:
        fresh.scan()
    capsys.readouterr()
    assert run(["labelstudio-import", str(tmp_path / "fresh"), str(tasks_file)]) == 0
    out = capsys.readouterr().out
    assert "new annotators, named by their Label Studio e-mail" in out
    assert (
        "ana@lab.org (3 annotations), ben@lab.org (3 annotations), carla@lab.org (2 annotations)"
        in out
    )
