"""A small version of a Parquet table is written by the driver (pyarrow), a large one by
Spark's tasks (pyarrow in each task, `task_writes`); both write the same rows, typed alike,
into the same folders (`write.driver_max_rows`)."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pytest

from tests.support.typed_rows import TYPED_COLUMNS, typed_batch
from versioned.errors import SchemaError
from versioned.layouts.version_partition.table_rules import DRIVER_WRITE_ROWS_PROPERTY

COLUMNS = TYPED_COLUMNS
# The tasks name a file as Spark's writer would, part-<split>-<uuid>.parquet (the split: the
# task that wrote it); the driver part-<uuid>.parquet.
BY_TASK = re.compile(r"/part-\d{5}-[0-9a-f]{32}\.parquet$")
BY_DRIVER = re.compile(r"/part-[0-9a-f]{32}\.parquet$")


def _table(cat: Any, name: str, max_rows: int | None, file_format: str = "parquet") -> Any:
    properties = {} if max_rows is None else {DRIVER_WRITE_ROWS_PROPERTY: str(max_rows)}
    return cat.create_table(
        name,
        columns=COLUMNS,
        primary_key="id",
        partition_by="store",
        op_code_column="op",
        file_format=file_format,
        properties=properties,
    )


def _batch(ids: list[int], ops: list[str], salt: int) -> pa.Table:
    return typed_batch(ids, ops, salt, null_store_every=13)


def _rows(t: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().collect())


def _data_files(t: Any) -> list[str]:
    return [f.path for f in t.snapshot().files if f.kind == "data"]


def test_the_driver_and_spark_write_the_same_versions(cat: Any) -> None:
    driver, spark = _table(cat, "w.driver", None), _table(cat, "w.spark", 0)
    first = _batch(list(range(200)), ["I"] * 200, 1)
    second = _batch(list(range(0, 260, 3)), ["D" if i % 2 else "U" for i in range(0, 260, 3)], 2)
    for batch in (first, second):
        results = [t.upsert(batch) for t in (driver, spark)]
        counts = [(r.inserted, r.updated, r.deleted, r.partitions) for r in results]
        assert counts[0] == counts[1]
    assert _rows(driver) == _rows(spark)
    touched = range(0, 260, 3)
    live = set(range(200)) - {i for i in touched if i % 2} | {i for i in touched if not i % 2}
    assert [r[0] for r in _rows(driver)] == sorted(live)
    assert all(BY_DRIVER.search(p) for p in _data_files(driver))
    assert all(BY_TASK.search(p) for p in _data_files(spark))

    # Same partition folders, one file per partition and version on both paths (versions
    # are transaction ids: they differ between the tables).
    def partitions(t: Any) -> list[str]:
        return sorted(p.rsplit("/version_id=", 1)[0] for p in _data_files(t))

    assert partitions(driver) == partitions(spark)
    folders = [p.rsplit("/", 1)[0] for p in _data_files(driver)]
    assert len(folders) == len(set(folders))
    # The stored types are the table's on both paths (read back through SQL too).
    sql = "SELECT SUM(amount), MAX(seen), MIN(day) FROM w.{}"
    assert cat.sql(sql.format("driver")).collect() == cat.sql(sql.format("spark")).collect()


def test_a_version_above_the_limit_is_written_by_spark(cat: Any) -> None:
    t = _table(cat, "w.limit", 50)
    t.upsert(_batch(list(range(40)), ["I"] * 40, 1))
    t.upsert(_batch(list(range(100, 160)), ["I"] * 60, 1))
    by_version: dict[int, set[bool]] = {}
    for f in t.snapshot().files:
        if f.kind == "data":
            by_version.setdefault(f.version, set()).add(bool(BY_TASK.search(f.path)))
    assert [by_version[v] for v in sorted(by_version)] == [{False}, {True}]
    assert len(_rows(t)) == 100


def test_orc_tables_are_written_by_spark(cat: Any) -> None:
    t = _table(cat, "w.orc", None, file_format="orc")
    t.upsert(_batch(list(range(20)), ["I"] * 20, 1))
    assert all(".c000" in p for p in _data_files(t))
    assert t.describe()[DRIVER_WRITE_ROWS_PROPERTY] == 0


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_bad_limit_is_refused_at_create(cat: Any, value: str) -> None:
    with pytest.raises(SchemaError, match=DRIVER_WRITE_ROWS_PROPERTY):
        cat.create_table(
            "w.bad",
            columns="id INT",
            primary_key="id",
            properties={DRIVER_WRITE_ROWS_PROPERTY: value},
        )
