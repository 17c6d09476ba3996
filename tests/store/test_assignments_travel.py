"""Assignments are logged with their time and merge by it like every other piece of state
(issue 23 item 3, issue 24 item 1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from helpers import ABUSE, ARSON, NORMAL

from vadscene.release.releases import build_release, import_release, workspace_from_release
from vadscene.store.workspace import Workspace

HOUR = timedelta(hours=1)


def _at(hours_ago: float) -> str:
    return (datetime.now(UTC) - hours_ago * HOUR).isoformat()


def test_assignments_travel_and_the_newer_wins(small_workspace: Workspace, tmp_path: Path) -> None:
    store = small_workspace.store
    for name in ("ana", "ben"):
        store.register_annotator(name)
    store.record_assignments([(ABUSE, "ana", True), (ARSON, "ben", True)], at=_at(3))
    release = build_release(small_workspace)
    assert [(a.annotator, a.assigned) for a in release.videos[0].assignments] == [("ana", True)]

    with workspace_from_release(release, tmp_path / "colleague") as colleague:
        assert colleague.store.assignments() == {"ana": [ABUSE], "ben": [ARSON]}
        # later, in the lead's workspace, ABUSE moves from ana to ben
        store.record_assignments([(ABUSE, "ana", False), (ABUSE, "ben", True)], at=_at(1))
        counts = import_release(build_release(small_workspace), colleague)
        assert counts.assignments_added == 2
        assert colleague.store.assignments() == {"ben": [ABUSE, ARSON]}
        # the old release, merged again, brings nothing back: the withdrawal is newer
        again = import_release(release, colleague)
        assert again.assignments_added == 0
        assert colleague.store.assignments() == {"ben": [ABUSE, ARSON]}

    # and the other way: the lead's workspace gets the colleague's older plan, keeps its own
    older = import_release(release, small_workspace)
    assert older.assignments_added == 0
    assert store.assignments() == {"ben": [ABUSE, ARSON]}


def test_an_older_imported_assignment_is_listed_as_a_conflict(
    small_workspace: Workspace, tmp_path: Path
) -> None:
    store = small_workspace.store
    store.register_annotator("ana")
    store.record_assignments([(NORMAL, "ana", True)], at=_at(5))
    release = build_release(small_workspace)
    with Workspace.create(tmp_path / "other", video_root=None, dataset="small") as other:
        other.store.register_videos(small_workspace.store.videos())
        other.store.register_annotator("ana")  # the registry is the workspace's own
        other.store.record_assignments([(NORMAL, "ana", True)], at=_at(9))
        other.store.record_assignments([(NORMAL, "ana", False)], at=_at(2))
        counts = import_release(release, other)
        conflicts = [
            (c.kind, c.video_id, c.annotator, c.imported_value, c.local_value)
            for c in counts.conflicts
        ]
        assert conflicts == [("assignment", NORMAL, "ana", "true", "false")]
        assert counts.assignments_added == 1  # kept as history
        assert other.store.assignments() == {}
