"""The crash list of issue 14: inputs real benchmarks (or careless hands) produce that used to
crash vadscene or be quietly misread. Each test failed on the code before its fix.

The CLI-facing cases (message, exit code, store unchanged) are also rows of the bad-input
table (:data:`support.reliability.CASES`); these tests check what the table cannot: that the
good part of the input is still used, and the library-level behaviour.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import vl_convert
import yaml
from support.reliability import GOOD, _release_data, registry_workspace, write_clip

from vadscene.audit import run_audit
from vadscene.audit.io.scores import ModelScores, load_scores
from vadscene.audit.io.sources import read_model_list
from vadscene.audit.report import figures
from vadscene.audit.report.writer import write_report
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth
from vadscene.benchmark.video_lists import read_video_list
from vadscene.core import jsonio
from vadscene.core.catalogue import load_catalogue, parse_catalogue
from vadscene.core.errors import (
    CatalogueError,
    ReleaseError,
    StoreError,
    VadsceneError,
    WorkspaceError,
)
from vadscene.demo import build_demo_workspace
from vadscene.measure.thresholds import rule_thresholds
from vadscene.release.releases import read_release
from vadscene.store.workspace import Workspace

# --- 1. file names that are not UTF-8 --------------------------------------------------------


def _clip_with_byte_name(folder: Path, name: bytes) -> None:
    """A real clip whose file name holds ``name``'s raw bytes (not necessarily UTF-8)."""
    write_clip(folder / "renamed.mp4")
    os.rename(os.fsencode(folder / "renamed.mp4"), os.fsencode(folder) + b"/" + name)


def test_a_non_utf8_file_name_is_listed_as_unreadable_and_the_rest_registered(
    tmp_path: Path,
) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{GOOD}.mp4")
    (videos / "sub\xe9").mkdir()  # a UTF-8 folder name is fine
    write_clip(videos / "sub\xe9" / "Arson003_x264.mp4")
    _clip_with_byte_name(videos, b"Arson\xff002_x264.mp4")
    os.mkdir(os.fsencode(videos) + b"/Latin\xe9")  # a Latin-1 folder name
    _clip_with_byte_name(videos, b"Latin\xe9/Burglary005_x264.mp4")

    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        report = workspace.scan()
        registered = sorted(v.video_id for v in workspace.store.videos())
        stored = dict(workspace.store.unreadable_files())

    assert registered == ["Abuse001_x264", "Arson003_x264"]
    assert sorted(report.added) == registered
    reasons = dict(report.unreadable)
    assert sorted(reasons) == ["Arson\\xff002_x264.mp4", "Latin\\xe9/Burglary005_x264.mp4"]
    assert all("file name is not valid UTF-8" in reason for reason in reasons.values())
    assert stored == reasons  # recorded as shown: the store holds only valid text


def test_a_non_utf8_file_name_is_skipped_again_on_rescan(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{GOOD}.mp4")
    _clip_with_byte_name(videos, b"Arson\xff002_x264.mp4")
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        workspace.scan()
        again = workspace.scan()
    assert again.unchanged == [GOOD]
    assert [path for path, _ in again.unreadable] == ["Arson\\xff002_x264.mp4"]


# --- 2. reports of any size, replaced whole ----------------------------------------------------


def _benchmark(n_videos: int, frames: int = 4, *, rng_seed: int = 0) -> GroundTruth:
    """``n_videos`` videos of ``frames`` frames; every third video is anomalous in its first
    ``video % frames`` frames (so some are mixed, some wholly normal)."""
    labels = np.zeros((n_videos, frames), dtype=bool)
    for video in range(0, n_videos, 3):
        labels[video, : 1 + video % frames] = True
    ids = tuple(f"Abuse{video:05d}" for video in range(n_videos))
    return GroundTruth(
        video_ids=ids,
        categories=tuple("Abuse" if labels[i].any() else "Normal" for i in range(n_videos)),
        offsets=np.arange(0, n_videos * frames + 1, frames, dtype=np.int64),
        labels=labels.ravel(),
        source="synthetic",
    )


def test_the_report_of_an_audit_of_thousands_of_videos_is_written(tmp_path: Path) -> None:
    ground_truth = _benchmark(2_600)  # 5,200 composition rows: beyond Altair's 5,000-row cap
    result = run_audit(ground_truth, n_bootstrap=0)

    written = write_report(result, tmp_path / "report")

    assert {"report.json", "report.html", "figures/composition.vl.json"} <= set(written)
    spec = figures.composition_chart(result).to_dict()  # what the app renders
    (rows,) = spec["datasets"].values()
    assert len(rows) <= 2 * figures.MAX_COMPOSITION_BARS
    by_label = {
        label: sum(r["count"] for r in rows if r["label"] == label)
        for label in ("anomalous", "normal")
    }
    assert by_label == {
        "anomalous": int(ground_truth.labels.sum()),
        "normal": int((~ground_truth.labels).sum()),
    }
    assert "2600 videos" in spec["encoding"]["x"]["title"]


def test_a_small_composition_keeps_one_bar_per_video() -> None:
    result = run_audit(_benchmark(30), n_bootstrap=0)
    spec = figures.composition_chart(result).to_dict()
    (rows,) = spec["datasets"].values()
    assert sorted({r["video"] for r in rows}) == [f"Abuse{v:05d}" for v in range(30)]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_rewritten_report_folder_holds_only_the_new_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    scored = run_audit(
        _benchmark(12),
        [ModelScores(name="m", scores=np.linspace(0, 1, 48), source="synthetic")],
        n_bootstrap=0,
    )
    write_report(scored, out)
    assert "metrics.csv" in _tree(out)
    gt_only = run_audit(_benchmark(12), n_bootstrap=0)

    written = write_report(gt_only, out)

    assert sorted(_tree(out)) == sorted(written)  # no metrics.csv left from the scored run
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no staging folder left


def test_a_report_that_fails_half_way_leaves_the_previous_report_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report"
    write_report(run_audit(_benchmark(12), n_bootstrap=0), out)
    before = _tree(out)

    def renderer_fails(spec: dict, **options: object) -> str:
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", renderer_fails)  # after report.json
    with pytest.raises(RuntimeError, match="renderer crashed"):
        write_report(run_audit(_benchmark(15), n_bootstrap=0), out, svg=True)

    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_a_report_never_replaces_a_folder_of_other_files(tmp_path: Path) -> None:
    out = tmp_path / "papers"
    out.mkdir()
    (out / "draft.tex").write_text("my paper", encoding="utf-8")

    with pytest.raises(VadsceneError, match=r"draft\.tex") as error:
        write_report(run_audit(_benchmark(12), n_bootstrap=0), out)

    assert f"{out}: holds files that are not an audit report" in str(error.value)
    assert _tree(out) == {"draft.tex": b"my paper"}


# --- 3. degenerate benchmarks ------------------------------------------------------------------


def _uniform_benchmark(anomalous: bool) -> GroundTruth:
    return GroundTruth(
        video_ids=("Abuse001", "Arson002"),
        categories=("Abuse", "Arson"),
        offsets=np.array([0, 3, 8], dtype=np.int64),
        labels=np.full(8, anomalous),
        source="gt.txt",
    )


@pytest.mark.parametrize("scored", [False, True], ids=["ground-truth-only", "with-scores"])
def test_a_benchmark_whose_every_frame_is_anomalous_is_refused(scored: bool) -> None:
    ground_truth = _uniform_benchmark(anomalous=True)
    models = [ModelScores(name="m", scores=np.linspace(0, 1, 8), source="s")] if scored else []
    with pytest.raises(AuditInputError) as error:
        run_audit(ground_truth, models, n_bootstrap=0)
    assert str(error.value).startswith(
        "gt.txt: all 8 frames of the 2 videos are anomalous; AUROC compares anomalous with "
        "normal frames"
    )


@pytest.mark.parametrize("scored", [False, True], ids=["ground-truth-only", "with-scores"])
def test_a_benchmark_without_an_anomalous_frame_is_refused(scored: bool) -> None:
    ground_truth = _uniform_benchmark(anomalous=False)
    models = [ModelScores(name="m", scores=np.linspace(0, 1, 8), source="s")] if scored else []
    with pytest.raises(AuditInputError) as error:
        run_audit(ground_truth, models, n_bootstrap=0)
    assert str(error.value).startswith(
        "gt.txt: none of the 8 frames of the 2 videos is anomalous; AUROC compares anomalous "
        "with normal frames"
    )


# --- 4. absurd sizes, refused before allocating ------------------------------------------------

PHYSICAL_MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_a_frame_count_of_ten_to_the_fourteen_is_refused_before_allocating(tmp_path: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text(f"{GOOD} 100000000000000 Abuse 5 12\nNormal003 25 Normal -1 -1\n")
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(gt)
    message = str(error.value)
    assert message.startswith(f"{gt}: the ground truth's 2 videos hold 100,000,000,000,025 frames")
    assert f"video {GOOD} alone 100,000,000,000,000" in message
    assert f"this machine has {PHYSICAL_MEMORY / 2**30:,.1f} GiB" in message


def test_a_huge_snippet_repeat_fills_each_video_without_building_the_repeats(
    tmp_path: Path,
) -> None:
    ground_truth = _uniform_benchmark(anomalous=False)  # videos of 3 and 5 frames
    scores = tmp_path / "scores.csv"
    scores.write_text("video,score\nAbuse001,0.25\nArson002,0.75\n")
    # one snippet of 10¹³ frames per video: truncated to the video, as the rule says
    model = load_scores(scores, ground_truth, name="m", snippet_repeat=10**13)
    assert model.scores.tolist() == [0.25] * 3 + [0.75] * 5


def test_an_audit_of_a_million_videos_is_refused_before_allocating() -> None:
    videos = 1_000_000
    ground_truth = GroundTruth(
        video_ids=tuple(f"v{i}" for i in range(videos)),
        categories=("Abuse",) * videos,
        offsets=np.arange(videos + 1, dtype=np.int64) * 2,
        labels=np.tile([True, False], videos),
        source="gt.txt",
    )
    with pytest.raises(AuditInputError) as error:
        run_audit(ground_truth, n_bootstrap=0)
    message = str(error.value)
    assert message.startswith("gt.txt: an audit of 1,000,000 videos and 2,000,000 frames")
    assert f"this machine has {PHYSICAL_MEMORY / 2**30:,.1f} GiB" in message


def test_an_absurd_bootstrap_is_refused_before_allocating() -> None:
    with pytest.raises(AuditInputError, match=r"1,000,000,000,000 bootstrap replicates"):
        run_audit(_benchmark(12), n_bootstrap=10**12)


# --- 5. seeds and thresholds -------------------------------------------------------------------


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_bootstrap_seed_that_is_not_a_natural_number_is_refused(seed: object) -> None:
    with pytest.raises(AuditInputError, match=r"bootstrap seed must be an integer ≥ 0, got"):
        run_audit(_benchmark(12), n_bootstrap=10, seed=seed)


def test_a_negative_demo_seed_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(VadsceneError, match=r"the demo seed must be an integer ≥ 0, got -1"):
        build_demo_workspace(tmp_path / "demo", seed=-1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_explicit_threshold_is_refused(bad: float) -> None:
    with pytest.raises(StoreError, match=r"thresholds must be finite numbers"):
        rule_thresholds(np.array([1.0, 2.0, 3.0]), "explicit", (bad,))
    with pytest.raises(StoreError, match=r"thresholds must be finite numbers"):
        rule_thresholds(np.array([1.0, 2.0, 3.0]), "explicit", (1.0, bad))


def test_the_store_refuses_a_non_finite_threshold(tmp_path: Path) -> None:
    root = registry_workspace(tmp_path)
    with Workspace.open(root) as workspace:
        with pytest.raises(StoreError, match=r"factor 'resolution': thresholds must be finite"):
            workspace.store.set_threshold("resolution", "sharpness", "explicit", [math.nan])
        assert workspace.store.thresholds() == []


def test_a_catalogue_with_a_non_finite_threshold_is_refused(tmp_path: Path) -> None:
    data = load_catalogue().model_dump(mode="json")
    auto = next(f for f in data["factors"] if f["source"] == "auto")
    auto["auto"] = {**auto["auto"], "rule": "explicit", "thresholds": [float("nan")]}
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(CatalogueError, match=rf"factor '{auto['key']}'.*thresholds"):
        load_catalogue(path)


# --- 6. a key given twice in a JSON object -----------------------------------------------------

DUPLICATED = (
    "a key appears twice in one object (the object starting at line {line} column {column})"
)


def test_a_release_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    text = json.dumps(_release_data(tmp_path))
    path = tmp_path / "dup.json"
    # the second "dataset" would silently win with json.loads
    path.write_text(text.replace('{"schema_version"', '{"dataset": "other", "schema_version"', 1))
    with pytest.raises(ReleaseError) as error:
        read_release(path)
    assert str(error.value).startswith(f"{path}: not valid JSON (")
    assert DUPLICATED.format(line=1, column=1) in str(error.value)
    assert "dataset" not in str(error.value)  # the key is the file's text: never echoed


def test_a_json_ground_truth_with_a_duplicated_video_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    entry = '{"num_frames": 2, "labels": [0, 1]}'
    path.write_text(f'{{"01_0014": {entry}, "01_0015": {entry}, "01_0014": {entry}}}')
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(path)
    assert str(error.value).startswith(f"{path}: not a valid JSON file (")
    assert DUPLICATED.format(line=1, column=1) in str(error.value)
    assert "01_0014" not in str(error.value)


def test_a_json_catalogue_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    text = json.dumps(load_catalogue().model_dump(mode="json"))
    path = tmp_path / "catalogue.json"
    text = text.replace('"key": "color"', '"key": "color", "key": "colour"', 1)
    path.write_text(text)
    with pytest.raises(CatalogueError) as error:
        load_catalogue(path)
    assert str(error.value).startswith(f"{path}: not valid JSON: ")
    factor_brace = text.rfind("{", 0, text.index('"key": "color", "key"'))
    assert DUPLICATED.format(line=1, column=factor_brace + 1) in str(error.value)


def test_a_models_file_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text('[{"name": "rtfm", "path": "a.npy", "path": "b.npy"}]')
    with pytest.raises(AuditInputError) as error:
        read_model_list(path)
    assert str(error.value).startswith(f"{path}: not valid JSON (")
    assert DUPLICATED.format(line=1, column=2) in str(error.value)


def test_the_strict_reader_reads_what_json_reads() -> None:
    text = '{"a": [1, {"b": null, "c": 2.5}], "d": {"a": "x"}, "e": "\\u00e9"}'
    assert jsonio.loads(text) == json.loads(text)


# --- 7. ids: NFC-normalised, and no two names silently one video ------------------------------

NFC, NFD = unicodedata.normalize("NFC", "Café001"), unicodedata.normalize("NFD", "Café001")


def test_nfc_ground_truth_and_nfd_scores_name_the_same_video(tmp_path: Path) -> None:
    assert NFC != NFD
    gt = tmp_path / "gt.txt"
    gt.write_text(f"{NFC} 4 Abuse 0 2\nNormal003 3 Normal -1 -1\n", encoding="utf-8")
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "video,score\n" + f"{NFD},0.9\n" * 4 + "Normal003,0.1\n" * 3, encoding="utf-8"
    )
    ground_truth = load_ground_truth(gt)
    model = load_scores(scores, ground_truth, name="m")
    assert ground_truth.video_ids == (NFC, "Normal003")
    assert model.scores.tolist() == [0.9] * 4 + [0.1] * 3


def test_a_video_file_named_in_nfd_is_registered_under_its_nfc_id(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{NFD}.mp4")
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        workspace.scan()
        (video,) = workspace.store.videos()
        assert video.video_id == NFC
        assert workspace.video_path(NFC).is_file()  # the file keeps its own bytes


def test_two_files_whose_names_differ_only_in_normalisation_are_one_id(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{NFC}.mp4")
    write_clip(videos / "sub" / f"{NFD}.mp4")
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        report = workspace.scan()
    assert report.added == [NFC]
    ((path, reason),) = report.unreadable
    assert path == f"sub/{NFD}.mp4"
    assert f"duplicate video id '{NFC}'" in reason


def test_a_release_id_in_nfd_is_read_as_nfc_and_a_collision_is_refused(tmp_path: Path) -> None:
    data = _release_data(tmp_path)
    data["videos"][0]["video_id"] = NFD
    path = tmp_path / "nfd.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert read_release(path).videos[0].video_id == NFC

    data["videos"].append({**data["videos"][0], "video_id": NFC})
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ReleaseError, match=f"duplicate video id '{NFC}'"):
        read_release(path)


def test_two_listed_videos_that_lose_their_crop_suffix_to_one_id_are_an_error(
    tmp_path: Path,
) -> None:
    listing = tmp_path / "order.txt"
    listing.write_text("Clip__1.mp4\nClip__2.mp4\nOther.mp4\n")
    with pytest.raises(VadsceneError) as error:
        read_video_list(listing)
    assert str(error.value).startswith(
        f"{listing}: lines 1 and 2 name one video (ids drop folders and extensions; a trailing "
        "__N is a crop index"
    )


def test_a_video_order_sequence_that_collapses_two_names_is_an_error(tmp_path: Path) -> None:
    ground_truth = _uniform_benchmark(anomalous=False)
    scores = tmp_path / "all.npy"
    np.save(scores, np.zeros(ground_truth.n_frames))
    order = ["Abuse001__1", "Abuse001__2", "Arson002"]
    with pytest.raises(AuditInputError) as error:
        load_scores(scores, ground_truth, name="m", video_order=order)
    assert str(error.value).startswith(
        f"{scores}: video order: entries 1 and 2 name one video (ids drop folders and extensions"
    )


def test_a_full_set_of_crops_still_names_one_video(tmp_path: Path) -> None:
    listing = tmp_path / "crops.txt"
    listing.write_text(
        "".join(
            f"test/{v}__{c}.npy\n" for v in ("Abuse028_x264", "Arson011_x264") for c in range(10)
        )
    )
    assert read_video_list(listing) == ["Abuse028_x264", "Arson011_x264"]


def test_a_ground_truth_naming_one_video_twice_names_both_spellings(tmp_path: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text("Clip__1 4 Abuse 0 2\nClip__2 3 Normal -1 -1\n")
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(gt)
    assert str(error.value) == (
        f"{gt}:2: the video of this line is listed twice (first on line 1): the two names are "
        "one id (ids drop folders, extensions and a trailing __N crop index); expected each "
        "video once, under distinct names"
    )


# --- 8. "ambiguous" is reserved, however it is written ------------------------------------------


@pytest.mark.parametrize("spelling", ["ambiguous", "Ambiguous", " ambiguous", "AMBIGUOUS\t"])
def test_a_catalogue_value_spelling_ambiguous_is_refused(spelling: str) -> None:
    data = load_catalogue().model_dump(mode="json")
    color = next(f for f in data["factors"] if f["key"] == "color")
    color["values"] = [*color["values"], spelling]
    with pytest.raises(CatalogueError) as error:
        parse_catalogue(data, origin="cat.yaml")
    assert f"factor 'color': $.factors[0]: '{spelling}' is reserved" in str(error.value)


def test_a_value_that_only_contains_the_word_is_allowed() -> None:
    data = load_catalogue().model_dump(mode="json")
    color = next(f for f in data["factors"] if f["key"] == "color")
    color["values"] = [*color["values"], "ambiguously lit"]
    assert "ambiguously lit" in parse_catalogue(data).factor("color").values


def test_a_yaml_catalogue_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.yaml"
    text = yaml.safe_dump(load_catalogue().model_dump(mode="json"), sort_keys=False)
    # the second "source" would silently win with yaml.safe_load
    path.write_text(text.replace("  source: manual\n", "  source: auto\n  source: manual\n", 1))
    with pytest.raises(CatalogueError) as error:
        load_catalogue(path)
    assert str(error.value).startswith(f"{path}: not valid YAML: ")
    assert "a key appears twice in one mapping" in str(error.value)
    second_source = text.index("  source: manual\n")  # the inserted line precedes it
    assert f"at line {text.count(chr(10), 0, second_source) + 2} column 3" in str(error.value)


def test_yaml_merge_keys_may_still_override() -> None:
    text = "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n"
    assert jsonio.load_yaml(text) == yaml.safe_load(text)


def test_a_workspace_configuration_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    root = registry_workspace(tmp_path)
    config = root / "vadscene.yaml"
    config.write_text(config.read_text() + "dataset: other\n")
    with pytest.raises(WorkspaceError) as error:
        Workspace.open(root)
    assert str(error.value).startswith(f"{config}: not valid YAML: ")
    assert "a key appears twice in one mapping" in str(error.value)


def test_folders_left_by_a_killed_report_run_are_removed_by_the_next(tmp_path: Path) -> None:
    out = tmp_path / "report"
    dead = subprocess.Popen(["true"])  # its process id is no longer running
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        stale = [tmp_path / f".report.{dead.pid}.{tag}" for tag in ("aa.new", "bb.old")]
        running = tmp_path / f".report.{live.pid}.cc.new"  # another run, still writing
        for folder in (*stale, running):
            folder.mkdir()
            (folder / "report.json").write_text("{}")
        write_report(run_audit(_benchmark(12), n_bootstrap=0), out)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["report", running.name])
    finally:
        live.kill()
        live.wait()
