"""Where the audit's independent pieces of work run: threads of this process, or a Dask cluster.

The engine hands its work out as tasks through one small interface, :class:`Runner`: a task is
a module-level function and its arguments, and an argument may be the handle of an earlier
task or of a value put on the runner once (:meth:`Runner.put`) so that large arrays travel
to each worker once rather than with every task. The same functions run on the same data
either way, so a cluster's results equal the local ones to the last bit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol


class Runner(Protocol):
    """Runs tasks; handles are opaque (a local future, a Dask future)."""

    def put(self, value: Any) -> Any:
        """A handle to ``value``, shared by every task that takes it."""

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Any:
        """Start ``function(*arguments)``, handles among the arguments standing for their
        values; returns the task's handle."""

    def gather(self, handles: Sequence[Any]) -> list[Any]:
        """The values of ``handles``, in their order (a task's error is raised here)."""


class LocalRunner:
    """Tasks on a pool of threads of this process: numpy and the compiled kernels release the
    GIL, so two tasks overlap on two cores."""

    def __init__(self, workers: int | None = None) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers or min(2, os.cpu_count() or 1))

    def put(self, value: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(value)
        return done

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Future[Any]:
        # Arguments are awaited here, in the submitting thread: a pool thread that waited for
        # a task queued behind it would never see it run.
        values = [a.result() if isinstance(a, Future) else a for a in arguments]
        return self._pool.submit(function, *values)

    def gather(self, handles: Sequence[Future[Any]]) -> list[Any]:
        return [handle.result() for handle in handles]

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)
