"""The dispute queue driven by keys in the real app in headless Chromium: a number key picks,
Enter records the lead's consensus, s skips, u undoes it, and no key typed into a text box
reaches the queue. After every key the store is read through a read-only store of its own;
the expected queue order comes from SQL over the decision rows."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import ARTIFACTS

from vadscene.annotate.urls import video_url
from vadscene.core.catalogue import load_catalogue
from vadscene.store.workspace import Workspace

pytestmark = pytest.mark.browser

LEAD = "lea"
READY = "() => window.__vadsceneDisputes && window.__vadsceneDisputes.ready"
TIMEOUT = 60_000  # ms; machines running the suite are loaded
KEYS = load_catalogue().keys


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.2)


def _open_cases(root: Path) -> list[tuple[str, str]]:
    """(video, factor) where current human votes differ and no consensus stands, by video id
    then catalogue order — read with SQL from the workspace's database."""
    with sqlite3.connect(root / "annotations.db") as db:
        disputed = db.execute(
            "SELECT video_id, factor FROM current_decisions WHERE value IS NOT NULL "
            "AND source IN ('manual', 'override') GROUP BY video_id, factor "
            "HAVING COUNT(DISTINCT value) > 1"
        ).fetchall()
        settled = set(
            db.execute(
                "SELECT video_id, factor FROM current_decisions "
                "WHERE source = 'consensus' AND value IS NOT NULL"
            ).fetchall()
        )
    return sorted((k for k in disputed if k not in settled), key=lambda k: (k[0], KEYS.index(k[1])))


def _consensus(root: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(video, factor) → (value, annotator) of the current consensus, via a read-only store."""
    with Workspace.open(root, read_only=True) as reader:
        return {
            (d.video_id, d.factor): (d.value, d.annotator)
            for d in reader.store.current_decisions()
            if d.source == "consensus" and d.value is not None
        }


def _leads_log(root: Path) -> list[tuple[str, str, str | None, bool]]:
    with Workspace.open(root, read_only=True) as reader:
        return [
            (d.video_id, d.factor, d.value, d.undoes is not None)
            for d in reader.store.decision_log(annotator=LEAD)
        ]


def _on_screen(page) -> tuple[str, str]:
    surface = page.locator(".vd-disputes")
    return surface.get_attribute("data-video"), surface.get_attribute("data-factor")


def test_keys_pick_confirm_skip_and_undo(served: tuple[str, Path]) -> None:
    url, root = served
    with Workspace.open(root) as workspace:
        store = workspace.store
        first, second = sorted(store.video_ids())[:2]
        for who, crowd, color in (("ana_t", "few", "color"), ("ben_t", "many", "grayscale")):
            store.record_decision(first, "crowd", crowd, annotator=who)
            store.record_decision(first, "color", color, annotator=who)
            store.record_decision(
                second, "setting", "indoor" if crowd == "few" else "outdoor", annotator=who
            )
        store.set_mark(first, "note", "the smoke hides the crowd", annotator="ben_t")
    cases = _open_cases(root)
    assert cases[:2] == [(first, "color"), (first, "crowd")] and (second, "setting") in cases
    third = cases[2]  # the demo's own disagreement on the second video comes before setting
    assert _consensus(root) == {}
    values = load_catalogue().factor("color").values

    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/disputes?annotator={LEAD}")
        page.wait_for_function(READY, timeout=TIMEOUT)
        page.locator(f".vd-disputes[data-video='{first}'][data-factor='color']").wait_for(
            timeout=TIMEOUT
        )
        video = page.locator(".vd-video")
        assert video.evaluate("v => new URL(v.src).pathname") == video_url(first)
        _wait_for(lambda: video.evaluate("v => v.currentTime") > 0.2)  # it plays
        votes = page.locator(".vd-votes").inner_text()
        assert "ana_t\tcolor" in votes and "ben_t\tgrayscale\tthe smoke hides the crowd" in votes
        assert page.locator(".vd-who b").inner_text() == LEAD

        page.keyboard.press("2")  # picks, records nothing yet
        page.locator(f".vd-disputes[data-chosen='{values[1]}']").wait_for()
        page.locator(".vd-choice.vd-chosen", has_text=values[1]).wait_for()
        assert _consensus(root) == {}

        page.keyboard.press("Enter")
        _wait_for(lambda: _consensus(root) == {(first, "color"): (values[1], LEAD)})
        page.locator(".vd-message.vd-ok", has_text=f"recorded as {LEAD}").wait_for(timeout=TIMEOUT)
        _wait_for(lambda: _on_screen(page) == (first, "crowd"))  # the next case
        page.screenshot(path=str(ARTIFACTS / "disputes.png"))

        page.keyboard.press("s")
        _wait_for(lambda: _on_screen(page) == third)
        page.locator(".vd-message.vd-ok", has_text=f"Skipped {first} · crowd").wait_for()
        assert _consensus(root) == {(first, "color"): (values[1], LEAD)}  # skip writes nothing

        page.keyboard.press("u")
        _wait_for(lambda: _consensus(root) == {})
        page.locator(".vd-message.vd-ok", has_text="Undid your consensus").wait_for()
        _wait_for(lambda: _on_screen(page) == (first, "color"))  # open again, shown again

        # Keys typed into a text box stay there.
        page.evaluate(
            "() => { const box = document.createElement('input'); box.id = 'typed';"
            " document.body.appendChild(box); box.focus(); }"
        )
        page.keyboard.type("1")
        page.keyboard.press("Enter")
        page.keyboard.type("su")
        assert page.locator("#typed").input_value() == "1su"
        page.wait_for_timeout(1500)
        assert _on_screen(page) == (first, "color")
        assert page.locator(".vd-disputes").get_attribute("data-chosen") == ""
        assert page.locator(".vd-disputes").get_attribute("data-pending") == "0"
        assert _consensus(root) == {}

        page.locator("#typed").evaluate("box => box.blur()")
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        _wait_for(lambda: _consensus(root) == {(first, "color"): (values[0], LEAD)})
        page.locator(".vd-disputes[data-pending='0']").wait_for()
        page.wait_for_timeout(1000)  # reruns that replay the event write nothing more

    # One row per key that writes: the consensus, its undo, the consensus again.
    assert _leads_log(root) == [
        (first, "color", values[1], False),
        (first, "color", None, True),
        (first, "color", values[0], False),
    ]
