"""A declared primary key is unique table-wide when a partition column is not part of it.

A change that names another partition than the key's row moves the row: the old partition
gets a version-index entry (found by Bloom filters, never by reading data) and reads, time
travel, `changes()` and compaction all see one row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.support.test_warehouse import files_under, read_text
from versioned.api.catalog import Catalog, connect
from versioned.api.collection_files import write as write_collection
from versioned.collections.errors import CollectionError
from versioned.errors import CommitConflictError, SchemaError


def _moving(cat: Catalog, layout: str, *, ordering: bool = False, name: str = "m.t") -> Any:
    return cat.create_table(
        name,
        columns="id INT, v STRING, p STRING" + (", seq BIGINT" if ordering else ""),
        primary_key="id",
        partition_by="p",
        op_code_column="op",
        ordering_column="seq" if ordering else None,
        layout=layout,
    )


def _batch(rows: list[tuple[Any, ...]], *, ordering: bool = False) -> pa.Table:
    names = ["op", "id", "v", "p"] + (["seq"] if ordering else [])
    columns = list(zip(*rows, strict=True))
    types = [pa.string(), pa.int32(), pa.string(), pa.string(), pa.int64()]
    return pa.table(
        {n: pa.array(c, types[i]) for i, (n, c) in enumerate(zip(names, columns, strict=True))}
    )


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in frame.select("id", "v", "p").collect())


@pytest.mark.cluster
def test_a_key_that_moves_partition_keeps_one_row(cat: Catalog, layout: str) -> None:
    """The issue's repro: id 1 moves from x to z and must not stay live in x."""
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "a", "x"), ("I", 2, "b", "y")]))
    result = t.upsert(_batch([("U", 1, "moved", "z")]))
    assert _rows(t.read()) == [(1, "moved", "z"), (2, "b", "y")]
    assert (result.inserted, result.updated) == (0, 1)
    assert result.partitions == 2  # z gets the row, x the entry retiring the old one
    assert sorted(r[0] for r in cat.sql("SELECT id FROM m.t").collect()) == [1, 2]


def test_a_partition_scoped_key_keeps_one_row_per_partition(cat: Catalog, layout: str) -> None:
    """When every partition column is in the key, the same id in two partitions is two rows."""
    t = cat.create_table(
        "m.s", columns="id INT, v STRING, p STRING", primary_key="p,id", partition_by="p",
        op_code_column="op", layout=layout,
    )  # fmt: skip
    t.upsert(_batch([("I", 1, "a", "x")]))
    t.upsert(_batch([("U", 1, "other", "z")]))
    assert _rows(t.read()) == [(1, "a", "x"), (1, "other", "z")]
    assert t.describe()["key_scope"] == "partition"


def test_describe_says_the_key_scope_and_why(cat: Catalog, layout: str) -> None:
    info = _moving(cat, layout).describe()
    assert info["key_scope"] == "table"
    assert "p is not part of the primary key" in info["key_scope_reason"]


def test_a_delete_without_partition_values_finds_the_row(cat: Catalog, layout: str) -> None:
    """A Debezium delete of a table without REPLICA IDENTITY FULL carries only the key."""
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "a", "x"), ("I", 2, "b", "y")]))
    result = t.upsert(_batch([("D", 2, None, None)]))
    assert (result.deleted, result.ignored_deletes) == (1, 0)
    assert _rows(t.read()) == [(1, "a", "x")]
    # The delete named no partition and none held the key there: no phantom partition.
    assert [p.values for p in cat.engine_context.store.partitions(t.name)] == [("x",), ("y",)]


def test_a_file_of_deletes_by_key_alone_deletes_wherever_the_rows_live(
    cat: Catalog, layout: str, tmp_path: Path
) -> None:
    """docs/change-feeds.md: a delete needs only its key. A file of ``op,id`` lacks the
    partition column: as a partial update its deletes find their rows in any partition; an
    update in it cannot be placed and is dead-lettered, saying why."""
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "a", "x"), ("I", 2, "b", "y"), ("I", 3, "c", "z")]))
    deletes = tmp_path / "deletes.csv"
    deletes.write_text("op,id\nD,1\nD,3\nD,9\nU,2\n")
    with pytest.raises(SchemaError, match="may leave out p as a partial update"):
        t.upsert(str(deletes))  # not partial: the missing columns are refused, with the way
    result = t.upsert(str(deletes), partial=True)
    assert (result.deleted, result.ignored_deletes, result.rejected) == (2, 1, 1)
    assert _rows(t.read()) == [(2, "b", "y")]
    assert [p.values for p in cat.engine_context.store.partitions(t.name)] == [
        ("x",),
        ("y",),
        ("z",),
    ]
    (letter,) = [
        json.loads(line)
        for path in files_under(cat)
        if "/_dead_letter/" in path and path.endswith(".json")
        for line in read_text(cat, path).splitlines()
    ]
    assert letter["_raw"] == "U,2"
    assert letter["_reason"].startswith("partition column p is not in the feed")


def test_deletes_by_key_alone_are_refused_when_the_partition_is_part_of_the_key(
    cat: Catalog, layout: str, tmp_path: Path
) -> None:
    """Then the same id in two partitions is two records: the delete must say which."""
    t = cat.create_table(
        "m.s", columns="id INT, v STRING, p STRING", primary_key="p,id", partition_by="p",
        op_code_column="op", layout=layout,
    )  # fmt: skip
    deletes = tmp_path / "deletes.csv"
    deletes.write_text("op,id\nD,1\n")
    with pytest.raises(SchemaError) as refused:
        t.upsert(str(deletes), partial=True)
    message = str(refused.value)
    assert "missing key column(s) p" in message
    assert "p is a partition column in the primary key, so every row, deletes too" in message
    assert t.history() == []


def test_moves_within_one_batch_keep_the_last(cat: Catalog, layout: str) -> None:
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "a", "x")]))
    moves = [("U", 1, "b", "y"), ("U", 1, "c", "z"), ("I", 5, "n", "y"), ("U", 5, "m", "x")]
    t.upsert(_batch(moves))
    assert _rows(t.read()) == [(1, "c", "z"), (5, "m", "x")]


def test_time_travel_and_changes_see_a_move_as_an_update(cat: Catalog, layout: str) -> None:
    t = _moving(cat, layout)
    v1 = t.upsert(_batch([("I", 1, "a", "x"), ("I", 2, "b", "x")])).version
    v2 = t.upsert(_batch([("U", 1, "a", "y")])).version
    v3 = t.upsert(_batch([("D", 1, None, "y"), ("U", 2, "b2", "z")])).version
    assert _rows(t.read(as_of=v1)) == [(1, "a", "x"), (2, "b", "x")]
    assert _rows(t.read(as_of=v2)) == [(1, "a", "y"), (2, "b", "x")]
    assert _rows(t.read(as_of=v3)) == [(2, "b2", "z")]
    changes = sorted(tuple(r) for r in t.changes(since=v1, until=v2).collect())
    assert changes == [("update", 1, "a", "y")]
    changes = sorted(tuple(r) for r in t.changes(since=v1).collect())
    assert changes == [("delete", 1, "a", "x"), ("update", 2, "b2", "z")]


def test_compaction_of_either_partition_agrees_after_a_move(cat: Catalog, layout: str) -> None:
    t = _moving(cat, layout)
    t.upsert(_batch([("I", i, "a", "x") for i in range(10)]))
    t.upsert(_batch([("U", i, "b", "y") for i in range(5)]))
    before = _rows(t.read())
    t.compact(partitions=["p=x"])
    assert _rows(t.read()) == before
    t.compact()
    assert _rows(t.read()) == before
    # After compaction the key moves back: one row again.
    t.upsert(_batch([("U", 0, "c", "x")]))
    rows = _rows(t.read())
    assert (0, "c", "x") in rows and sum(r[0] == 0 for r in rows) == 1 and len(rows) == 10


def test_a_late_change_in_another_partition_is_stale(cat: Catalog, layout: str) -> None:
    """Staleness compares against the key's state in whatever partition it lives."""
    t = _moving(cat, layout, ordering=True)
    t.upsert(_batch([("I", 1, "new", "x", 10)], ordering=True))
    result = t.upsert(_batch([("U", 1, "old", "y", 5)], ordering=True))
    assert result.stale == 1
    assert _rows(t.read()) == [(1, "new", "x")]


def test_a_tombstone_stops_a_late_insert_in_any_partition_also_after_compaction(
    cat: Catalog,
    layout: str,
) -> None:
    t = _moving(cat, layout, ordering=True)
    t.upsert(_batch([("I", 1, "a", "x", 10), ("I", 2, "b", "x", 10)], ordering=True))
    t.upsert(_batch([("D", 1, None, "x", 20)], ordering=True))
    late = _batch([("I", 1, "late", "y", 15)], ordering=True)
    assert t.upsert(late).stale == 1
    t.compact()
    assert t.upsert(late).stale == 1
    assert _rows(t.read()) == [(2, "b", "x")]
    newer = t.upsert(_batch([("I", 1, "newer", "y", 25)], ordering=True))
    assert (newer.inserted + newer.updated, newer.stale) == (1, 0)
    assert _rows(t.read()) == [(1, "newer", "y"), (2, "b", "x")]


def test_a_commit_planned_before_another_commit_of_the_table_retries(
    cat: Catalog, spark: Any, layout: str
) -> None:
    """Writer B inserts id 7 into partition q while A, planned before, moves id 7 into r:
    the partitions differ, yet A must not commit against its stale plan (two live rows)."""
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "a", "x")]))
    other = connect(
        catalog=cat.settings.catalog_url, warehouse=cat.settings.warehouse, spark=spark,
        user="alice",
    ).table("m.t")  # fmt: skip
    raced: list[Any] = []

    def race(message: str) -> None:
        if message.startswith("writing") and not raced:
            raced.append(other.upsert(_batch([("I", 7, "from B", "q")])))

    result = t.upsert(_batch([("I", 7, "from A", "r")]), progress=race)
    assert raced and result.version > raced[0].version
    assert _rows(t.read()) == [(1, "a", "x"), (7, "from A", "r")]


def test_the_catalog_refuses_a_commit_against_an_old_table_sequence(
    cat: Catalog, layout: str
) -> None:
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "a", "x")]))
    store = cat.engine_context.store
    planned = store.snapshot(t.name).seq
    t.upsert(_batch([("I", 2, "b", "y")]))
    txn = store.begin()
    with pytest.raises(CommitConflictError, match="table changed since this write planned"):
        store.commit(txn, t.name, operation="upsert", partitions=[], expected_seq=planned)
    store.abort(txn, "test")


def test_an_imported_key_retires_its_row_in_another_partition(
    cat: Catalog, tmp_path: Path, layout: str
) -> None:
    """Import is an upsert of whole partitions: an imported key that lives elsewhere moves."""
    source = _moving(cat, layout, name="m.src")
    source.upsert(_batch([("I", 1, "imported", "new"), ("I", 9, "only new", "new")]))
    cat.export("m.src", tmp_path / "out")
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 1, "old", "x"), ("I", 2, "b", "y")]))
    result = cat.import_(tmp_path / "out", table="m.t")
    assert result.rows == 2
    assert _rows(t.read()) == [(1, "imported", "new"), (2, "b", "y"), (9, "only new", "new")]


def test_an_import_with_a_key_in_two_partitions_is_refused(
    cat: Catalog, tmp_path: Path, layout: str
) -> None:
    frame = cat.spark.createDataFrame([(1, "a", "x"), (1, "b", "y")], "id INT, v STRING, p STRING")
    write_collection(
        frame,
        str(tmp_path / "dup"),
        table="m.t",
        primary_key=["id"],
        sort_by=None,
        partition_by=["p"],
        op_code_column="op",
    )
    t = _moving(cat, layout)
    t.upsert(_batch([("I", 5, "e", "z")]))
    with pytest.raises(CollectionError, match="two partitions of the collection"):
        cat.import_(tmp_path / "dup", table="m.t")
    assert _rows(t.read()) == [(5, "e", "z")]


def test_an_import_with_a_key_in_two_partitions_is_refused_into_a_table_without_rows(
    cat: Catalog, tmp_path: Path, layout: str
) -> None:
    """Checked before anything is written, not only when other partitions exist."""
    frame = cat.spark.createDataFrame([(1, "a", "x"), (1, "b", "y")], "id INT, v STRING, p STRING")
    write_collection(
        frame,
        str(tmp_path / "dup"),
        table="m.t",
        primary_key=["id"],
        sort_by=None,
        partition_by=["p"],
    )
    t = _moving(cat, layout)
    with pytest.raises(CollectionError, match="is in two partitions of the collection"):
        cat.import_(tmp_path / "dup", table="m.t")
    assert _rows(t.read()) == [] and t.history() == []
