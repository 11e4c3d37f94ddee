"""Per-version key facts kept in the catalog (``FileAdd.stats`` of the Bloom file).

``{"keys": n, "min_key": lo, "max_key": hi}``: how many keys the version wrote and bounds of
its first key column. The bounds are JSON values (numbers stay numbers, strings strings,
dates and timestamps ISO strings) and are conservative: ``lo`` is at most the smallest key
and ``hi`` at least the largest, so pruning by them never skips a version holding a key.
``None`` means unbounded.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

import pyarrow as pa

from versioned.keys.encoding import key_range

MAX_STRING_BOUND = 64  # characters kept of a string bound; longer ones are widened
_MAX_CHAR = 0x10FFFF


def key_stats(keys: pa.Table, key_columns: Sequence[str]) -> dict[str, Any]:
    """The stats of a version whose keys (one row per key) are ``keys``."""
    bounds = key_range(keys, key_columns)
    low, high = (None, None) if bounds is None else bounds
    return {
        "keys": keys.num_rows,
        "min_key": json_bound(low, "min"),
        "max_key": json_bound(high, "max"),
    }


@dataclass
class KeyBounds:
    """Bounds of the first key column, as `key_stats` keeps them, gathered chunk by chunk
    (and merged across Spark tasks: `to_json` / `from_json`)."""

    rows: int = 0
    low: Any = None
    high: Any = None
    unbounded: bool = False

    def add(self, keys: pa.Table, key_columns: Sequence[str]) -> None:
        """Widen the bounds by the keys of ``keys`` (one row per key)."""
        if keys.num_rows == 0:
            return
        self.rows += keys.num_rows
        found = key_range(keys, key_columns)
        if found is None:
            self.unbounded = True
            return
        self._widen(json_bound(found[0], "min"), json_bound(found[1], "max"))

    def merged_with(self, stats: Mapping[str, Any]) -> KeyBounds:
        """These bounds widened by those of another filter's stats."""
        if stats.get("keys", 0):
            low, high = stats.get("min_key"), stats.get("max_key")
            self.rows += 1
            if low is None or high is None:
                self.unbounded = True
            else:
                self._widen(low, high)
        return self

    def merge(self, other: KeyBounds) -> KeyBounds:
        """These bounds widened by ``other``'s (the bounds of more keys)."""
        if other.rows:
            self.rows += other.rows
            if other.unbounded:
                self.unbounded = True
            else:
                self._widen(other.low, other.high)
        return self

    def _widen(self, low: Any, high: Any) -> None:
        if low is None or high is None:
            self.unbounded = True
            return
        try:
            self.low = low if self.low is None else min(self.low, low)
            self.high = high if self.high is None else max(self.high, high)
        except TypeError:  # bounds of different kinds: do not prune
            self.unbounded = True

    def stats(self, keys: int) -> dict[str, Any]:
        """`key_stats` of a version holding ``keys`` keys within these bounds."""
        if self.unbounded or self.rows == 0:
            return {"keys": keys, "min_key": None, "max_key": None}
        return {"keys": keys, "min_key": self.low, "max_key": self.high}

    def to_json(self) -> str:
        return json.dumps([self.rows, self.low, self.high, self.unbounded])

    @classmethod
    def from_json(cls, text: str) -> KeyBounds:
        rows, low, high, unbounded = json.loads(text)
        return cls(rows, low, high, unbounded)


def json_bound(value: Any, side: Literal["min", "max"]) -> Any:
    """A JSON value bounding ``value`` from below (``min``) or above (``max``), or ``None``.

    Exact where JSON can hold the value; decimals become floats rounded outwards; strings
    longer than `MAX_STRING_BOUND` are cut (and, for ``max``, bumped up).
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        if value == value.to_integral_value():
            return int(value)
        number = float(value)
        if side == "min" and Decimal(number) > value:
            number = math.nextafter(number, -math.inf)
        elif side == "max" and Decimal(number) < value:
            number = math.nextafter(number, math.inf)
        return number if math.isfinite(number) else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _string_bound(value, side)
    if isinstance(value, dt.datetime | dt.date):
        return _iso(value)
    return None


def may_contain_range(stats: Mapping[str, Any], min_key: Any, max_key: Any) -> bool:
    """Whether a version with ``stats`` may hold a key between ``min_key`` and ``max_key``.

    Args:
        stats: A version's stats as `key_stats` made them (after a JSON round trip).
        min_key: Smallest first-key-column value of the incoming keys (``None``: unknown).
        max_key: Largest such value (``None``: unknown).

    Returns:
        False only when the ranges certainly do not overlap, or the version has no keys.
    """
    if stats.get("keys") == 0:
        return False
    low, high = stats.get("min_key"), stats.get("max_key")
    incoming_low, incoming_high = _comparable(min_key), _comparable(max_key)
    try:
        if high is not None and incoming_low is not None and incoming_low > high:
            return False
        if low is not None and incoming_high is not None and incoming_high < low:
            return False
    except TypeError:  # stats of another key type: cannot prune
        return True
    return True


def _comparable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return _iso(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _iso(value: dt.date) -> str:
    # Fixed width, so the strings sort like the values (years 1 to 9999).
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds")
    return value.isoformat()


def _string_bound(value: str, side: Literal["min", "max"]) -> str | None:
    if len(value) <= MAX_STRING_BOUND:
        return value
    prefix = value[:MAX_STRING_BOUND]
    if side == "min":
        return prefix
    # The smallest string above every string starting with the prefix: bump its last
    # character that can be bumped and drop what follows.
    for i in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[i]) + 1
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000
        if code <= _MAX_CHAR:
            return prefix[:i] + chr(code)
    return None
