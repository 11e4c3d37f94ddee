"""Upserts whose partition values cannot be directories, and writes that fail: the bad rows are
dead letters, the good ones commit, and a failed batch leaves no partition behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from versioned.api.catalog import Catalog
from versioned.layouts.acid.table_rules import DRIVER_WRITE_PROPERTY
from versioned.layouts.version_partition.table_rules import DRIVER_WRITE_ROWS_PROPERTY

COLUMNS = "k BIGINT, p STRING, v STRING"


def _table(cat: Catalog, layout: str) -> Any:
    return cat.create_table(
        "db.t", columns=COLUMNS, primary_key="k", partition_by="p", layout=layout
    )


def _batch(rows: list[tuple[int, str | None, str]]) -> pa.Table:
    ks, ps, vs = zip(*rows, strict=True)
    return pa.table({"k": pa.array(ks, pa.int64()), "p": pa.array(ps, pa.string()), "v": list(vs)})


def test_default_partition_name_next_to_a_null_is_a_dead_letter_and_the_rest_commits(
    cat: Catalog,
    layout: str,
) -> None:
    """Issue 10 item 5: this batch failed with "partition 5 appears twice in one commit"."""
    t = _table(cat, layout)
    result = t.upsert(
        _batch([(1, None, "null"), (2, "__HIVE_DEFAULT_PARTITION__", "literal"), (3, "a", "a")])
    )
    assert (result.inserted, result.rejected) == (2, 1)
    assert sorted(tuple(r) for r in t.read().select("k", "p", "v").collect()) == [
        (1, None, "null"),
        (3, "a", "a"),
    ]
    assert sorted((p.values for p in cat.engine_context.store.partitions(t.name)), key=str) == [
        ("a",),
        (None,),
    ]


def test_a_partition_value_too_long_for_a_directory_is_a_dead_letter(
    cat: Catalog, layout: str
) -> None:
    """Issue 10 item 5: one such value failed the whole batch."""
    t = _table(cat, layout)
    result = t.upsert(_batch([(1, "x" * 300, "long"), (2, "b", "ok")]))
    assert (result.inserted, result.rejected) == (1, 1)
    assert [tuple(r) for r in t.read().select("k", "p").collect()] == [(2, "b")]
    assert [p.values for p in cat.engine_context.store.partitions(t.name)] == [("b",)]


NO_FOLDERS = "puts a file where a folder goes: an object store has no folders to block"


@pytest.mark.parametrize("path", ["spark", "driver"])
@pytest.mark.local_files(reason=NO_FOLDERS)
def test_a_failed_write_leaves_no_partition_rows_behind(
    cat: Catalog, layout: str, path: str
) -> None:
    """Partitions are created by the commit: a write that fails before it creates none.

    A file where a new partition's folder must go makes the write fail, whether Spark writes
    the rows (the table sends every batch there: ``write.driver_max_events=0``,
    ``write.driver_max_rows=0``; the acid layout's Spark output fails as it moves into
    place, the version layout's tasks as they open their files) or the driver does. The
    write's other new partition is written, then removed with its transaction.
    """
    properties = {DRIVER_WRITE_PROPERTY if layout == "acid" else DRIVER_WRITE_ROWS_PROPERTY: "0"}
    t = cat.create_table(
        "db.t",
        columns=COLUMNS,
        primary_key="k",
        partition_by="p",
        layout=layout,
        properties=properties if path == "spark" else {},
    )
    t.upsert(_batch([(1, "a", "first")]))
    location = Path(cat.settings.warehouse) / t.info.location
    blocked = location / "p=new2"
    blocked.write_text("in the way")
    with pytest.raises(Exception):  # noqa: B017 - whatever Spark raises; the point is after
        t.upsert(_batch([(2, "new1", "x"), (3, "new2", "y"), (4, "a", "z")]))
    blocked.unlink()
    assert [p.values for p in cat.engine_context.store.partitions(t.name)] == [("a",)]
    assert [tuple(r) for r in t.read().select("k", "v").collect()] == [(1, "first")]
    assert not (location / "p=new1").exists() or not any((location / "p=new1").rglob("*.*"))


def test_a_batch_whose_every_row_is_rejected_counts_them(cat: Catalog, layout: str) -> None:
    """Spark reports no observed counts when every row is rejected (the plan is empty); the
    write then counts the dead letters itself instead of failing."""
    t = _table(cat, layout)
    result = t.upsert(_batch([(1, "__HIVE_DEFAULT_PARTITION__", "a"), (2, "x" * 300, "b")]))
    assert (result.inserted, result.rejected) == (0, 2)
    assert t.read().count() == 0 and cat.engine_context.store.partitions(t.name) == []
