"""The real app, served by `vadscene app` and driven in headless Chromium (Playwright)."""

from __future__ import annotations

import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import ARTIFACTS, current_values

# Drives the served app in headless Chromium (excluded from `make test-fast`).
pytestmark = pytest.mark.browser

VIDEO = "Arson001_x264"


def _current(root: Path, annotator: str) -> dict[str, str | None]:
    return current_values(root, annotator, VIDEO)


def _wait_for(condition, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.2)


READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"


def focus_on(page, factor_key: str) -> None:
    """Press ArrowDown and wait until the focused row is ``factor_key``."""
    page.keyboard.press("ArrowDown")
    page.locator(f".vs-row.vs-focus[data-factor='{factor_key}']").wait_for(timeout=30_000)


def shown_values(page) -> dict[str, str]:
    """factor → the value the panel shows as the annotator's own (auto poles excluded)."""
    return page.evaluate(
        "() => Object.fromEntries(Array.from(document.querySelectorAll('.vs-row'))"
        ".filter(r => r.querySelector('.vs-mine'))"
        ".map(r => [r.dataset.factor, r.querySelector('.vs-mine').dataset.value]))"
    )


def test_annotate_with_the_keyboard_reload_and_undo(served: tuple[str, Path]) -> None:
    url, root = served
    with chromium_page(1400, 1000) as page:
        page.goto(f"{url}/?annotator=e2e&video={VIDEO}")
        page.wait_for_function(READY, timeout=60_000)
        video = page.locator("video:not([hidden])")
        video.wait_for(timeout=30_000)
        start = video.evaluate("v => v.currentTime")
        _wait_for(lambda: video.evaluate("v => v.currentTime") > start + 0.5)  # it plays

        assert video.evaluate("v => v.playbackRate") == 1
        page.keyboard.press("]")
        assert video.evaluate("v => v.playbackRate") == 1.25

        page.keyboard.press("1")  # focused factor: colour → "color"
        _wait_for(lambda: _current(root, "e2e").get("color") == "color")
        focus_on(page, "resolution")
        focus_on(page, "continuity")
        page.keyboard.press("2")
        _wait_for(lambda: _current(root, "e2e").get("continuity") == "multi-view")
        focus_on(page, "elevation")
        page.keyboard.press("a")
        _wait_for(lambda: _current(root, "e2e").get("elevation") == "ambiguous")

        page.get_by_role("textbox", name="Note about this video").fill("2a typed here is a note")
        page.wait_for_timeout(700)
        assert len(_current(root, "e2e")) == 3  # keys typed into a text box decide nothing

        page.reload()
        page.wait_for_function(READY, timeout=60_000)
        want = {"color": "color", "continuity": "multi-view", "elevation": "ambiguous"}
        try:
            _wait_for(lambda: shown_values(page) == want, 30)
        except AssertionError:
            page.screenshot(path=str(ARTIFACTS / "annotate-after-reload-failed.png"))
            with sqlite3.connect(root / "annotations.db") as db:
                log = db.execute(
                    "SELECT factor, value, source FROM decisions WHERE annotator = 'e2e' "
                    "ORDER BY decision_id"
                ).fetchall()
            raise AssertionError(
                f"after reload the page shows {shown_values(page)}; the log holds {log}"
            ) from None
        _wait_for(lambda: video.evaluate("v => v.playbackRate") == 1.25)  # speed remembered
        page.locator(".vs-row.vs-focus[data-factor='elevation']").wait_for()  # and the focus
        page.screenshot(path=str(ARTIFACTS / "annotate.png"))

        page.keyboard.press("u")
        _wait_for(lambda: _current(root, "e2e").get("elevation") is None)
        assert _current(root, "e2e")["continuity"] == "multi-view"
        _wait_for(lambda: "elevation" not in shown_values(page))

        page.goto(f"{url}/")  # no name in the URL: this browser remembers it
        _wait_for(lambda: "annotator=e2e" in page.evaluate("() => location.href"), 60)
        page.wait_for_function(READY, timeout=60_000)

        page.goto(f"{url}/review?annotator=e2e")
        page.get_by_text("Agreement between annotators").wait_for(timeout=30_000)
        page.locator("[data-testid='stDataFrame'] canvas").first.wait_for(timeout=30_000)
        page.wait_for_timeout(2000)
        page.screenshot(path=str(ARTIFACTS / "review.png"), full_page=True)


# Keys pressed back to back, none waiting for the page: (key, the factor it must land on, value).
TYPEAHEAD = [
    ("1", "color", "color"),
    ("ArrowDown", None, None),
    ("ArrowDown", None, None),
    ("2", "continuity", "multi-view"),
    ("ArrowDown", None, None),
    ("a", "elevation", "ambiguous"),
    ("ArrowDown", None, None),
    ("1", "field_of_view", "close"),
    ("ArrowDown", None, None),
    ("ArrowDown", None, None),
    ("2", "crowd", "many"),
    ("2", None, None),  # the value crowd already has: nothing new to record
]


def test_keys_typed_faster_than_the_page_reruns_land_once_each_where_focused(
    served: tuple[str, Path],
) -> None:
    """Streamlit folds a rerun request into a pending one and can replay a run's input into a
    later run, so keys pressed while the page is still rerunning were once lost or applied to
    a factor focused later. Each key must land exactly once, in order, on the factor that was
    focused when it was pressed."""
    url, root = served
    with chromium_page(1400, 1000) as page:
        page.goto(f"{url}/?annotator=typeahead&video={VIDEO}")
        page.wait_for_function(READY, timeout=60_000)
        for key, _factor, _value in TYPEAHEAD:
            page.keyboard.press(key)
        expected = [(factor, value) for _key, factor, value in TYPEAHEAD if factor is not None]

        def logged() -> list[tuple[str, str]]:
            with sqlite3.connect(root / "annotations.db") as db:
                return db.execute(
                    "SELECT factor, value FROM decisions WHERE annotator = 'typeahead' "
                    "ORDER BY decision_id"
                ).fetchall()

        try:
            _wait_for(lambda: len(logged()) >= len(expected), 30)
        except AssertionError:
            raise AssertionError(f"the log holds {logged()}, expected {expected}") from None
        page.locator(".vs-row.vs-focus[data-factor='crowd']").wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # room for a replayed key to land twice
        assert logged() == expected


@pytest.mark.parametrize(
    "attempt",
    [
        "../../etc/passwd",
        "..%2F..%2Fetc%2Fpasswd",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "%252e%252e%252fetc%252fpasswd",
        "%2Fetc%2Fpasswd",
        "..%5C..%5Cvadscene.yaml",
    ],
)
def test_paths_outside_the_workspace_are_refused(served: tuple[str, Path], attempt: str) -> None:
    url, _ = served
    request = urllib.request.Request(f"{url}/vadscene/video/{attempt}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            status, kind, body = response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        status, kind, body = error.code, error.headers["Content-Type"], error.read()
    # Refused by the video route (400/404), or — when the decoded path no longer matches it —
    # answered by Streamlit's page fallback: never a file.
    assert status in (400, 404) or (status == 200 and kind.startswith("text/html")), status
    assert b"root:" not in body and b"dataset:" not in body


def _stored_note(root: Path, annotator: str) -> str | None:
    """The current note of VIDEO by ``annotator`` in the store (the last mark of that kind)."""
    with sqlite3.connect(root / "annotations.db") as db:
        row = db.execute(
            "SELECT value FROM marks WHERE mark_id = (SELECT MAX(mark_id) FROM marks "
            "WHERE video_id = ? AND annotator = ? AND kind = 'note')",
            (VIDEO, annotator),
        ).fetchone()
    return row[0] if row else None


def _decision_count(root: Path) -> int:
    with sqlite3.connect(root / "annotations.db") as db:
        return db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]


def test_a_typed_note_survives_a_reload_and_saves_while_typing(
    served: tuple[str, Path],
) -> None:
    """A note is saved while it is typed (no blur, no Ctrl+Enter): typed and reloaded at once,
    it is restored from the browser's draft and saved; keys typed in the box decide nothing."""
    url, root = served
    with chromium_page(1400, 1000) as page:
        page.goto(f"{url}/?annotator=notes&video={VIDEO}")
        box = page.get_by_role("textbox", name="Note about this video")
        box.wait_for(timeout=30_000)
        page.wait_for_function(READY, timeout=60_000)
        drafts = "() => Object.keys(localStorage).filter(k => k.startsWith('vadscene.note:'))"

        first = "typed, then reloaded at once"
        box.click()
        page.keyboard.type(first)
        page.reload()
        box.wait_for(timeout=30_000)
        try:
            _wait_for(lambda: _stored_note(root, "notes") == first, 30)
        except AssertionError:
            page.screenshot(path=str(ARTIFACTS / "note-after-reload-failed.png"))
            raise AssertionError(f"the store holds {_stored_note(root, 'notes')!r}") from None
        _wait_for(lambda: box.input_value() == first, 30)
        page.get_by_text("saved", exact=True).wait_for(timeout=30_000)
        _wait_for(lambda: page.evaluate(drafts) == [], 30)  # the draft goes once it landed

        # Autosave: typed without leaving the box, the note reaches the store.
        decisions = _decision_count(root)
        box.click()
        page.keyboard.press("End")
        page.keyboard.type(" and autosaved")
        _wait_for(lambda: _stored_note(root, "notes") == f"{first} and autosaved", 30)
        assert page.evaluate("() => document.activeElement.tagName") == "TEXTAREA"

        # Keys of the page's keyboard map, typed in the box, are text: no decision, no flag,
        # no navigation.
        page.keyboard.type(" 2 a 1 n u f")
        expected = f"{first} and autosaved 2 a 1 n u f"
        _wait_for(lambda: _stored_note(root, "notes") == expected, 30)
        assert box.input_value() == expected
        page.get_by_text("saved", exact=True).wait_for(timeout=30_000)
        assert _decision_count(root) == decisions
        assert _current(root, "notes") == {}
        assert f"video={VIDEO}" in page.evaluate("() => location.href")
        with sqlite3.connect(root / "annotations.db") as db:
            kinds = db.execute(
                "SELECT DISTINCT kind FROM marks WHERE annotator = 'notes'"
            ).fetchall()
        assert kinds == [("note",)]
        page.screenshot(path=str(ARTIFACTS / "annotate-note.png"))
