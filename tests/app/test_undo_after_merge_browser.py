"""`u` after a merge, in the real app in headless Chromium (issue 24, item 3).

Undo is the annotator's last action in this workspace, never a row an import brought. A merged
release can carry an older decision of hers that lands as her newest row in the log without
becoming current; taken for her last action, undoing it brought back the value before it and
changed a factor she had not touched since. Expected values are read from the workspace's
SQLite file by a connection of the test's own, or by a read-only store.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import current_values

from vadscene.core.catalogue import load_catalogue
from vadscene.release.releases import build_release, import_release, read_release, release_json
from vadscene.store.workspace import Workspace

pytestmark = pytest.mark.browser

ANNOTATOR = "ana"
VIDEO = "Arson001_x264"
READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"
HOUR = timedelta(hours=1)
CROWD = load_catalogue().factor("crowd").values[0]  # key "1" on the crowd row


def _ready(page) -> None:
    page.wait_for_function(READY, timeout=60_000)
    page.locator(f".vs-annotate[data-video='{VIDEO}']").wait_for(timeout=30_000)


def _with_older_color(data: dict, decided_at: datetime) -> dict:
    """``data`` (a release of ana alone) as a colleague's copy would hold it: her colour on
    VIDEO still grayscale, decided at ``decided_at``, with the video's value and the colour
    support counts following from that, so the release stays valid."""
    video = next(v for v in data["videos"] if v["video_id"] == VIDEO)
    color = video["factors"]["color"]
    (decision,) = (d for d in color["decisions"] if d["annotator"] == ANNOTATOR)
    decision.update(value="grayscale", decided_at=decided_at.isoformat())
    color["value"] = "grayscale"
    values = [v["factors"].get("color", {}).get("value") for v in data["videos"]]
    for row in data["support"]:
        if row["factor"] == "color":
            row["n_positive"] = values.count(row["positive"])
            row["n_negative"] = values.count(row["negative"])
    return data


def _all_current(root: Path) -> dict[tuple[str, str, str], str]:
    """(video, factor, annotator) → value of everyone's current decisions; cleared are absent."""
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT video_id, factor, annotator, value FROM current_decisions "
            "WHERE value IS NOT NULL"
        ).fetchall()
    return {(video, factor, who): value for video, factor, who, value in rows}


def _newest_row(root: Path) -> tuple[int, str, str | None]:
    """(id, factor, value) of ana's highest decision id."""
    with sqlite3.connect(root / "annotations.db") as db:
        return db.execute(
            "SELECT decision_id, factor, value FROM decisions WHERE annotator = ? "
            "ORDER BY decision_id DESC LIMIT 1",
            (ANNOTATOR,),
        ).fetchone()


def test_u_after_a_merge_and_a_reload_undoes_the_key_pressed_not_the_imported_row(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, root = served
    now = datetime.now(UTC)
    with Workspace.open(root) as workspace:
        store = workspace.store
        # Strings, not datetimes: a vadscene from before instants takes only these.
        store.record_decision(
            VIDEO,
            "color",
            "grayscale",
            annotator=ANNOTATOR,
            decided_at=(now - 3 * HOUR).isoformat(),
        )
        store.record_decision(
            VIDEO, "color", "color", annotator=ANNOTATOR, decided_at=(now - 2 * HOUR).isoformat()
        )
        exported = json.loads(release_json(build_release(workspace, annotator=ANNOTATOR)))

    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/?annotator={ANNOTATOR}&video={VIDEO}")
        _ready(page)
        page.locator(".vs-row[data-factor='crowd'] .vs-name").click()
        page.locator(".vs-row.vs-focus[data-factor='crowd']").wait_for()
        page.keyboard.press("1")  # her last action in this workspace
        page.locator(".vs-message.vs-ok", has_text=f"Saved crowd = {CROWD}").wait_for(
            timeout=30_000
        )
        assert current_values(root, ANNOTATOR, VIDEO) == {"color": "color", "crowd": CROWD}
        pressed = _newest_row(root)
        assert pressed[1:] == ("crowd", CROWD)

        # A colleague's workspace holds her older colour history; it is merged meanwhile.
        older = tmp_path / "colleague.json"
        older.write_text(
            json.dumps(_with_older_color(exported, now - 3 * HOUR + timedelta(seconds=1)))
        )
        with Workspace.open(root) as workspace:
            assert import_release(read_release(older), workspace).decisions_added == 1
        # The trap: the merged row is her highest id, yet not current (an hour older than "color").
        assert _newest_row(root)[1:] == ("color", "grayscale")
        assert current_values(root, ANNOTATOR, VIDEO) == {"color": "color", "crowd": CROWD}
        before = _all_current(root)

        page.reload()
        _ready(page)
        page.keyboard.press("u")
        reply = page.locator(".vs-message").filter(has_text=re.compile("undo|undid"))
        reply.wait_for(timeout=30_000)
        shown, kind = reply.inner_text(), reply.get_attribute("class")

    with Workspace.open(root, read_only=True) as workspace:
        now_current = workspace.store.current_values(ANNOTATOR)
    assert now_current == {(VIDEO, "color"): "color"}, (
        f"after `u` ana's decisions are {now_current} (the page said {shown!r}); "
        f"only crowd = {CROWD}, her last key, should be gone"
    )
    expected = {key: value for key, value in before.items() if key != (VIDEO, "crowd", ANNOTATOR)}
    assert _all_current(root) == expected  # nothing anyone else decided moved either
    with sqlite3.connect(root / "annotations.db") as db:
        undo = db.execute(
            "SELECT factor, value, undoes FROM decisions WHERE annotator = ? "
            "ORDER BY decision_id DESC LIMIT 1",
            (ANNOTATOR,),
        ).fetchone()
    assert undo == ("crowd", None, pressed[0])
    assert (shown, kind) == (f"undid crowd on {VIDEO}", "vs-message vs-ok")
