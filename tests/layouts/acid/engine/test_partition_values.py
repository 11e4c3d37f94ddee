"""Spark's scan of acid bucket files joins each row to its partition by its file's size,
and by its partition folder only for the sizes that files of two partitions share
(`engine.acid.events._with_partition_values`); a catalog whose sizes are wrong fails the
read instead of losing rows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import sqlalchemy as sa

from tests.layouts.acid.engine.tables import acid_table
from versioned.layouts.acid.table_rules import DRIVER_READ_PROPERTY


def _spark_only_table(cat: Any, name: str) -> Any:
    return acid_table(
        cat,
        name,
        columns="id BIGINT NOT NULL, v STRING, p STRING",
        partition_by="p",
        op_code_column="op",
        buckets=1,
        properties={DRIVER_READ_PROPERTY: "0"},  # every bucket file in the Spark scan
    )


def _batch(rows: list[tuple[int, str, str | None]], op: str = "I") -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "v": [r[1] for r in rows],
            "p": [r[2] for r in rows],
            "op": [op] * len(rows),
        }
    )


def _sizes_by_partition(table: Any) -> dict[int, set[Any]]:
    """Insert bucket file sizes -> the partitions holding a file of that size."""
    out: dict[int, set[Any]] = {}
    snapshot = table.snapshot()
    for f in snapshot.files:
        if "/bucket_" in f.path and "/delete_delta_" not in f.path:
            out.setdefault(f.size_bytes, set()).add(snapshot.partitions[f.partition_id].values)
    return out


def test_files_of_one_size_in_different_partitions_keep_their_partition_values(cat: Any) -> None:
    t = _spark_only_table(cat, "pv.same_size")
    # One row per partition, values of equal length: equal-sized files, one per partition.
    t.upsert(_batch([(1, "x", "a"), (2, "y", "b"), (3, "z", "c/ä b"), (4, "w", None)]))
    # A second delta: the same sizes again in "a" and "b"; "c/ä b" gets a bigger file.
    t.upsert(_batch([(5, "q", "a"), (6, "r", "b"), (7, "s-longer", "c/ä b"), (8, "t", "c/ä b")]))
    sizes = _sizes_by_partition(t)
    assert any(len(parts) > 1 for parts in sizes.values()), f"no size is shared: {sizes}"
    assert any(len(parts) == 1 for parts in sizes.values()), f"every size is shared: {sizes}"

    got = sorted((r.id, r.v, r.p) for r in t.read().collect())
    assert got == [
        (1, "x", "a"),
        (2, "y", "b"),
        (3, "z", "c/ä b"),
        (4, "w", None),
        (5, "q", "a"),
        (6, "r", "b"),
        (7, "s-longer", "c/ä b"),
        (8, "t", "c/ä b"),
    ]
    # Deletes match ROW__IDs within a partition: ids 1 and 2 have the same ROW__ID.
    t.upsert(_batch([(1, "x", "a")], op="D"))
    got = Counter(r.p for r in t.read().collect())
    assert got == Counter({"a": 1, "b": 2, "c/ä b": 3, None: 1})


def test_a_catalog_size_that_differs_from_the_file_fails_the_read(cat: Any, tmp_path: Path) -> None:
    t = _spark_only_table(cat, "pv.wrong_size")
    t.upsert(_batch([(1, "x", "a"), (2, "yy", "b"), (3, "zzz", "c")]))
    assert t.read().count() == 3
    engine = sa.create_engine(f"sqlite:///{tmp_path}/wh/catalog.db")
    with engine.begin() as conn:
        changed = conn.execute(
            sa.text(
                "UPDATE files SET size_bytes = size_bytes + 1 "
                "WHERE path LIKE 'p=b/%/bucket_%' AND path NOT LIKE '%delete_delta%'"
            )
        ).rowcount
    engine.dispose()
    assert changed == 1
    with pytest.raises(Exception, match="matches no file of the scan in the catalog"):
        t.read().collect()
    assert t.read().select("id").count() == 3  # no partition value read: no row lost
