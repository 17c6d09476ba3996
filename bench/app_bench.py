"""App responsiveness on a 2,000-video workspace, each against a floor measured in the same run.

    python bench/app_bench.py [--videos 2000]

Measured server-side (the browser adds its own rendering):

- decision → commit: ``AnnotationStore.record_decision`` (validation, override lookup, one
  ``BEGIN IMMEDIATE`` … ``COMMIT`` with ``synchronous=FULL``) against the floor of a bare
  ``INSERT`` + commit on a SQLite file with the same settings. Target ≤ 150 ms.
- moving to the next video: one run of the Annotate page script (AppTest) for another video
  (as after the surface's ``view`` event), against the floor of an empty Streamlit script run
  the same way. Target ≤ 300 ms.
- a key's rerun: one decision committed, then a run of the Annotate page on the same video
  (an upper bound of what each confirmation costs the server: in the browser a key reruns only
  the surface's fragment; the page keeps its queue current per key), against the same floor.
  The browser adds a Streamlit round trip (``bench/app_browser_bench.py``).
- the review table for 2,000 videos × 3 annotators: ``review_table``, a first Review page
  render (building the table) and a rerun (the table cached per store revision), against the
  floor of reading the decision rows with one SQL query. Target ≤ 1 s, and for
  ``review_table`` ≤ 3× that floor. Beside it, the store's own read of the same rows
  (``current_decisions``: aliases applied, one ``Decision`` per row) and ``review_table``
  handed that read (what the page does, sharing one read among its views), each against the
  same floor: where the table's time goes.

The workspace holds tiny placeholder registrations (no video decoding is involved in these
paths) with three annotators' decisions on every manual factor of every video, each keeping
the video's own value four times in five (a seeded draw), so about half the (video, factor)
cells hold a disagreement.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from vadscene.annotate.review import review_table
from vadscene.core.paths import app_entry_point
from vadscene.core.records import VideoInfo
from vadscene.store.workspace import Workspace


def timed(action: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``action`` in seconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


ANNOTATORS = ("ana", "ben", "carla")


def build_workspace(root: Path, videos: int) -> Workspace:
    (root / "videos").mkdir(parents=True)
    workspace = Workspace.create(root / "ws", video_root=root / "videos", dataset="bench")
    store = workspace.store
    store.register_videos(
        VideoInfo(
            video_id=f"Abuse{i:05d}_x264",
            category="Abuse",
            path=f"Abuse{i:05d}_x264.mp4",
            num_frames=300,
            fps=30.0,
            duration_s=10.0,
            width=320,
            height=240,
            codec="h264",
            size_bytes=1,
            fingerprint=f"b2s:{i}",
        )
        for i in range(videos)
    )
    manual = [f for f in workspace.catalogue.factors if f.source == "manual"]
    rng = random.Random(7)
    rows = []
    for i in range(videos):
        for f in manual:
            value = rng.choice(f.values)
            for annotator in ANNOTATORS:
                vote = value if rng.random() < 0.8 else rng.choice(f.values)
                rows.append((f"Abuse{i:05d}_x264", f.key, vote, annotator))
    with sqlite3.connect(store.path) as db:  # bulk-load the history quickly, as rows
        db.executemany(
            "INSERT INTO decisions (video_id, factor, value, annotator, source, decided_at) "
            "VALUES (?, ?, ?, ?, 'manual', '2026-01-01T00:00:00.000000+00:00')",
            rows,
        )
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        workspace = build_workspace(root, args.videos)
        store = workspace.store
        os.environ["VADSCENE_WORKSPACE"] = str(workspace.root)
        ids = store.video_ids()

        counter = iter(range(10**9))
        decision = timed(
            lambda: store.record_decision(
                ids[next(counter) % len(ids)], "crowd", "many", annotator="carla"
            ),
            50,
        )
        floor_db = sqlite3.connect(root / "floor.db", isolation_level=None)
        floor_db.execute("PRAGMA journal_mode=WAL")
        floor_db.execute("PRAGMA synchronous=FULL")
        floor_db.execute("CREATE TABLE t (a TEXT, b TEXT, c TEXT)")

        def bare_insert() -> None:
            floor_db.execute("BEGIN IMMEDIATE")
            floor_db.execute("INSERT INTO t VALUES ('x', 'y', 'z')")
            floor_db.execute("COMMIT")

        insert = timed(bare_insert, 50)

        page = AppTest.from_file(str(app_entry_point()), default_timeout=60)
        page.query_params["annotator"] = "carla"
        page.run()
        positions = iter(range(10**9))

        def next_video() -> None:
            # What the surface's "view" event leads to: the page run for the video now on screen.
            page.session_state["annotate_video"] = ids[next(positions) % len(ids)]
            page.run()

        move = timed(next_video, 15)
        poles = iter(["few", "many"] * 10**6)

        def key_rerun() -> None:
            store.record_decision(
                page.session_state["annotate_video"], "crowd", next(poles), annotator="carla"
            )
            page.run()

        key = timed(key_rerun, 15)
        empty = root / "empty.py"
        empty.write_text("import streamlit as st\nst.write('')\n")
        blank = AppTest.from_file(str(empty)).run()
        floor_page = timed(blank.run, 15)

        table = timed(lambda: review_table(workspace), 7)
        read = timed(store.current_decisions, 7)
        decisions = store.current_decisions()
        shared = timed(lambda: review_table(workspace, decisions=decisions), 7)
        review = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
        review.switch_page("app_pages/review.py")
        review_page = timed(review.run, 5)  # the table is cached per store revision

        def first_render() -> None:
            st.cache_data.clear()
            review.run()

        review_first = timed(first_render, 5)
        with sqlite3.connect(store.path) as db:
            rows = timed(lambda: db.execute("SELECT * FROM current_decisions").fetchall(), 7)

    print(
        f"{args.videos} videos, {len(workspace.catalogue.factors)} factors, "
        f"{len(ANNOTATORS)} annotators\n"
    )
    print(f"{'measure':48} {'time':>10} {'floor':>10} {'ratio':>7}  target")
    lines: list[tuple[str, float, float, float | None, float | None]] = [
        ("decision → commit (record_decision)", decision, insert, 0.150, None),
        ("next video (Annotate page run)", move, floor_page, 0.300, None),
        ("a key's rerun (commit + Annotate page run)", key, floor_page, 0.150, None),
        ("review table (review_table)", table, rows, 1.0, 3.0),
        ("  the store's read of the rows (current_decisions)", read, rows, None, None),
        ("  review_table handed that read", shared, rows, None, None),
        ("review page, first render (builds the table)", review_first, rows, 1.0, None),
        ("review page, rerun (filters, clicks)", review_page, rows, 1.0, None),
    ]
    for name, seconds, floor, target, ratio in lines:
        goals = [f"≤ {target * 1000:.0f} ms"] if target is not None else []
        goals += [f"≤ {ratio:g}×"] if ratio is not None else []
        met = (target is None or seconds <= target) and (ratio is None or seconds <= ratio * floor)
        verdict = f"{', '.join(goals)} {'met' if met else 'MISSED'}" if goals else ""
        print(
            f"{name:48} {seconds * 1000:8.1f} ms {floor * 1000:8.1f} ms "
            f"{seconds / floor:6.1f}×  {verdict}"
        )


if __name__ == "__main__":
    main()
