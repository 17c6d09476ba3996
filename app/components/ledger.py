"""What a keyboard surface's browser session has been told (the Annotate and Disputes pages)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from vadscene.annotate.session import Ack

NOTICES_KEPT = 5
"""Recent messages sent back to the surface (it shows each once, by page and sequence)."""


class Handled(Protocol):
    """An event's outcome as the surface is told it."""

    @property
    def page(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def handled(self) -> bool: ...


@dataclass
class Ledger:
    """The last event handled, the failed commit waiting for a retry, recent messages."""

    last: Ack | None = None
    failure: dict | None = None
    notices: list[dict] = field(default_factory=list)
    # A run that Streamlit is stopping can still be inside its callback when the next run's
    # callback starts: the two must not both commit the same events.
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, outcomes: Iterable[Handled]) -> None:
        """Remember what the surface must be told of ``outcomes``: the first failed commit
        (retried by the browser), and every handled one's message."""
        outcomes = list(outcomes)
        failed = [o for o in outcomes if not o.handled]
        self.failure = (
            {"page": failed[0].page, "seq": failed[0].seq, "message": failed[0].message}
            if failed
            else None
        )
        self.notices = [
            *self.notices,
            *(
                {"page": o.page, "seq": o.seq, "status": o.status, "message": o.message}
                for o in outcomes
                if o.handled
            ),
        ][-NOTICES_KEPT:]
