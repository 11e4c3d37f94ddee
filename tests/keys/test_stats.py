"""Per-version key stats: JSON-able and conservative, so pruning never skips a key."""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from versioned.keys.stats import (
    MAX_STRING_BOUND,
    json_bound,
    key_stats,
    may_contain_range,
)


def _stats(values: list[Any], kind: pa.DataType | None = None) -> dict[str, Any]:
    stats = key_stats(pa.table({"k": pa.array(values, kind), "other": [0] * len(values)}), ["k"])
    round_tripped: dict[str, Any] = json.loads(json.dumps(stats, allow_nan=False))
    return round_tripped


def test_stats_of_ints_strings_and_dates() -> None:
    assert _stats([5, -3, 9]) == {"keys": 3, "min_key": -3, "max_key": 9}
    assert _stats(["m", "b", "z"]) == {"keys": 3, "min_key": "b", "max_key": "z"}
    dates = [dt.date(2024, 1, 2), dt.date(999, 5, 1)]
    assert _stats(dates) == {"keys": 2, "min_key": "0999-05-01", "max_key": "2024-01-02"}
    moments = [
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        dt.datetime(2024, 1, 1, 0, 0, 1, tzinfo=dt.UTC),
    ]
    assert _stats(moments, pa.timestamp("us", tz="UTC")) == {
        "keys": 2,
        "min_key": "2024-01-01T00:00:00.000000",
        "max_key": "2024-01-01T00:00:01.000000",
    }


def test_stats_without_a_range_never_prune() -> None:
    for values in ([1.0, float("nan")], [b"a"], [1, None]):
        stats = _stats(values)
        assert stats["min_key"] is None and stats["max_key"] is None
        assert may_contain_range(stats, 10**9, 10**9)


def test_nan_keys_are_never_pruned() -> None:
    stored = _stats([1.0, float("nan")])
    incoming = key_stats(pa.table({"k": [float("nan"), 5.0]}), ["k"])
    assert may_contain_range(stored, incoming["min_key"], incoming["max_key"])
    assert may_contain_range(_stats([1.0, 2.0]), float("nan"), float("nan"))


def test_overlap_and_disjoint_ranges() -> None:
    stats = _stats([10, 20])
    assert may_contain_range(stats, 0, 10)  # bounds are inclusive
    assert may_contain_range(stats, 20, 30)
    assert may_contain_range(stats, 12, 13)
    assert may_contain_range(stats, 0, 100)
    assert not may_contain_range(stats, 0, 9)
    assert not may_contain_range(stats, 21, 30)
    assert may_contain_range(stats, None, None)  # None: unbounded on that side
    assert may_contain_range(stats, None, 15)
    assert not may_contain_range(stats, None, 5)
    assert not may_contain_range(stats, 25, None)
    assert not may_contain_range({"keys": 0, "min_key": None, "max_key": None}, 1, 1)
    assert may_contain_range({}, 1, 1)  # stats of an older writer: no facts, no pruning


def test_dates_and_timestamps_compare_as_values() -> None:
    stats = _stats([dt.date(2024, 1, 1), dt.date(2024, 1, 31)])
    assert may_contain_range(stats, dt.date(2024, 1, 31), dt.date(2024, 2, 5))
    assert not may_contain_range(stats, dt.date(2024, 2, 1), dt.date(2024, 2, 5))
    ts = _stats([dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC)], pa.timestamp("us", tz="UTC"))
    plus_one = dt.timezone(dt.timedelta(hours=1))
    assert may_contain_range(ts, dt.datetime(2024, 1, 1, 13, tzinfo=plus_one), None)
    assert may_contain_range(ts, dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 1, 12))
    assert not may_contain_range(ts, dt.datetime(2024, 1, 1, 12, 0, 0, 1), None)


def test_mismatched_types_do_not_prune() -> None:
    assert may_contain_range(_stats([1, 2]), "a", "b")


def test_decimal_bounds_widen_so_no_key_is_pruned() -> None:
    rng = random.Random(5)
    kind = pa.decimal128(38, 30)
    for _ in range(300):
        values = [Decimal(rng.randint(-(10**37), 10**37)).scaleb(-30) for _ in range(3)]
        stats = _stats(values, kind)
        assert isinstance(stats["min_key"], int | float)
        for value in values:
            assert may_contain_range(stats, value, value), (value, stats)
    assert _stats([Decimal("5"), Decimal("7")], pa.decimal128(10, 0))["max_key"] == 7


def test_decimal_that_rounds_inwards_is_still_covered() -> None:
    value = Decimal("0.100000000000000005551115123125782710")  # float(value) < value
    assert Decimal(float(value)) < value
    assert json_bound(value, "max") >= value
    low = Decimal("0.1000000000000000055511151231257827")  # float(low) > low
    assert Decimal(float(low)) > low
    assert json_bound(low, "min") <= low


def _long(prefix: str, rng: random.Random) -> str:
    alphabet = ["a", "z", "\uffff", "\U0010ffff", "\ud7ff"]
    return prefix + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 100)))


def test_long_string_bounds_still_cover_every_key() -> None:
    rng = random.Random(1)
    for _ in range(300):
        values = [_long("k", rng) for _ in range(4)]
        stats = _stats(values)
        for bound in (stats["min_key"], stats["max_key"]):
            assert bound is None or len(bound) <= MAX_STRING_BOUND
        for value in values:
            assert may_contain_range(stats, value, value)
    top = "\U0010ffff" * (MAX_STRING_BOUND + 5)
    assert json_bound(top, "max") is None
    assert json_bound("a" * 100, "min") == "a" * MAX_STRING_BOUND
    assert json_bound("a" * 100, "max") == "a" * (MAX_STRING_BOUND - 1) + "b"


@pytest.mark.parametrize("value", [float("inf"), Decimal("Infinity"), object()])
def test_values_json_cannot_bound_become_unbounded(value: Any) -> None:
    assert json_bound(value, "min") is None
