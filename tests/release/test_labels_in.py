"""Scene labels from a spreadsheet (long or wide) or the export CSV read back give the same
audit as the release they were made from (issue 11, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROAD, copy_demo

from vadscene.audit import run_audit
from vadscene.audit.io.sources import gather_inputs, read_model_list
from vadscene.cli import run
from vadscene.core.catalogue import load_catalogue
from vadscene.release.releases import build_release, write_release
from vadscene.release.tables import LabelTableError, read_label_table
from vadscene.store.workspace import Workspace


@pytest.fixture(scope="module")
def demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_demo(demo_template, tmp_path_factory.mktemp("labels") / "demo")
    with Workspace.open(root) as workspace:
        write_release(
            build_release(workspace), root / "release.json", csv_path=root / "release.csv"
        )
    return root


def _release_values(demo: Path) -> list[tuple[str, str, str]]:
    """(video, factor, value) read straight from the release JSON, not through vadscene."""
    data = json.loads((demo / "release.json").read_text(encoding="utf-8"))
    return [
        (video["video_id"], key, assignment["value"])
        for video in data["videos"]
        for key, assignment in video["factors"].items()
        if assignment["value"] is not None
    ]


def _audit(demo: Path, **labels: Path) -> dict:
    truth, models, scene = gather_inputs(
        ground_truth=demo / "benchmark" / "ground_truth.txt",
        frame_counts=demo / "benchmark" / "frame_counts.txt",
        models=read_model_list(demo / "benchmark" / "models.json"),
        catalogue=demo / "catalogue.yaml",
        **labels,
    )
    report = run_audit(truth, models, scene, n_bootstrap=30, seed=4).to_dict()
    del report["conventions"]["scene_labels"]  # names the source, nothing else
    return report


def test_spreadsheets_give_the_same_report_as_the_release(demo: Path, tmp_path: Path) -> None:
    values = _release_values(demo)
    assert len({v for v, _, _ in values}) > 10
    long = tmp_path / "labels_long.csv"
    pd.DataFrame(values, columns=["video", "factor", "value"]).to_csv(long, index=False)
    wide = tmp_path / "labels_wide.tsv"
    pd.DataFrame(values, columns=["video", "factor", "value"]).pivot(
        index="video", columns="factor", values="value"
    ).reset_index().to_csv(wide, sep="\t", index=False)

    from_release = _audit(demo, release=demo / "release.json")
    assert len(from_release["bias"]) > 0
    assert _audit(demo, labels=long) == from_release
    assert _audit(demo, labels=wide) == from_release
    assert _audit(demo, labels=demo / "release.csv") == from_release  # export CSV read back


def test_cli_reads_a_label_table(demo: Path, tmp_path: Path) -> None:
    long = tmp_path / "labels.csv"
    pd.DataFrame(_release_values(demo), columns=["video_id", "factor", "value"]).to_csv(
        long, index=False
    )
    out = tmp_path / "report"
    code = run(
        [
            "audit",
            "--gt",
            str(demo / "benchmark" / "ground_truth.txt"),
            "--frame-counts",
            str(demo / "benchmark" / "frame_counts.txt"),
            "--models",
            str(demo / "benchmark" / "models.json"),
            "--labels",
            str(long),
            "--catalogue",
            str(demo / "catalogue.yaml"),
            "--bootstrap",
            "30",
            "--seed",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    del report["conventions"]["scene_labels"]
    assert report["bias"] == _audit(demo, release=demo / "release.json")["bias"]


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            "video,factor,value\nAbuse028_x264,colour,color\n",
            ["labels.csv: 1 problems", "row 2: unknown factor 'colour'", "has: color, "],
        ),
        (
            "video,factor,value\nAbuse028_x264,color,grey\n",
            ["row 2: 'grey' is not a value of color (values: color, grayscale, ambiguous)"],
        ),
        (
            "video,factor,value\nAbuse028_x264,color,color\nx/Abuse028_x264.mp4,color,grayscale\n",
            ["row 3: Abuse028_x264 has a second color value (first on row 2)"],
        ),
        ("video,colour\nAbuse028_x264,color\n", ["columns that are no factor: colour"]),
        (
            "name,color\nAbuse028_x264,color\n",
            ["no video column", "video_id or video", "the header has 2 column(s)"],
        ),
        ("video,factor,value,note\na,color,color,x\n", ["unexpected: note"]),
        ("video,color\nAbuse028_x264,\n", ["the label table holds no value"]),
    ],
)
def test_bad_label_tables_are_refused_with_the_row(
    tmp_path: Path, table: str, expected: list[str]
) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(table, encoding="utf-8")
    with pytest.raises(LabelTableError) as caught:
        read_label_table(path, load_catalogue())
    for part in expected:
        assert part in str(caught.value)


def test_wide_table_with_byte_order_mark_and_escaped_cells(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes(
        "\ufeffvideo,color,crowd\nAbuse028_x264,color,\n'-odd_name,grayscale,ambiguous\n".encode()
    )
    values = read_label_table(path, load_catalogue())
    assert values["color"] == {"Abuse028_x264": "color", "-odd_name": "grayscale"}
    assert values["crowd"] == {"-odd_name": "ambiguous"}


def test_label_studio_import_skips_comment_results_with_a_count(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One extra comment (textarea) result no longer refuses the whole export."""
    tasks = [
        {
            "data": {"video_id": ROAD},
            "annotations": [
                {
                    "completed_by": {"id": 3, "email": "ann@lab.org"},
                    "result": [
                        {
                            "from_name": "crowd",
                            "to_name": "video",
                            "type": "choices",
                            "value": {"choices": ["many"]},
                        },
                        {
                            "from_name": "comment",
                            "to_name": "video",
                            "type": "textarea",
                            "value": {"text": ["blurry at the start"]},
                        },
                    ],
                }
            ],
        }
    ]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    root = annotated.root
    annotated.close()
    assert run(["labelstudio-import", str(root), str(export), "--email", "ann=ann@lab.org"]) == 0
    out = capsys.readouterr().out
    assert "1 decisions added" in out
    assert "skipped results that are not choices (no factor decision): 1 textarea" in out
    with Workspace.open(root) as workspace:
        (decision,) = workspace.store.current_decisions(annotator="ann")
        assert (decision.video_id, decision.factor, decision.value) == (ROAD, "crowd", "many")


def test_cli_refuses_labels_naming_no_video_before_any_work(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = [(v.removesuffix("_x264"), f, x) for v, f, x in _release_values(demo)]
    table = tmp_path / "labels.csv"
    pd.DataFrame(short, columns=["video", "factor", "value"]).to_csv(table, index=False)
    out = tmp_path / "report"
    code = run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--models",
            str(demo / "benchmark" / "models.json"),
            "--labels",
            str(table),
            "--out",
            str(out),
        ]
    )
    assert code == 1 and not out.exists()
    err = capsys.readouterr().err
    assert "labelled videos match no video of the ground truth" in err
    assert "Arson001 (did you mean Arson001_x264?)" in err


def test_a_release_and_a_label_table_together_are_refused(demo: Path) -> None:
    from vadscene.benchmark.frames import AuditInputError

    with pytest.raises(AuditInputError, match=r"a release or a label table .* not both"):
        gather_inputs(
            ground_truth=demo / "benchmark" / "ground_truth.txt",
            release=demo / "release.json",
            labels=demo / "release.csv",
        )
