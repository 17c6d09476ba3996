"""The Annotate surface in headless Chromium: the whole panel at a glance, identity and focus,
the filmstrip and frame counter, a player that says why it cannot play, a refused commit, and
the queue. Expected values are read from the workspace's SQLite file by a connection of the
test's own."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import ARTIFACTS, current_values

from vadscene.annotate.session import video_queue
from vadscene.core.catalogue import load_catalogue
from vadscene.store.workspace import Workspace
from vadscene.video.thumbnails import FILMSTRIP_THUMBS, filmstrip_frames

pytestmark = pytest.mark.browser

VIDEO = "Arson001_x264"
READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"
CATALOGUE = load_catalogue()


def _wait_for(condition, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met in time")
        time.sleep(0.2)


def _query(root: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(root / "annotations.db") as db:
        return db.execute(sql, params).fetchall()


def _open(page, url: str, annotator: str, video: str = VIDEO) -> None:
    page.goto(f"{url}/?annotator={annotator}&video={video}")
    page.wait_for_function(READY, timeout=60_000)
    page.locator(f".vs-annotate[data-video='{video}']").wait_for(timeout=30_000)


def _focus(page, factor: str) -> None:
    page.locator(f".vs-row[data-factor='{factor}'] .vs-name").click()
    page.locator(f".vs-row.vs-focus[data-factor='{factor}']").wait_for()


def test_every_factor_is_visible_at_1440x900_with_auto_poles_set_apart(
    served: tuple[str, Path],
) -> None:
    url, root = served
    auto = dict(
        _query(
            root,
            "SELECT factor, value FROM current_decisions WHERE annotator = 'auto' AND video_id = ?",
            (VIDEO,),
        )
    )
    assert auto  # the demo measures resolution and motion
    with chromium_page(1440, 900) as page:
        _open(page, url, "glance")
        rows = page.locator(".vs-row")
        assert rows.count() == len(CATALOGUE.factors) == 12
        for i in range(rows.count()):
            box = rows.nth(i).bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900, i
        assert page.evaluate("() => window.scrollY") == 0
        # Decided so far: the auto poles (the annotator has decided nothing).
        done = page.locator(".vs-done")
        assert done.inner_text() == f"{len(auto)} / 12 decided"
        for factor, pole in auto.items():
            chip = page.locator(f".vs-row[data-factor='{factor}'] .vs-chip.vs-auto")
            assert chip.get_attribute("data-value") == pole
            assert page.locator(f".vs-row[data-factor='{factor}'] .vs-mine").count() == 0
        page.screenshot(path=str(ARTIFACTS / "annotate-1440x900.png"))

        # One key accepts the pole as the person's own decision; one key shows the criterion.
        factor, pole = next(iter(auto.items()))
        _focus(page, factor)
        page.keyboard.press("y")
        _wait_for(lambda: current_values(root, "glance", VIDEO).get(factor) == pole)
        assert _query(root, "SELECT source FROM decisions WHERE annotator = 'glance'") == [
            ("override",)
        ]
        page.locator(f".vs-row[data-factor='{factor}'] .vs-mine[data-value='{pole}']").wait_for()
        page.keyboard.press("c")
        criterion = CATALOGUE.factor(factor).criterion
        _wait_for(lambda: criterion in page.locator(".vs-criterion").inner_text())

        page.set_viewport_size({"width": 1280, "height": 720})
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "annotate-1280x720.png"))
        print(f"screenshots in {ARTIFACTS}")


def test_the_name_is_chosen_in_a_dialog_and_hotkeys_never_land_in_a_text_box(
    served: tuple[str, Path],
) -> None:
    """After typing a name and Enter, `2 ↓ 1 n` once turned `newbie` into `newbie21n`; and `n`
    typed into the note after Escape. Now the name box is in a dialog that closes, and Enter
    or Escape leaves the note box."""
    url, root = served
    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/?video={VIDEO}")
        name = page.get_by_role("textbox", name="Your name")
        name.wait_for(timeout=60_000)
        name.fill("auto")
        page.keyboard.press("Enter")
        page.get_by_text("'auto' is reserved for measured decisions").wait_for(timeout=30_000)
        assert "annotator=" not in page.evaluate("() => location.href")
        name.fill("newbie")
        page.keyboard.press("Enter")
        _wait_for(lambda: "annotator=newbie" in page.evaluate("() => location.href"), 60)
        page.wait_for_function(READY, timeout=60_000)
        assert page.get_by_role("textbox", name="Your name").count() == 0  # the dialog is gone
        for key in ["2", "ArrowDown", "1", "n"]:
            page.keyboard.press(key)
        _wait_for(lambda: len(current_values(root, "newbie", VIDEO)) == 2)
        assert current_values(root, "newbie", VIDEO) == {
            "color": "grayscale",
            "resolution": "high",
        }
        assert _query(
            root, "SELECT DISTINCT annotator FROM decisions WHERE annotator LIKE 'newbie%'"
        ) == [("newbie",)]
        page.get_by_text("Annotating as newbie").wait_for()
        assert "annotator=newbie&" in page.evaluate("() => location.href") + "&"

        # The note: `e` goes into it, Escape (or Enter) leaves it, hotkeys then decide.
        video = page.evaluate("() => window.__vadsceneAnnotate.current")
        assert video != VIDEO  # `n` moved on
        page.keyboard.press("e")
        assert page.evaluate("() => document.activeElement.tagName") == "TEXTAREA"
        page.keyboard.type("cut at 4 s")
        page.keyboard.press("Escape")
        assert page.evaluate("() => document.activeElement.tagName") != "TEXTAREA"
        page.keyboard.press("1")  # resolution (focused since ↓) → high, on the video on screen
        page.keyboard.press("e")
        page.keyboard.press("End")
        page.keyboard.type("!")
        page.keyboard.press("Enter")
        page.keyboard.press("2")  # resolution → low
        _wait_for(lambda: current_values(root, "newbie", video).get("resolution") == "low")
        notes = _query(
            root,
            "SELECT value FROM marks WHERE annotator = 'newbie' AND kind = 'note' "
            "AND video_id = ? ORDER BY mark_id",
            (video,),
        )
        assert notes and notes[-1] == ("cut at 4 s!",)
        assert page.locator(".vs-note-text").input_value() == "cut at 4 s!"
        resolution = _query(
            root,
            "SELECT value FROM decisions WHERE annotator = 'newbie' AND video_id = ? "
            "ORDER BY decision_id",
            (video,),
        )
        assert resolution == [("high",), ("low",)]

        # Switching is the surface's button and the same dialog; keys typed then name nobody.
        page.get_by_role("button", name="Switch annotator").click()
        name = page.get_by_role("textbox", name="Your name")
        name.wait_for(timeout=30_000)
        name.fill("second")
        page.keyboard.press("Enter")
        page.get_by_text("Annotating as second").wait_for(timeout=30_000)
        assert "annotator=second&" in page.evaluate("() => location.href") + "&"
        page.keyboard.press("1")  # resolution → high, now as "second"
        _wait_for(lambda: current_values(root, "second", video).get("resolution") == "high")
        assert current_values(root, "newbie", video).get("resolution") == "low"


def test_a_note_reopened_right_after_escape_keeps_what_is_typed_next(
    served: tuple[str, Path],
) -> None:
    """Escape in the note, then `e` to reopen it before the browser ran its timers (it handles
    queued keys first: a busy page, a fast typist): the page's key handler once blurred the
    box Escape had left, now focused again, so the next characters went nowhere — the name
    test's "!" lost on a loaded machine. The two keys are dispatched in one task here, which is
    that order made certain; the characters after them are real key presses."""
    url, root = served
    with chromium_page(1440, 900) as page:
        _open(page, url, "reopen")
        page.keyboard.press("e")
        page.keyboard.type("cut")
        page.evaluate(
            """() => {
              const key = (target, key) => target.dispatchEvent(new KeyboardEvent(
                "keydown", { key, bubbles: true, cancelable: true }));
              key(document.querySelector(".vs-note-text"), "Escape");
              key(document.activeElement, "e");
            }"""
        )
        page.wait_for_timeout(100)  # the timers have run
        assert page.evaluate("() => document.activeElement.className") == "vs-note-text"
        page.keyboard.press("End")
        page.keyboard.type(" at 4 s")
        page.keyboard.press("Enter")
        assert page.locator(".vs-note-text").input_value() == "cut at 4 s"
        _wait_for(
            lambda: (
                _query(
                    root,
                    "SELECT value FROM marks WHERE annotator = 'reopen' AND kind = 'note' "
                    "ORDER BY mark_id DESC LIMIT 1",
                )
                == [("cut at 4 s",)]
            ),
            what="the whole note stored",
        )


def test_filmstrip_seeks_and_the_frame_counter_ends_at_the_last_index(
    served: tuple[str, Path],
) -> None:
    url, root = served
    ((frames, fps),) = _query(
        root, "SELECT num_frames, fps FROM videos WHERE video_id = ?", (VIDEO,)
    )
    with chromium_page(1440, 900) as page:
        _open(page, url, "strip")
        thumbs = page.locator(".vs-strip [data-frame]")
        assert thumbs.count() == FILMSTRIP_THUMBS
        shown = [int(thumbs.nth(i).get_attribute("data-frame")) for i in range(thumbs.count())]
        assert shown == filmstrip_frames(frames)
        strip = page.evaluate(
            "async () => { const r = await fetch(window.__vadsceneAnnotate.cache"
            f"['{VIDEO}'].filmstrip); return [r.status, r.headers.get('content-type')]; }}"
        )
        assert strip == [200, "image/jpeg"]

        video = page.locator("video:not([hidden])")
        thumbs.nth(6).click()
        want = (shown[6] + 0.5) / fps
        _wait_for(lambda: abs(video.evaluate("v => v.currentTime") - want) < 0.5 / fps)
        assert video.evaluate("v => v.paused")

        # The locator is re-resolved on each call: wait for an element whose metadata is loaded.
        _wait_for(
            lambda: video.evaluate(
                "v => { v.pause(); if (!isFinite(v.duration)) return false; "
                "v.currentTime = v.duration; return true; }"
            ),
            what="the player's duration",
        )
        last = frames - 1
        _wait_for(
            lambda: page.locator(".vs-time").inner_text().endswith(f"frame {last} / {last}"),
            what=f"the counter at frame {last} / {last}",
        )
        assert f"/ {frames}" not in page.locator(".vs-time").inner_text()


def test_a_video_the_browser_cannot_be_given_says_why(served: tuple[str, Path]) -> None:
    url, root = served
    gone = "Shooting001_x264"
    ((path,),) = _query(root, "SELECT path FROM videos WHERE video_id = ?", (gone,))
    (root / "benchmark" / "videos" / Path(path).name).unlink()
    with chromium_page(1440, 900) as page:
        _open(page, url, "why", gone)
        why = page.locator(".vs-why")
        why.wait_for(timeout=30_000)
        text = why.inner_text()
        assert f"Cannot play {gone}" in text and "missing from the video folder" in text


def test_a_refused_commit_is_shown_kept_and_retried(served: tuple[str, Path]) -> None:
    url, root = served
    with chromium_page(1440, 900) as page:
        _open(page, url, "retry")
        with sqlite3.connect(root / "annotations.db") as db:
            db.execute(
                "CREATE TRIGGER refuse_retry BEFORE INSERT ON decisions "
                "WHEN NEW.annotator = 'retry' "
                "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
        try:
            page.keyboard.press("2")
            message = page.locator(".vs-message.vs-error")
            message.wait_for(timeout=30_000)
            assert "not saved" in message.inner_text() and "retried" in message.inner_text()
            assert current_values(root, "retry", VIDEO) == {}
            assert (
                page.locator(".vs-row[data-factor='color'] .vs-mine").get_attribute("data-value")
                == "grayscale"
            )  # the key is kept on screen, marked as saving
        finally:
            with sqlite3.connect(root / "annotations.db") as db:
                db.execute("DROP TRIGGER refuse_retry")
        _wait_for(lambda: current_values(root, "retry", VIDEO) == {"color": "grayscale"})
        page.locator(".vs-message.vs-ok").wait_for(timeout=30_000)
        assert _query(root, "SELECT COUNT(*) FROM decisions WHERE annotator = 'retry'") == [(1,)]


def test_the_queue_jumps_anywhere_and_the_url_follows_at_once(served: tuple[str, Path]) -> None:
    url, root = served
    videos = [v for (v,) in _query(root, "SELECT video_id FROM videos ORDER BY video_id")]
    with chromium_page(1440, 900) as page:
        _open(page, url, "queue")
        page.locator(".vs-queue-title").click()
        items = page.locator(".vs-queue li")
        # the rows are drawn by the list's toggle event, which the browser fires after the click
        _wait_for(lambda: items.count() == len(videos), what="the opened queue's rows")
        assert [items.nth(i).get_attribute("data-video") for i in range(items.count())] == videos
        target = videos[7]
        items.nth(7).click()
        # Switched and in the URL before any server round trip could have happened.
        assert page.evaluate("() => window.__vadsceneAnnotate.current") == target
        assert f"video={target}" in page.evaluate("() => location.href")
        page.keyboard.press("1")
        _wait_for(lambda: current_values(root, "queue", target).get("color") == "color")
        page.reload()
        page.wait_for_function(READY, timeout=60_000)
        assert page.evaluate("() => window.__vadsceneAnnotate.current") == target


def test_the_queue_rows_follow_each_commit_and_move(served: tuple[str, Path]) -> None:
    """The rows are updated in place after each confirmation (not redrawn): each must still say
    what the store says, and only the video on screen is marked as here."""
    url, root = served
    manual = [f.key for f in CATALOGUE.factors if f.source == "manual"]

    def rows(page) -> dict[str, str]:
        return page.evaluate(
            "() => Object.fromEntries([...document.querySelectorAll('.vs-queue li')]"
            ".map((li) => [li.dataset.video, li.className]))"
        )

    def expected(here: str) -> dict[str, str]:
        with Workspace.open(root, read_only=True) as workspace:
            queue = video_queue(workspace.store, "rows")
        return {v: f"vs-q-{s}" + (" vs-here" if v == here else "") for v, s in queue}

    with chromium_page(1440, 900) as page:
        _open(page, url, "rows")
        page.locator(".vs-queue-title").click()  # the list is drawn while it is open
        page.locator(".vs-queue li").first.wait_for()
        for factor in manual:
            _focus(page, factor)
            page.keyboard.press("a")
        _wait_for(lambda: len(current_values(root, "rows", VIDEO)) == len(manual))
        _wait_for(lambda: rows(page) == expected(VIDEO), what="rows equal to the store's queue")
        assert rows(page)[VIDEO] != "vs-q-incomplete vs-here"
        page.keyboard.press("f")
        _wait_for(lambda: rows(page)[VIDEO] == "vs-q-flagged vs-here", what="flagged row")
        assert rows(page) == expected(VIDEO)
        page.keyboard.press("n")
        following = page.evaluate("() => window.__vadsceneAnnotate.current")
        assert following != VIDEO
        _wait_for(lambda: rows(page) == expected(following), what="here moved with the video")


def test_with_no_video_in_the_url_the_video_completed_stays_the_one_decided(
    served: tuple[str, Path],
) -> None:
    """A page load sends the surface the queue's next incomplete video and costs no second
    run to hear back which video is on screen. Completing that video changes the queue's next
    incomplete one: the page must go on sending (and the keys go on landing on) the video on
    screen, not the queue's new choice — else the panel would fall back to stale data. The
    name is chosen in the dialog, so the URL the page's runs see names the annotator only; the
    video after the first is already complete, so the queue's choice once the first is done
    is two videos on, whose neighbourhood does not hold the first."""
    url, root = served
    annotator = "pinned"
    manual = [f.key for f in CATALOGUE.factors if f.source == "manual"]
    with Workspace.open(root) as workspace:
        order = [v for v, _status in video_queue(workspace.store, annotator)]
        first, second = order[0], order[1]
        for key in manual:
            workspace.store.record_decision(second, key, "ambiguous", annotator=annotator)
    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/")
        name = page.get_by_role("textbox", name="Your name")
        name.wait_for(timeout=60_000)
        name.fill(annotator)
        page.keyboard.press("Enter")
        page.wait_for_function(READY, timeout=60_000)
        page.locator(f".vs-annotate[data-video='{first}']").wait_for(timeout=30_000)
        for _row in CATALOGUE.factors:  # "1" on every row, top to bottom, not waiting
            page.keyboard.press("1")
            page.keyboard.press("ArrowDown")
        want = {f.key: f.values[0] for f in CATALOGUE.factors}
        _wait_for(
            lambda: current_values(root, annotator, first) == want, what="every answer stored"
        )
        page.locator(".vs-annotate[data-pending='0']").wait_for(timeout=30_000)
        page.wait_for_timeout(500)  # a run that sent another video's data would show by now
        assert page.locator(".vs-annotate").get_attribute("data-video") == first
        shown = page.evaluate(
            "() => Object.fromEntries([...document.querySelectorAll('.vs-row')]"
            ".map(r => [r.dataset.factor, r.querySelector('.vs-mine')?.dataset.value]))"
        )
        assert shown == want
        # The video is complete now, and the next key still lands on it.
        assert all(current_values(root, annotator, first).get(k) for k in manual)
        page.keyboard.press("ArrowUp")  # back on the last row
        page.keyboard.press("2")
        last = CATALOGUE.factors[-1]
        _wait_for(
            lambda: current_values(root, annotator, first).get(last.key) == last.values[1],
            what="the correction stored on the video on screen",
        )
