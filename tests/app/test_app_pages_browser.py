"""Review, Audit and the page itself in the served app, driven in headless Chromium: an
adjudication waits for a person's choice, the audit figures keep their designed size, and the
browser fetches nothing from anywhere but the app."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser import chromium_page
from helpers import ARTIFACTS

from vadscene.demo import load_demo_manifest

pytestmark = pytest.mark.browser

TIMEOUT = 60_000  # ms; machines running the suite are loaded
DISPUTED = ("Explosion001_x264", "continuity")  # the demo's one disagreement


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.2)


def _consensus(root: Path) -> list[tuple[str, str, str, str]]:
    with sqlite3.connect(root / "annotations.db") as db:
        return db.execute(
            "SELECT video_id, factor, value, annotator FROM decisions "
            "WHERE source = 'consensus' ORDER BY decision_id"
        ).fetchall()


def _votes(root: Path) -> dict[str, str]:
    """annotator → current manual value on the disputed (video, factor), read from the log."""
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT annotator, value FROM decisions WHERE decision_id IN (SELECT MAX(decision_id) "
            "FROM decisions WHERE video_id = ? AND factor = ? AND source = 'manual' "
            "GROUP BY annotator)",
            DISPUTED,
        ).fetchall()
    return dict(rows)


def test_adjudication_has_no_default_and_records_only_a_choice(served: tuple[str, Path]) -> None:
    """The defect: the dropdown started on the factor's first value, so one click on "Record
    consensus" recorded a value nobody chose."""
    url, root = served
    votes = _votes(root)
    assert len(set(votes.values())) == 2, votes  # the demo's disagreement, as this test expects
    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/review?annotator=judge")
        select = page.locator("[data-testid='stSelectbox']").filter(has_text="Camera continuity")
        select.wait_for(timeout=TIMEOUT)
        box = select.get_by_role("combobox")
        assert box.input_value() == ""  # nothing preselected …
        assert box.get_attribute("placeholder") == "Choose the consensus value…"
        # The label names who voted what, as the grid cell does.
        label = " · ".join(f"{who}: {value}" for who, value in sorted(votes.items()))
        assert label in select.inner_text()
        button = page.get_by_role("button", name="Record consensus")
        assert button.is_disabled()
        button.click(force=True)  # a disabled button records nothing, however clicked
        page.wait_for_timeout(1500)
        assert _consensus(root) == []
        page.screenshot(path=str(ARTIFACTS / "review-adjudicate.png"))

        select.click()
        options = page.get_by_role("option")
        options.first.wait_for(timeout=TIMEOUT)
        shown = options.all_inner_texts()
        for who, value in votes.items():
            assert f"{value} — voted by {who}" in shown
        chosen = votes[min(votes)]
        page.get_by_role("option", name=f"{chosen} — voted by {min(votes)}").click()
        _wait_for(lambda: button.is_enabled())
        assert box.input_value() == f"{chosen} — voted by {min(votes)}"
        assert _consensus(root) == []  # choosing is not yet recording
        button.click()
        _wait_for(lambda: _consensus(root) == [(*DISPUTED, chosen, "judge")])


def test_audit_figures_keep_their_designed_size(served: tuple[str, Path]) -> None:
    """The defects: the composition chart drew no bars in the app, and the bias dot plot was
    squeezed to ~110 px with its subtitle clipped (Streamlit fits a chart into its width)."""
    url, root = served
    frames = {
        v.video_id: (sum(end - start for start, end in v.anomalous_intervals), v.num_frames)
        for v in load_demo_manifest(root / "benchmark").videos
    }
    nonzero_bars = sum(
        (anomalous > 0) + (total - anomalous > 0) for anomalous, total in frames.values()
    )
    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/audit")
        page.get_by_role("button", name="Run audit").click()
        page.get_by_text("Download the report").wait_for(timeout=120_000)
        charts = page.locator("[data-testid='stVegaLiteChart']")
        composition = charts.filter(has_text="Benchmark composition")
        composition.locator("svg").wait_for(timeout=TIMEOUT)
        heights = composition.evaluate(
            "e => Array.from(e.querySelectorAll('g.mark-rect path'))"
            ".map(p => p.getBoundingClientRect().height)"
        )
        assert len(heights) == 2 * len(frames)
        assert sum(h > 0.5 for h in heights) == nonzero_bars

        bias = charts.filter(has_text="Do scores on normal footage separate videos by scene?")
        geometry = bias.evaluate(
            """e => {
                const svg = e.querySelector('svg').getBoundingClientRect();
                const box = e.getBoundingClientRect();
                const ticks = {};
                for (const t of e.querySelectorAll('text')) {
                    const r = t.getBoundingClientRect();
                    ticks[t.textContent] = (r.left + r.right) / 2;
                }
                const titles = Array.from(
                    e.querySelectorAll('.role-title-text text, .role-title-subtitle text')
                ).map(t => t.getBoundingClientRect().right);
                return {x0: ticks['0.0'], x5: ticks['0.5'], svgRight: svg.right,
                        boxRight: box.right, titlesRight: Math.max(...titles)};
            }"""
        )
        # The x axis spans [0, 1]: the plot is as wide as designed (560 px), not ~110.
        assert 2 * (geometry["x5"] - geometry["x0"]) > 500, geometry
        # Title and subtitles are drawn whole inside the chart, and the chart inside its box.
        assert geometry["titlesRight"] <= geometry["svgRight"] + 1, geometry
        assert geometry["svgRight"] <= geometry["boxRight"] + 1, geometry
        bias.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "audit-bias-plot.png"))


def test_the_pages_fetch_nothing_from_the_network(served: tuple[str, Path]) -> None:
    """The defect: the page icon was fetched from fonts.gstatic.com. Every request of every
    page — favicon, fonts, scripts, video — must go to the app itself."""
    url, _root = served
    app_host = urlsplit(url).netloc
    with chromium_page(1440, 900) as page:
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(f"{url}/?annotator=offline&video=Arson001_x264")
        page.locator("video").first.wait_for(timeout=TIMEOUT)
        for path, ready in [
            ("review", "Agreement between annotators"),
            ("overview", "Videos"),
            ("measure", "Measure"),
            ("audit", "Run audit"),
            ("export", "Export"),
        ]:
            page.goto(f"{url}/{path}")
            page.get_by_text(ready).first.wait_for(timeout=TIMEOUT)
            page.wait_for_timeout(1500)
        icon = page.evaluate("() => document.querySelector(\"link[rel~='icon']\").href")
    assert urlsplit(icon).netloc == app_host, icon
    outside = sorted(
        {
            u
            for u in requests
            if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).netloc != app_host
        }
    )
    assert outside == []
    assert len(requests) > 20  # the pages were really loaded and watched
