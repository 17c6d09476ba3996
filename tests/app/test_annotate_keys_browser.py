"""Keys pressed faster than the page can answer, in the real app in headless Chromium.

The failure this guards against (issue 9): with Streamlit radios as writers, pressing the other
value of a factor that already showed one (an auto pole, an earlier answer) and moving on within
~0.1 s let a rerun replay the stale widget value, so corrections were silently reverted and the
log filled with decisions nobody made.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import time
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import ARTIFACTS
from playwright.sync_api import Error as PlaywrightError

from vadscene.core.catalogue import AMBIGUOUS, load_catalogue

pytestmark = pytest.mark.browser

ANNOTATOR = "fast"
VIDEOS = 10
READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"


def _key_script(video_ids: list[str], seed: int = 9) -> tuple[list[tuple[str, int]], list]:
    """(key, pause in ms after it) for a pass over ``VIDEOS`` videos, and the value keys as
    (video, factor, value) in pressed order.

    Every factor of every video gets one to three value keys — the first often the auto pole
    or a value the next key corrects — and focus moves on at once. The factor focus carries
    over from one video to the next (↓ wraps around), as the page keeps it.
    """
    rng = random.Random(seed)
    factors = list(load_catalogue().factors)
    keys: list[tuple[str, int]] = []
    values: list[tuple[str, str, str]] = []
    focus = 0
    for video in video_ids[:VIDEOS]:
        for _ in range(len(factors)):
            factor = factors[focus]
            choices = [*factor.values, AMBIGUOUS]
            for _press in range(rng.choice([1, 2, 2, 3])):
                number = rng.randrange(len(choices))
                keys.append((str(number + 1), rng.randint(20, 50)))
                values.append((video, factor.key, choices[number]))
            keys.append(("ArrowDown", rng.randint(20, 50)))
            focus = (focus + 1) % len(factors)
        keys.append(("n", rng.randint(20, 50)))
    return keys, values


def _expected_log(values: list[tuple[str, str, str]]) -> dict[tuple[str, str], list[str]]:
    """Per (video, factor): the values of the keys that changed what the annotator had."""
    log: dict[tuple[str, str], list[str]] = {}
    for video, factor, value in values:
        cell = log.setdefault((video, factor), [])
        if not cell or cell[-1] != value:
            cell.append(value)
    return log


def _logged(root: Path) -> dict[tuple[str, str], list[str]]:
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT video_id, factor, value FROM decisions WHERE annotator = ? "
            "ORDER BY decision_id",
            (ANNOTATOR,),
        ).fetchall()
    log: dict[tuple[str, str], list[str]] = {}
    for video, factor, value in rows:
        log.setdefault((video, factor), []).append(value)
    return log


def _current(root: Path) -> dict[tuple[str, str], str]:
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT video_id, factor, value FROM current_decisions WHERE annotator = ?",
            (ANNOTATOR,),
        ).fetchall()
    return {(video, factor): value for video, factor, value in rows}


def test_corrections_typed_fast_across_videos_land_exactly_as_pressed(
    served: tuple[str, Path],
) -> None:
    url, root = served
    with sqlite3.connect(root / "annotations.db") as db:
        video_ids = [r[0] for r in db.execute("SELECT video_id FROM videos ORDER BY video_id")]
        auto = db.execute("SELECT COUNT(*) FROM decisions WHERE annotator = 'auto'").fetchone()
    assert len(video_ids) >= VIDEOS and auto[0] > 0  # auto poles stand to be overridden
    keys, values = _key_script(video_ids)
    assert len(values) >= 200
    expected = _expected_log(values)
    expected_rows = sum(len(cell) for cell in expected.values())

    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/?annotator={ANNOTATOR}&video={video_ids[0]}")
        page.wait_for_function(READY, timeout=60_000)
        for key, pause in keys:
            page.keyboard.press(key)
            page.wait_for_timeout(pause)

        # Wait until the log stops growing (every key handled), then compare.
        deadline, previous, stable_since = time.monotonic() + 120, -1, time.monotonic()
        while time.monotonic() < deadline:
            count = sum(len(cell) for cell in _logged(root).values())
            if count != previous:
                previous, stable_since = count, time.monotonic()
            elif time.monotonic() - stable_since > (3 if count >= expected_rows else 15):
                break
            time.sleep(0.3)
        # For a person to look at; a page still busy decoding may not oblige in time.
        with contextlib.suppress(PlaywrightError):
            page.screenshot(path=str(ARTIFACTS / "annotate-fast-keys.png"), timeout=10_000)

    logged = _logged(root)
    wrong = {
        cell: (logged.get(cell), want)
        for cell, want in expected.items()
        if logged.get(cell) != want
    }
    extra = {cell: rows for cell, rows in logged.items() if cell not in expected}
    assert not wrong and not extra, (
        f"{len(wrong)} of {len(expected)} (video, factor) logs differ from the keys pressed "
        f"(logged, pressed): {dict(list(wrong.items())[:6])}; cells nobody pressed: {extra}"
    )
    last = {cell: want[-1] for cell, want in expected.items()}
    assert _current(root) == last
