"""`--json` on export, validate, diff, import and audit: one JSON document on stdout and
nothing else there, its values checked against the files and the store, read directly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import ABUSE, copy_demo
from sklearn.metrics import roc_auc_score

from vadscene.cli import run
from vadscene.store.workspace import Workspace


def _json(capsys: pytest.CaptureFixture[str], *args: str | Path, code: int = 0) -> dict:
    """The one JSON document a command printed; stderr holds nothing (no progress bar is
    drawn off a terminal) but the audit's warnings."""
    assert run([str(a) for a in args]) == code
    captured = capsys.readouterr()
    assert all(line.startswith("warning: ") for line in captured.err.splitlines()), captured.err
    return json.loads(captured.out)  # anything else on stdout fails to parse


@pytest.mark.parametrize(
    "args",
    [
        ["status", "{tmp}/nothing"],
        ["export", "{tmp}/nothing", "--out", "{tmp}/r.json"],
        ["diff", "{tmp}/a.json", "{tmp}/b.json"],
        ["import", "{tmp}/ws", "{tmp}/none.json"],
        ["audit", "--gt", "{tmp}/none.txt", "--out", "{tmp}/report"],
    ],
)
def test_a_failure_with_json_is_one_line_on_stderr_and_nothing_on_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    assert run([*(a.format(tmp=tmp_path) for a in args), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and captured.err.startswith("error: ")


def _decisions(release: dict) -> int:
    """Decision rows in a release file: every decision and every withdrawal."""
    return sum(
        len(assignment["decisions"])
        for video in release["videos"]
        for assignment in video["factors"].values()
    ) + sum(len(video["withdrawn_decisions"]) for video in release["videos"])


@pytest.fixture
def exported(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, dict, dict]:
    """The annotated workspace exported with --json: (release file, its data, the document)."""
    release = tmp_path / "out" / "r.json"
    document = _json(
        capsys,
        "export",
        annotated.root,
        "--out",
        release,
        "--csv",
        tmp_path / "r.csv",
        "--parquet",
        tmp_path / "r.parquet",
        "--json",
    )
    return release, json.loads(release.read_text(encoding="utf-8")), document


def test_export_json_names_the_files_and_counts(
    exported: tuple[Path, dict, dict], tmp_path: Path
) -> None:
    release, data, document = exported
    assert document == {
        "release": str(release),
        "schema": str(release.parent / "release-v2.schema.json"),
        "csv": str(tmp_path / "r.csv"),
        "parquet": str(tmp_path / "r.parquet"),
        "dataset": data["dataset"],
        "videos": 4,
        "annotators": ["ana", "ben", "carla"],
        "selection": {"mode": "consensus", "annotator": None},
    }
    assert len(data["videos"]) == 4 and data["annotators"] == ["ana", "ben", "carla"]
    assert all(Path(document[k]).is_file() for k in ("release", "schema", "csv", "parquet"))


def test_validate_json_of_a_valid_release(
    exported: tuple[Path, dict, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    release, data, _ = exported
    assert _json(capsys, "validate", release, "--json") == {
        "file": str(release),
        "valid": True,
        "dataset": data["dataset"],
        "videos": len(data["videos"]),
        "schema_version": data["schema_version"],
        "annotators": data["annotators"],
    }


def test_validate_json_of_an_invalid_release_lists_the_problems_and_exits_1(
    exported: tuple[Path, dict, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, data, _ = exported
    del data["created_at"]
    data["videos"][1]["num_frames"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert run(["validate", str(bad), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.err == ""
    document = json.loads(captured.out)
    assert document["file"] == str(bad) and document["valid"] is False
    assert document["error"] == f"{bad}: invalid release"
    assert sorted(p.split(":")[0] for p in document["problems"]) == [
        "$.created_at",
        "$.videos[1].num_frames",
    ]

    missing = tmp_path / "none.json"
    assert _json(capsys, "validate", missing, "--json", code=1) == {
        "file": str(missing),
        "valid": False,
        "error": f"{missing}: release file not found",
        "problems": [],
    }


def test_diff_json_lists_a_hand_made_edit(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert run(["export", str(annotated.root), "--out", str(old)]) == 0
    # ABUSE: ana and ben agreed on grayscale; ana changes her mind, so they disagree.
    annotated.store.record_decision(ABUSE, "color", "color", annotator="ana")
    assert run(["export", str(annotated.root), "--out", str(new)]) == 0
    capsys.readouterr()
    document = _json(capsys, "diff", old, new, "--json")
    assert document["old"] == str(old) and document["new"] == str(new)
    assert document["catalogue_changed"] is False and document["videos"] == []
    assert document["decisions"] == [
        {
            "video_id": ABUSE,
            "factor": "color",
            "annotator": "ana",
            "old_value": "grayscale",
            "new_value": "color",
            "old_source": "manual",
            "new_source": "manual",
        }
    ]
    assert document["values"] == [
        {
            "video_id": ABUSE,
            "factor": "color",
            "old_value": "grayscale",
            "new_value": None,
            "old_resolution": "agreement",
            "new_resolution": "disagreement",
        }
    ]
    # color's contrast is color (⊕) vs grayscale (⊖): one grayscale video fewer, one unresolved
    support = {(r["factor"], r["count"]): r for r in document["support"]}
    assert set(support) == {("color", "n_negative"), ("color", "n_unresolved")}
    negative, unresolved = support["color", "n_negative"], support["color", "n_unresolved"]
    assert (negative["positive"], negative["negative"]) == ("color", "grayscale")
    assert (negative["new"] - negative["old"], negative["delta"]) == (-1, -1)
    assert (unresolved["new"] - unresolved["old"], unresolved["delta"]) == (1, 1)


def test_import_json_creates_then_merges(
    exported: tuple[Path, dict, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release, data, _ = exported
    target = tmp_path / "new-ws"
    assert _json(capsys, "import", target, release, "--json") == {
        "workspace": str(target),
        "release": str(release),
        "created": True,
        "videos": len(data["videos"]),
        "decisions": _decisions(data),
    }
    merged = _json(capsys, "import", target, release, "--json")
    assert merged == {
        "workspace": str(target),
        "release": str(release),
        "created": False,
        "videos_added": 0,
        "decisions_added": 0,
        "decisions_already_present": _decisions(data),
        "marks_added": 0,
        "measurements_updated": 0,
        "rules_updated": 0,
        "assignments_added": 0,
        "conflicts": [],
        "added_by_annotator": {},
    }


def test_import_json_reports_a_conflict(
    exported: tuple[Path, dict, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The release's ana said grayscale on ABUSE; the workspace's ana since says color: the
    import keeps hers current and reports the older imported value."""
    release, data, _ = exported
    target = tmp_path / "ws"
    assert run(["import", str(target), str(release)]) == 0
    with Workspace.open(target) as ws:
        ws.store.record_decision(ABUSE, "color", "color", annotator="ana")
    older = json.loads(json.dumps(data))
    video = next(v for v in older["videos"] if v["video_id"] == ABUSE)
    ana = next(d for d in video["factors"]["color"]["decisions"] if d["annotator"] == "ana")
    ana["decided_at"] = "2026-01-01T00:00:00.000001Z"  # another, older decision of hers
    again = tmp_path / "older.json"
    again.write_text(json.dumps(older), encoding="utf-8")
    capsys.readouterr()
    document = _json(capsys, "import", target, again, "--json")
    assert document["decisions_added"] == 1
    assert document["added_by_annotator"] == {"ana": 1}
    [conflict] = document["conflicts"]
    assert (conflict["kind"], conflict["video_id"], conflict["key"], conflict["annotator"]) == (
        "decision",
        ABUSE,
        "color",
        "ana",
    )
    assert (conflict["imported_value"], conflict["local_value"]) == ("grayscale", "color")


def test_audit_json_is_the_summary_and_the_report_is_written(
    demo_template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = copy_demo(demo_template, tmp_path / "demo")
    out = tmp_path / "report"
    document = _json(
        capsys,
        "audit",
        "--workspace",
        demo,
        "--models",
        demo / "benchmark" / "models.json",
        "--bootstrap",
        "20",
        "--out",
        out,
        "--json",
    )
    assert set(document) == {
        "summary",
        "scene_coverage",
        "models",
        "definition_probes",
        "warnings",
        "report",
    }
    assert all(Path(p).is_file() and out in Path(p).parents for p in document["report"].values())
    assert document["report"]["report.json"] == str(out / "report.json")
    frames = labels = 0
    truth = []
    for line in (demo / "benchmark" / "ground_truth.txt").read_text().splitlines():
        name, _category, *bounds = line.split()
        scores = np.load(
            demo / "benchmark" / "scores" / "localizer" / f"{name.removesuffix('.mp4')}.npy"
        )
        anomalous = np.zeros(scores.size, bool)
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            if int(start) >= 0:
                anomalous[int(start) : int(end)] = True
        truth.append((anomalous, scores))
        frames += scores.size
        labels += int(anomalous.sum())
    summary = document["summary"]
    assert (summary["videos"], summary["frames"], summary["anomalous_frames"]) == (
        len(truth),
        frames,
        labels,
    )
    models = {m["model"]: m for m in document["models"]}
    assert set(models) == {"grayscale_keyed", "localizer", "video_constant", "random_baseline"}
    expected = roc_auc_score(
        np.concatenate([a for a, _ in truth]), np.concatenate([s for _, s in truth])
    )
    localizer = models["localizer"]
    assert abs(localizer["micro_auroc"] - expected) < 1e-12
    assert localizer["ci_low"] <= localizer["micro_auroc"] <= localizer["ci_high"]


def test_audit_json_without_bootstrap_has_null_intervals(
    demo_template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = copy_demo(demo_template, tmp_path / "demo")
    document = _json(
        capsys,
        "audit",
        "--workspace",
        demo,
        "--models",
        demo / "benchmark" / "models.json",
        "--bootstrap",
        "0",
        "--out",
        tmp_path / "r",
        "--json",
    )
    assert all(m["ci_low"] is None and m["ci_high"] is None for m in document["models"])
