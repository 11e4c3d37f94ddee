"""With an ordering column, delete tombstones survive compaction for their retention."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from versioned.api.catalog import Catalog
from versioned.layouts.version_partition.compaction_plan import TOMBSTONE_RETENTION_PROPERTY

VERSION_TOMBSTONES = "version-partition tombstones: index files and their retention property"


def _ordered(cat: Catalog, layout: str, retention_hours: str | None = None) -> Any:
    properties = {TOMBSTONE_RETENTION_PROPERTY: retention_hours} if retention_hours else None
    return cat.create_table(
        "t.events",
        columns="id BIGINT, v STRING, op STRING, ts BIGINT, p STRING",
        primary_key="id",
        partition_by="p",
        op_code_column="op",
        ordering_column="ts",
        properties=properties,
        layout=layout,
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


def _rows(t: Any) -> dict[int, tuple[str, int]]:
    return {r["id"]: (r["v"], r["ts"]) for r in t.read().collect()}


def test_a_change_older_than_a_delete_is_stale_also_for_a_key_never_stored(
    cat: Catalog, layout: str
) -> None:
    t = _ordered(cat, layout)
    t.upsert(_batch([(1, "one", "I", 10), (2, "two", "I", 10)]))
    deleted = t.upsert(_batch([(1, None, "D", 20), (3, None, "D", 20)]))
    assert (deleted.deleted + deleted.ignored_deletes, deleted.stale) == (2, 0)
    late = t.upsert(_batch([(1, "zombie", "I", 15), (3, "early", "I", 5), (2, "two'", "U", 30)]))
    assert (late.stale, late.inserted + late.updated) == (2, 1)
    assert _rows(t) == {2: ("two'", 30)}
    # Changes as new as the delete (or newer) are applied.
    again = t.upsert(_batch([(1, "reborn", "I", 25), (3, "three", "I", 20)]))
    assert (again.stale, again.inserted + again.updated) == (0, 2)
    assert _rows(t) == {1: ("reborn", 25), 2: ("two'", 30), 3: ("three", 20)}


def test_late_insert_does_not_resurrect_a_key_deleted_before_compaction(
    cat: Catalog, layout: str
) -> None:
    t = _ordered(cat, layout)
    t.upsert(_batch([(1, "one", "I", 10), (2, "two", "I", 10), (3, "three", "I", 10)]))
    t.upsert(_batch([(1, None, "D", 20), (2, "two'", "U", 20)]))
    (part,) = t.compact().partitions
    assert part.tombstones == 1
    late = t.upsert(_batch([(1, "zombie", "I", 15), (2, "old", "U", 15), (3, "new", "U", 30)]))
    assert late.stale == 2 and late.updated == 1
    assert _rows(t) == {2: ("two'", 20), 3: ("new", 30)}
    # A newer insert of the deleted key is applied.
    t.upsert(_batch([(1, "reborn", "I", 25)]))
    assert _rows(t)[1] == ("reborn", 25)


@pytest.mark.never(["acid"], reason=VERSION_TOMBSTONES)
def test_tombstones_survive_repeated_compactions_within_retention(
    cat: Catalog, layout: str
) -> None:
    t = _ordered(cat, layout)
    t.upsert(_batch([(1, "one", "I", 10), (2, "two", "I", 10)]))
    t.upsert(_batch([(1, None, "D", 20)]))
    deleting_version = t.history()[-1].version
    t.compact()
    t.upsert(_batch([(2, "two'", "U", 30)]))
    (part,) = t.compact().partitions
    assert part.tombstones == 1
    (index,) = [f for f in t.snapshot().files if f.kind == "index"]
    assert index.stats == {"tombstones": 1, "min_version": deleting_version}
    assert t.upsert(_batch([(1, "zombie", "I", 19)])).stale == 1
    assert 1 not in _rows(t)


@pytest.mark.never(["acid"], reason=VERSION_TOMBSTONES)
def test_tombstones_past_retention_are_dropped(cat: Catalog, layout: str) -> None:
    t = _ordered(cat, layout, retention_hours="0")
    t.upsert(_batch([(1, "one", "I", 10), (2, "two", "I", 10)]))
    t.upsert(_batch([(1, None, "D", 20)]))
    (part,) = t.compact().partitions
    assert part.tombstones == 0
    assert sorted(f.kind for f in t.snapshot().files) == ["bloom", "data"]
    # With the tombstone gone, a late older insert is applied like a new key: that is
    # what the retention bounds.
    late = t.upsert(_batch([(1, "late", "I", 15)]))
    assert late.stale == 0 and late.inserted + late.updated == 1
    assert _rows(t)[1] == ("late", 15)


@pytest.mark.never(["acid"], reason=VERSION_TOMBSTONES)
def test_a_compacted_partition_is_compacted_again_once_its_tombstones_expire(
    cat: Catalog,
    layout: str,
) -> None:
    t = _ordered(cat, layout)
    t.upsert(_batch([(1, "one", "I", 10), (2, "two", "I", 10)]))
    t.upsert(_batch([(1, None, "D", 20)]))
    t.compact()
    assert t.compact(dry_run=True).partitions == ()  # tombstone still within retention
    cat.engine_context.store.set_table_properties(t.name, {TOMBSTONE_RETENTION_PROPERTY: "0"})
    (planned,) = t.compact(dry_run=True).partitions
    assert planned.message == "expired tombstones"
    (part,) = t.refresh().compact().partitions
    assert part.tombstones == 0 and _rows(t) == {2: ("two", 10)}
