"""`vadscene annotators …` and `vadscene assign` on real workspaces: what each command writes
and prints, every refusal one line with the store left byte for byte as it was, and a rename
or merge followed by agreement, releases and a colleague's release imported afterwards."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
import typer
from support.examples import BAD, GOOD, NORMAL, ROAD, registry_workspace
from support.snapshots import snapshot_store, store_changes

from vadscene.annotate.review import agreement
from vadscene.annotate.serving import LOGIN_PREFIX
from vadscene.cli import app, run
from vadscene.release.releases import build_release, import_release
from vadscene.store.workspace import STORE_NAME, Workspace

CATEGORIES = ("Abuse", "Arson", "Burglary", "Normal_Videos_")
"""Name stems of the campaign's videos; "Normal_Videos_" names have the category Normal."""


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = run([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _refused(capsys: pytest.CaptureFixture[str], root: Path, *args: str | Path) -> str:
    """Run a command that must be refused: exit 1, one line on stderr, the store unchanged.
    Returns the line."""
    before = snapshot_store(root / STORE_NAME)
    code, out, err = _cli(capsys, *args)
    assert code == 1, out + err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert store_changes(before, snapshot_store(root / STORE_NAME)) == []
    return err.removeprefix("error: ").strip()


def _secret(output: str, base_url: str = "http://127.0.0.1:8501") -> str:
    links = re.findall(re.escape(base_url + LOGIN_PREFIX) + r"(\S+)", output)
    assert len(links) == 1, output  # printed once
    return links[0]


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    """A workspace of 26 registered videos in four categories (7, 7, 7, 5)."""
    counts = {f"{stem}{i:03d}_x264": 100 for stem in CATEGORIES[:3] for i in range(1, 8)}
    counts |= {f"Normal_Videos_{i:03d}_x264": 100 for i in range(1, 6)}
    return registry_workspace(tmp_path, counts)


def _tables(output: str) -> list[list[dict[str, str]]]:
    """The tab-separated tables a piped command prints: runs of lines holding tabs, each
    headed by its first line."""
    tables: list[list[list[str]]] = []
    previous = False
    for line in output.splitlines():
        tabbed = "\t" in line
        if tabbed and not previous:
            tables.append([])
        if tabbed:
            tables[-1].append(line.split("\t"))
        previous = tabbed
    return [[dict(zip(t[0], row, strict=True)) for row in t[1:]] for t in tables]


def _rows(output: str) -> list[dict[str, str]]:
    (table,) = _tables(output)
    return table


def _plan_tables(output: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """`assign`'s two tables: per annotator, and per category."""
    per_annotator, per_category = _tables(output)
    return (
        {row["annotator"]: row for row in per_annotator},
        {row["category"]: row for row in per_category},
    )


# --- help -----------------------------------------------------------------------------------

SUBCOMMANDS = ["add", "list", "rename", "merge", "revoke", "role", "link"]


@pytest.mark.parametrize(
    "command", [["annotators"], ["assign"]] + [["annotators", c] for c in SUBCOMMANDS]
)
def test_every_team_command_has_help_ending_in_an_example(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, _ = _cli(capsys, *command, "--help")
    assert code == 0
    flat = re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", out)).strip()
    assert f"Example: vadscene {' '.join(command)}" in flat
    assert flat.endswith(flat[flat.index("Example:") :])


def test_the_team_commands_are_served() -> None:
    root = typer.main.get_command(app)
    assert {"annotators", "assign"} <= set(root.commands)
    assert set(root.commands["annotators"].commands) == set(SUBCOMMANDS)


# --- add and link ---------------------------------------------------------------------------


def test_add_registers_the_canonical_id_and_prints_the_link_once(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    code, out, err = _cli(
        capsys, "annotators", "add", campaign, "  Ana   López ", "--email", "Ana@Lab.org"
    )
    assert (code, err) == (0, "")
    secret = _secret(out)
    assert "shown only this once" in out
    assert f"vadscene annotators link {campaign} 'ana lópez'" in out
    with Workspace.open(campaign, read_only=True) as ws:
        entry = ws.store.annotator("ANA LÓPEZ")
        assert (entry.annotator_id, entry.display_name, entry.role, entry.email) == (
            "ana lópez",
            "Ana López",
            "annotator",
            "ana@lab.org",
        )
        found = ws.store.annotator_for_secret(secret)
        assert found is not None and found.annotator_id == "ana lópez"
        assert [e.kind for e in ws.store.annotator_events()] == ["add", "link"]
        assert all(e.by is None for e in ws.store.annotator_events())  # the CLI is nobody


def test_add_a_lead_with_the_lab_servers_address(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    code, out, _ = _cli(
        capsys,
        "annotators",
        "add",
        campaign,
        "Bo",
        "--lead",
        "--base-url",
        "https://annotate.lab.org/",
    )
    assert code == 0
    secret = _secret(out, "https://annotate.lab.org")
    with Workspace.open(campaign, read_only=True) as ws:
        assert ws.store.annotator("bo").role == "lead"
        found = ws.store.annotator_for_secret(secret)
        assert found is not None and found.annotator_id == "bo"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ANA"], "annotator 'ana' is already registered"),
        (["auto"], "'auto' is reserved for measured decisions"),
        (["  "], "an annotator name is required (got an empty name)"),
        (["Cy", "--email", "cy at lab"], "'cy at lab' is not an e-mail address"),
        (
            ["Cy", "--email", "ANA@lab.org"],
            "the e-mail ana@lab.org already belongs to annotator 'ana'",
        ),
        (["Cy", "--base-url", "lab-server:8501"], "--base-url 'lab-server:8501': expected"),
        (["Cy", "--base-url", "ftp://lab"], "--base-url 'ftp://lab': expected"),
    ],
)
def test_add_refusals(
    capsys: pytest.CaptureFixture[str], campaign: Path, args: list[str], message: str
) -> None:
    assert _cli(capsys, "annotators", "add", campaign, "Ana", "--email", "ana@lab.org")[0] == 0
    assert message in _refused(capsys, campaign, "annotators", "add", campaign, *args)


def test_link_issues_a_new_link_and_the_old_one_keeps_working(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    first = _secret(_cli(capsys, "annotators", "add", campaign, "Ana")[1])
    code, out, _ = _cli(capsys, "annotators", "link", campaign, "ANA")
    assert code == 0
    second = _secret(out)
    assert second != first
    with Workspace.open(campaign, read_only=True) as ws:
        for secret in (first, second):
            found = ws.store.annotator_for_secret(secret)
            assert found is not None and found.annotator_id == "ana"


def test_link_refusals(capsys: pytest.CaptureFixture[str], campaign: Path) -> None:
    _cli(capsys, "annotators", "add", campaign, "Ana")
    _cli(capsys, "annotators", "add", campaign, "Bo")
    _cli(capsys, "annotators", "revoke", campaign, "bo")
    assert "no registered annotator 'cy' (registered: ana, bo)" in _refused(
        capsys, campaign, "annotators", "link", campaign, "cy"
    )
    assert "annotator 'bo' is revoked" in _refused(
        capsys, campaign, "annotators", "link", campaign, "bo"
    )
    assert "--base-url" in _refused(
        capsys, campaign, "annotators", "link", campaign, "ana", "--base-url", "nowhere"
    )


# --- list -----------------------------------------------------------------------------------


def test_list_piped_is_a_plain_table_and_json_has_every_field(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    for args in (["Ana", "--email", "ana@lab.org"], ["Bo", "--lead"], ["Cy"]):
        assert _cli(capsys, "annotators", "add", campaign, *args)[0] == 0
    with Workspace.open(campaign) as ws:
        store = ws.store
        store.record_decision(GOOD, "color", "grayscale", annotator="ana")
        store.record_decision(GOOD, "crowd", "few", annotator="ana")
        store.record_decision(NORMAL, "color", "color", annotator="anna")  # a typo, unregistered
        store.record_assignments([(GOOD, "ana", True), (NORMAL, "ana", True), (BAD, "bo", True)])
    _cli(capsys, "annotators", "rename", campaign, "cy", "Cyd")
    _cli(capsys, "annotators", "revoke", campaign, "bo")

    code, out, _ = _cli(capsys, "annotators", "list", campaign)
    assert code == 0
    assert not set(out) & set("│─╭╰┃━┏")  # no box drawing when piped
    rows = {row["id"]: row for row in _rows(out)}
    assert list(rows) == ["ana", "bo", "cyd", "anna"]
    assert rows["ana"] | {"added": ""} == {
        "id": "ana",
        "name": "Ana",
        "role": "annotator",
        "e-mail": "ana@lab.org",
        "added": "",
        "revoked": "",
        "aliases": "",
        "decisions": "2",
        "assigned": "2",
    }
    assert rows["bo"]["role"] == "lead" and rows["bo"]["revoked"] and rows["bo"]["assigned"] == "1"
    assert (rows["cyd"]["name"], rows["cyd"]["aliases"]) == ("Cyd", "cy")
    assert (rows["anna"]["role"], rows["anna"]["decisions"]) == ("(not registered)", "1")

    code, out, _ = _cli(capsys, "annotators", "list", campaign, "--json")
    assert code == 0
    listed = json.loads(out)
    assert [e["id"] for e in listed] == ["ana", "bo", "cyd", "anna"]
    assert set(listed[0]) == {
        "id",
        "display_name",
        "registered",
        "role",
        "email",
        "added_at",
        "revoked_at",
        "aliases",
        "decisions",
        "assigned",
    }
    assert listed[2]["aliases"] == ["cy"]
    assert listed[3]["registered"] is False


def test_list_of_a_workspace_without_annotators(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    code, out, _ = _cli(capsys, "annotators", "list", campaign)
    assert code == 0 and "no annotator yet" in out
    assert json.loads(_cli(capsys, "annotators", "list", campaign, "--json")[1]) == []


def test_list_writes_nothing(capsys: pytest.CaptureFixture[str], campaign: Path) -> None:
    _cli(capsys, "annotators", "add", campaign, "Ana")
    before = snapshot_store(campaign / STORE_NAME)
    assert _cli(capsys, "annotators", "list", campaign)[0] == 0
    assert store_changes(before, snapshot_store(campaign / STORE_NAME)) == []


# --- rename, merge, revoke, role ------------------------------------------------------------


def test_rename_moves_decisions_and_assignments_to_the_new_id(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    _cli(capsys, "annotators", "add", campaign, "Ana")
    with Workspace.open(campaign) as ws:
        ws.store.record_decision(GOOD, "color", "grayscale", annotator="ana")
        ws.store.record_assignments([(GOOD, "ana", True)])
    code, out, _ = _cli(capsys, "annotators", "rename", campaign, "ana", "Ana María")
    assert code == 0 and "renamed 'ana' to 'ana maría'" in out
    with Workspace.open(campaign, read_only=True) as ws:
        assert ws.store.annotators() == ["ana maría"]
        assert ws.store.assignments() == {"ana maría": [GOOD]}
        assert ws.store.annotator("ana").annotator_id == "ana maría"  # the old id resolves


def test_rename_refusals(capsys: pytest.CaptureFixture[str], campaign: Path) -> None:
    _cli(capsys, "annotators", "add", campaign, "Ana")
    _cli(capsys, "annotators", "add", campaign, "Bo")
    assert "no registered annotator 'cy'" in _refused(
        capsys, campaign, "annotators", "rename", campaign, "cy", "Cyd"
    )
    assert "annotator 'bo' is already registered" in _refused(
        capsys, campaign, "annotators", "rename", campaign, "ana", "BO"
    )
    assert "reserved" in _refused(capsys, campaign, "annotators", "rename", campaign, "ana", "auto")


def test_merge_refusals(capsys: pytest.CaptureFixture[str], campaign: Path) -> None:
    _cli(capsys, "annotators", "add", campaign, "Ana")
    assert "already is 'ana'" in _refused(
        capsys, campaign, "annotators", "merge", campaign, "ana", "Ana"
    )
    assert "no registered annotator 'bo'" in _refused(
        capsys, campaign, "annotators", "merge", campaign, "ana", "bo"
    )
    assert "measurement, not an annotator" in _refused(
        capsys, campaign, "annotators", "merge", campaign, "auto", "ana"
    )


def test_revoke_stops_the_link_and_keeps_the_decisions(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    secret = _secret(_cli(capsys, "annotators", "add", campaign, "Ana")[1])
    with Workspace.open(campaign) as ws:
        ws.store.record_decision(GOOD, "color", "grayscale", annotator="ana")
    code, out, _ = _cli(capsys, "annotators", "revoke", campaign, "ANA")
    assert code == 0 and "revoked 'ana'" in out
    with Workspace.open(campaign, read_only=True) as ws:
        assert ws.store.annotator_for_secret(secret) is None
        assert [d.annotator for d in ws.store.current_decisions()] == ["ana"]
    assert "already revoked" in _refused(capsys, campaign, "annotators", "revoke", campaign, "ana")
    assert "no registered annotator 'bo'" in _refused(
        capsys, campaign, "annotators", "revoke", campaign, "bo"
    )


def test_role(capsys: pytest.CaptureFixture[str], campaign: Path) -> None:
    _cli(capsys, "annotators", "add", campaign, "Ana")
    code, out, _ = _cli(capsys, "annotators", "role", campaign, "ana", "lead")
    assert code == 0 and "now has the role lead (was annotator)" in out
    with Workspace.open(campaign, read_only=True) as ws:
        assert ws.store.annotator("ana").role == "lead"
    before = snapshot_store(campaign / STORE_NAME)
    code, out, _ = _cli(capsys, "annotators", "role", campaign, "ana", "lead")
    assert code == 0 and "nothing changed" in out
    assert store_changes(before, snapshot_store(campaign / STORE_NAME)) == []
    assert "unknown role 'boss' (expected one of: annotator, lead)" in _refused(
        capsys, campaign, "annotators", "role", campaign, "ana", "boss"
    )
    assert "no registered annotator 'bo'" in _refused(
        capsys, campaign, "annotators", "role", campaign, "bo", "lead"
    )


# --- a rename or merge followed through agreement, releases and imports ---------------------


def _two_annotators_disagreeing(store, first: str, second: str, *, typo: str) -> None:
    """``first`` (some decisions written as ``typo``) and ``second`` rate color on three
    videos."""
    store.record_decision(GOOD, "color", "grayscale", annotator=first)
    store.record_decision(NORMAL, "color", "color", annotator=typo)
    store.record_decision(ROAD, "color", "color", annotator=typo)
    for video, value in ((GOOD, "grayscale"), (NORMAL, "color"), (ROAD, "grayscale")):
        store.record_decision(video, "color", value, annotator=second)


@pytest.mark.parametrize("typo", ["anna", "ANA"])
def test_after_a_merge_agreement_and_releases_count_one_annotator(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, typo: str
) -> None:
    root = registry_workspace(tmp_path, {GOOD: 30, NORMAL: 30, ROAD: 30})
    with Workspace.open(root) as ws:
        _two_annotators_disagreeing(ws.store, "ana", "bo", typo=typo)
        color = next(a for a in agreement(ws.store) if a.factor == "color")
        assert color.annotators == tuple(sorted(("ana", "bo", typo)))
    _cli(capsys, "annotators", "add", root, "ana")
    code, _out, err = _cli(capsys, "annotators", "merge", root, typo, "ana")
    assert code == 0, err
    with Workspace.open(root, read_only=True) as ws:
        color = next(a for a in agreement(ws.store) if a.factor == "color")
        assert color.annotators == ("ana", "bo")
        (pair,) = color.pairs
        # counted here: ana's grayscale/color/color against bo's grayscale/color/grayscale
        assert (pair.videos, pair.observed_agreement) == (3, pytest.approx(2 / 3))
        release = build_release(ws)
        assert release.annotators == ("ana", "bo")
        voters = {
            d.annotator
            for video in release.videos
            for assignment in video.factors.values()
            for d in assignment.decisions
            if d.source != "auto"
        }
        assert voters == {"ana", "bo"}


def test_a_colleagues_release_under_the_old_name_lands_on_the_new_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    counts = {GOOD: 30, NORMAL: 30, ROAD: 30}
    ours = registry_workspace(tmp_path / "ours", counts)
    theirs = registry_workspace(tmp_path / "theirs", counts)
    with Workspace.open(theirs) as ws:  # the colleague still writes as "ana"
        ws.store.record_decision(ROAD, "crowd", "many", annotator="ana")
        ws.store.record_decision(ROAD, "color", "color", annotator="bo")
        release = build_release(ws)
    assert "ana" in release.annotators
    with Workspace.open(ours) as ws:
        ws.store.record_decision(GOOD, "crowd", "few", annotator="ana")
    _cli(capsys, "annotators", "add", ours, "Ana")
    assert _cli(capsys, "annotators", "rename", ours, "ana", "Ana María")[0] == 0
    with Workspace.open(ours) as ws:
        import_release(release, ws, origin="colleague.json")
        store = ws.store
        assert store.annotators() == ["ana maría", "bo"]
        assert {(d.video_id, d.factor, d.annotator) for d in store.current_decisions()} == {
            (GOOD, "crowd", "ana maría"),
            (ROAD, "crowd", "ana maría"),
            (ROAD, "color", "bo"),
        }
        assert build_release(ws).annotators == ("ana maría", "bo")


# --- assign ---------------------------------------------------------------------------------


def _team(capsys: pytest.CaptureFixture[str], root: Path, *names: str) -> None:
    for name in names:
        assert _cli(capsys, "annotators", "add", root, name)[0] == 0


def _categories(root: Path) -> dict[str, str]:
    with Workspace.open(root, read_only=True) as ws:
        return {v.video_id: v.category for v in ws.store.videos()}


def _assigned(root: Path) -> dict[str, list[str]]:
    with Workspace.open(root, read_only=True) as ws:
        return ws.store.assignments()


def test_assign_writes_the_plan_and_prints_its_summary(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    _team(capsys, campaign, "Ana", "Bo", "Cy")
    code, out, err = _cli(
        capsys,
        "assign",
        campaign,
        "--annotators",
        "ana, BO ,cy",
        "--overlap",
        "2",
        "--stratify",
        "category",
        "--seed",
        "7",
    )
    assert (code, err) == (0, "")
    assigned = _assigned(campaign)
    per_video = Counter(v for videos in assigned.values() for v in videos)
    assert set(per_video) == set(_categories(campaign)) and set(per_video.values()) == {2}
    loads = {name: len(videos) for name, videos in assigned.items()}
    assert sorted(loads.values()) == [17, 17, 18]  # 52 = 2 × 26 over three
    categories = _categories(campaign)
    summary, by_category = _plan_tables(out)
    assert {n: int(r["assigned"]) for n, r in summary.items()} == loads
    assert {n: (r["started"], r["new"], r["withdrawn"]) for n, r in summary.items()} == {
        n: ("0", str(loads[n]), "0") for n in loads
    }
    for name, videos in assigned.items():
        counted = Counter(categories[v] for v in videos)
        assert {c: int(by_category[c][name]) for c in by_category} == {
            c: counted[c] for c in by_category
        }
        for category in ("Abuse", "Arson", "Burglary"):  # 14 slots of 7 videos over 3: 4 or 5
            assert counted[category] in (4, 5)
    assert "written in one transaction: 52 changes (52 assigned, 0 withdrawn)" in out
    with Workspace.open(campaign, read_only=True) as ws:
        rows = ws.store.assignment_rows()
        assert len({r.assigned_at for r in rows}) == 1  # one transaction, one time
        assert {r.assigned_by for r in rows} == {None}

    before = snapshot_store(campaign / STORE_NAME)
    code, out, _ = _cli(
        capsys,
        "assign",
        campaign,
        "--annotators",
        "ana,bo,cy",
        "--overlap",
        "2",
        "--stratify",
        "category",
        "--seed",
        "99",
    )
    assert code == 0 and "nothing to write" in out
    assert store_changes(before, snapshot_store(campaign / STORE_NAME)) == []


def test_assign_dry_run_writes_nothing(capsys: pytest.CaptureFixture[str], campaign: Path) -> None:
    _team(capsys, campaign, "Ana", "Bo")
    before = snapshot_store(campaign / STORE_NAME)
    code, out, _ = _cli(
        capsys, "assign", campaign, "--annotators", "ana,bo", "--overlap", "1", "--dry-run"
    )
    assert code == 0 and "dry run: would assign 26 and withdraw 0; nothing written" in out
    assert store_changes(before, snapshot_store(campaign / STORE_NAME)) == []


def test_replanning_keeps_started_work_and_withdraws_only_unstarted(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    _team(capsys, campaign, "Ana", "Bo", "Cy")
    assert _cli(capsys, "assign", campaign, "--annotators", "ana,bo", "--overlap", "1")[0] == 0
    first = _assigned(campaign)
    started = {(v, "ana") for v in first["ana"][:5]} | {(v, "bo") for v in first["bo"][:3]}
    with Workspace.open(campaign) as ws:
        for video, name in sorted(started):
            ws.store.record_decision(video, "color", "color", annotator=name)
    code, out, _ = _cli(capsys, "assign", campaign, "--annotators", "ana,bo,cy", "--overlap", "1")
    assert code == 0
    second = _assigned(campaign)
    pairs = {(v, n) for n, videos in second.items() for v in videos}
    assert started <= pairs
    assert sorted(len(v) for v in second.values()) == [8, 9, 9]  # 26 over three
    moved = {(v, n) for n, videos in first.items() for v in videos} - pairs
    assert not moved & started
    summary, _by_category = _plan_tables(out)
    assert (summary["ana"]["started"], summary["bo"]["started"]) == ("5", "3")
    assert int(summary["cy"]["new"]) == len(second["cy"])
    withdrawn = Counter(n for _v, n in moved)
    assert {n: int(summary[n]["withdrawn"]) for n in ("ana", "bo")} == {
        n: withdrawn[n] for n in ("ana", "bo")
    }


def test_an_annotator_left_out_of_the_team_loses_their_assignments(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    _team(capsys, campaign, "Ana", "Bo")
    _cli(capsys, "assign", campaign, "--annotators", "ana,bo", "--overlap", "1")
    code, out, _ = _cli(capsys, "assign", campaign, "--annotators", "ana", "--overlap", "1")
    assert code == 0
    assert _assigned(campaign) == {"ana": sorted(_categories(campaign))}
    summary, _by_category = _plan_tables(out)
    assert (summary["bo"]["assigned"], summary["bo"]["withdrawn"]) == ("0", "13")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--annotators", "ana,dee", "--overlap", "1"], "no registered annotator 'dee'"),
        (["--annotators", "ana,bo", "--overlap", "3"], "an overlap of 3 annotators per video"),
        (["--annotators", "ana,bo", "--overlap", "0"], "the overlap must be at least 1"),
        (["--annotators", "ana,ANA", "--overlap", "1"], "annotator 'ana' is listed twice"),
        (["--annotators", " , ", "--overlap", "1"], "--annotators: name at least one"),
        (["--annotators", "ana,cy", "--overlap", "1"], "annotator 'cy' is revoked"),
        (
            ["--annotators", "ana", "--overlap", "1", "--stratify", "colour"],
            "unknown --stratify 'colour' (expected one of: category)",
        ),
    ],
)
def test_assign_refusals(
    capsys: pytest.CaptureFixture[str], campaign: Path, args: list[str], message: str
) -> None:
    _team(capsys, campaign, "Ana", "Bo", "Cy")
    _cli(capsys, "annotators", "revoke", campaign, "cy")
    _cli(capsys, "assign", campaign, "--annotators", "ana,bo", "--overlap", "1")
    assert message in _refused(capsys, campaign, "assign", campaign, *args)


def test_assign_in_a_workspace_without_videos(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = registry_workspace(tmp_path, {})
    _team(capsys, root, "Ana")
    assert "the workspace has no videos; nothing to assign" in _refused(
        capsys, root, "assign", root, "--annotators", "ana", "--overlap", "1"
    )
