"""Store-API writer processes on one annotation store, for the README's reliability figures:
two writing at once (:func:`concurrent_writers_check`), and one SIGKILLed mid-stream
(:func:`crash_check`). Every decision a writer wrote, or acknowledged before it was killed,
must be in the log, in its order, and the store must pass its integrity check.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from support.examples import GOOD, NORMAL, clip_info
from vadscene.core.catalogue import Catalogue, load_catalogue
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import STORE_NAME


def _write_decisions(
    path: str, annotator: str, catalogue_json: str, count: int | None, acks: Any = None
) -> None:
    """One writer process: ``count`` decisions (None: until killed), each note numbering it;
    with ``acks`` (a pipe end), each decision's number is sent once it is committed."""
    catalogue = Catalogue.model_validate_json(catalogue_json)
    factors = [f for f in catalogue.factors if f.source == "manual"]
    with AnnotationStore(path, catalogue) as store:
        for i in range(count) if count is not None else itertools.count():
            factor = factors[i % len(factors)]
            store.record_decision(
                (GOOD, NORMAL)[i % 2],
                factor.key,
                factor.values[i % 2],
                annotator=annotator,
                note=f"{annotator}-{i}",
            )
            if acks is not None:
                acks.send(i)


def concurrent_writers_check(decisions_per_writer: int) -> int:
    """Two processes write into one store at once; returns the decisions found intact.

    Intact: present in the log, in its writer's order, with the store's integrity check ok.
    """
    catalogue = load_catalogue()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / STORE_NAME
        with AnnotationStore(path, catalogue) as store:
            store.register_videos([clip_info(GOOD, 30), clip_info(NORMAL, 25)])
        context = multiprocessing.get_context("spawn")
        writers = [
            context.Process(
                target=_write_decisions,
                args=(str(path), name, catalogue.model_dump_json(), decisions_per_writer),
            )
            for name in ("ana", "ben")
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=600)
        with AnnotationStore(path, catalogue) as store:
            if store.integrity_check() != "ok":
                return 0
            log = store.decision_log()
    intact = 0
    for name in ("ana", "ben"):
        notes = [d.note for d in log if d.annotator == name]
        if notes == [f"{name}-{i}" for i in range(decisions_per_writer)]:
            intact += len(notes)
    return intact


def crash_check(kills: int) -> tuple[int, int]:
    """SIGKILL a writer process mid-stream ``kills`` times, each after a different number of
    acknowledged decisions; returns (decisions acknowledged, of those found after the kill).

    Found: in the log in the writer's order, with the store passing its integrity check (the
    test suite's browser version of this is ``tests/store/test_durability.py``).
    """
    catalogue = load_catalogue()
    context = multiprocessing.get_context("spawn")
    acknowledged = found = 0
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / STORE_NAME
        with AnnotationStore(path, catalogue) as store:
            store.register_videos([clip_info(GOOD, 30), clip_info(NORMAL, 25)])
        for kill in range(kills):
            annotator = f"crash-{kill}"
            receiving, sending = context.Pipe(duplex=False)
            writer = context.Process(
                target=_write_decisions,
                args=(str(path), annotator, catalogue.model_dump_json(), None, sending),
            )
            writer.start()
            sending.close()
            acked = []
            while len(acked) < 10 + 13 * kill and receiving.poll(60):
                acked.append(receiving.recv())
            os.kill(writer.pid, signal.SIGKILL)
            writer.join()
            with contextlib.suppress(EOFError, OSError):
                while receiving.poll(0):  # sent before the kill: acknowledged too
                    acked.append(receiving.recv())
            receiving.close()
            with AnnotationStore(path, catalogue) as store:
                intact = store.integrity_check() == "ok"
                notes = [d.note for d in store.decision_log(annotator=annotator)]
            acknowledged += len(acked)
            if intact and notes[: len(acked)] == [f"{annotator}-{i}" for i in acked]:
                found += len(acked)
    return acknowledged, found
