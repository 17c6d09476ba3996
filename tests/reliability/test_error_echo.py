"""Error messages name the file and what was expected, never the file's content.

Issue 14 item 4: a path typed into the Audit page or given on the command line may be any file
the user (or a page framing the app) can name — a passwd file, a private key, a CSV of secrets.
Each case names such a file as ground truth, frame counts, scores, model/probe list, queries,
catalogue, release or label table, and checks — through the CLI (stdout + stderr) and through
the Python API (the exception message) — that the secret text does not appear while the file
path and the expected format do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from vadscene import cli
from vadscene.audit.io.definitions import load_queries
from vadscene.audit.io.sources import read_model_list, read_probe_list
from vadscene.benchmark.ground_truth import load_frame_counts, load_ground_truth
from vadscene.benchmark.video_lists import read_video_list
from vadscene.core.catalogue import load_catalogue
from vadscene.core.errors import VadsceneError
from vadscene.release.releases import read_release
from vadscene.release.tables import read_label_table

SECRET = "s3cr3tT0ken"

PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\n"
    f"{SECRET}:x:1000:1000:{SECRET}:/home/{SECRET}:/bin/bash\n"
    f"{SECRET} x 1000 1000 /home/{SECRET}\n"
)
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    f"b3BlbnNzaC1rZXktdjEAAAAA{SECRET} 12 x\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
SECRET_CSV = f"api_key_{SECRET},password\nabc,{SECRET}\n"


@dataclass(frozen=True)
class Case:
    name: str
    file_name: str
    content: str
    api: Callable[[Path], object]
    cli: Callable[[Path, Path], list[str]] | None
    expected: str  # words of what was expected, which must appear


def _gt(path: Path) -> object:
    return load_ground_truth(path, format="ucf-crime", frame_counts={"v": 10})


def _good_gt(tmp: Path) -> Path:
    gt = tmp / "gt.json"
    gt.write_text(
        json.dumps(
            {
                "Abuse001_x264": {"num_frames": 4, "labels": [0, 1, 1, 0]},
                "Normal_Videos_001_x264": {"num_frames": 3, "labels": [0, 0, 0]},
            }
        )
    )
    return gt


def _audit(tmp: Path, *extra: str) -> list[str]:
    return ["audit", "--out", str(tmp / "report"), "--bootstrap", "0", *extra]


CASES = [
    Case(
        "ground_truth_passwd",
        "passwd",
        PASSWD,
        _gt,
        lambda path, tmp: _audit(tmp, "--gt", str(path), "--gt-format", "ucf-crime"),
        "expected",
    ),
    Case(
        "ground_truth_key",
        "id_ed25519",
        PRIVATE_KEY,
        _gt,
        lambda path, tmp: _audit(tmp, "--gt", str(path), "--gt-format", "ucf-crime"),
        "expected",
    ),
    Case(
        "frame_counts_key",
        "id_rsa",
        PRIVATE_KEY,
        load_frame_counts,
        None,
        "expected '<video> <frames>'",
    ),
    Case(
        "ground_truth_secret_csv_header",
        "secrets.csv",
        SECRET_CSV,
        lambda path: load_ground_truth(path, format="table"),
        lambda path, tmp: _audit(tmp, "--gt", str(path), "--gt-format", "table"),
        "missing column",
    ),
    Case(
        "ground_truth_json_secret_key",
        "gt.json",
        json.dumps({SECRET: {"token": SECRET}}),
        lambda path: load_ground_truth(path, format="json"),
        lambda path, tmp: _audit(tmp, "--gt", str(path)),
        "entry 1: expected",
    ),
    Case(
        "ground_truth_table_secret_spellings",
        "gt.csv",
        f"video,frame,label\na/{SECRET},0,0\nb/{SECRET},0,1\n",
        lambda path: load_ground_truth(path, format="table"),
        lambda path, tmp: _audit(tmp, "--gt", str(path)),
        "one row per video and frame is expected",
    ),
    Case(
        "ground_truth_table_secret_categories",
        "gt.csv",
        f"video,frame,label,category\nv,0,0,{SECRET}\nv,1,1,x{SECRET}\n",
        lambda path: load_ground_truth(path, format="table"),
        lambda path, tmp: _audit(tmp, "--gt", str(path)),
        "must be constant per video",
    ),
    Case(
        "video_list_passwd_paths",
        "order.txt",
        f"/home/{SECRET}/bin/bash\n/usr/{SECRET}/bash\n",
        read_video_list,
        None,
        "lines 1 and 2 name one video",
    ),
    Case(
        "scores_secret_csv_header",
        "secrets.csv",
        SECRET_CSV,
        None,  # set below: needs a ground truth
        lambda path, tmp: _audit(tmp, "--gt", str(_good_gt(tmp)), "--scores", f"m={path}"),
        "missing column",
    ),
    Case(
        "models_json_secret_value",
        "models.json",
        json.dumps([{"name": "m", "path": "p", "snippet_repeat": SECRET}]),
        read_model_list,
        lambda path, tmp: _audit(tmp, "--gt", str(_good_gt(tmp)), "--models", str(path)),
        "snippet_repeat",
    ),
    Case(
        "models_json_secret_key",
        "models.json",
        json.dumps([{"name": SECRET}]),
        read_model_list,
        lambda path, tmp: _audit(tmp, "--gt", str(_good_gt(tmp)), "--models", str(path)),
        "expected a JSON list",
    ),
    Case(
        "models_json_duplicate_secret_key",
        "models.json",
        '[{"name": "m", "' + SECRET + '": 1, "' + SECRET + '": 2}]',
        read_model_list,
        lambda path, tmp: _audit(tmp, "--gt", str(_good_gt(tmp)), "--models", str(path)),
        "appears twice",
    ),
    Case(
        "probes_json_secret",
        "probes.json",
        json.dumps({"features": [{"name": SECRET, "path": 7}]}),
        read_probe_list,
        None,
        "expected a JSON object",
    ),
    Case(
        "queries_json_secret",
        "queries.json",
        '[{"definition": "d", "classes": ["a"], "definition": "' + SECRET + '"}]',
        load_queries,
        None,
        "appears twice",
    ),
    Case(
        "catalogue_yaml_passwd",
        "catalogue.yaml",
        PASSWD,
        load_catalogue,
        None,
        "invalid catalogue",
    ),
    Case(
        "catalogue_yaml_syntax",
        "catalogue.yaml",
        f"factors: [{SECRET}\n  key: {SECRET}: x\n",
        load_catalogue,
        None,
        "not valid YAML",
    ),
    Case(
        "catalogue_yaml_secret_value",
        "catalogue.yaml",
        f"dataset: x\nfactors: {SECRET}\n",
        load_catalogue,
        None,
        "factors",
    ),
    Case(
        "release_secret_version",
        "release.json",
        json.dumps({"schema_version": SECRET}),
        read_release,
        lambda path, tmp: ["validate", str(path)],
        "schema version",
    ),
    Case(
        "release_secret_field",
        "release.json",
        json.dumps({"schema_version": "1.0", "dataset": {SECRET: SECRET}}),
        read_release,
        lambda path, tmp: ["validate", str(path)],
        "$.",
    ),
    Case(
        "label_table_secret_header",
        "secrets.csv",
        SECRET_CSV,
        lambda path: read_label_table(path, load_catalogue()),
        lambda path, tmp: _audit(tmp, "--gt", str(_good_gt(tmp)), "--labels", str(path)),
        "no video column",
    ),
]


def _scores_api(path: Path) -> object:
    from vadscene.audit.io.scores import load_scores

    ground_truth = load_ground_truth(_good_gt(path.parent), format="json")
    return load_scores(path, ground_truth, name="m")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_python_api_names_the_file_not_its_content(case: Case, tmp_path: Path) -> None:
    path = tmp_path / case.file_name
    path.write_text(case.content)
    api = case.api or _scores_api
    with pytest.raises(VadsceneError) as info:
        api(path)
    message = str(info.value)
    assert SECRET not in message, message
    assert str(path) in message, message
    assert case.expected in message, message


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.cli is not None], ids=[c.name for c in CASES if c.cli]
)
def test_the_cli_names_the_file_not_its_content(case: Case, tmp_path: Path, capsys) -> None:
    path = tmp_path / case.file_name
    path.write_text(case.content)
    code = cli.run(case.cli(path, tmp_path))
    out = capsys.readouterr()
    shown = out.out + out.err
    assert code == 1, shown
    assert SECRET not in shown, shown
    assert path.name in shown, shown
    assert case.expected in " ".join(shown.split()), shown
