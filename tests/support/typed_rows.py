"""A change batch of every column type a writer must store exactly (text with quotes and
non-ASCII, decimals, small ints, dates, UTC timestamps, binary, an escaped partition value),
for tests that compare two write paths of one layout."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa

TYPED_COLUMNS = (
    "id BIGINT NOT NULL, name STRING, code VARCHAR(8), amount DECIMAL(12,2), ratio DOUBLE, "
    "small SMALLINT, flag BOOLEAN, day DATE, seen TIMESTAMP, raw BINARY, store STRING"
)
"""The batch's table columns (partition by ``store``, key ``id``)."""


def typed_batch(
    ids: list[int], ops: list[str], salt: int, *, null_store_every: int | None = None
) -> pa.Table:
    """Rows ``ids`` with op codes ``ops`` (column ``op``; empty: every row ``U``), values
    varied by ``salt``; every ``null_store_every``-th id goes to the null partition."""
    n = len(ids)

    def store(i: int) -> str | None:
        if null_store_every and i % null_store_every == 0:
            return None
        return f"s{i % 3}" if i % 11 else "s/ä b"

    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"näme '{i}' {salt}" if i % 7 else None for i in ids],
            "code": [f"c{i % 100}" for i in ids],
            "amount": pa.array(
                [Decimal(f"{i}.{salt % 100:02d}") for i in ids], pa.decimal128(12, 2)
            ),
            "ratio": [i / 3 + salt for i in ids],
            "small": pa.array([i % 300 - 150 for i in ids], pa.int16()),
            "flag": [bool(i % 2) for i in ids],
            "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i % 400) for i in ids],
            "seen": [
                dt.datetime(2024, 3, 10, 1, 30, tzinfo=dt.UTC) + dt.timedelta(hours=i) for i in ids
            ],
            "raw": [bytes([i % 256, salt % 256]) for i in ids],
            "store": [store(i) for i in ids],
            "op": ops if ops else ["U"] * n,
        }
    )
