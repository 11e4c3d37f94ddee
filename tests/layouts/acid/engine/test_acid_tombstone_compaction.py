"""Delete tombstones of an acid table with an ordering column through major compaction and
vacuum: merged into one file per partition, and still stopping late changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as paorc

from tests.layouts.acid.engine.tables import acid_table
from versioned.options import CompactionOptions


def _ordered(cat: Any) -> Any:
    return acid_table(
        cat,
        "s.events",
        columns="id BIGINT NOT NULL, v STRING, op STRING, ts BIGINT, p STRING",
        partition_by="p",
        op_code_column="op",
        ordering_column="ts",
        buckets=2,
    )


def _batch(rows: list[tuple[int, str | None, str, int]]) -> pa.Table:
    ids, vs, ops, ts = zip(*rows, strict=True)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array(vs, pa.string()),
            "op": list(ops),
            "ts": pa.array(ts, pa.int64()),
            "p": ["a"] * len(ids),
        }
    )


def _tombstone_files(table: Any) -> list[str]:
    return sorted(f.path for f in table.snapshot().files if f.kind == "acid_tombstone")


def _rows(table: Any) -> dict[int, tuple[str, int]]:
    return {r["id"]: (r["v"], r["ts"]) for r in table.read().collect()}


def test_major_compaction_merges_tombstones_and_they_outlive_vacuum(cat: Any) -> None:
    t = _ordered(cat)
    t.upsert(_batch([(1, "one", "I", 10), (2, "two", "I", 10)]))
    t.upsert(_batch([(1, None, "D", 20), (9, None, "D", 40)]))  # 9 was never stored
    t.upsert(_batch([(1, "again", "I", 25)]))
    t.upsert(_batch([(1, None, "D", 30)]))
    writers = _tombstone_files(t)
    assert len(writers) == 2

    minor = t.compact(options=CompactionOptions(kind="minor")).partitions[0]
    assert minor.tombstones == 0 and _tombstone_files(t) == writers  # left to major
    (major,) = t.compact().partitions

    assert major.status == "compacted" and major.tombstones == 2  # newest per key
    (merged,) = _tombstone_files(t)
    assert merged == f"p=a/_tombstones/base_0000004_v{major.version:07d}.orc"
    root = Path(cat.engine_context.fileio.full_path(t.info.location).removeprefix("file://"))
    content = paorc.read_table(root / merged).to_pylist()
    assert sorted((r["id"], r["ts"]) for r in content) == [(1, 30), (9, 40)]

    vacuumed = t.vacuum(0, grace_hours=0)
    assert set(writers) <= set(vacuumed.paths)  # the merged ones went
    assert (root / merged).exists()
    assert sorted(str(p.relative_to(root)) for p in (root / "p=a/_tombstones").iterdir()) == [
        merged
    ]

    late = t.upsert(_batch([(1, "zombie", "I", 28), (9, "early", "I", 35), (2, "x", "U", 5)]))
    assert (late.stale, late.inserted + late.updated) == (3, 0)
    assert _rows(t) == {2: ("two", 10)}
    newer = t.upsert(_batch([(1, "reborn", "I", 31), (9, "nine", "I", 41)]))
    assert (newer.stale, newer.inserted) == (0, 2)
    assert _rows(t) == {1: ("reborn", 31), 2: ("two", 10), 9: ("nine", 41)}
