"""Export and import of acid tables: the same self-describing collection as for version
tables (plain ORC files of the latest rows), imported by an upsert through the acid writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.collections.conftest import COLUMNS, HOSTILE, batch, rows, state
from tests.layouts.acid.engine.hive_walk import walk
from versioned import collections
from versioned.api.catalog import Catalog
from versioned.collections import PartitionExistsError
from versioned.layouts.acid.snapshot_dirs import valid_write_id_list


def _acid(cat: Catalog, name: str = "sales.orders") -> Any:
    return cat.create_table(
        name,
        columns=COLUMNS,
        primary_key="id",
        partition_by="store,day",
        layout="acid",
        bucket_by="id",
        buckets=2,
    )


def _source(cat: Catalog) -> tuple[Any, int]:
    """An acid table with updated and deleted keys; returns it and its first version."""
    table = _acid(cat)
    first = table.upsert(
        batch([(i, float(i), f"n{i}", HOSTILE[i % 4], 1 + (i // 4) % 2) for i in range(12)])
    ).version
    changes = batch([(0, 100.0, "updated", "a/b", 1), (5, 0.0, None, None, 2)])
    table.upsert(changes.append_column("op", pa.array(["U", "D"])), op_code_column="op")
    return table, first


def _hive_rows(cat: Catalog, table: Any) -> list[tuple[Any, ...]]:
    """The table's rows as Hive's reader finds them on disk (partition values as strings)."""
    snapshot = table.snapshot()
    ids = valid_write_id_list(cat.engine_context.store.write_ids(table.name, snapshot.seq))
    table_dir = Path(
        cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
    )
    found = walk(table_dir, table.spec, ids)
    return sorted((r["id"], r["amt"], r["note"], r["store"], int(r["day"])) for r in found)


def test_an_acid_export_is_a_plain_collection_of_the_latest_rows(
    cat: Catalog, spark: Any, tmp_path: Path
) -> None:
    table, first = _source(cat)
    expected = rows(table.read())
    assert len(expected) == 11 and (0, 100.0, "updated", "a/b", 1) in expected
    result = cat.export("sales.orders", tmp_path / "out")
    assert (result.rows, result.partitions) == (11, 7)  # key 5 was the only row of one
    meta = collections.read_metadata(str(tmp_path / "out"))
    assert (meta.layout, meta.file_format) == ("acid", "orc")
    assert (meta.bucket_by, meta.buckets) == (("id",), 2)
    assert rows(spark.read.orc(str(tmp_path / "out"))) == expected  # rows, not ACID events
    old = cat.export("sales.orders", tmp_path / "old", as_of=first)
    assert old.rows == 12
    cat.export("sales.orders", tmp_path / "some", partition={"store": "a/b"})
    assert rows(collections.read(spark, str(tmp_path / "some"))) == [
        r for r in expected if r[3] == "a/b"
    ]


def test_an_acid_round_trip_creates_an_acid_table_hive_can_read(
    cat: Catalog, target: Catalog, tmp_path: Path
) -> None:
    table, _ = _source(cat)
    cat.export("sales.orders", tmp_path / "out")
    result = target.import_(tmp_path / "out")
    assert (result.created, result.partitions, result.rows) == (True, 7, 11)
    imported = target.table("sales.orders")
    assert imported.spec.to_dict() == table.spec.to_dict()
    assert [c.operation for c in imported.history()] == ["import"]
    assert rows(imported.read()) == rows(table.read())
    assert _hive_rows(target, imported) == sorted(rows(table.read()), key=lambda r: r[0])
    again = imported.upsert(batch([(0, -1.0, "again", "a/b", 1), (99, 9.0, "new", "x", 1)]))
    assert (again.inserted, again.updated) == (1, 1)  # the imported key 0 is found
    latest = rows(imported.read())
    assert len(latest) == 12 and sum(1 for r in latest if r[0] == 0) == 1


def test_import_into_an_acid_table_adds_new_partitions_and_refuses_existing_ones(
    cat: Catalog, target: Catalog, tmp_path: Path
) -> None:
    _source(cat)
    cat.export("sales.orders", tmp_path / "out")
    mine = _acid(target)
    mine.upsert(batch([(500, 1.0, "mine", "x", 2)]))
    before = state(target)
    with pytest.raises(PartitionExistsError, match=r"\(store='x', day='2'\)"):
        target.import_(tmp_path / "out")
    assert state(target) == before  # nothing written, no file left behind
    result = target.import_(tmp_path / "out", partition={"store": "a/b"})
    assert (result.created, result.partitions, result.rows) == (False, 2, 3)
    assert len(rows(mine.read())) == 4


def test_a_parquet_collection_imports_into_an_acid_table(
    spark: Any, target: Catalog, tmp_path: Path
) -> None:
    """The acid writer rewrites the rows, so the collection's file format does not matter."""
    frame = spark.createDataFrame([(1, 1.0, "n", "s", 3), (2, 2.0, None, "s", 3)], COLUMNS)
    collections.write(
        frame,
        str(tmp_path / "pq"),
        primary_key="id",
        sort_by=None,
        partition_by=["store", "day"],
        table="sales.orders",
    )
    assert collections.read_metadata(str(tmp_path / "pq")).file_format == "parquet"
    table = _acid(target)
    result = target.import_(tmp_path / "pq")
    assert (result.created, result.rows) == (False, 2)
    assert rows(table.read()) == [(1, 1.0, "n", "s", 3), (2, 2.0, None, "s", 3)]
