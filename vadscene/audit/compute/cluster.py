"""The audit's tasks on a Dask distributed cluster: a :class:`~.execution.Runner` over a client.

``run_audit(..., client=...)`` hands its per-model pair counting and bootstrap replicate blocks
to :func:`dask_runner`; the functions and data are the ones the local threads get, so the
results equal a local run's to the last bit. The client comes from
:func:`vadscene.core.cluster.connect_scheduler` (or any ``distributed.Client``, a
``LocalCluster``'s too); ``distributed`` itself is never imported here, only used through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from distributed import Client, Future

    from vadscene.audit.compute.execution import Runner


class DaskRunner:
    """Tasks on the workers of ``client``'s cluster; handles are Dask futures."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def put(self, value: Any) -> Future:
        # In a list, so that a list or dict value travels as one piece (scatter would split
        # it); on every worker, as every task reads it; under a random key, as hashing the
        # value would read all of a large array and make two equal puts share one lifetime.
        handles: list[Future] = self._client.scatter([value], broadcast=True, hash=False)
        return handles[0]

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Future:
        # not pure: every call is its own task, never merged with an equal one still held
        return self._client.submit(function, *arguments, pure=False)

    def gather(self, handles: Sequence[Future]) -> list[Any]:
        # a task's error is raised here as the task raised it (errors="raise")
        values: list[Any] = self._client.gather(list(handles))
        return values


def dask_runner(client: Client) -> Runner:
    """The :class:`~.execution.Runner` that sends the audit's tasks to ``client``'s cluster."""
    return DaskRunner(client)


def cluster_summary(client: Client) -> str:
    """The cluster in one line, as the report's conventions state it, e.g. ``Dask cluster at
    tcp://10.0.0.5:8786: 2 workers, 4 threads, memory limit 6 GiB per worker``."""
    info = client.scheduler_info(n_workers=-1)
    workers = list(info["workers"].values())
    threads = sum(int(worker["nthreads"]) for worker in workers)
    limits = sorted({int(worker.get("memory_limit") or 0) for worker in workers})
    if not limits:
        memory = "no workers yet"
    elif limits == [0]:
        memory = "no memory limit"
    else:
        memory = f"memory limit{'s' * (len(limits) > 1)} "
        memory += f"{', '.join(_gib(limit) for limit in limits)} per worker"
    return (
        f"Dask cluster at {info['address']}: {len(workers)} worker{'s' * (len(workers) != 1)}, "
        f"{threads} thread{'s' * (threads != 1)}, {memory}"
    )


def _gib(size: int) -> str:
    """Bytes in GiB to three digits (``1 GiB``, ``5.59 GiB``); 0 (a worker without a limit) is
    ``none``."""
    return f"{size / 2**30:.3g} GiB" if size else "none"
