"""Releases: building, writing, validating, importing, and the round-trip identity."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD

from vadscene.annotate.consensus import resolve_assignment
from vadscene.core.errors import ReleaseError
from vadscene.core.records import FactorDecision
from vadscene.release.releases import (
    build_release,
    import_release,
    parse_release,
    read_release,
    release_json_schema,
    shipped_schema_path,
    workspace_from_release,
    write_release,
)
from vadscene.store.workspace import Workspace

# ``annotated`` (tests/conftest.py): agreement on ABUSE, disagreement and an override on ARSON,
# a consensus on NORMAL, a cleared decision on ROAD, marks on ARSON.


def _without_created_at(path: Path) -> dict:
    data = json.loads(path.read_text())
    data.pop("created_at")
    return data


def test_values_follow_the_resolution_rules(annotated: Workspace) -> None:
    release = build_release(annotated)
    by_id = {v.video_id: v for v in release.videos}
    assert (by_id[ABUSE].factors["color"].value, by_id[ABUSE].factors["color"].resolution) == (
        "grayscale",
        "agreement",
    )
    assert (by_id[ARSON].factors["color"].value, by_id[ARSON].factors["color"].resolution) == (
        None,
        "disagreement",
    )
    assert by_id[NORMAL].factors["crowd"].value == "many"
    assert by_id[NORMAL].factors["crowd"].resolution == "consensus"
    assert by_id[NORMAL].factors["setting"].value == "ambiguous"
    assert "elevation" not in by_id[ROAD].factors  # cleared: nobody decides it now
    arson_resolution = by_id[ARSON].factors["resolution"]
    assert (arson_resolution.value, arson_resolution.resolution) == ("high", "override")
    override = next(d for d in arson_resolution.decisions if d.annotator == "ana")
    assert (override.replaced_auto_value, override.replaced_measurement) == ("low", 20.0)
    assert by_id[ROAD].factors["resolution"].resolution == "auto"
    assert release.annotators == ("ana", "ben", "carla")
    assert by_id[ARSON].marks[0].flagged and by_id[ARSON].marks[0].note == "two cameras?"


def test_resolution_of_a_single_human_decision_and_auto() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    auto = FactorDecision(annotator="auto", value="low", source="auto", decided_at=at)
    one = FactorDecision(annotator="ana", value="color", source="manual", decided_at=at)
    assert resolve_assignment([auto]).value == "low"
    assert resolve_assignment([one]).resolution == "single"


def test_annotator_mode_uses_only_that_annotator(annotated: Workspace) -> None:
    release = build_release(annotated, annotator="ben")
    by_id = {v.video_id: v for v in release.videos}
    assert by_id[ARSON].factors["color"].value == "grayscale"
    assert "crowd" not in by_id[ABUSE].factors  # ana's decision is not in ben's release
    assert by_id[ARSON].factors["resolution"].value == "low"  # the auto pole, no override
    assert release.annotators == ("ben",)
    with pytest.raises(ReleaseError, match="annotator 'zoe' has no decisions"):
        build_release(annotated, annotator="zoe")


def test_support_matches_an_independent_count_from_the_csv(
    annotated: Workspace, tmp_path: Path
) -> None:
    release = build_release(annotated)
    write_release(release, tmp_path / "r.json", csv_path=tmp_path / "r.csv")
    with (tmp_path / "r.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["video_id"] for r in rows] == sorted([ABUSE, ARSON, NORMAL, ROAD])
    keys = list(annotated.catalogue.keys)
    assert list(rows[0])[5 : 5 + len(keys)] == keys
    for support in release.support:
        column = [r[support.factor] for r in rows]
        assert support.n_positive == column.count(support.positive)
        assert support.n_negative == column.count(support.negative)
        assert support.n_ambiguous == column.count("ambiguous")
        assert support.n_unresolved == column.count("")


def test_round_trip_through_a_fresh_workspace_is_identical(
    annotated: Workspace, tmp_path: Path
) -> None:
    first = tmp_path / "first.json"
    write_release(build_release(annotated), first)
    with workspace_from_release(read_release(first), tmp_path / "fresh") as fresh:
        second = tmp_path / "second.json"
        write_release(build_release(fresh), second)
        assert _without_created_at(second) == _without_created_at(first)
        counts = import_release(read_release(first), fresh)  # importing again changes nothing
        assert (counts.decisions_added, counts.marks_added, counts.videos_added) == (0, 0, 0)


def test_merge_into_a_workspace_with_the_same_videos(
    annotated: Workspace, tmp_path: Path, small_videos: Path
) -> None:
    write_release(build_release(annotated), tmp_path / "r.json")
    with Workspace.create(tmp_path / "colleague", video_root=small_videos) as colleague:
        colleague.scan()
        colleague.store.record_decision(ABUSE, "crowd", "few", annotator="dan")
        counts = import_release(read_release(tmp_path / "r.json"), colleague)
        assert counts.decisions_added == sum(
            len(a.decisions)
            for v in read_release(tmp_path / "r.json").videos
            for a in v.factors.values()
        ) + sum(len(v.withdrawn_decisions) for v in read_release(tmp_path / "r.json").videos)
        merged = build_release(colleague)
    assert merged.annotators == ("ana", "ben", "carla", "dan")


def test_import_refuses_unknown_videos_and_a_different_catalogue(
    annotated: Workspace, tmp_path: Path, small_videos: Path
) -> None:
    release = build_release(annotated)
    (small_videos / "Arson002_x264.mp4").unlink()
    with Workspace.create(tmp_path / "other", video_root=small_videos) as other:
        other.scan()
        with pytest.raises(ReleaseError, match=r"1 released videos are not registered"):
            import_release(release, other)
        assert other.store.decision_log() == []
    altered = release.catalogue.model_copy(update={"factors": release.catalogue.factors[:-1]})
    with pytest.raises(
        ReleaseError, match=r"(?s)catalogue differs.*factors only in the workspace: road"
    ):
        import_release(release.model_copy(update={"catalogue": altered}), annotated)


def test_write_is_atomic_and_writes_the_schema_beside(annotated: Workspace, tmp_path: Path) -> None:
    out = tmp_path / "releases" / "v1.json"
    out.parent.mkdir()
    out.write_text("old")
    schema_path = write_release(build_release(annotated), out)
    assert schema_path == out.parent / "release-v2.schema.json"
    assert sorted(p.name for p in out.parent.iterdir()) == ["release-v2.schema.json", "v1.json"]
    assert json.loads(out.read_text())["schema_version"] == 2


def test_release_conforms_to_its_json_schema(annotated: Workspace, tmp_path: Path) -> None:
    schema_path = write_release(build_release(annotated), tmp_path / "r.json")
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads((tmp_path / "r.json").read_text()), schema)


def test_shipped_schema_equals_the_generated_one() -> None:
    assert json.loads(shipped_schema_path().read_text()) == release_json_schema(), (
        "run `make schema` after changing vadscene/records.py"
    )


# --- validation errors, each with its JSON path ---------------------------------------------


def _valid(annotated: Workspace) -> dict:
    return json.loads(build_release(annotated).model_dump_json())


def _video_index(data: dict, video_id: str) -> int:
    return [v["video_id"] for v in data["videos"]].index(video_id)


def _missing_field(d: dict) -> None:
    del d["videos"][0]["num_frames"]


def _unknown_factor(d: dict) -> None:
    i = _video_index(d, ABUSE)
    d["videos"][i]["factors"]["colour"] = d["videos"][i]["factors"].pop("color")


def _value_not_in_factor(d: dict) -> None:
    i = _video_index(d, ABUSE)
    d["videos"][i]["factors"]["color"]["value"] = "sepia"


def _decision_value_not_in_factor(d: dict) -> None:
    i = _video_index(d, ABUSE)
    d["videos"][i]["factors"]["color"]["decisions"][1]["value"] = "sepia"


def _wrong_schema_version(d: dict) -> None:
    d["schema_version"] = 3


def _duplicate_video(d: dict) -> None:
    d["videos"].append(d["videos"][0])


def _support_tampered(d: dict) -> None:
    d["support"][0]["n_positive"] += 1


def _value_contradicts_decisions(d: dict) -> None:
    i = _video_index(d, ABUSE)
    d["videos"][i]["factors"]["color"]["value"] = "color"


@pytest.mark.parametrize(
    ("mutate", "fragments"),
    [
        (_missing_field, ["$.videos[0].num_frames: Field required"]),
        (_unknown_factor, ["$.videos[0].factors.colour: unknown factor 'colour'"]),
        (
            _value_not_in_factor,
            [
                "$.videos[0].factors.color.value: 'sepia' is not a value",
                "color, grayscale, ambiguous",
            ],
        ),
        (_decision_value_not_in_factor, ["$.videos[0].factors.color.decisions[1].value"]),
        (_wrong_schema_version, ["$.schema_version: unsupported release schema version 3"]),
        (_duplicate_video, ["duplicate video id 'Abuse001_x264' (also $.videos[0])"]),
        (_support_tampered, ["$.support[0]: color color/grayscale says"]),
        (_value_contradicts_decisions, ["does not follow from its decisions"]),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else None,
)
def test_invalid_release_reports_json_paths(annotated: Workspace, mutate, fragments) -> None:
    data = _valid(annotated)
    mutate(data)
    with pytest.raises(ReleaseError) as caught:
        parse_release(data, origin="r.json")
    message = str(caught.value)
    assert message.startswith("r.json: invalid release")
    for fragment in fragments:
        assert fragment in message


def test_every_error_is_listed_not_just_the_first(annotated: Workspace) -> None:
    data = _valid(annotated)
    _unknown_factor(data)
    _duplicate_video(data)
    with pytest.raises(ReleaseError) as caught:
        parse_release(data)
    assert len(caught.value.problems) >= 3  # unknown factor twice (duplicate copy) + duplicate id


def test_read_release_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="release file not found"):
        read_release(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"schema_version": 1,')
    with pytest.raises(ReleaseError, match=r"bad.json: not valid JSON"):
        read_release(tmp_path / "bad.json")


def test_empty_workspace_has_nothing_to_release(tmp_path: Path) -> None:
    (tmp_path / "videos").mkdir()
    with (
        Workspace.create(tmp_path / "ws", video_root=tmp_path / "videos") as empty,
        pytest.raises(ReleaseError, match="no videos; nothing to release"),
    ):
        build_release(empty)


# --- merges never go back in time -------------------------------------------------------------


def test_merge_never_reverts_a_newer_local_decision(
    small_workspace: Workspace, tmp_path: Path, small_videos: Path
) -> None:
    """Ana exports; a colleague imports it, adds his own and exports; Ana changes crowd from
    few to many; Ana merges the colleague's release: her current value stays many."""
    ana = small_workspace
    ana.store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    write_release(build_release(ana), tmp_path / "ana.json")
    with Workspace.create(tmp_path / "colleague", video_root=small_videos) as colleague:
        colleague.scan()
        import_release(read_release(tmp_path / "ana.json"), colleague)
        colleague.store.record_decision(ARSON, "crowd", "many", annotator="dan")
        write_release(build_release(colleague), tmp_path / "colleague.json")
    ana.store.record_decision(ABUSE, "crowd", "many", annotator="ana")
    log_before = len(ana.store.decision_log())

    counts = import_release(read_release(tmp_path / "colleague.json"), ana)

    assert ana.store.current_values("ana") == {(ABUSE, "crowd"): "many"}
    assert counts.decisions_added == 1  # dan's; ana's older decision is already in the log
    assert counts.decisions_already_present == 1
    assert counts.conflicts == ()
    assert len(ana.store.decision_log()) == log_before + 1
    assert build_release(ana).videos[0].factors["crowd"].value == "many"


def test_an_imported_decision_older_than_the_local_one_is_a_conflict(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    store.record_decision(ABUSE, "crowd", "many", annotator="ana")
    release = build_release(small_workspace)
    local = release.videos[0].factors["crowd"].decisions[0]
    older = local.model_copy(
        update={"value": "few", "decided_at": datetime(2020, 1, 1, tzinfo=UTC)}
    )
    crowd = (
        release.videos[0]
        .factors["crowd"]
        .model_copy(update={"value": "few", "decisions": (older,)})
    )
    video = release.videos[0].model_copy(
        update={"factors": {**release.videos[0].factors, "crowd": crowd}}
    )
    stale = release.model_copy(update={"videos": (video, *release.videos[1:])})

    counts = import_release(stale, small_workspace)

    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}
    assert counts.decisions_added == 1  # kept in the log as history, not as current
    assert [
        (c.kind, c.video_id, c.key, c.annotator, c.imported_value, c.local_value)
        for c in counts.conflicts
    ] == [("decision", ABUSE, "crowd", "ana", "few", "many")]
    assert counts.added_by_annotator == {"ana": 1}


def test_a_newer_imported_decision_becomes_current_and_reimport_adds_nothing(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    hour = timedelta(hours=1)
    now = datetime.now(UTC)
    store.record_decision(ABUSE, "crowd", "few", annotator="ana", decided_at=now - 2 * hour)
    release = build_release(small_workspace)
    local = release.videos[0].factors["crowd"].decisions[0]
    newer = local.model_copy(update={"value": "many", "decided_at": now - hour})
    crowd = (
        release.videos[0]
        .factors["crowd"]
        .model_copy(update={"value": "many", "decisions": (newer,)})
    )
    video = release.videos[0].model_copy(
        update={"factors": {**release.videos[0].factors, "crowd": crowd}}
    )
    ahead = release.model_copy(update={"videos": (video, *release.videos[1:])})

    first = import_release(ahead, small_workspace)
    again = import_release(ahead, small_workspace)

    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}
    assert (first.decisions_added, first.conflicts) == (1, ())
    assert (again.decisions_added, again.decisions_already_present) == (0, 1)
    # a decision written later but dated earlier than the imported one stays history: the
    # log order decides nothing, the decision time does
    store.record_decision(ABUSE, "crowd", "few", annotator="ana", decided_at=now - 3 * hour)
    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}


def test_the_cli_merge_report_names_conflicts_and_what_was_added(
    small_workspace: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.cli import run

    store = small_workspace.store
    store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    release = build_release(small_workspace)
    store.record_decision(ABUSE, "crowd", "many", annotator="ana")
    write_release(release, tmp_path / "old.json")
    store.record_decision(ARSON, "crowd", "few", annotator="dan")  # not in the release
    capsys.readouterr()

    assert run(["import", str(small_workspace.root), str(tmp_path / "old.json")]) == 0
    printed = capsys.readouterr().out
    assert "0 decisions added, 1 already present" in printed
    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}

    ana = release.videos[0].factors["crowd"].decisions[0]
    stale = ana.model_copy(update={"decided_at": datetime(2020, 1, 1, tzinfo=UTC)})
    crowd = release.videos[0].factors["crowd"].model_copy(update={"decisions": (stale,)})
    video = release.videos[0].model_copy(
        update={"factors": {**release.videos[0].factors, "crowd": crowd}}
    )
    write_release(
        release.model_copy(update={"videos": (video, *release.videos[1:])}), tmp_path / "s.json"
    )
    assert run(["import", str(small_workspace.root), str(tmp_path / "s.json")]) == 0
    printed = capsys.readouterr().out
    assert "1 decisions added" in printed
    assert "  ana: 1 decisions added" in printed
    assert "1 imported values are older than the workspace's own" in printed
    assert (
        f"decision {ABUSE} crowd (ana): imported few of 2020-01-01T00:00:00.000000+00:00, kept many"
        in printed
    )
    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}
