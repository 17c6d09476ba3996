"""The Audit page reads only inside the workspace, the paths its models.json and probes.json
files list as well as those typed: an absolute path, a ``../`` escape, a symlink out (of an
entry or of the list itself) is refused by a one-line message naming the list, the entry and
the path, and nothing of the outside file reaches the page. `vadscene audit` still reads a
list as written. Run headless with AppTest on a copy of the demo workspace."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers import copy_demo
from sklearn.metrics import roc_auc_score
from streamlit.testing.v1 import AppTest

from vadscene.cli import run
from vadscene.core.paths import app_entry_point

MARKER = "SECRET-MARKER-7f3a"
"""Written into every outside file: it must never appear on the page."""
REFUSAL = "the app reads only files inside the workspace"


@pytest.fixture
def demo_app(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = copy_demo(demo_template, tmp_path / "demo").resolve()  # as the messages name it
    (root / "extra").mkdir()
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(root))
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, outside it, of files that each hold :data:`MARKER`."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.csv").write_text(f"video,frame,score\n{MARKER},0,0.5\n")
    (folder / "defs.csv").write_text(f"video,frame,definition,score\n{MARKER},0,Arson,0.5\n")
    (folder / "events.csv").write_text(f"video,start,end,class\n{MARKER},0,10,Arson\n")
    (folder / "queries.json").write_text(json.dumps([{"definition": MARKER, "classes": [MARKER]}]))
    (folder / "features").mkdir()
    (folder / "features" / f"{MARKER}.npy").write_text(MARKER)
    return folder


def _page_text(app: AppTest) -> str:
    """Everything the page shows: each element's message, tables' data included."""

    def walk(node: object) -> Iterator[str]:
        yield str(getattr(node, "proto", ""))
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    return "\n".join(text for part in (app.main, app.sidebar) for text in walk(part))


def _run_page(root: Path, *, models: list[Path], probes: list[Path]) -> AppTest:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=120).run()
    app.switch_page("app_pages/audit.py").run()
    assert not app.exception
    app.multiselect(key="audit_model_lists").set_value(models)
    app.multiselect(key="audit_probe_lists").set_value(probes)
    app.number_input(key="audit_bootstrap").set_value(0)
    app.button(key="audit_run").click().run()
    assert not app.exception
    return app


def _assert_refused(app: AppTest, *fragments: str) -> None:
    assert len(app.error) == 1
    message = app.error[0].value
    assert "\n" not in message
    for fragment in (*fragments, REFUSAL):
        assert fragment in message, message
    assert MARKER not in _page_text(app)
    assert "audit_result" not in app.session_state and not app.dataframe
    assert not app.get("vega_lite_chart") and not app.download_button


# Each case writes one list into the workspace's extra/ folder (from the workspace root and
# the outside folder) and returns the list, the entry the message names and the refused path.
Case = Callable[[Path, Path], tuple[Path, str, str]]


def _models_json(root: Path, entry_path: str) -> Path:
    path = root / "extra" / "models.json"
    path.write_text(json.dumps([{"name": "leak", "path": entry_path}]))
    return path


def _absolute(root: Path, outside: Path) -> tuple[Path, str, str]:
    target = str(outside / "secret.csv")
    return _models_json(root, target), "model 'leak'", target


def _relative_escape(root: Path, outside: Path) -> tuple[Path, str, str]:
    escape = f"../../{outside.name}/secret.csv"  # extra/ → workspace → its parent
    return _models_json(root, escape), "model 'leak'", str(root / "extra" / escape)


def _symlink_out(root: Path, outside: Path) -> tuple[Path, str, str]:
    (root / "extra" / "linked.csv").symlink_to(outside / "secret.csv")
    return _models_json(root, "linked.csv"), "model 'leak'", str(root / "extra" / "linked.csv")


def _list_symlinked_out(root: Path, outside: Path) -> tuple[Path, str, str]:
    # the list itself lives outside; the model it names carries the marker as its name
    real = outside / "models.json"
    real.write_text(
        json.dumps([{"name": MARKER, "path": str(root / "benchmark/scores/localizer")}])
    )
    link = root / "extra" / "models.json"
    link.symlink_to(real)
    return link, "models file", str(link)


@pytest.mark.parametrize(
    "case",
    [_absolute, _relative_escape, _symlink_out, _list_symlinked_out],
    ids=["absolute", "relative-escape", "symlink", "list-symlinked"],
)
def test_a_models_json_naming_an_outside_path_is_refused(
    demo_app: Path, outside: Path, case: Case
) -> None:
    models, entry, refused = case(demo_app, outside)
    app = _run_page(demo_app, models=[models], probes=[])
    _assert_refused(app, str(models), entry, refused)


def _probes_json(root: Path, entries: dict[str, object]) -> Path:
    path = root / "extra" / "probes.json"
    path.write_text(json.dumps(entries))
    return path


INSIDE_DEFINITIONS = [{"name": "inside", "path": "../benchmark/definition_scores/localizer"}]


def _definitions_out(root: Path, outside: Path) -> tuple[Path, str, str]:
    escape = f"../../{outside.name}/defs.csv"
    probes = _probes_json(root, {"definition_scores": [{"name": "leak", "path": escape}]})
    return probes, "definition scores 'leak'", str(root / "extra" / escape)


def _events_out(root: Path, outside: Path) -> tuple[Path, str, str]:
    events = str(outside / "events.csv")
    probes = _probes_json(root, {"definition_scores": INSIDE_DEFINITIONS, "events": events})
    return probes, "events", events


def _queries_out(root: Path, outside: Path) -> tuple[Path, str, str]:
    (root / "extra" / "queries.json").symlink_to(outside / "queries.json")
    probes = _probes_json(
        root, {"definition_scores": INSIDE_DEFINITIONS, "queries": "queries.json"}
    )
    return probes, "queries", str(root / "extra" / "queries.json")


def _features_out(root: Path, outside: Path) -> tuple[Path, str, str]:
    features = str(outside / "features")
    probes = _probes_json(root, {"features": [{"name": "leak", "path": features}]})
    return probes, "features 'leak'", features


@pytest.mark.parametrize(
    "case",
    [_definitions_out, _events_out, _queries_out, _features_out],
    ids=["definition-scores", "events", "queries-symlink", "features"],
)
def test_a_probes_json_naming_an_outside_path_is_refused(
    demo_app: Path, outside: Path, case: Case
) -> None:
    probes, entry, refused = case(demo_app, outside)
    app = _run_page(demo_app, models=[], probes=[probes])
    _assert_refused(app, str(probes), entry, refused)


def _pooled_auroc(root: Path, scores: Path) -> float:
    """Frame AUROC of the .npy folder ``scores`` over all videos, by hand from the demo's
    UCF-Crime style ground truth (intervals end exclusively) and frame counts."""
    benchmark = root / "benchmark"
    counts = dict(line.split() for line in (benchmark / "frame_counts.txt").open())
    labels, values = [], []
    for name, _category, *bounds in (
        line.split() for line in (benchmark / "ground_truth.txt").open()
    ):
        video = name.removesuffix(".mp4")
        frames = np.zeros(int(counts[video]), dtype=bool)
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            if int(start) >= 0:
                frames[int(start) : int(end)] = True
        labels.append(frames)
        values.append(np.load(scores / f"{video}.npy"))
    return float(roc_auc_score(np.concatenate(labels), np.concatenate(values)))


def test_lists_whose_paths_all_lie_inside_run(demo_app: Path) -> None:
    """Relative paths into the workspace and a symlink that stays inside it are read."""
    scores = demo_app / "benchmark" / "scores"
    (demo_app / "extra" / "linked").symlink_to(scores / "video_constant")
    models = demo_app / "extra" / "models.json"
    models.write_text(
        json.dumps(
            [
                {"name": "kept_localizer", "path": "../benchmark/scores/localizer"},
                {"name": "kept_linked", "path": "linked"},
            ]
        )
    )
    probes = _probes_json(
        demo_app,
        {"definition_scores": INSIDE_DEFINITIONS, "queries": "../benchmark/queries.json"},
    )
    app = _run_page(demo_app, models=[models], probes=[probes])
    assert not app.error
    assert app.get("vega_lite_chart") and app.download_button  # what a refusal leaves out
    result = app.session_state["audit_result"]
    assert result.models == ("kept_localizer", "kept_linked")
    assert all(name in _page_text(app) for name in result.models)  # the text the refusals check
    micro = dict(zip(result.controls["model"], result.controls["micro"], strict=True))
    assert micro["kept_localizer"] == pytest.approx(_pooled_auroc(demo_app, scores / "localizer"))
    assert micro["kept_linked"] == pytest.approx(_pooled_auroc(demo_app, scores / "video_constant"))
    assert not result.definition_probes.empty


def test_the_cli_still_reads_a_list_naming_a_path_outside_the_workspace(
    demo_app: Path, tmp_path: Path
) -> None:
    """The confinement is the page's: `vadscene audit --workspace` reads what a list names."""
    copied = shutil.copytree(demo_app / "benchmark" / "scores" / "localizer", tmp_path / "away")
    models = _models_json(demo_app, f"../../{copied.name}")
    out = tmp_path / "report"
    code = run(
        [
            "audit",
            "--workspace",
            str(demo_app),
            "--models",
            str(models),
            "--bootstrap",
            "0",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert [m["name"] for m in report["conventions"]["models"]] == ["leak"]
