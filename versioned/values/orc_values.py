"""Values ORC files do not give back as written, which writers refuse (dead letters).

* Days 1582-10-05..14 do not exist in Java's hybrid Julian/Gregorian calendar; ORC's readers
  (Hive's, Spark's) read such a DATE, or a TIMESTAMP on such a day, as 1582-10-15.
* A TIMESTAMP in the last second before 1970 with a fraction (``1969-12-31 23:59:59.5``):
  ORC stores its seconds rounded toward zero and the fraction apart, and ORC's Java readers
  read it one second later (``1970-01-01 00:00:00.5``).
* Files written by ORC's C++ writer (pyorc: the streaming client's and the mutation API's
  acid files) keep ORC's default hybrid calendar, in which Java readers label every day
  before 1582-10-15 by the Julian calendar: ``1582-10-04`` reads as ``1582-09-24``,
  ``0001-01-01`` as ``0001-01-03``. Spark's writer (upserts) stores them exactly, so only
  the Spark-free writers refuse them (`orc_problems`, `value_problem`).

The Spark feed conversion (`versioned.engine.feeds.rows`) applies the first two to tables
whose file format is ORC; the streaming client's (`versioned.streaming.encoding`) and the
mutation API's coordinators (`value_problem`) all three.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc

_EPOCH = dt.date(1970, 1, 1)
GAP_DAYS = ((dt.date(1582, 10, 5) - _EPOCH).days, (dt.date(1582, 10, 14) - _EPOCH).days)
"""First and last day (days since 1970-01-01) the hybrid calendar skips."""
DAY_MICROS = 86_400_000_000
GAP_DATE = "is a day ORC's readers skip (1582-10-05..14): it would read back as 1582-10-15"
GAP_TIMESTAMP = (
    "falls on a day ORC's readers skip (1582-10-05..14): it would read back on 1582-10-15"
)
LAST_SECOND = "is within the last second before 1970, which ORC's readers read one second later"
BEFORE_GREGORIAN = (
    "is before 1582-10-15, where ORC's Java readers use the Julian calendar: versioned's "
    "Spark-free writers cannot store it so that they read it back as written (an upsert can)"
)
GREGORIAN_DAY = (dt.date(1582, 10, 15) - _EPOCH).days
"""1582-10-15, the first day of the Gregorian calendar, in days since 1970-01-01."""


def orc_problems(name: str, type_name: str, values: pa.Array) -> pa.Array | None:
    """Per value, why an ORC file would not give it back (null: it would), or None when
    the column's type has no such values."""
    if type_name == "DATE":
        days = values.cast(pa.int32())
        early = pc.less(days, GREGORIAN_DAY)
        bad = pc.and_(pc.greater_equal(days, GAP_DAYS[0]), pc.less_equal(days, GAP_DAYS[1]))
        return _reasons(name, values, [(early, BEFORE_GREGORIAN), (bad, GAP_DATE)])
    if type_name == "TIMESTAMP":
        micros = values.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
        low, high = GAP_DAYS[0] * DAY_MICROS, (GAP_DAYS[1] + 1) * DAY_MICROS
        early = pc.less(micros, GREGORIAN_DAY * DAY_MICROS)
        gap = pc.and_(pc.greater_equal(micros, low), pc.less(micros, high))
        last = pc.and_(pc.greater(micros, -1_000_000), pc.less(micros, 0))
        checks = [(early, BEFORE_GREGORIAN), (gap, GAP_TIMESTAMP), (last, LAST_SECOND)]
        return _reasons(name, values, checks)
    return None


_GAP = (dt.date(1582, 10, 5), dt.date(1582, 10, 14))
_GREGORIAN = dt.date(1582, 10, 15)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def value_problem(name: str, type_name: str, value: object) -> str | None:
    """`orc_problems` for one Python value (a record of the mutation API): why an ORC file
    would not give it back, or None. A naive ``datetime`` is UTC, as pyarrow takes it."""
    if type_name == "DATE" and isinstance(value, dt.date):
        day = value.date() if isinstance(value, dt.datetime) else value
        if _GAP[0] <= day <= _GAP[1]:
            return f"column {name}: '{day}' {GAP_DATE}"
        if day < _GREGORIAN:
            return f"column {name}: '{day}' {BEFORE_GREGORIAN}"
    elif type_name == "TIMESTAMP" and isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        micros = (aware - _EPOCH_UTC) // dt.timedelta(microseconds=1)
        if GAP_DAYS[0] * DAY_MICROS <= micros < (GAP_DAYS[1] + 1) * DAY_MICROS:
            return f"column {name}: '{value}' {GAP_TIMESTAMP}"
        if micros < GREGORIAN_DAY * DAY_MICROS:
            return f"column {name}: '{value}' {BEFORE_GREGORIAN}"
        if -1_000_000 < micros < 0:
            return f"column {name}: '{value}' {LAST_SECOND}"
    return None


def _reasons(name: str, values: pa.Array, checks: list[tuple[pa.Array, str]]) -> pa.Array:
    shown = values.cast(pa.string())
    out = pa.nulls(len(values), pa.string())
    for bad, text in checks:
        message = pc.binary_join_element_wise(f"column {name}: '", shown, f"' {text}", "")
        out = pc.if_else(pc.fill_null(bad, False), message, out)
    return out
