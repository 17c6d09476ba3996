"""The Label Studio round trip against a real Label Studio server (``label-studio`` 1.23 in its
own venv, on loopback): our labeling config makes a project, our tasks import with their
annotations and predictions, read back as written, and the server's own JSON exports come back
into vadscene with the same decisions under the same annotator names.

Skipped where Label Studio is not installed (``make test`` installs it), failed then under
``VADSCENE_REQUIRE_LABELSTUDIO=1`` (CI): :mod:`support.labelstudio_server`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser import chromium_page
from helpers import copy_demo, write_video
from support.labelstudio_server import (
    OWNER,
    PASSWORD,
    LabelStudio,
    LabelStudioAPIError,
    label_studio_server,
)
from support.serving import Server, app_process

from vadscene.cli import run
from vadscene.store.workspace import STORE_NAME, Workspace

pytestmark = pytest.mark.slow

EMAILS = {"demo-ana": "ana@lab.test", "demo-ben": "ben@lab.test"}
"""The demo's annotators and their Label Studio users."""
EMAIL_OPTIONS = [part for name, email in EMAILS.items() for part in ("--email", f"{name}={email}")]


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelStudio]:
    base = tmp_path_factory.mktemp("label-studio")
    with label_studio_server(base / "data", base / "server.log") as server:
        for email in EMAILS.values():
            server.add_user(email)
        yield server


def _human_values(root: Path) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(video, factor, annotator) → (value, source) of every current human decision."""
    with Workspace.open(root) as workspace:
        return {
            (d.video_id, d.factor, d.annotator): (d.value, d.source)
            for d in workspace.store.current_decisions()
            if d.value is not None and d.source != "auto"
        }


def _people_per_key(root: Path) -> dict[tuple[str, str], int]:
    """(video, factor) → how many people hold a current manual or override decision."""
    people: dict[tuple[str, str], set[str]] = {}
    with Workspace.open(root) as workspace:
        for d in workspace.store.current_decisions():
            if d.value is not None and d.source in ("manual", "override"):
                people.setdefault((d.video_id, d.factor), set()).add(d.annotator)
    return {key: len(names) for key, names in people.items()}


def _dump(root: Path) -> list[str]:
    with sqlite3.connect(root / STORE_NAME) as db:
        return list(db.iterdump())


def _fresh_workspace(template: Path, root: Path) -> Path:
    """A new workspace over the demo's videos, no decision in it."""
    with Workspace.create(root, video_root=template / "benchmark" / "videos") as workspace:
        workspace.scan()
    return root


def _what_each_user_said(
    tasks: list[dict[str, Any]], email_of: dict[Any, str]
) -> dict[str, set[tuple[str, bool, tuple[tuple[str, str], ...]]]]:
    """video id → {(user's e-mail, ground truth, sorted (factor, value) results)}."""
    said: dict[str, set[tuple[str, bool, tuple[tuple[str, str], ...]]]] = {}
    for task in tasks:
        for a in task["annotations"]:
            who = a["completed_by"]
            results = tuple(sorted((r["from_name"], r["value"]["choices"][0]) for r in a["result"]))
            said.setdefault(task["data"]["video_id"], set()).add(
                (
                    email_of[who["email"] if isinstance(who, dict) else who],
                    a["ground_truth"],
                    results,
                )
            )
    return said


@contextmanager
def _app_for(root: Path, origin: str, log: Path) -> Iterator[str]:
    """`vadscene app ROOT --allow-origin ORIGIN` on a free port; its address once it answers."""
    with app_process(root, log, "--allow-origin", origin) as port:
        yield f"http://127.0.0.1:{port}"


def _snapshot_export(server: LabelStudio, project: int) -> list[dict[str, Any]]:
    """An export snapshot with each annotation's user expanded to ``{id, email, ...}``."""
    options = {"annotations__completed_by": {"only_id": False}}
    export = server.api(
        "POST", f"/api/projects/{project}/exports/", {"serialization_options": options}
    )
    deadline = time.monotonic() + 60
    while export["status"] != "completed":
        assert export["status"] != "failed" and time.monotonic() < deadline, export
        time.sleep(0.3)
        export = server.api("GET", f"/api/projects/{project}/exports/{export['id']}")
    raw = server.request(
        "GET", f"/api/projects/{project}/exports/{export['id']}/download?exportType=JSON"
    )
    return list(json.loads(raw))


def test_round_trip_through_a_real_label_studio(
    label_studio: LabelStudio,
    demo_template: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = copy_demo(demo_template, tmp_path / "demo")
    original = _human_values(root)
    shape = _people_per_key(root)
    ls_origin = label_studio.url
    with _app_for(root, ls_origin, tmp_path / "app.log") as app_url:
        # Label Studio refuses an annotation by a name that is no user's e-mail, so without
        # the mapping our export stops before writing anything
        out = tmp_path / "ls"
        assert run(["labelstudio-export", str(root), "--out", str(out)]) == 1
        assert "demo-ana: " in capsys.readouterr().err and not out.exists()
        command = ["labelstudio-export", str(root), "--out", str(out), "--base-url", app_url]
        assert run([*command, *EMAIL_OPTIONS]) == 0
        tasks = json.loads((out / "tasks.json").read_text(encoding="utf-8"))
        config = (out / "labeling_config.xml").read_text(encoding="utf-8")

        project = label_studio.api(
            "POST", "/api/projects/", {"title": "vadscene round trip", "label_config": config}
        )["id"]
        # what the export wrote before annotators were mapped to e-mails
        annotated = next(t for t in tasks if t["annotations"])
        by_name = {
            **annotated,
            "annotations": [
                {**a, "completed_by": {"email": "demo-ana"}} for a in annotated["annotations"]
            ],
        }
        with pytest.raises(LabelStudioAPIError, match="Unknown annotator's email demo-ana"):
            label_studio.api("POST", f"/api/projects/{project}/import", [by_name])
        imported = label_studio.api("POST", f"/api/projects/{project}/import", tasks)
        assert (
            imported["task_count"],
            imported["annotation_count"],
            imported["prediction_count"],
        ) == (
            len(tasks),
            sum(len(t["annotations"]) for t in tasks),
            sum(len(t["predictions"]) for t in tasks),
        )

        # read back: the same data, the same annotations by the same users, the predictions
        stored = label_studio.api("GET", f"/api/projects/{project}/tasks/?page_size=1000")
        assert len(stored) == len(tasks)  # the refused import left nothing behind
        users = label_studio.api("GET", "/api/users/")
        email_of: dict[Any, str] = {u["id"]: u["email"] for u in users}
        email_of.update({u["email"]: u["email"] for u in users})
        assert {t["data"]["video_id"]: t["data"] for t in stored} == {
            t["data"]["video_id"]: t["data"] for t in tasks
        }
        assert _what_each_user_said(stored, email_of) == _what_each_user_said(tasks, email_of)
        assert {
            t["data"]["video_id"]: [(p["model_version"], p["result"]) for p in t["predictions"]]
            for t in stored
        } == {
            t["data"]["video_id"]: [(p["model_version"], p["result"]) for p in t["predictions"]]
            for t in tasks
        }
        # the video URLs Label Studio holds answer its origin, and only it
        for task in stored:
            path = task["data"]["video"].removeprefix(app_url)
            reply = Server(int(app_url.rsplit(":", 1)[1])).get(
                path, {"Origin": ls_origin, "Range": "bytes=0-99"}
            )
            assert reply.status == 206
            assert reply.headers["access-control-allow-origin"] == ls_origin

    # Label Studio's JSON export names users by numeric id: its user list maps them back
    export = tmp_path / "export.json"
    export.write_bytes(
        label_studio.request("GET", f"/api/projects/{project}/export?exportType=JSON")
    )
    assert all(
        isinstance(a["completed_by"], int)
        for t in json.loads(export.read_text())
        for a in t["annotations"]
    )
    users_file = tmp_path / "ls-users.json"
    users_file.write_text(json.dumps(users), encoding="utf-8")

    fresh = _fresh_workspace(root, tmp_path / "fresh")
    mapped = [*EMAIL_OPTIONS, "--users", str(users_file)]
    assert run(["labelstudio-import", str(fresh), str(export), *mapped]) == 0
    assert _human_values(fresh) == original

    # merged into the workspace it came from: nobody counts twice
    before = _dump(root)
    assert run(["labelstudio-import", str(root), str(export)]) == 1  # who is user 2?
    assert "Label Studio user 2 (" in capsys.readouterr().err
    assert _dump(root) == before
    assert run(["labelstudio-import", str(root), str(export), *mapped]) == 0
    assert _people_per_key(root) == shape
    assert _human_values(root) == original

    # a snapshot export carries the users' e-mails: the e-mail mapping alone suffices
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(_snapshot_export(label_studio, project)), encoding="utf-8")
    other = _fresh_workspace(root, tmp_path / "other")
    assert run(["labelstudio-import", str(other), str(snapshot), *EMAIL_OPTIONS]) == 0
    assert _human_values(other) == original


@pytest.mark.browser
def test_label_studio_plays_the_video_and_counts_its_frames(
    label_studio: LabelStudio, tmp_path: Path
) -> None:
    """In Label Studio's own labeling page (real Chromium), a 360-frame clip at 30 fps served
    by `vadscene app --allow-origin` plays and its frame counter reads "1 of 360" — it read
    "of 288" (its default of 24 fps) without the config's frameRate, and nothing played
    without the CORS header."""
    video_id = "Arrest001_x264"
    write_video(tmp_path / "videos" / f"{video_id}.mp4", "libx264", frames=360, fps=30)
    root = tmp_path / "ws"
    with Workspace.create(root, video_root=tmp_path / "videos") as workspace:
        workspace.scan()
        workspace.store.record_decision(video_id, "color", "color", annotator="demo-ana")
    with _app_for(root, label_studio.url, tmp_path / "app.log") as app_url:
        out = tmp_path / "ls"
        command = ["labelstudio-export", str(root), "--out", str(out), "--base-url", app_url]
        assert run([*command, *EMAIL_OPTIONS]) == 0
        config = (out / "labeling_config.xml").read_text(encoding="utf-8")
        project = label_studio.api(
            "POST", "/api/projects/", {"title": "frame counter", "label_config": config}
        )["id"]
        tasks = json.loads((out / "tasks.json").read_text(encoding="utf-8"))
        label_studio.api("POST", f"/api/projects/{project}/import", tasks)
        (task,) = label_studio.api("GET", f"/api/projects/{project}/tasks/")
        with chromium_page() as page:
            page.goto(f"{label_studio.url}/user/login/")
            page.fill("input[name=email]", OWNER)
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_load_state("networkidle")
            page.goto(f"{label_studio.url}/projects/{project}/data?task={task['id']}")
            # the counter says "of 1" until the player has the video's duration
            page.wait_for_function(
                "() => /^of ([2-9]|\\d\\d+)$/m.test(document.body.innerText)", timeout=60_000
            )
            counts = re.findall(r"^of (\d+)$", page.inner_text("body"), re.M)
    assert counts == ["360"]
