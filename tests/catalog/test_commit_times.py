"""What ``as_of_time`` accepts, and the float bound that compares commit times to the
microsecond (`versioned.catalog.commit_times`)."""

from __future__ import annotations

import math
import random
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from versioned.catalog import commit_times
from versioned.errors import InputError, VersionedError

PLUS_ONE = timezone(timedelta(hours=1))


@pytest.mark.parametrize(
    "when",
    [
        math.nan,
        math.inf,
        -math.inf,
        1e20,
        -1e20,
        10**30,
        datetime(1, 1, 1, tzinfo=PLUS_ONE),  # 0000-12-31T23:00Z in UTC
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(-timedelta(hours=1))),
        "2024-05-01T12:00:00Z",
        date(2024, 5, 1),
        True,
        object(),
    ],
)
def test_what_is_not_a_time_is_one_line_of_bad_input_saying_what_is_accepted(
    when: object,
) -> None:
    with pytest.raises(InputError) as raised:
        commit_times.as_of_micros(when)
    message = str(raised.value)
    assert isinstance(raised.value, VersionedError) and "\n" not in message
    assert "an aware datetime" in message and "seconds since the epoch" in message


def test_a_naive_datetime_is_refused_for_its_missing_zone() -> None:
    with pytest.raises(InputError, match="2024-05-01T12:00:00 has no time zone"):
        commit_times.as_of_micros(datetime(2024, 5, 1, 12))


def test_times_convert_to_microseconds_in_utc_over_the_whole_range() -> None:
    assert commit_times.as_of_micros(datetime(1970, 1, 1, 1, tzinfo=PLUS_ONE)) == 0
    assert commit_times.as_of_micros(1.5) == 1_500_000
    assert commit_times.as_of_micros(-1) == -1_000_000
    first = datetime(1, 1, 1, tzinfo=UTC)
    last = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    for when in (first, last):
        micros = commit_times.as_of_micros(when)
        assert commit_times.time_text(micros) == when.isoformat()


def test_a_stored_time_is_at_or_before_a_microsecond_exactly_when_it_is_at_most_the_bound() -> None:
    rng = random.Random(7)
    for _ in range(2_000):
        stored = rng.uniform(0, 4e9) if rng.random() < 0.9 else rng.uniform(-6e10, 2.5e11)
        at = commit_times.micros(stored) + rng.choice((-1, 0, 0, 1))
        bound = commit_times.latest_at(at)
        assert (stored <= bound) == (commit_times.micros(stored) <= at)
        assert (
            commit_times.micros(bound) <= at < commit_times.micros(math.nextafter(bound, math.inf))
        )
