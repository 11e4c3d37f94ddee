"""A Parquet table's rows written by the tasks, in place
(`layouts.version_partition.engine.task_writes`): a first load's partitions, rows and counts
are the general path's for every kind of partition column, files keep to ``rows_per_file``;
a later batch Spark writes, and a compaction Spark runs, go the same way; nothing is staged
or moved."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.test_warehouse import files_under
from tests.support.typed_rows import TYPED_COLUMNS, typed_batch
from versioned.api.catalog import Catalog
from versioned.layouts.version_partition.engine.task_writes import (
    WrittenFile,
    _remove_unreported,
)
from versioned.layouts.version_partition.table_rules import BULK_LOAD_MIN_BYTES_PROPERTY
from versioned.options import WriteOptions
from versioned.storage.filesystem import FileIO

BULK = "in bulk"
NEVER = str(1 << 62)


def _load(t: Any, batch: Any, **kw: Any) -> tuple[Any, list[str]]:
    said: list[str] = []
    return t.upsert(batch, progress=said.append, **kw), said


def _rows(t: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().collect())


def _partitions(t: Any) -> set[tuple[str | None, ...]]:
    return {p.values for p in t.snapshot().partitions.values()}


def _data_files(t: Any) -> list[Path]:
    root = Path(t.catalog.settings.warehouse) / t.info.location
    return [root / f.path for f in t.snapshot().files if f.kind == "data"]


@pytest.mark.parametrize(
    "partition_by",
    [
        ("day", "flag"),  # DATE and BOOLEAN: the tasks write their text
        ("small", "store"),  # SMALLINT, and STRING with nulls and a '/'
        ("ratio",),  # DOUBLE: Spark casts it to text for the tasks
        ("amount",),  # DECIMAL: the same
        (),
    ],
    ids=lambda p: "-".join(p) or "unpartitioned",
)
def test_tasks_write_the_partitions_and_rows_the_general_path_writes(
    cat: Catalog, partition_by: tuple[str, ...]
) -> None:
    name = "_".join(partition_by) or "none"
    tables = {
        bulk: cat.create_table(
            f"tw.{name}_{bulk}",
            columns=TYPED_COLUMNS,
            primary_key="id",
            partition_by=list(partition_by),
            op_code_column="op",
            properties={BULK_LOAD_MIN_BYTES_PROPERTY: "0" if bulk else NEVER},
        )
        for bulk in (True, False)
    }
    batch = typed_batch(list(range(90)), [], 1, null_store_every=13)
    loaded = {bulk: _load(t, batch) for bulk, t in tables.items()}
    assert any(BULK in m for m in loaded[True][1])
    assert not any(BULK in m for m in loaded[False][1])
    results = {b: (r.inserted, r.rejected, r.partitions) for b, (r, _) in loaded.items()}
    assert results[True] == results[False]
    assert _partitions(tables[True]) == _partitions(tables[False])
    assert _rows(tables[True]) == _rows(tables[False])
    # the files are where the catalog says, with the data columns only
    data_columns = [c.name for c in tables[True].spec.data_columns]
    for path in _data_files(tables[True]):
        assert pq.read_schema(path).names == data_columns
        assert f"version_id={loaded[True][0].version}" in path.parts


@pytest.mark.cluster  # the tasks write on executors of their own there
def test_tasks_keep_to_rows_per_file_and_stage_nothing(cat: Catalog) -> None:
    t = cat.create_table(
        "tw.files",
        columns="id BIGINT, v STRING, p INT",
        primary_key="id",
        partition_by="p",
        properties={BULK_LOAD_MIN_BYTES_PROPERTY: "0"},
    )
    n = 5_000
    batch = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "v": [f"v{i}" for i in range(n)],
            "p": pa.array([i % 2 for i in range(n)], pa.int32()),
        }
    )
    result, said = _load(t, batch, options=WriteOptions(rows_per_file=700))
    assert any(BULK in m for m in said)
    fileio = t.catalog.engine_context.fileio  # the warehouse may be on S3 (test-cluster-s3)
    files = [f"{t.info.location}/{f.path}" for f in t.snapshot().files if f.kind == "data"]
    counts = []
    for rel in files:
        with fileio.open_input(rel) as handle:
            counts.append(pq.ParquetFile(handle).metadata.num_rows)
    assert sum(counts) == n == result.inserted
    assert max(counts) <= 700
    assert len(files) >= 2 * (n // 2 // 700)  # each partition's rows in several files
    assert not files_under(t.catalog, f"{t.info.location}/_staging")  # written in place
    assert sorted(r.id for r in t.read().collect()) == list(range(n))


def test_tasks_count_the_rejected_and_the_coerced_rows_as_the_general_path_does(
    cat: Catalog,
) -> None:
    tables = {
        bulk: cat.create_table(
            f"tw.counts_{bulk}",
            columns="id BIGINT, amount DECIMAL(6,1), p STRING",
            primary_key="id",
            partition_by="p",
            properties={
                BULK_LOAD_MIN_BYTES_PROPERTY: "0" if bulk else NEVER,
                "round_decimals": "true",
            },
        )
        for bulk in (True, False)
    }
    n = 200
    batch = pa.table(
        {
            "id": pa.array([None if i % 50 == 7 else i for i in range(n)], pa.int64()),
            "amount": pa.array(
                [Decimal(f"{i}.{'25' if i % 4 == 0 else '20'}") for i in range(n)],
                pa.decimal128(8, 2),
            ),
            "p": ["" if i % 9 == 0 else f"p{i % 3}" for i in range(n)],
        }
    )
    loaded = {bulk: _load(t, batch) for bulk, t in tables.items()}
    assert any(BULK in m for m in loaded[True][1])
    bulk, general = loaded[True][0], loaded[False][0]
    assert (bulk.inserted, bulk.rejected, bulk.coerced) == (
        general.inserted,
        general.rejected,
        general.coerced,
    )
    assert bulk.rejected == 4 and bulk.coerced > 0
    assert _partitions(tables[True]) == _partitions(tables[False])
    assert (None,) in _partitions(tables[True])  # '' is the null partition, as in Hive
    assert _rows(tables[True]) == _rows(tables[False])


def test_files_no_task_reported_leave_the_folders_written(tmp_path: Path) -> None:
    """A task attempt that died left a file beside the reported ones: SQL views read whole
    version folders, so it is deleted after the job; other folders are not touched."""
    fileio = FileIO.for_root(str(tmp_path))
    folder, other = "t/p=1/version_id=3", "t/p=2/version_id=2"
    for rel in (f"{folder}/a.parquet", f"{folder}/lost.parquet", f"{other}/x.parquet"):
        fileio.write_bytes_atomic(rel, b"x")
    _remove_unreported(fileio, [WrittenFile(("1",), f"{folder}/a.parquet", 1, 1)])
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.parquet")) == [
        f"{folder}/a.parquet",
        f"{other}/x.parquet",
    ]


def _written_by_tasks(path: Path) -> bool:
    """Named as the tasks name their files: part-<split>-<uuid>.parquet."""
    parts = path.name.split("-")
    return len(parts) == 3 and parts[0] == "part" and len(parts[1]) == 5 and parts[1].isdigit()


def test_a_later_batch_and_a_compaction_are_written_by_the_tasks_in_place(cat: Catalog) -> None:
    """Past ``write.driver_max_rows`` a batch's rows are the tasks' (one file per partition:
    the rows are shuffled by partition first), and so are the rows of a compaction Spark
    runs (an ordering column's tombstones keep it off the driver), in files of at most the
    plan's share of rows; nothing goes through the staging folder."""
    t = cat.create_table(
        "tw.later",
        columns="id BIGINT, v STRING, p INT, ts BIGINT",
        primary_key="id",
        partition_by="p",
        ordering_column="ts",
        properties={"write.driver_max_rows": "0"},
    )
    n = 3_000

    def batch(ts: int, ids: range) -> pa.Table:
        return pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "v": [f"v{ts}-{i}" for i in ids],
                "p": pa.array([i % 3 for i in ids], pa.int32()),
                "ts": pa.array([ts] * len(ids), pa.int64()),
            }
        )

    first = t.upsert(batch(1, range(n)))
    second = t.upsert(batch(2, range(0, n, 2)))
    assert (first.inserted, second.updated) == (n, n // 2)
    files = _data_files(t)
    assert len(files) == 6 and all(_written_by_tasks(f) for f in files)
    by_version = {
        v: sorted(f.parts[-2] for f in files if f"version_id={v}" in f.parts)
        for v in (first.version, second.version)
    }
    assert [len(folders) for folders in by_version.values()] == [3, 3]
    root = Path(t.catalog.settings.warehouse) / t.info.location
    assert not list(root.glob("_staging/*/*"))
    done = t.compact()
    assert done.compacted == 3
    compacted = _data_files(t)
    assert all(_written_by_tasks(f) and f.parent.name.startswith("compacted-") for f in compacted)
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in compacted) == n
    assert not list(root.glob("_staging/*/*"))
    rows = {r.id: r.v for r in t.read().collect()}
    assert len(rows) == n
    assert all(v == f"v{2 if i % 2 == 0 else 1}-{i}" for i, v in rows.items())
