"""Values ORC files do not give back as written, which writers refuse (dead letters).

* Days 1582-10-05..14 do not exist in Java's hybrid Julian/Gregorian calendar; ORC's readers
  (Hive's, Spark's) read such a DATE, or a TIMESTAMP on such a day, as 1582-10-15.
* A TIMESTAMP in the last second before 1970 with a fraction (``1969-12-31 23:59:59.5``):
  ORC stores its seconds rounded toward zero and the fraction apart, and ORC's Java readers
  read it one second later (``1970-01-01 00:00:00.5``).

The Spark feed conversion (`versioned.engine.feeds.rows`) and the streaming client's
(`versioned.streaming.encoding`) both apply these to tables whose file format is ORC.
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


def orc_problems(name: str, type_name: str, values: pa.Array) -> pa.Array | None:
    """Per value, why an ORC file would not give it back (null: it would), or None when
    the column's type has no such values."""
    if type_name == "DATE":
        days = values.cast(pa.int32())
        bad = pc.and_(pc.greater_equal(days, GAP_DAYS[0]), pc.less_equal(days, GAP_DAYS[1]))
        return _reasons(name, values, [(bad, GAP_DATE)])
    if type_name == "TIMESTAMP":
        micros = values.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
        low, high = GAP_DAYS[0] * DAY_MICROS, (GAP_DAYS[1] + 1) * DAY_MICROS
        gap = pc.and_(pc.greater_equal(micros, low), pc.less(micros, high))
        last = pc.and_(pc.greater(micros, -1_000_000), pc.less(micros, 0))
        return _reasons(name, values, [(gap, GAP_TIMESTAMP), (last, LAST_SECOND)])
    return None


def _reasons(name: str, values: pa.Array, checks: list[tuple[pa.Array, str]]) -> pa.Array:
    shown = values.cast(pa.string())
    out = pa.nulls(len(values), pa.string())
    for bad, text in checks:
        message = pc.binary_join_element_wise(f"column {name}: '", shown, f"' {text}", "")
        out = pc.if_else(pc.fill_null(bad, False), message, out)
    return out
