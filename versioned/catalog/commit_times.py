"""Commit times to the microsecond: the precision time travel compares them at.

The catalog stores a commit's time as seconds since the epoch (a float, from the catalog's
clock: `clock`). `versioned history`, ``db.t__history`` and `Table.history` show it as a UTC
time to the microsecond, and ``as_of_time=T`` reads the last commit whose time, so shown, is
at or before ``T``: a time copied from the history reaches exactly its commit, and commits a
fraction of a second apart are told apart.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from versioned.errors import InputError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
ACCEPTED = (
    "an aware datetime (e.g. datetime(2024, 5, 1, 12, tzinfo=UTC)) or seconds since the "
    "epoch (an int or a finite float), from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z"
)
"""What ``as_of_time`` accepts, for error messages."""


def micros(epoch: float) -> int:
    """A catalog time (seconds since the epoch) in whole microseconds, rounded as
    `datetime.fromtimestamp` rounds it for display."""
    return (datetime.fromtimestamp(epoch, UTC) - EPOCH) // _MICROSECOND


def time_text(epoch_micros: int) -> str:
    """Microseconds since the epoch as ISO-8601 UTC (``2024-05-01T12:00:00.250000+00:00``;
    whole seconds without a fraction)."""
    return (EPOCH + epoch_micros * _MICROSECOND).isoformat()


def as_of_micros(when: object) -> int:
    """An ``as_of_time`` (an aware `datetime`, or seconds since the epoch) in whole
    microseconds since the epoch.

    Raises:
        InputError: ``when`` is not one of those (a naive datetime, NaN, an infinity, a
            string, ...) or lies outside the years 1 to 9999 in UTC.
    """
    if isinstance(when, datetime):
        if when.utcoffset() is None:
            raise InputError(
                f"as_of_time {when.isoformat()} has no time zone: give {ACCEPTED}",
                as_of_time=str(when),
            )
        try:
            return (when.astimezone(UTC) - EPOCH) // _MICROSECOND
        except OverflowError:  # in UTC it falls before the year 1 or after 9999
            raise _refused(when.isoformat(), _OUTSIDE) from None
    if isinstance(when, int | float) and not isinstance(when, bool):
        if not math.isfinite(when):
            raise _refused(repr(when), "is not a time")
        try:
            return micros(when)
        except (OverflowError, ValueError, OSError):
            raise _refused(repr(when), _OUTSIDE) from None
    raise _refused(repr(when), "is not a time")


_OUTSIDE = "is outside the years 1 to 9999 in UTC"


def _refused(shown: str, why: str) -> InputError:
    return InputError(f"as_of_time {shown} {why}: give {ACCEPTED}", as_of_time=shown)


def latest_at(epoch_micros: int) -> float:
    """The greatest stored commit time (seconds) that `micros` puts at or before
    ``epoch_micros``: a commit is at or before that microsecond exactly when its time is at
    most this value (the catalog compares floats, so the bound is found by stepping floats)."""
    bound = epoch_micros / 1_000_000
    while _micros_or_beyond(bound) > epoch_micros:
        bound = math.nextafter(bound, -math.inf)
    while _micros_or_beyond(following := math.nextafter(bound, math.inf)) <= epoch_micros:
        bound = following
    return bound


def _micros_or_beyond(epoch: float) -> float:
    """`micros`, or infinity past the last representable time."""
    try:
        return micros(epoch)
    except (OverflowError, ValueError, OSError):
        return math.inf if epoch > 0 else -math.inf
