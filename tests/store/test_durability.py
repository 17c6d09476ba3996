"""Durability under crashes and concurrency: an acknowledged decision is never lost.

An acknowledgement is what a person (or a script) is told: for a store-API writer process, the
line it prints after ``record_decision`` has returned; for the browser, the page's "Saved …"
toast. The tests SIGKILL writers and the app server mid-stream, restart them on the same
workspace, and check every acknowledged decision against the append-only log, the derived
current state, what the reloaded page shows, and ``PRAGMA integrity_check``.

The writer processes are :mod:`support.durability_writer`, run as a script.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from browser import chromium_page, require_chromium
from helpers import ARTIFACTS, copy_demo, current_values
from support.durability_writer import ACK_TIMEOUT, Writer, note_for, planned

from vadscene.core.catalogue import AMBIGUOUS, load_catalogue
from vadscene.store.database import Decision
from vadscene.store.workspace import Workspace

# Kills processes and serves the app (excluded from `make test-fast`).
pytestmark = pytest.mark.durability

CATALOGUE = load_catalogue()
FACTORS = {f.key: f for f in CATALOGUE.factors}
APP_COMMAND = (sys.executable, "-c", "from vadscene.cli import main; main()", "app")
STARTUP_TIMEOUT = 120.0  # server start, page load, first ack: generous for a loaded 2-core box


# --- the app server ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Tornado binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _wait_for(condition: Callable[[], object], what: str, timeout: float = ACK_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not met within {timeout:.0f} s: {what}")
        time.sleep(0.1)


class AppServer:
    """`vadscene app` on one workspace and port, in its own process group.

    `vadscene app` becomes the Streamlit server (it execs it, keeping its process id); any
    process Streamlit starts shares the group, so :meth:`sigkill` kills the whole group.
    """

    def __init__(self, root: Path, log: Path) -> None:
        self.root, self.log, self.port = root, log, _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def start(self) -> None:
        _wait_for(lambda: _port_is_free(self.port), f"port {self.port} released", 60)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [*APP_COMMAND, str(self.root), "--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.starts += 1
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = self.log.read_text(errors="replace")[-3000:]
                pytest.fail(f"the app did not start (start #{self.starts}):\n{tail}")
            time.sleep(0.3)

    def ensure_running(self) -> None:
        if self.process is None or self.process.poll() is not None or not self._healthy():
            self.stop()
            self.start()

    def sigkill(self) -> None:
        """SIGKILL `vadscene app` and its Streamlit server at once, as a crash would."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        """SIGTERM the group; SIGKILL it too unless the port is released within 10 s."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while not _port_is_free(self.port) and time.monotonic() < deadline:
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # Streamlit may linger after SIGTERM
        self.process.wait(timeout=30)
        self.process = None


# --- fixtures ----------------------------------------------------------------------------------


# demo_template (conftest.py): the session's demo workspace, copied by every test.


@pytest.fixture(scope="module")
def app(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """One app server shared by the browser tests (the crash test kills and restarts it)."""
    require_chromium()
    base = tmp_path_factory.mktemp("served")
    server = AppServer(copy_demo(demo_template, base / "ws"), base / "server.log")
    server.start()
    yield server
    server.stop()


# --- reading the store independently -----------------------------------------------------------


def _log(root: Path) -> list[Decision]:
    """The decision log read through a fresh plain-sqlite3 connection (not the store class)."""
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT decision_id, video_id, factor, value, annotator, source, decided_at, note, "
            "undoes, replaced_auto_value, replaced_measurement FROM decisions "
            "ORDER BY decision_id"
        ).fetchall()
    return [Decision(*row) for row in rows]


def _integrity(root: Path) -> str:
    with sqlite3.connect(root / "annotations.db") as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def _replay(log: Sequence[Decision]) -> dict[tuple[str, str, str], tuple[int, str | None]]:
    """The current state computed from the log alone: latest row per (video, factor, annotator)."""
    state: dict[tuple[str, str, str], tuple[int, str | None]] = {}
    for d in sorted(log, key=lambda d: d.decision_id):
        state[(d.video_id, d.factor, d.annotator)] = (d.decision_id, d.value)
    return state


def _assert_state_is_the_replayed_log(root: Path) -> None:
    with Workspace.open(root) as workspace:
        store = workspace.store
        current = {
            (d.video_id, d.factor, d.annotator): (d.decision_id, d.value)
            for d in store.current_decisions()
        }
        assert current == _replay(store.decision_log())
        assert store.integrity_check() == "ok"
    assert _integrity(root) == "ok"


def _assert_acks_logged(writer: Writer, rows: Sequence[Decision]) -> None:
    """Every ack of ``writer`` is a log row, in ack order, with the planned video/factor/value."""
    by_id = {d.decision_id: d for d in rows}
    ids = [ack["id"] for ack in writer.acks]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "acks out of commit order"
    for ack in writer.acks:
        row = by_id.get(ack["id"])
        assert row is not None, f"{writer.annotator}: acknowledged decision {ack} is lost"
        video, factor, value = planned(writer.annotator, writer.videos, ack["index"])
        assert (row.annotator, row.video_id, row.factor, row.value, row.note) == (
            writer.annotator,
            video,
            factor,
            value,
            note_for(writer.annotator, ack["index"]),
        ), f"row {row} does not match ack {ack}"
        assert row.decided_at == ack["at"]


# --- 1a. a store-API writer killed mid-stream ---------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "interval"),
    [(11, (0.02, 0.05)), (12, (0.0, 0.0))],
    ids=["steady-20-50ms", "flat-out"],
)
def test_sigkilled_writer_loses_no_acknowledged_decision(
    demo_template: Path, tmp_path: Path, seed: int, interval: tuple[float, float]
) -> None:
    """A writer SIGKILLed after a seeded number of acks — at a human-plus pace, and flat out so
    the kill most likely lands inside the next transaction — loses none of them: each acked
    decision is in the log with its planned values and in ack order, at most the one decision in
    flight is committed without an ack, nothing half-written shows, a restarted writer appends
    after what survived, and the database passes integrity_check."""
    root = copy_demo(demo_template, tmp_path / "ws")
    before = len(_log(root))
    videos = ["Arson001_x264", "Robbery001_x264", "Normal_Videos_003_x264"]
    kill_after = random.Random(seed).randint(15, 45)
    pace = ["--min-interval", str(interval[0]), "--max-interval", str(interval[1])]
    first = Writer(root, "kim", videos, *pace, "--seed", str(seed))
    first.wait_for_acks(kill_after)
    first.sigkill()
    assert len(first.acks) >= kill_after

    rows = [d for d in _log(root)[before:] if d.annotator == "kim"]
    _assert_acks_logged(first, rows)
    unacked = rows[len(first.acks) :]
    assert len(unacked) <= 1, f"more committed than acked plus one in flight: {unacked}"
    print(f"killed after {len(first.acks)} acks; {len(unacked)} committed but not acked")
    assert [d.note for d in rows] == [note_for("kim", i) for i in range(len(rows))]
    _assert_state_is_the_replayed_log(root)

    # Restart: a new writer process on the same store appends after what survived.
    second = Writer(root, "kim", videos, *pace, "--start", "1000", "--count", "10")
    second.finish(timeout=ACK_TIMEOUT)
    assert second.process.returncode == 0, second.stderr()
    assert len(second.acks) == 10
    rows = [d for d in _log(root)[before:] if d.annotator == "kim"]
    _assert_acks_logged(first, rows)
    _assert_acks_logged(second, rows)
    assert len(rows) == len(first.acks) + len(unacked) + 10
    assert min(a["id"] for a in second.acks) > max(d.decision_id for d in rows[: -len(second.acks)])
    _assert_state_is_the_replayed_log(root)


# --- browser helpers ---------------------------------------------------------------------------


def _open_annotate(page: Any, url: str, annotator: str, video: str) -> None:
    """Load the Annotate page for one annotator and video and wait until it takes keys."""
    page.goto(f"{url}/?annotator={annotator}&video={video}", timeout=STARTUP_TIMEOUT * 1000)
    _wait_until_ready(page)


def _wait_until_ready(page: Any, focused: str = CATALOGUE.factors[0].key) -> None:
    """Wait until the player is mounted, its keyboard map live and ``focused`` focused (a new
    tab starts at the first factor; a reload keeps the tab's focus)."""
    page.wait_for_function(
        "() => window.__vadsceneKeys && window.__vadsceneAnnotate?.ready",
        timeout=STARTUP_TIMEOUT * 1000,
    )
    page.locator("video:not([hidden])").wait_for(timeout=STARTUP_TIMEOUT * 1000)
    _wait_for_focus(page, focused)


def _wait_for_focus(page: Any, factor: str) -> None:
    page.locator(f".vs-row.vs-focus[data-factor='{factor}']").wait_for(timeout=ACK_TIMEOUT * 1000)


def _focus_next(page: Any, factor: str) -> None:
    """ArrowDown, then wait until the panel marks ``factor`` as focused."""
    page.keyboard.press("ArrowDown")
    _wait_for_focus(page, factor)


def _toast_text(factor: str, value: str) -> str:
    override = " (override)" if FACTORS[factor].source == "auto" else ""
    return f"Saved {factor} = {value}{override}"


def _key_for(factor: str, value: str) -> str:
    spec = FACTORS[factor]
    return "a" if value == AMBIGUOUS else str(spec.values.index(value) + 1)


def _decide_in_browser(
    page: Any, root: Path, annotator: str, video: str, factor: str, value: str
) -> None:
    """Press the value's key on the focused factor and wait for the page's acknowledgement.

    The toast is shown only after ``record_decision`` returned, so the decision must already be
    readable from SQLite by another connection the moment the toast is visible (no polling).
    """
    page.keyboard.press(_key_for(factor, value))
    page.get_by_text(_toast_text(factor, value)).first.wait_for(timeout=ACK_TIMEOUT * 1000)
    assert current_values(root, annotator, video).get(factor) == value, "toast before commit"


def _radio_label(factor: str, value: str) -> str:
    """A factor option as the panel labels it: its key number and value."""
    return f"{[*FACTORS[factor].values, AMBIGUOUS].index(value) + 1} {value}"


def _checked_radios(page: Any) -> list[str]:
    """The value each factor row shows (the annotator's, else the auto pole) as "N value"."""
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('.vs-row')).flatMap(row => {"
        " const chips = Array.from(row.querySelectorAll('.vs-chip'));"
        " const i = chips.findIndex(c => c.matches('.vs-mine, .vs-auto'));"
        " return i < 0 ? [] : [`${i + 1} ${chips[i].dataset.value}`]; })"
    )


def _expected_radios(root: Path, annotator: str, video: str) -> list[str]:
    """What the factor panel must show: the annotator's value, else the auto pole."""
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT factor, annotator, value FROM current_decisions WHERE video_id = ? "
            "AND annotator IN (?, 'auto')",
            (video, annotator),
        ).fetchall()
    mine = {f: v for f, who, v in rows if who == annotator}
    auto = {f: v for f, who, v in rows if who == "auto"}
    shown = []
    for factor in CATALOGUE.factors:
        value = mine.get(factor.key) or auto.get(factor.key)
        if value is not None:
            shown.append(_radio_label(factor.key, value))
    return shown


def _wait_for_panel(page: Any, root: Path, annotator: str, video: str) -> None:
    expected = _expected_radios(root, annotator, video)
    seen: list[list[str]] = []

    def matches() -> bool:
        seen.append(_checked_radios(page))
        return seen[-1] == expected

    try:
        _wait_for(matches, "the panel shows the store", ACK_TIMEOUT)
    except AssertionError:
        raise AssertionError(f"panel shows {seen[-1]}, the store holds {expected}") from None


# --- 1b. the app server killed mid-session -------------------------------------------------------

CRASH_VIDEO = "Shooting001_x264"
CRASH_DECISIONS = [  # (factor, value) in panel order, each reached with one ArrowDown
    ("color", "grayscale"),
    ("resolution", "low"),
    ("continuity", "multi-view"),
    ("elevation", AMBIGUOUS),
    ("field_of_view", "close"),
    ("motion", AMBIGUOUS),
]


def test_sigkilled_app_server_keeps_every_acknowledged_browser_decision(app: AppServer) -> None:
    """Keyboard decisions acknowledged by the page's toast survive a SIGKILL of the app server
    (vadscene and Streamlit processes at once) in the middle of the session, including a key
    pressed an instant before the kill: after a restart on the same workspace the log holds every
    acknowledged decision in order, the store passes integrity_check, the reloaded page shows
    exactly the store's values, and the restarted app records new decisions."""
    app.ensure_running()
    root, annotator = app.root, "crash"
    start_id = max(d.decision_id for d in _log(root))
    keys = [f.key for f in CATALOGUE.factors]
    with chromium_page(1400, 1000) as page:
        _open_annotate(page, app.url, annotator, CRASH_VIDEO)
        for factor, value in CRASH_DECISIONS:
            if factor != keys[0]:
                _focus_next(page, factor)
            _decide_in_browser(page, root, annotator, CRASH_VIDEO, factor, value)
        _focus_next(page, "crowd")
        page.keyboard.press("2")  # "many", not waited for: in flight when the server dies
        app.sigkill()
        app.start()

        rows = [d for d in _log(root) if d.decision_id > start_id]
        assert all(d.annotator == annotator and d.video_id == CRASH_VIDEO for d in rows)
        acked = [(d.factor, d.value) for d in rows[: len(CRASH_DECISIONS)]]
        assert acked == CRASH_DECISIONS
        assert [d.source for d in rows[: len(CRASH_DECISIONS)]] == [
            "override" if FACTORS[f].source == "auto" else "manual" for f, _ in CRASH_DECISIONS
        ]
        in_flight = [(d.factor, d.value) for d in rows[len(CRASH_DECISIONS) :]]
        assert in_flight in ([], [("crowd", "many")])
        print(f"the key pressed as the server died: {in_flight or 'not recorded'}")
        _assert_state_is_the_replayed_log(root)

        page.reload(timeout=STARTUP_TIMEOUT * 1000)
        _wait_until_ready(page, focused="crowd")
        _wait_for_panel(page, root, annotator, CRASH_VIDEO)
        assert {_radio_label(f, v) for f, v in CRASH_DECISIONS} <= set(_checked_radios(page))
        page.screenshot(path=str(ARTIFACTS / "durability-after-restart.png"))

        _decide_in_browser(page, root, annotator, CRASH_VIDEO, "crowd", "few")
        _wait_for_panel(page, root, annotator, CRASH_VIDEO)
    # The key in flight at the kill is recorded once at most: by the old server, or by the new
    # one when the page reconnects and resends the keys it has not seen acknowledged.
    crowd = [d.value for d in _log(root) if d.annotator == annotator and d.factor == "crowd"]
    assert crowd in (["few"], ["many", "few"])
    _assert_state_is_the_replayed_log(root)


# --- 2. two store-API annotators and a browser annotator at once --------------------------------

WINDOW_S = 30.0
SHARED_VIDEO = "Fighting002_x264"
BROWSER_DECISIONS = [  # (factor, value) in panel order, each reached with one ArrowDown
    ("color", "color"),
    ("resolution", "high"),
    ("continuity", "single-view"),
    ("elevation", "eye-level"),
    ("field_of_view", AMBIGUOUS),
]


@pytest.mark.slow
def test_concurrent_annotators_lose_and_misattribute_nothing(app: AppServer) -> None:
    """For 30 s two writer processes record decisions every 20-50 ms through the store API — both
    on one shared video and each on its own — while a browser annotator makes keyboard decisions
    on the shared video through the app. Every acknowledged decision of each writer is in the log
    in acknowledgement order under its own name with its planned values, the browser's decisions
    are all there under the browser's name, no other row appeared, the writers' commits really
    interleaved, the current state equals a replay of the log, and integrity_check passes."""
    app.ensure_running()
    root = app.root
    start_id = max(d.decision_id for d in _log(root))
    pace = ["--min-interval", "0.02", "--max-interval", "0.05", "--duration", str(WINDOW_S)]
    writers: list[Writer] = []
    try:
        writers = [  # started first: the page loads while they start up
            Writer(root, "wanda", [SHARED_VIDEO, "Normal_Videos_002_x264"], *pace, "--seed", "21"),
            Writer(root, "xavier", [SHARED_VIDEO, "Normal_Videos_004_x264"], *pace, "--seed", "22"),
        ]
        with chromium_page(1400, 1000) as page:
            _open_annotate(page, app.url, "carol", SHARED_VIDEO)
            for writer in writers:
                writer.wait_for_acks(1, timeout=STARTUP_TIMEOUT)
            window_start = time.monotonic()
            for number, (factor, value) in enumerate(BROWSER_DECISIONS):
                # A person's pace, spread through the window: one decision every 5 s at most.
                time.sleep(max(0.0, window_start + 5 * number - time.monotonic()))
                if number:
                    _focus_next(page, factor)
                _decide_in_browser(page, root, "carol", SHARED_VIDEO, factor, value)
            for writer in writers:
                writer.finish(timeout=WINDOW_S + STARTUP_TIMEOUT)
                assert writer.process.returncode == 0, writer.stderr()
            page.reload(timeout=STARTUP_TIMEOUT * 1000)
            _wait_until_ready(page, focused=BROWSER_DECISIONS[-1][0])
            _wait_for_panel(page, root, "carol", SHARED_VIDEO)
    finally:
        for writer in writers:
            if writer.process.poll() is None:
                writer.process.kill()
                writer.process.wait()

    rows = [d for d in _log(root) if d.decision_id > start_id]
    assert {d.annotator for d in rows} == {"wanda", "xavier", "carol"}
    for writer in writers:
        mine = [d for d in rows if d.annotator == writer.annotator]
        assert [d.decision_id for d in mine] == [a["id"] for a in writer.acks]  # none extra
        _assert_acks_logged(writer, mine)
        assert [a["index"] for a in writer.acks] == list(range(len(writer.acks)))
        span = datetime.fromisoformat(writer.acks[-1]["at"]) - datetime.fromisoformat(
            writer.acks[0]["at"]
        )
        assert span.total_seconds() >= WINDOW_S - 1, "the writer did not run for the window"
        assert len(writer.acks) >= WINDOW_S * 5, "the writer wrote far slower than every 20-50 ms"

    carol = [d for d in rows if d.annotator == "carol"]
    assert [(d.video_id, d.factor, d.value) for d in carol] == [
        (SHARED_VIDEO, f, v) for f, v in BROWSER_DECISIONS
    ]
    assert all(d.note is None for d in carol)
    writer_times = [d.decided_at for d in rows if d.annotator != "carol"]
    assert all(min(writer_times) < d.decided_at < max(writer_times) for d in carol)
    shared = {d.annotator for d in rows if d.video_id == SHARED_VIDEO}
    assert shared == {"wanda", "xavier", "carol"}

    order = [d.annotator for d in rows if d.annotator != "carol"]
    switches = sum(1 for a, b in itertools.pairwise(order) if a != b)
    assert switches >= 50, f"the writers hardly interleaved ({switches} switches)"
    print(f"acks {[len(w.acks) for w in writers]}, {switches} writer switches in the log")
    _assert_state_is_the_replayed_log(root)
