"""The Audit page's upload path, end to end: score tables chosen in a real browser
(Playwright, headless Chromium) are uploaded to the served app, audited, and the figures the
page shows are checked against AUROCs computed here with sklearn from the demo's ground truth.

Streamlit's AppTest cannot drive ``st.file_uploader``, so this is the only test of uploads.
"""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from browser import chromium_page
from helpers import ARTIFACTS
from sklearn.metrics import roc_auc_score

from vadscene.demo import load_demo_manifest

# Drives the served app in headless Chromium (excluded from `make test-fast`).
pytestmark = pytest.mark.browser

TIMEOUT = 60_000  # ms; machines running the suite are loaded
CSV_MODEL = "uploaded_localizer"  # the file's stem is the model name on the page
PARQUET_MODEL = "uploaded_constant"


# --- expected values, computed here -------------------------------------------------------


def _truth(root: Path) -> pd.DataFrame:
    """One row per frame of the demo: video, category, frame, label (from the demo manifest,
    whose intervals end exclusively)."""
    parts = []
    for video in load_demo_manifest(root / "benchmark").videos:
        label = np.zeros(video.num_frames, dtype=int)
        for start, end in video.anomalous_intervals:
            label[start:end] = 1
        parts.append(
            pd.DataFrame(
                {
                    "video": video.video_id,
                    "category": video.category,
                    "frame": np.arange(video.num_frames),
                    "label": label,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _planted_scores(root: Path, truth: pd.DataFrame, model: str) -> np.ndarray:
    """The demo model's per-frame scores, in the row order of ``truth``."""
    folder = root / "benchmark" / "scores" / model
    return np.concatenate([np.load(folder / f"{video}.npy") for video in truth["video"].unique()])


def _expected_metrics(truth: pd.DataFrame, scores: np.ndarray) -> dict[str, float]:
    """The six granularities of the audit, from sklearn's AUROC (ties count one half)."""
    frames = truth.assign(score=scores)
    y, s = frames["label"].to_numpy(), frames["score"].to_numpy()
    positives, negatives = int(y.sum()), int((1 - y).sum())
    within_u = within_pairs = 0.0
    per_video = []
    for _video, rows in frames.groupby("video", sort=False):
        a, n = int(rows["label"].sum()), int((1 - rows["label"]).sum())
        if a and n:  # a mixed video
            auroc = roc_auc_score(rows["label"], rows["score"])
            per_video.append(auroc)
            within_u += auroc * a * n
            within_pairs += a * n
    micro = roc_auc_score(y, s)
    total_pairs = positives * negatives
    normal = frames[frames["category"] == "Normal"]
    same_category, versus_normal = [], []
    for _category, rows in frames[frames["category"] != "Normal"].groupby("category"):
        same_category.append(roc_auc_score(rows["label"], rows["score"]))
        against = pd.concat([rows, normal])
        versus_normal.append(roc_auc_score(against["label"], against["score"]))
    return {
        "micro": micro,
        "within": within_u / within_pairs,
        "cross": (micro * total_pairs - within_u) / (total_pairs - within_pairs),
        "macro": float(np.mean(per_video)),
        "per_category": float(np.mean(same_category)),
        "category_vs_normal": float(np.mean(versus_normal)),
    }


def _expected_summary(truth: pd.DataFrame) -> dict[str, float]:
    """Frames, w (share of anomalous-normal pairs inside one video) and the oracle
    video-constant AUROC (every frame scored by its video's anomalous fraction)."""
    by_video = truth.groupby("video", sort=False)["label"].agg(["sum", "size"])
    a, n = by_video["sum"], by_video["size"] - by_video["sum"]
    fraction = truth.groupby("video", sort=False)["label"].transform("mean")
    return {
        "videos": len(by_video),
        "frames": len(truth),
        "w": float((a * n).sum() / (a.sum() * n.sum())),
        "oracle": roc_auc_score(truth["label"], fraction),
    }


# --- driving the page ---------------------------------------------------------------------


def _idle(page) -> None:
    """Wait until no script run is in progress."""
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=TIMEOUT)


def _open_audit(page, url: str) -> None:
    page.goto(f"{url}/audit")
    page.get_by_role("button", name="Run audit").wait_for(timeout=TIMEOUT)
    _idle(page)  # the first run, which drew the button, has ended


def _upload(page, files: list[Path]) -> None:
    """Choose ``files`` in the uploader and wait until each is uploaded (its chip shows).

    Call it while the app is idle: files chosen while a rerun is in progress (one the
    previous widget change started) were dropped by the uploader in about half the tries,
    never even sent to the server.
    """
    page.locator("input[type=file]").set_input_files([str(f) for f in files])
    for file in files:
        page.get_by_role("button", name=f"Remove {file.name}").wait_for(timeout=TIMEOUT)


def _run(page) -> None:
    page.get_by_role("button", name="Run audit").click()


def _table(page, title: str) -> list[dict[str, str]]:
    """Open the expander ``title`` and read its data grid's rows (header → cell text) from
    the grid's accessible table, which holds the values the canvas draws."""
    label = page.locator("summary").get_by_text(title, exact=True)
    expander = page.locator("[data-testid=stExpander]").filter(has=label)
    expander.locator("summary").click()
    expander.locator("td[role=gridcell]").first.wait_for(state="attached", timeout=TIMEOUT)
    grid = expander.locator("table[role=grid]")
    header = grid.locator("thead th").all_inner_texts()
    rows = grid.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.querySelectorAll('td')).map(c => c.innerText))"
    )
    return [dict(zip(header, row, strict=True)) for row in rows]


def _no_exception(page) -> None:
    exceptions = page.locator("[data-testid=stException]")
    assert exceptions.count() == 0, exceptions.all_inner_texts()


# --- the tests ----------------------------------------------------------------------------


def test_uploaded_score_tables_are_audited_and_the_page_shows_their_aurocs(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, root = served
    truth = _truth(root)
    localizer = _planted_scores(root, truth, "localizer")
    constant = _planted_scores(root, truth, "video_constant")
    # A CSV with a frame column, rows shuffled (the frame column orders them back) ...
    csv_file = tmp_path / f"{CSV_MODEL}.csv"
    table = truth[["video", "frame"]].assign(score=localizer)
    table.sample(frac=1.0, random_state=7).to_csv(csv_file, index=False)
    # ... and a Parquet table without one (rows in frame order).
    parquet_file = tmp_path / f"{PARQUET_MODEL}.parquet"
    truth[["video"]].assign(score=constant).to_parquet(parquet_file, index=False)
    expected = {
        CSV_MODEL: _expected_metrics(truth, localizer),
        PARQUET_MODEL: _expected_metrics(truth, constant),
    }
    summary = _expected_summary(truth)
    # The planted behaviours hold, so the comparison below is not between two chance values:
    # the localizer ranks within videos, the constant scorer cannot (every pair inside a video
    # is a tie).
    assert expected[CSV_MODEL]["within"] > 0.9
    assert expected[PARQUET_MODEL]["within"] == 0.5

    with chromium_page(1400, 1000) as page:
        _open_audit(page, url)
        _upload(page, [csv_file, parquet_file])
        # Audit the uploads only: drop the workspace's model list (selected by default).
        page.get_by_role("button", name="Remove benchmark/models.json").click()
        page.get_by_role("button", name="Remove benchmark/models.json").wait_for(
            state="detached", timeout=TIMEOUT
        )
        bootstrap = page.get_by_label("Bootstrap replicates")
        bootstrap.fill("0")  # point values only: the CIs are not checked here
        bootstrap.press("Enter")
        _run(page)

        page.get_by_role("button", name="Download the report").wait_for(timeout=TIMEOUT)
        _no_exception(page)
        assert page.locator("[data-testid=stAlertContentError]").count() == 0
        line = (
            page.locator("[data-testid=stMarkdownContainer] p")
            .filter(has_text="oracle video-constant AUROC")
            .inner_text()
        )
        assert f"{summary['videos']} videos" in line
        assert f"{summary['frames']} frames" in line  # as `vadscene audit` prints it
        assert f"w = {100 * summary['w']:.3f} %" in line
        assert f"oracle video-constant AUROC {summary['oracle']:.4f}" in line

        metrics = _table(page, "Metrics")
        page.screenshot(path=str(ARTIFACTS / "audit-upload.png"))
        shown: dict[str, dict[str, float]] = {}
        for row in metrics:
            shown.setdefault(row["model"], {})[row["granularity"]] = float(row["value"])
        # Only the visible rows of the grid are in the document: at least each model's first.
        assert set(shown) == {CSV_MODEL, PARQUET_MODEL}, metrics
        assert "micro" in shown[CSV_MODEL] and "micro" in shown[PARQUET_MODEL]
        for model, values in shown.items():
            for granularity, value in values.items():
                assert value == pytest.approx(expected[model][granularity], abs=1e-9), (
                    model,
                    granularity,
                )

        controls = {row["model"]: row for row in _table(page, "Controls")}
        assert set(controls) == {CSV_MODEL, PARQUET_MODEL}
        for model in controls:
            micro = float(controls[model]["micro"])
            assert micro == pytest.approx(expected[model]["micro"], abs=1e-9)

        # The report the page offers holds every granularity of both uploads.
        with page.expect_download(timeout=TIMEOUT) as download:
            page.get_by_role("button", name="Download the report").click()
        report = zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes()))
        rows = list(csv.DictReader(io.StringIO(report.read("metrics.csv").decode())))
        assert {(r["model"], r["granularity"]) for r in rows} == {
            (model, granularity) for model in expected for granularity in expected[model]
        }
        for r in rows:
            assert float(r["value"]) == pytest.approx(
                expected[r["model"]][r["granularity"]], abs=1e-9
            ), r
        _no_exception(page)


BAD_UPLOADS = {
    # file name → (rows written, text the error must contain)
    "no_score_column.csv": (
        lambda truth, scores: truth[["video", "frame"]].assign(prob=scores),
        [
            "no_score_column.csv",
            "missing column(s) score",
            "expected columns video",
            "the header has 3 column(s)",
        ],
    ),
    "stray_video.csv": (
        lambda truth, scores: pd.concat(
            [
                truth[["video", "frame"]].assign(score=scores),
                pd.DataFrame({"video": "Robbery999_x264", "frame": [0, 1], "score": [0.1, 0.2]}),
            ]
        ),
        ["stray_video.csv", "1 videos not in the ground truth: Robbery999_x264"],
    ),
    "short_video.csv": (
        lambda truth, scores: (
            truth[["video", "frame"]]
            .assign(score=scores)
            .query("not (video == 'Arson001_x264' and frame >= 200)")
        ),
        ["short_video.csv", "video Arson001_x264: 200 scores but the ground truth has 240 frames"],
    ),
    "blank_video_name.csv": (
        lambda truth, scores: pd.concat(
            [
                truth[["video", "frame"]].assign(score=scores),
                pd.DataFrame({"video": [None], "frame": [0], "score": [0.5]}),
            ]
        ),
        ["blank_video_name.csv", "1 rows have no video name (the first is data row 3031)"],
    ),
}


@pytest.mark.parametrize("name", list(BAD_UPLOADS))
def test_a_bad_upload_is_one_error_naming_the_file_and_the_page_survives(
    served: tuple[str, Path], tmp_path: Path, name: str
) -> None:
    url, root = served
    truth = _truth(root)
    scores = _planted_scores(root, truth, "localizer")
    write, needles = BAD_UPLOADS[name]
    bad = tmp_path / name
    write(truth, scores).to_csv(bad, index=False)

    with chromium_page(1400, 1000) as page:
        _open_audit(page, url)
        _upload(page, [bad])
        _run(page)
        error = page.locator("[data-testid=stAlertContentError]")
        page.locator("[data-testid=stAlertContentError], [data-testid=stException]").first.wait_for(
            timeout=TIMEOUT
        )
        _no_exception(page)
        message = error.inner_text()
        for needle in needles:
            assert needle in message, message
        # No result is shown, and the page still works: the upload can be removed and a
        # run on the workspace's own model list then succeeds.
        assert page.get_by_role("button", name="Download the report").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"audit-upload-error-{bad.stem}.png"))
        page.get_by_role("button", name=f"Remove {name}").click()
        page.get_by_role("button", name=f"Remove {name}").wait_for(
            state="detached", timeout=TIMEOUT
        )
        bootstrap = page.get_by_label("Bootstrap replicates")
        bootstrap.fill("0")
        bootstrap.press("Enter")
        _run(page)
        page.get_by_role("button", name="Download the report").wait_for(timeout=TIMEOUT)
        error.wait_for(state="detached", timeout=TIMEOUT)
        _no_exception(page)
