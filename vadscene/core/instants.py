"""Instants: every time vadscene stores, publishes or compares.

A time is parsed once, at the boundary where it enters (the store API, a release, a Label
Studio export), into an aware instant in UTC, and stored in one canonical text form,
:func:`canonical` (``2026-12-02T18:00:00.123456+00:00``). Canonical texts have one width and one
offset, so comparing them as text compares the instants, and one instant has one spelling
however it was written (``+02:00``, ``Z``, ``+23:59``): a decision is identified by its instant.

Times in the future are refused (:func:`check_not_after`): a value dated 2999 would stay
current over every later key. A store accepts times up to :data:`CLOCK_SKEW` past its own
clock, since two annotators' machines never agree to the second.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime

CLOCK_SKEW = timedelta(minutes=5)
"""How far past this machine's clock a time may lie and still be taken as now."""

EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
"""The instant a stored time that cannot be read is taken as (see the store's migration 4), so
it never wins over a real one."""


def now() -> datetime:
    """This machine's clock, as an aware UTC instant to the microsecond."""
    return datetime.now(UTC)


def to_utc(instant: datetime) -> datetime:
    """``instant`` (aware) expressed in UTC; ``ValueError`` when that falls outside years 1–9999
    (``0001-01-01T00:00+23:59`` is a legal text for an instant before year 1)."""
    try:
        return instant.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{instant.isoformat()} lies outside the years 1 to 9999 in UTC") from None


Instant = Annotated[AwareDatetime, AfterValidator(to_utc)]
"""A pydantic field type: an ISO 8601 time with an offset, held as its UTC instant."""


def parse_instant(value: object, *, field: str) -> datetime:
    """``value`` (an aware ``datetime`` or ISO 8601 text with an offset) as a UTC instant.

    Raises ``ValueError`` naming ``field`` and the value when it is not a time, has no offset
    (a naive time names no instant), or is out of range.

    >>> parse_instant("2026-01-02T03:04:05+02:00", field="decided_at").isoformat()
    '2026-01-02T01:04:05+00:00'
    """
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"{field}: {value!r} is not an ISO 8601 time (expected e.g. "
                "2026-01-02T03:04:05+00:00)"
            ) from None
    elif isinstance(value, datetime):
        parsed = value
    else:
        raise ValueError(f"{field}: expected an ISO 8601 time, got {type(value).__name__}")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ValueError(
            f"{field}: {value!s} has no UTC offset, so it names no instant (add +00:00 or Z)"
        )
    try:
        return to_utc(parsed)
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from None


def canonical(instant: datetime) -> str:
    """The stored text of an aware instant: UTC, microseconds, ``+00:00``.

    >>> canonical(parse_instant("2026-01-02T03:04:05Z", field="t"))
    '2026-01-02T03:04:05.000000+00:00'
    """
    return to_utc(instant).isoformat(timespec="microseconds")


def check_not_after(instant: datetime, limit: datetime, *, field: str, limit_name: str) -> None:
    """Refuse (``ValueError``) an instant later than ``limit``, naming both."""
    if instant > limit:
        raise ValueError(
            f"{field}: {canonical(instant)} is later than {limit_name} ({canonical(limit)}); "
            "a time from the future would stay current over every later change"
        )


def stored_time(value: object | None, *, field: str) -> str:
    """The canonical text of a time given to the store API: ``value`` parsed, refused when
    later than now plus :data:`CLOCK_SKEW`; ``None`` means now."""
    if value is None:
        return canonical(now())
    instant = parse_instant(value, field=field)
    check_not_future(instant, field=field)
    return canonical(instant)


def check_not_future(instant: datetime, *, field: str) -> None:
    """Refuse (``ValueError``) an instant later than now plus :data:`CLOCK_SKEW`."""
    minutes = int(CLOCK_SKEW.total_seconds() // 60)
    check_not_after(
        instant, now() + CLOCK_SKEW, field=field, limit_name=f"this clock plus {minutes} min"
    )


def readable_or_earliest(text: str) -> str:
    """The canonical form of a stored time, or of :data:`EARLIEST` when it is unreadable (older
    stores accepted any text)."""
    try:
        return canonical(parse_instant(text, field="stored time"))
    except ValueError:
        return canonical(EARLIEST)
