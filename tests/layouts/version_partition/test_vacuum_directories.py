"""Vacuum in the version-partition layout: the directories it leaves without files go
(partition directories of data and ``_index`` at both levels, ``_staging``)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.support.catalog_clock import backdate_table
from versioned.api.catalog import Catalog
from versioned.layouts import vacuum
from versioned.layouts.version_partition.engine import staging


def _on_disk(cat: Catalog, t: Any) -> set[str]:
    root = Path(cat.settings.warehouse) / t.info.location
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _age(path: Path, hours: float) -> None:
    past = time.time() - hours * 3600
    os.utime(path, (past, past))


def _empty_dirs(root: Path) -> list[str]:
    """Directories under ``root`` with no file at any depth."""
    return sorted(
        str(d.relative_to(root))
        for d in root.rglob("*")
        if d.is_dir() and not any(f.is_file() for f in d.rglob("*"))
    )


StoreRow = tuple[int, float | None, str, str, str]


def _store_batch(rows: list[StoreRow]) -> pa.Table:
    ids, amts, ops, stores, dates = zip(*rows, strict=True)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "amt": pa.array(amts, pa.float64()),
            "op": pa.array(ops, pa.string()),
            "store_id": pa.array(stores, pa.string()),
            "create_date": pa.array(dates, pa.string()),
        }
    )


def _store_rows(t: Any) -> list[tuple[Any, ...]]:
    frame = t.read().select("id", "amt", "store_id", "create_date")
    return sorted(tuple(r) for r in frame.collect())


def test_vacuum_removes_the_directories_it_leaves_without_files(cat: Catalog) -> None:
    """Every row of two partitions is deleted and compacted away, and a crashed write left
    files in a new partition: once vacuum has deleted the retired files and the orphans,
    no directory without files is left (partition directories of data and ``_index`` at
    both levels, ``_staging``), directories still holding a file stay, and the table reads
    the same and takes upserts into those partitions again."""
    t = cat.create_table(
        "t.stores",
        columns="id BIGINT, amt DOUBLE, op STRING, store_id STRING, create_date STRING",
        primary_key="id",
        partition_by=["store_id", "create_date"],
        op_code_column="op",
    )
    backdate_table(t, 3.0)  # the leftovers below are 2 hours old: younger than their table
    parts = [("S1", "2024-01-01"), ("S1", "2024-01-02"), ("S2", "2024-01-01")]
    t.upsert(_store_batch([(i, float(i), "I", *parts[i % 3]) for i in range(12)]))
    t.upsert(_store_batch([(i, -1.0, "U", *parts[i % 3]) for i in range(0, 12, 2)]))
    t.upsert(_store_batch([(i, None, "D", *parts[i % 3]) for i in range(12) if i % 3 != 1]))
    t.compact()
    expected = [(i, -1.0 if i % 2 == 0 else float(i), "S1", "2024-01-02") for i in (1, 4, 7, 10)]
    assert _store_rows(t) == sorted(expected)
    root = Path(cat.settings.warehouse) / t.info.location
    young = root / "store_id=S2/create_date=2024-01-01/version_id=999997/part-0.parquet"
    leftovers = {  # a crashed write into a new partition, then a young and a rejected file
        root / "store_id=S3/create_date=2024-01-03/version_id=999999/part-0.parquet": 2.0,
        root / "_index/store_id=S3/create_date=2024-01-03/version_id=999999/_bloom-0.bin": 2.0,
        root / "_staging/txn=999999/_temporary/0/part-1.parquet": 2.0,
        young: 0.0,  # too young: kept, and so are the directories above it
        root / "_dead_letter/batch=1/part-0.json": 2.0,
    }
    for path, hours in leftovers.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        _age(path, hours)
    # Not the _index side of S1/2024-01-01 and S2: the compacted versions that kept no row
    # still list a Bloom filter there.
    emptied = [
        "store_id=S1/create_date=2024-01-01",
        "store_id=S3",
        "_index/store_id=S3",
        "_staging",
    ]
    assert all((root / rel).is_dir() for rel in emptied)

    dry = t.vacuum(retain_hours=0, dry_run=True)
    assert dry.retired_files > 0 and all((root / rel).is_dir() for rel in emptied)

    result = t.vacuum(retain_hours=0)
    assert (result.retired_files, result.orphan_files) == (dry.retired_files, 3)
    assert not any((root / rel).exists() for rel in emptied)
    assert _empty_dirs(root) == []
    assert young.is_file() and (root / "_dead_letter/batch=1/part-0.json").is_file()
    assert sorted(p.name for p in root.iterdir()) == [
        "_dead_letter",
        "_index",
        "store_id=S1",
        "store_id=S2",
    ]
    listed = {f.path for f in cat.engine_context.store.all_files(t.name)}
    kept = {str(young.relative_to(root)), "_dead_letter/batch=1/part-0.json"}
    assert _on_disk(cat, t) == listed | kept
    assert _store_rows(t) == sorted(expected)

    assert t.vacuum(retain_hours=0, grace_hours=0).orphan_files == 1
    assert not (root / "store_id=S2").exists() and _empty_dirs(root) == []

    back = [(20, 2.0, "I", "S1", "2024-01-01"), (21, 3.0, "I", "S2", "2024-01-01")]
    t.upsert(_store_batch([*back, (1, 5.0, "U", "S1", "2024-01-02")]))
    expected = [(k, a, s, d) for k, a, _, s, d in back] + [
        (1, 5.0, "S1", "2024-01-02"),
        *[r for r in expected if r[0] != 1],
    ]
    assert _store_rows(t) == sorted(expected)
    t.compact()
    t.vacuum(retain_hours=0)
    assert _store_rows(t) == sorted(expected) and _empty_dirs(root) == []


def test_vacuum_names_the_staging_directory_the_writers_use() -> None:
    assert vacuum.STAGING_DIR == staging.STAGING_DIR
