"""Column types read by executors with pyarrow agree with what Spark reads for `changes`."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException

from tests.change_stream.streams import folded, run_to_memory
from tests.support.layout_profiles import LAYOUTS, table_args
from versioned.api.catalog import Catalog

COLUMNS = ["id", "d", "ts", "amt", "c", "ok", "big", "p"]


def _table(cat: Catalog, layout: str) -> Any:
    args: dict[str, Any] = table_args(layout, buckets=2)
    return cat.create_table(
        "cs.types",
        columns="id INT, d DATE, ts TIMESTAMP, amt DECIMAL(10,2), c VARCHAR(5), ok BOOLEAN, "
        "big BIGINT, p DATE",
        primary_key="p,id",
        partition_by="p",
        layout=layout,
        **args,
    )


def _batch(rows: list[tuple[Any, ...]]) -> pa.Table:
    types = [
        pa.int32(),
        pa.date32(),
        pa.timestamp("us", tz="UTC"),
        pa.decimal128(10, 2),
        pa.string(),
        pa.bool_(),
        pa.int64(),
        pa.date32(),
    ]
    columns = list(zip(*rows, strict=True))
    return pa.table({n: pa.array(columns[i], types[i]) for i, n in enumerate(COLUMNS)})


# `make test-cluster` runs this one for the change stream's executor tasks (each layout's
# pyarrow reads of stored rows and pre-images); the longer agreement test stays local.
@pytest.mark.cluster
@pytest.mark.parametrize("layout", LAYOUTS)
def test_dates_times_decimals_and_typed_partitions_agree_with_changes(
    cat: Catalog, tmp_path: Path, layout: str
) -> None:
    t = _table(cat, layout)
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)
    day = dt.date(2024, 5, 6)
    t.upsert(
        _batch(
            [
                (1, dt.date(2024, 1, 2), when, Decimal("1.25"), "ab", True, 2**40, day),
                (2, None, None, None, None, None, None, day),
            ]
        )
    )
    t.upsert(
        _batch(
            [
                (1, dt.date(2024, 1, 3), when, Decimal("1.25"), "ab", True, 2**40, day),
                (2, dt.date(1999, 12, 31), when, Decimal("-0.01"), "", False, -1, day),
            ]
        )
    )
    rows = run_to_memory(t.change_stream(), tmp_path / "ck")
    previous = None
    for commit in t.history():
        expected = sorted(
            (tuple(r) for r in t.changes(previous, commit.version).collect()), key=repr
        )
        assert folded([r for r in rows if r["_commit_seq"] == commit.seq], COLUMNS) == expected
        previous = commit.version
    assert len(rows) == 6


def test_an_acid_date_before_the_gregorian_calendar_is_refused(
    cat: Catalog, tmp_path: Path
) -> None:
    t = _table(cat, "acid")
    old = dt.date(1500, 1, 1)
    t.upsert(_batch([(1, old, None, None, None, None, None, dt.date(2024, 5, 6))]))
    with pytest.raises(StreamingQueryException, match="before 1582-10-15"):
        run_to_memory(t.change_stream(), tmp_path / "ck")
