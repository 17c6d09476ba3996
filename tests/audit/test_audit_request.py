"""One audit request (vadscene.audit.request): what `vadscene audit` and the Audit page both
build, prepared into the inputs of run_audit, on the demo workspace."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import copy_demo

from vadscene.audit.io.scores import parse_scores_argument
from vadscene.audit.io.sources import ProbeList, read_probe_list
from vadscene.audit.report.summary import summary_line
from vadscene.audit.request import AuditRequest, AuditRequestError, prepare, write_outputs
from vadscene.benchmark.frames import AuditInputError
from vadscene.core.errors import VadsceneError


@pytest.fixture(scope="module")
def demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(demo_template, tmp_path_factory.mktemp("request") / "demo")


def _probes_copy(demo: Path, folder: Path, **changes: object) -> Path:
    """The demo's probes.json with ``changes``, written into ``folder`` beside links to the
    files it names (so its relative paths still resolve)."""
    benchmark = demo / "benchmark"
    entries = json.loads((benchmark / "probes.json").read_text()) | changes
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("definition_scores", "features", "queries.json"):
        link = folder / name
        if not link.exists():
            link.symlink_to(benchmark / name)
    path = folder / "probes.json"
    path.write_text(json.dumps(entries))
    return path


def test_read_probe_list_is_a_frozen_record_with_paths_beside_the_file(demo: Path) -> None:
    listed = read_probe_list(demo / "benchmark" / "probes.json")
    assert isinstance(listed, ProbeList)
    assert listed.source == demo / "benchmark" / "probes.json"
    assert [s.name for s in listed.definition_scores] == ["localizer", "video_constant"]
    assert [s.name for s in listed.features] == ["localizer", "video_constant"]
    assert listed.queries == demo / "benchmark" / "queries.json"
    assert listed.events is None
    assert listed.feature_snippet_frames == 16
    with pytest.raises(dataclasses.FrozenInstanceError):
        listed.queries = None  # type: ignore[misc]


def test_prepare_gathers_the_workspace_lists_and_probes(demo: Path) -> None:
    benchmark = demo / "benchmark"
    request = AuditRequest(
        workspace=demo,
        scores=(parse_scores_argument(f"first={benchmark}/scores/localizer"),),
        model_lists=(benchmark / "models.json",),
        probe_lists=(benchmark / "probes.json",),
        bootstrap=0,
    )
    prepared = prepare(request)
    names = [m.name for m in prepared.models]
    listed = [e["name"] for e in json.loads((benchmark / "models.json").read_text())]
    assert names == ["first", *listed]  # the request's scores first, then the lists'
    assert prepared.ground_truth.n_videos == 12
    assert prepared.scene is not None
    assert [d.name for d in prepared.definition_scores] == ["localizer", "video_constant"]
    assert [f.snippet_repeat for f in prepared.features] == [16, 16]
    assert prepared.queries and prepared.soft_labels is None
    result = prepared.run()
    assert result.models == tuple(names)
    assert not result.definition_probes.empty and not result.readout.empty


def test_options_given_win_over_a_probes_file(demo: Path, tmp_path: Path) -> None:
    benchmark = demo / "benchmark"
    probes = _probes_copy(demo, tmp_path / "probes", feature_snippet_frames=8)
    prepared = prepare(
        AuditRequest(workspace=demo, probe_lists=(probes,), feature_snippet_frames=16)
    )
    assert [f.snippet_repeat for f in prepared.features] == [16, 16]
    assert {q.source for q in prepared.queries} == {str(tmp_path / "probes" / "queries.json")}
    own = prepare(
        AuditRequest(
            workspace=demo,
            probe_lists=(probes,),
            queries=benchmark / "queries.json",
            feature_snippet_frames=16,
        )
    )
    assert {q.source for q in own.queries} == {str(benchmark / "queries.json")}
    # Not given here, the probes file's 8 frames a snippet are read (and do not fit).
    with pytest.raises(AuditInputError, match=r"snippets × 8 = "):
        prepare(AuditRequest(workspace=demo, probe_lists=(probes,)))


def test_probes_files_giving_different_values_are_refused_naming_both(
    demo: Path, tmp_path: Path
) -> None:
    first = _probes_copy(demo, tmp_path / "a", feature_snippet_frames=16)
    second = _probes_copy(demo, tmp_path / "b", feature_snippet_frames=8, queries=None)
    with pytest.raises(AuditRequestError) as refused:
        prepare(AuditRequest(workspace=demo, probe_lists=(first, second)))
    assert str(first) in str(refused.value) and str(second) in str(refused.value)
    assert "snippet frames" in str(refused.value)
    # The same value in both is no conflict; a value only one file gives is taken.
    same = _probes_copy(demo, tmp_path / "c", feature_snippet_frames=16, queries=None)
    prepared = prepare(AuditRequest(workspace=demo, probe_lists=(first, same)))
    assert len(prepared.definition_scores) == 4 and len(prepared.features) == 4
    assert {q.source for q in prepared.queries} == {str(tmp_path / "a" / "queries.json")}


def test_a_bad_interval_end_is_refused_naming_the_option() -> None:
    with pytest.raises(AuditRequestError, match="interval_end 'both'"):
        AuditRequest(interval_end="both")  # type: ignore[arg-type]
    assert issubclass(AuditRequestError, VadsceneError)


def test_the_report_folder_is_checked_before_any_input_is_read(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    request = AuditRequest(ground_truth=tmp_path / "absent.txt", out=taken)
    with pytest.raises(VadsceneError, match="not an audit report"):
        prepare(request)


def test_soft_labels_latex_and_the_summary_line(demo: Path, tmp_path: Path) -> None:
    benchmark = demo / "benchmark"
    prepared = prepare(
        AuditRequest(workspace=demo, model_lists=(benchmark / "models.json",), bootstrap=0)
    )
    truth = prepared.ground_truth
    soft = tmp_path / "soft.csv"
    rows = ["video,frame,label"]
    for video, start, stop in zip(
        truth.video_ids, truth.offsets[:-1], truth.offsets[1:], strict=True
    ):
        rows += [
            f"{video},{f},{0.9 if truth.labels[start + f] else 0.1}" for f in range(stop - start)
        ]
    soft.write_text("\n".join(rows) + "\n")
    request = dataclasses.replace(prepared.request, soft_labels=soft, interval_ap=True, latex=True)
    soft_prepared = prepare(request)
    assert soft_prepared.soft_labels is not None
    np.testing.assert_array_equal(soft_prepared.soft_labels > 0.5, truth.labels)
    result = soft_prepared.run()
    assert list(dict.fromkeys(result.prob_auc["model"])) == list(result.models)
    assert result.further["interval_ap"].notna().all()
    written = write_outputs(result, tmp_path / "report", request)
    assert any(name.startswith("latex/") for name in written)
    assert (tmp_path / "report" / "report.json").is_file()
    summary = result.summary
    assert summary_line(result) == (
        f"{summary['videos']} videos, {summary['frames']} frames, "
        f"w = {100 * summary['within_pair_fraction']:.3f} % within-video pairs, oracle "
        f"video-constant AUROC {summary['oracle_video_constant_auroc']:.4f}"
    )


def test_svg_without_vl_convert_is_refused_before_any_input_is_read(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--svg`` where the ``svg`` extra is not installed fails at once, not after the run:
    the ground truth named is never opened and the report folder never made."""
    from vadscene.audit.report import vega

    monkeypatch.setattr(vega, "vl_convert", None)
    request = AuditRequest(
        workspace=demo, ground_truth=tmp_path / "absent.txt", out=tmp_path / "report", svg=True
    )
    with pytest.raises(VadsceneError, match=r"pip install 'vadscene\[svg\]'"):
        prepare(request)
    assert not (tmp_path / "report").exists()
