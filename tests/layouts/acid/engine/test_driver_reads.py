"""Small bucket files are read on the driver (pyarrow), the others by Spark; both give the
same rows, ROW__IDs, time travel and changes (`engine.acid.driver_reads`)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from tests.layouts.acid.engine.tables import acid_table
from versioned.catalog.records import DataFile
from versioned.errors import SchemaError
from versioned.layouts.acid.engine.driver_reads import DRIVER_FILE_MAX_ROWS, split_for_driver
from versioned.layouts.acid.snapshot_dirs import BucketFileRef
from versioned.layouts.acid.table_rules import DRIVER_READ_PROPERTY
from versioned.storage.filesystem import FileIO

COLUMNS = (
    "id BIGINT NOT NULL, name STRING, code VARCHAR(8), amount DECIMAL(10,2), ratio FLOAT, "
    "qty INT, tiny TINYINT, flag BOOLEAN, raw BINARY, store STRING"
)


def _table(cat: Any, name: str, driver_max_events: int | None, columns: str = COLUMNS) -> Any:
    properties = {} if driver_max_events is None else {DRIVER_READ_PROPERTY: driver_max_events}
    return acid_table(
        cat,
        name,
        columns=columns,
        op_code_column="op",
        buckets=2,
        properties={k: str(v) for k, v in properties.items()},
    )


def _batch(ids: list[int], ops: list[str], salt: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"näme '{i}' {salt}" if i % 7 else None for i in ids],
            "code": [f"c{i % 100}" for i in ids],
            "amount": pa.array([Decimal(f"{i}.{salt:02d}") for i in ids], pa.decimal128(10, 2)),
            "ratio": pa.array([i / 3 + salt for i in ids], pa.float32()),
            "qty": pa.array([i * 1000 + salt for i in ids], pa.int32()),
            "tiny": pa.array([i % 100 - 50 for i in ids], pa.int8()),
            "flag": [bool(i % 2) if i % 5 else None for i in ids],
            "raw": [bytes([i % 256, salt]) for i in ids],
            # a `/`, non-ASCII, the null partition and "" (also Hive's default partition)
            "store": [["s0", "s/ä b", None, "", "007"][i % 5] for i in ids],
            "op": ops,
        }
    )


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def _bucket_files_opened() -> list[str]:
    return [p for p in FileIO.opened_files if "/bucket_" in p]


def test_driver_and_spark_reads_agree_across_deletes_and_schema_changes(cat: Any) -> None:
    by_spark, by_driver = _table(cat, "r.spark", 0), _table(cat, "r.driver", None)
    versions = []
    for table in (by_spark, by_driver):
        table.upsert(_batch(list(range(1, 61)), ["I"] * 60, 1))
        changed = list(range(1, 61, 4)) + list(range(2, 61, 9)) + [61, 62]
        ops = ["U"] * 15 + ["D"] * 7 + ["I", "I"]
        table.upsert(_batch(changed, ops, 2))
        table.add_columns("note STRING")
        table.widen_columns("ratio DOUBLE, qty BIGINT, amount DECIMAL(14,2)")
        later = _batch([3, 5, 63], ["U", "D", "I"], 3)
        table.upsert(later.append_column("note", pa.array(["three", None, "new"])))
        versions.append([c.version for c in table.history() if c.operation == "upsert"])
    assert len(versions[0]) == len(versions[1]) == 3
    FileIO.reset_opened_files()
    spark_rows = _rows(by_spark.read(with_row_id=True))
    assert not _bucket_files_opened()  # read.driver_max_events=0: Spark reads every file
    driver_rows = _rows(by_driver.read(with_row_id=True))
    opened = _bucket_files_opened()
    assert any("/delta_" in p for p in opened) and any("/delete_delta_" in p for p in opened)
    assert driver_rows == spark_rows
    assert len(driver_rows) == 60 - 7 + 2 - 1 + 1
    assert {r[-2] for r in driver_rows} >= {None, "three", "new"}  # note, added by ALTER
    for old, new in zip(*versions, strict=True):
        assert _rows(by_driver.read(as_of=new)) == _rows(by_spark.read(as_of=old))
    (s1, _, s3), (d1, _, d3) = versions
    assert _rows(by_driver.changes(d1, d3)) == _rows(by_spark.changes(s1, s3))
    assert _rows(cat.sql("SELECT * FROM r.driver")) == _rows(cat.sql("SELECT * FROM r.spark"))


def test_upserts_find_stored_rows_through_the_driver_read(cat: Any) -> None:
    """The key lookup of an upsert reads the same way: counts and rows match Spark's."""
    by_spark, by_driver = _table(cat, "r.lookup_spark", 0), _table(cat, "r.lookup_driver", None)
    results = []
    for table in (by_spark, by_driver):
        table.upsert(_batch(list(range(1, 41)), ["I"] * 40, 1))
        table.upsert(_batch([1, 2, 3, 4], ["U", "D", "U", "D"], 2))
        result = table.upsert(_batch([1, 2, 3, 4, 50], ["U", "I", "D", "D", "I"], 3))
        results.append((result.inserted, result.updated, result.deleted, result.ignored_deletes))
    assert results[0] == results[1] == (2, 1, 1, 1)
    assert _rows(by_driver.read(with_row_id=True)) == _rows(by_spark.read(with_row_id=True))


def test_insert_files_with_dates_or_timestamps_are_read_by_spark(cat: Any) -> None:
    columns = "id BIGINT NOT NULL, day DATE, seen TIMESTAMP, store STRING"
    table = _table(cat, "r.dated", None, columns)
    rows = {
        "id": pa.array([1, 2, 3], pa.int64()),
        "day": [dt.date(1500, 1, 1), dt.date(2024, 2, 29), None],
        "seen": [dt.datetime(2024, 3, 10, 1, 30, tzinfo=dt.UTC), None, None],
        "store": ["a", "a", "b"],
        "op": ["I", "I", "I"],
    }
    table.upsert(pa.table(rows))
    table.upsert(pa.table({k: v[1:] for k, v in rows.items()}).set_column(4, "op", [["D", "U"]]))
    FileIO.reset_opened_files()
    got = _rows(table.read())
    opened = _bucket_files_opened()
    assert opened and all("/delete_delta_" in p for p in opened)  # deletes hold no dates
    assert got == [
        (1, dt.date(1500, 1, 1), dt.datetime(2024, 3, 10, 1, 30), "a"),
        (3, None, None, "b"),
    ]


def _ref(rows: int, n: int) -> BucketFileRef:
    data = DataFile(n, 1, f"delta_{n}/bucket_00000", "delta", n, 100, rows, {}, n, None)
    return BucketFileRef(data, f"delta_{n}", 0)


def test_the_driver_takes_the_smallest_files_within_its_budget(cat: Any) -> None:
    spec = _table(cat, "r.budget", 1000).spec
    refs = [_ref(r, i) for i, r in enumerate([400, 10, DRIVER_FILE_MAX_ROWS + 1, 300, 500])]
    driver, spark = split_for_driver(spec, refs, deletes=True)
    assert [r.file.row_count for r in driver] == [10, 300, 400]
    assert sorted(r.file.row_count for r in spark) == [500, DRIVER_FILE_MAX_ROWS + 1]
    assert split_for_driver(_table(cat, "r.off", 0).spec, refs, deletes=True) == ([], refs)


@pytest.mark.parametrize("value", ["-1", "lots", "2.5"])
def test_the_driver_read_property_must_be_a_whole_number(cat: Any, value: str) -> None:
    with pytest.raises(SchemaError, match=DRIVER_READ_PROPERTY):
        cat.create_table(
            "r.bad",
            columns="id BIGINT NOT NULL, v STRING",
            primary_key="id",
            layout="acid",
            properties={DRIVER_READ_PROPERTY: value},
        )


def test_describe_shows_how_many_events_the_driver_reads(cat: Any) -> None:
    assert cat.describe(_table(cat, "r.describe", 500).name)[DRIVER_READ_PROPERTY] == 500
