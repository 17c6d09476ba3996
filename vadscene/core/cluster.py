"""Connecting to a Dask distributed scheduler: one way, and one pair of errors, for every stage
that can run on a cluster (``vadscene measure --scheduler``, ``vadscene audit --scheduler``).

Dask is the optional extra ``pip install 'vadscene[dask]'``; ``distributed`` is imported only
here, when a scheduler is asked for, so a run without one never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vadscene.core.errors import VadsceneError

if TYPE_CHECKING:
    from distributed import Client

DEFAULT_SCHEDULER_TIMEOUT = 30.0
"""Seconds to wait for a Dask scheduler to answer (Dask's own connect timeout)."""


def connect_scheduler(address: str, timeout: float = DEFAULT_SCHEDULER_TIMEOUT) -> Client:
    """A client of the Dask scheduler at ``address`` (``tcp://host:8786``); the caller closes it.

    Raises :class:`~vadscene.core.errors.VadsceneError` in one line, naming ``--scheduler
    ADDRESS``, when ``distributed`` is not installed or when nothing at ``address`` answers
    as a scheduler within ``timeout`` seconds (unreachable, refused, not an address).
    """
    try:
        from distributed import Client
    except ImportError:
        raise VadsceneError(
            f"--scheduler {address}: running on a Dask cluster needs the optional package "
            "'distributed'; install it with: pip install 'vadscene[dask]'"
        ) from None
    try:
        return Client(address, timeout=timeout)
    except Exception as exc:  # any failure to connect: unreachable, refused, not an address
        raise VadsceneError(
            f"--scheduler {address}: cannot connect to the Dask scheduler within {timeout:g} s "
            f"({exc}); expected a running scheduler at an address like tcp://host:8786"
        ) from None
