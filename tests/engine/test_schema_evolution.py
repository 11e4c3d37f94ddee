"""Adding and widening columns on real Spark, real files and a real SQLite catalog.

The catalog changes; the files do not. Every reader (latest, time travel, changes, SQL views,
compaction, export) must read old files under the schema of the version it reads.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from versioned.api.catalog import Catalog, connect
from versioned.api.table import Table
from versioned.layouts.table_request import CompactRequest
from versioned.layouts.version_partition.engine.compactor import compact_table


def _table(cat: Catalog, name: str = "t.items", file_format: str = "parquet") -> Table:
    return cat.create_table(
        name,
        columns="id INT, qty INT, p STRING",
        primary_key="id",
        partition_by="p",
        op_code_column="op",
        file_format=file_format,
    )


def _batch(**columns: Any) -> pa.Table:
    types = {"id": pa.int32(), "qty": pa.int64(), "p": pa.string(), "op": pa.string()}
    return pa.table({k: pa.array(v, types.get(k)) for k, v in columns.items()})


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in frame.collect())


def _data_files(t: Table, as_of: int | None = None) -> set[str]:
    return {f.path for f in t.snapshot(as_of).files if f.kind == "data"}


@pytest.fixture
def evolved(cat: Catalog) -> tuple[Table, int, int]:
    """Version v1 (id, qty, p); then ``note STRING`` added and ``qty`` widened to BIGINT;
    then version v2 updating key 2 and inserting key 3 with the new columns.
    Returns the table, v1 and v2."""
    t = _table(cat)
    v1 = t.upsert(_batch(id=[1, 2], qty=[10, 20], p=["a", "b"], op=["I", "I"])).version
    t.add_columns("note STRING")
    t.widen_columns("qty BIGINT")
    v2 = t.upsert(
        _batch(id=[2, 3], qty=[2**40, 30], p=["b", "a"], note=["x", "y"], op=["U", "I"])
    ).version
    return t, v1, v2


LATEST = [(1, 10, "a", None), (2, 2**40, "b", "x"), (3, 30, "a", "y")]


def test_adding_columns_rewrites_no_file_and_old_rows_read_null(cat: Catalog) -> None:
    t = _table(cat)
    v1 = t.upsert(_batch(id=[1, 2], qty=[10, 20], p=["a", "b"], op=["I", "I"])).version
    before = {f.path: f.size_bytes for f in t.snapshot().files}
    mtimes = {
        p: (Path(cat.settings.warehouse) / t.info.location / p).stat().st_mtime_ns for p in before
    }
    commit = t.add_columns("note STRING, price DECIMAL(10,2)")
    assert {f.path: f.size_bytes for f in t.snapshot().files} == before
    assert all(
        (Path(cat.settings.warehouse) / t.info.location / p).stat().st_mtime_ns == m
        for p, m in mtimes.items()
    )
    assert [(c.version, c.operation) for c in t.history()] == [
        (v1, "upsert"),
        (commit.version, "alter"),
    ]
    assert _rows(t.read()) == [(1, 10, "a", None, None), (2, 20, "b", None, None)]
    t.upsert(
        pa.table(
            {
                "id": [3],
                "qty": [30],
                "p": ["a"],
                "note": ["n"],
                "price": [Decimal("1.50")],
                "op": ["I"],
            }
        )
    )
    assert _rows(t.read().where("id = 3")) == [(3, 30, "a", "n", Decimal("1.50"))]


def test_time_travel_reads_each_version_with_its_own_schema(
    evolved: tuple[Table, int, int],
) -> None:
    t, v1, v2 = evolved
    old = t.read(as_of=v1)
    assert [(f.name, f.dataType.simpleString()) for f in old.schema.fields] == [
        ("id", "int"),
        ("qty", "int"),
        ("p", "string"),
    ]
    assert _rows(old) == [(1, 10, "a"), (2, 20, "b")]
    alter_add, alter_widen = [c.version for c in t.history() if c.operation == "alter"]
    assert t.read(as_of=alter_add).columns == ["id", "qty", "p", "note"]
    assert t.read(as_of=alter_add).schema["qty"].dataType.simpleString() == "int"
    assert t.read(as_of=alter_widen).schema["qty"].dataType.simpleString() == "bigint"
    assert _rows(t.read(as_of=alter_widen)) == [(1, 10, "a", None), (2, 20, "b", None)]
    assert _rows(t.read(as_of=v2)) == LATEST == _rows(t.read())


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_old_files_read_under_widened_types(cat: Catalog, file_format: str) -> None:
    """Spark reads INT32/FLOAT/narrow-DECIMAL files under the wider types (vectorized or
    not); this pins it, since the reader relies on it instead of casting per file."""
    t = cat.create_table(
        "t.wide",
        columns="id INT, b TINYINT, s SMALLINT, n INT, f FLOAT, d DECIMAL(5,2), e DECIMAL(12,2)",
        primary_key="id",
        file_format=file_format,
    )
    t.upsert(
        pa.table(
            {
                "id": pa.array([1, 2], pa.int32()),
                "b": pa.array([-128, 127], pa.int8()),
                "s": pa.array([-32768, 32767], pa.int16()),
                "n": pa.array([-(2**31), 2**31 - 1], pa.int32()),
                "f": pa.array([1.5, -0.25], pa.float32()),
                "d": pa.array([Decimal("-999.99"), Decimal("999.99")], pa.decimal128(5, 2)),
                "e": pa.array([Decimal("1.25"), Decimal("-9999999999.99")], pa.decimal128(12, 2)),
            }
        )
    )
    t.widen_columns("b SMALLINT, s INT, n BIGINT, f DOUBLE, d DECIMAL(7,2), e DECIMAL(30,2)")
    expected = [
        (1, -128, -32768, -(2**31), 1.5, Decimal("-999.99"), Decimal("1.25")),
        (2, 127, 32767, 2**31 - 1, -0.25, Decimal("999.99"), Decimal("-9999999999.99")),
    ]
    spark = cat.spark
    for vectorized in ("true", "false"):
        spark.conf.set(f"spark.sql.{file_format}.enableVectorizedReader", vectorized)
        try:
            assert _rows(t.read()) == expected
        finally:
            spark.conf.unset(f"spark.sql.{file_format}.enableVectorizedReader")
    row = pa.table({"id": pa.array([3], pa.int32()), "n": pa.array([2**40], pa.int64())})
    t.upsert(row, partial=True)  # the other columns: none stored for a new key, so null
    assert _rows(t.read().select("id", "n")) == [(1, -(2**31)), (2, 2**31 - 1), (3, 2**40)]


def test_a_widened_primary_key_still_updates_and_deletes_rows_written_before(
    cat: Catalog,
) -> None:
    t = _table(cat)
    t.upsert(_batch(id=[1, 2, 3], qty=[1, 2, 3], p=["a", "a", "b"], op=["I", "I", "I"]))
    t.widen_columns("id BIGINT")
    big = pa.array([1, 2, 2**40], pa.int64())
    t.upsert(pa.table({"id": big, "qty": [10, 0, 40], "p": ["a", "a", "b"], "op": ["U", "D", "I"]}))
    expected = [(1, 10, "a"), (3, 3, "b"), (2**40, 40, "b")]
    assert _rows(t.read()) == expected
    t.compact()
    assert _rows(t.read()) == expected


def test_compaction_keeps_added_and_widened_columns(evolved: tuple[Table, int, int]) -> None:
    t, v1, _ = evolved
    old_files = _data_files(t)
    result = t.compact()
    assert {p.status for p in result.partitions} == {"compacted"}
    assert not _data_files(t) & old_files
    assert _rows(t.read()) == LATEST
    assert t.read().schema["qty"].dataType.simpleString() == "bigint"
    assert _rows(t.read(as_of=v1)) == [(1, 10, "a"), (2, 20, "b")]


def test_a_compaction_planned_before_a_column_was_added_keeps_that_column(
    cat: Catalog,
) -> None:
    """The compactor rewrites the files of its snapshot with the snapshot's columns, not
    with the columns of the table record it was handed earlier."""
    t = _table(cat)
    t.upsert(_batch(id=[1], qty=[1], p=["a"], op=["I"]))
    planned_with = t.info  # before the column exists
    t.add_columns("note STRING")
    t.upsert(_batch(id=[2], qty=[2], p=["a"], note=["kept"], op=["I"]))
    planned = CompactRequest(operation="compact", table=planned_with, granted=frozenset())
    compact_table(cat.engine_context, planned)
    assert [c.operation for c in t.history()][-1] == "compact"
    assert _rows(t.read()) == [(1, 1, "a", None), (2, 2, "a", "kept")]


def test_changes_between_versions_of_different_schemas(evolved: tuple[Table, int, int]) -> None:
    t, v1, v2 = evolved
    changes = _rows(t.changes(since=v1, until=v2))
    assert changes == [("insert", 3, 30, "a", "y"), ("update", 2, 2**40, "b", "x")]
    alter_widen = [c.version for c in t.history() if c.operation == "alter"][-1]
    assert _rows(t.changes(since=v1, until=alter_widen)) == []  # a schema change alone
    assert t.changes(since=v1).columns == ["_change", "id", "qty", "p", "note"]


def test_sql_views_show_the_current_schema_over_old_and_new_files(
    evolved: tuple[Table, int, int], cat: Catalog
) -> None:
    rows = cat.sql("SELECT id, qty, p, note FROM t.items").collect()
    assert _rows_of(rows) == LATEST
    assert cat.sql("SELECT COUNT(*) FROM t.items WHERE note IS NULL").first()[0] == 1


def _rows_of(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in rows)


def test_export_and_import_carry_the_schema_of_the_exported_version(
    evolved: tuple[Table, int, int], cat: Catalog, spark: Any, tmp_path: Path
) -> None:
    t, v1, _ = evolved
    cat.export("t.items", tmp_path / "now")
    cat.export("t.items", tmp_path / "then", as_of=v1)
    other = connect(warehouse=str(tmp_path / "wh2"), spark=spark, user="alice")
    try:
        now = other.import_(tmp_path / "now", table="u.now")
        then = other.import_(tmp_path / "then", table="u.then")
        assert now.rows == 3 and then.rows == 2
        imported = other.table("u.now")
        assert imported.spec.columns == t.spec.columns
        assert _rows(imported.read()) == LATEST
        old = other.table("u.then")
        assert [(c.name, c.type) for c in old.spec.columns] == [
            ("id", "INT"),
            ("qty", "INT"),
            ("p", "STRING"),
        ]
        assert _rows(old.read()) == [(1, 10, "a"), (2, 20, "b")]
    finally:
        other.close()
