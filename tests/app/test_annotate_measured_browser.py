"""The Annotate surface in headless Chromium says what an auto factor measures: the statistic
by name and value, and the rule's thresholds, on the factor's row beside its chips. Expected
values are read from the workspace's SQLite file by a connection of the test's own."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import ARTIFACTS

pytestmark = pytest.mark.browser

VIDEO = "Arson001_x264"
READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"


def _stored(root: Path) -> tuple[dict[str, float], dict[str, tuple[str, list[float]]]]:
    with sqlite3.connect(root / "annotations.db") as db:
        values = dict(
            db.execute(
                "SELECT statistic, value FROM measurements WHERE video_id = ? AND value IS NOT "
                "NULL",
                (VIDEO,),
            ).fetchall()
        )
        rules = {
            factor: (rule, json.loads(thresholds))
            for factor, rule, thresholds in db.execute(
                "SELECT factor, rule, thresholds FROM thresholds"
            ).fetchall()
        }
    return values, rules


def test_the_auto_rows_name_the_statistic_and_its_value(served: tuple[str, Path]) -> None:
    url, root = served
    values, rules = _stored(root)
    # The demo's sharpness is in the thousands, its motion below 10 (and its rules are the
    # catalogue's: a median split for resolution, terciles for motion).
    assert values["sharpness"] >= 1000 > 10 > values["motion"]
    assert rules["resolution"][0] == "median" and rules["motion"][0] == "terciles"
    low, high = rules["motion"][1]
    expected = {
        "resolution": f"Laplacian-variance sharpness {values['sharpness']:,.0f} (median split "
        f"at {rules['resolution'][1][0]:,.0f})",
        "motion": f"mean frame-difference motion {values['motion']:.4g} (tercile splits at "
        f"{low:.4g} and {high:.4g})",
    }
    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/?annotator=reader&video={VIDEO}")
        page.wait_for_function(READY, timeout=60_000)
        page.locator(f".vs-annotate[data-video='{VIDEO}']").wait_for(timeout=30_000)
        for factor, text in expected.items():
            row = page.locator(f".vs-row[data-factor='{factor}']")
            assert row.locator(".vs-measured").inner_text() == text
            # on the chips' side of the row, below them
            chips, measured = row.locator(".vs-chips"), row.locator(".vs-measured")
            chips_box, measured_box = chips.bounding_box(), measured.bounding_box()
            assert chips_box is not None and measured_box is not None
            assert measured_box["x"] >= chips_box["x"] - 1
            assert measured_box["y"] >= chips_box["y"] + chips_box["height"] - 1
        assert page.locator(".vs-row[data-factor='color'] .vs-measured").count() == 0
        page.locator(".vs-row[data-factor='resolution']").screenshot(
            path=str(ARTIFACTS / "annotate-measured-row.png")
        )
