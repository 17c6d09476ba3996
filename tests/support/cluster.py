"""A real Dask cluster for tests: separate worker processes on loopback, each with a memory limit.

The workers are spawned processes, as on a cluster: a task reaches them pickled, with the
functions named by module, so a test that passes here has not leaned on sharing this process.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

WORKERS = 2
THREADS_PER_WORKER = 1


@contextmanager
def environment_kept() -> Iterator[None]:
    """This process's environment as it was, on leaving.

    A Dask nanny sets its workers' variables (``MALLOC_TRIM_THRESHOLD_``, ``OMP_NUM_THREADS``,
    ``PYTHONHASHSEED``…) in the environment of the process that starts it, before spawning
    them, and leaves them there: every later child process of the test run would inherit them
    (a glibc that hands freed memory back at once, one OpenMP thread)."""
    before = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextmanager
def local_cluster() -> Iterator[tuple[LocalCluster, Client]]:
    """(cluster, a client of it): :data:`WORKERS` worker processes of
    :data:`THREADS_PER_WORKER` thread, a memory limit of 1 GiB each, no dashboard; the
    environment kept (:func:`environment_kept`)."""
    from distributed import Client, LocalCluster

    with (
        environment_kept(),
        LocalCluster(
            n_workers=WORKERS,
            threads_per_worker=THREADS_PER_WORKER,
            processes=True,
            memory_limit="1GiB",
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(WORKERS)
        yield cluster, client


def unused_address() -> str:
    """A loopback ``tcp://`` address nothing listens on (the system's pick, released at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"
