"""A store-API writer process, and the :class:`Writer` that starts one and reads its
acknowledgements (``tests/store/test_durability.py``, ``tests/store/test_store_concurrency.py``).

An acknowledgement is the line the writer prints after ``record_decision`` has returned. Run as
a script, this module is the writer process::

    python tests/support/durability_writer.py WORKSPACE ANNOTATOR --videos A,B --duration 30

It records decisions planned by :func:`planned` through the store API and prints one JSON line
per decision only after ``record_decision`` has committed it.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vadscene.core.catalogue import AMBIGUOUS, load_catalogue
from vadscene.store.workspace import Workspace

CATALOGUE = load_catalogue()
WRITER = Path(__file__).resolve()
ACK_TIMEOUT = 60.0  # one acknowledgement (a toast, a printed line)


def planned(annotator: str, videos: Sequence[str], index: int) -> tuple[str, str, str | None]:
    """The decision number ``index`` of a writer: the same in the writer and in the test.

    Covers every factor (manual ones, and overrides of auto ones), every value, ambiguous and
    clearing (None), so that a misattributed or reordered row shows up as a wrong value.
    """
    rng = random.Random(f"{annotator}:{index}")
    factor = rng.choice(CATALOGUE.factors)
    value = rng.choice([*factor.values, AMBIGUOUS, None])
    return videos[index % len(videos)], factor.key, value


def note_for(annotator: str, index: int) -> str:
    return f"{annotator}#{index}"


def writer_main(argv: Sequence[str] | None = None) -> None:
    """Record planned decisions at a steady (seeded, jittered) rate; acknowledge each on stdout."""
    parser = argparse.ArgumentParser(description=writer_main.__doc__)
    parser.add_argument("workspace", type=Path)
    parser.add_argument("annotator")
    parser.add_argument("--videos", required=True, help="comma-separated video ids")
    parser.add_argument("--start", type=int, default=0, help="index of the first decision")
    parser.add_argument("--count", type=int, default=0, help="stop after this many (0: no limit)")
    parser.add_argument("--duration", type=float, default=0.0, help="stop after seconds (0: none)")
    parser.add_argument("--min-interval", type=float, default=0.0)
    parser.add_argument("--max-interval", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    videos = args.videos.split(",")
    pace = random.Random(args.seed)
    with Workspace.open(args.workspace) as workspace:
        store = workspace.store
        started = time.monotonic()
        index = args.start
        while (not args.count or index < args.start + args.count) and (
            not args.duration or time.monotonic() - started < args.duration
        ):
            video, factor, value = planned(args.annotator, videos, index)
            decision = store.record_decision(
                video, factor, value, annotator=args.annotator, note=note_for(args.annotator, index)
            )
            ack = {"id": decision.decision_id, "index": index, "at": decision.decided_at}
            sys.stdout.write(json.dumps(ack) + "\n")
            sys.stdout.flush()
            index += 1
            time.sleep(pace.uniform(args.min_interval, args.max_interval))


class Writer:
    """A writer subprocess and the acknowledgements it has printed so far."""

    def __init__(self, root: Path, annotator: str, videos: Sequence[str], *options: str) -> None:
        self.annotator, self.videos = annotator, list(videos)
        command = [sys.executable, str(WRITER), str(root), annotator, "--videos", ",".join(videos)]
        self.process = subprocess.Popen(
            [*command, *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=WRITER.parent,
        )
        self.acks: list[dict[str, Any]] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._ended = False
        self._stderr: list[bytes] = []
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.put(raw.decode())
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self._stderr.extend(self.process.stderr)

    def _take(self, line: str) -> None:
        if line.endswith("\n"):  # a torn last line was never fully printed: not an ack
            self.acks.append(json.loads(line))

    def wait_for_acks(self, count: int, timeout: float = ACK_TIMEOUT) -> None:
        """Block until ``count`` acknowledgements were read (fails if the writer dies first)."""
        deadline = time.monotonic() + timeout
        while len(self.acks) < count:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"{self.annotator}: {len(self.acks)} of {count} acks in {timeout:.0f} s"
                ) from None
            if line is None:
                self._ended = True
                raise AssertionError(f"{self.annotator} ended early: {self.stderr()}")
            self._take(line)

    def finish(self, timeout: float) -> None:
        """Wait for the writer to exit and collect every acknowledgement it printed."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{self.annotator} did not finish in {timeout:.0f} s") from None
        for reader in self._readers:
            reader.join(timeout=30)
        while not self._ended:
            line = self._lines.get(timeout=30)
            if line is None:
                self._ended = True
            else:
                self._take(line)

    def sigkill(self) -> None:
        """SIGKILL the writer now, then collect the acknowledgements already in the pipe."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.finish(timeout=30)
        assert self.process.returncode == -signal.SIGKILL

    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")[-3000:]


if __name__ == "__main__":
    writer_main()
