"""The acid layout through the Table interface: upsert, delete, read, time travel, changes,
ROW__ID, and files that Hive's reader would read the same way."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.layouts.acid.engine.hive_walk import walk
from tests.layouts.acid.engine.tables import acid_table
from versioned.errors import NotSupportedError
from versioned.layouts.acid.bucket_codec import encode_bucket_property
from versioned.layouts.acid.bucket_hash import bucket_ids
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.orc_files import open_bucket_writer
from versioned.layouts.acid.paths import write_acid_version_marker
from versioned.layouts.acid.snapshot_dirs import valid_write_id_list

COLUMNS = "id BIGINT NOT NULL, name STRING, store STRING"
NAME_PATTERN = re.compile(
    r"^store=[^/]+/(delta|delete_delta)_\d{7}_\d{7}_0000/"
    r"(bucket_\d{5}|_orc_acid_version|_key_bloom_\d{5})$"  # Hive skips "_" side files
)


def _acid(cat: Any, name: str = "s.t", **extra: Any) -> Any:
    return acid_table(cat, name, **{"columns": COLUMNS, **extra})


def _rows(frame: Any, *columns: str) -> set[tuple[Any, ...]]:
    return {tuple(r[c] for c in columns) for r in frame.collect()}


def _changes(ids: list[int], names: list[str | None], stores: list[str], ops: list[str]) -> Any:
    return pa.table({"id": ids, "name": names, "store": stores, "op": ops})


def _walk(cat: Any, table: Any) -> set[tuple[Any, ...]]:
    snapshot = table.snapshot()
    ids = valid_write_id_list(cat.engine_context.store.write_ids(table.name, snapshot.seq))
    table_dir = Path(
        cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
    )
    return {(r["id"], r["name"], r["store"]) for r in walk(table_dir, table.spec, ids)}


def test_upsert_inserts_updates_deletes_and_reinserts_keys_with_counts_and_history(
    cat: Any,
) -> None:
    table = _acid(cat)
    first = table.upsert(
        pa.table({"id": [1, 2, 3, 4], "name": list("abcd"), "store": list("xxyy")})
    )
    cat.engine_context.store.abort(
        cat.engine_context.store.begin()
    )  # versions (transaction ids) now differ from write ids
    second = table.upsert(
        _changes(
            [1, 2, 5, 99, 3, 3],
            ["A", None, "e", None, "c1", "c2"],
            ["x", "x", "y", "x", "y", "y"],
            ["U", "D", "I", "D", "U", "U"],
        ),
        op_code_column="op",
    )
    third = table.upsert(_changes([2], ["b2"], ["x"], ["I"]), op_code_column="op")

    assert (first.inserted, first.updated, first.deleted) == (4, 0, 0)
    assert (second.version, second.inserted, second.updated, second.deleted) == (3, 1, 2, 1)
    assert (second.ignored_deletes, second.superseded, second.stale) == (1, 1, 0)
    assert (third.inserted, third.updated) == (1, 0)  # a deleted key comes back as an insert
    assert [c.metrics["write_id"] for c in table.history()] == [1, 2, 3]

    latest = {(1, "A", "x"), (2, "b2", "x"), (3, "c2", "y"), (4, "d", "y"), (5, "e", "y")}
    assert _rows(table.read(), "id", "name", "store") == latest
    assert table.read().columns == ["id", "name", "store"]
    assert _rows(table.read(first.version), "id", "name", "store") == {
        (1, "a", "x"),
        (2, "b", "x"),
        (3, "c", "y"),
        (4, "d", "y"),
    }
    versions = _rows(table.read(with_version=True), "id", "version_id")
    assert versions == {(1, 3), (2, third.version), (3, 3), (4, first.version), (5, 3)}
    net = _rows(table.changes(since=first.version), "_change", "id", "name")
    assert net == {("update", 1, "A"), ("update", 3, "c2"), ("insert", 5, "e"), ("update", 2, "b2")}
    assert _rows(table.changes(since=first.version, until=second.version), "_change", "id") == {
        ("update", 1),
        ("delete", 2),
        ("update", 3),
        ("insert", 5),
    }


def test_row_ids_are_hive_s_and_every_row_sits_in_its_hive_bucket(cat: Any) -> None:
    table = _acid(cat)
    first = table.upsert(
        pa.table({"id": list(range(1, 21)), "name": ["n"] * 20, "store": ["x"] * 20})
    )
    table.upsert(_changes([7], ["seven"], ["x"], ["U"]), op_code_column="op")

    rows = table.read(first.version, with_row_id=True).collect()
    ids = pa.table({"id": [r["id"] for r in rows]})
    hive_buckets = bucket_ids(ids, ["id"], ["BIGINT"], 4).tolist()
    by_file: dict[tuple[int, int], list[int]] = {}
    for row, bucket in zip(rows, hive_buckets, strict=True):
        row_id = row["ROW__ID"]
        assert row_id["bucketid"] == encode_bucket_property(bucket)
        assert row_id["writeid"] == 1
        by_file.setdefault((row_id["writeid"], bucket), []).append(row_id["rowid"])
    for row_ids in by_file.values():  # row ids count from 0 per write id and bucket file
        assert sorted(row_ids) == list(range(len(row_ids)))
    seven = table.read(with_row_id=True).where("id = 7").collect()
    assert [r["ROW__ID"]["writeid"] for r in seven] == [2]  # an update gets a new ROW__ID


def test_files_are_named_as_hive_names_them_and_hive_s_reader_sees_what_read_returns(
    cat: Any,
) -> None:
    table = _acid(cat)
    table.upsert(pa.table({"id": [1, 2, 3, 4, 5], "name": list("abcde"), "store": list("xxyyy")}))
    table.upsert(
        _changes([1, 3, 6], ["A", None, "f"], ["x", "y", "x"], ["U", "D", "I"]), op_code_column="op"
    )
    table.upsert(_changes([3], ["c"], ["y"], ["I"]), op_code_column="op")

    snapshot = table.snapshot()
    paths = sorted(f.path for f in snapshot.files)
    assert all(NAME_PATTERN.match(p) for p in paths), paths
    assert "store=x/delete_delta_0000002_0000002_0000/_orc_acid_version" in paths
    kinds = {"delta", "delete_delta", "acid_marker", "acid_key_bloom"}
    assert {f.kind for f in snapshot.files} == kinds
    blooms = {f.path for f in snapshot.files if f.kind == "acid_key_bloom"}
    inserts = {f.path for f in snapshot.files if f.kind == "delta"}
    assert blooms == {p.replace("/bucket_", "/_key_bloom_") for p in inserts}
    table_dir = Path(
        cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
    )
    on_disk = sorted(str(p.relative_to(table_dir)) for p in table_dir.rglob("*") if p.is_file())
    assert on_disk == paths  # staging cleaned up; every file is listed by the commit
    assert _walk(cat, table) == _rows(table.read(), "id", "name", "store")


def test_an_aborted_write_is_invisible_to_read_and_to_hive_s_reader(cat: Any) -> None:
    table = _acid(cat)
    table.upsert(pa.table({"id": [1, 2], "name": ["a", "b"], "store": ["x", "x"]}))
    # A writer that wrote its delta (with pyorc, as a streaming client would) and then died.
    txn = cat.engine_context.store.begin()
    (write_id,) = cat.engine_context.store.allocate_write_ids(table.name, [txn])
    directory = DeltaDir(write_id, write_id, 0)
    partition = f"{table.info.location}/store=x"
    ghost = pa.table({"id": [9], "name": ["ghost"]})
    (bucket,) = bucket_ids(ghost, ["id"], ["BIGINT"], 4).tolist()
    with open_bucket_writer(
        cat.engine_context.fileio,
        f"{partition}/{directory.name}/bucket_{bucket:05d}",
        table.spec.data_columns,
        bucket_property=encode_bucket_property(bucket),
    ) as writer:
        writer.insert(write_id, ghost)
    write_acid_version_marker(cat.engine_context.fileio, partition, directory)
    cat.engine_context.store.abort(txn, "writer died")

    assert _rows(table.read(), "id") == {(1,), (2,)}
    assert _walk(cat, table) == {(1, "a", "x"), (2, "b", "x")}
    after = table.upsert(_changes([9], ["real"], ["x"], ["I"]), op_code_column="op")
    assert (after.inserted, table.history()[-1].metrics["write_id"]) == (1, write_id + 1)
    assert _rows(table.read(), "id", "name") == {(1, "a"), (2, "b"), (9, "real")}
    assert _walk(cat, table) == {(1, "a", "x"), (2, "b", "x"), (9, "real", "x")}


def test_changes_older_than_the_stored_ordering_value_are_stale(cat: Any) -> None:
    table = _acid(cat, columns=f"{COLUMNS}, ts BIGINT", ordering_column="ts")

    def batch(ids: list[int], names: list[str], ts: list[int]) -> Any:
        return pa.table({"id": ids, "name": names, "store": ["x"] * len(ids), "ts": ts})

    table.upsert(batch([1, 2], ["a", "b"], [10, 10]))
    late = table.upsert(batch([1, 2], ["old", "new"], [5, 20]))
    assert (late.stale, late.updated) == (1, 1)
    assert _rows(table.read(), "id", "name", "ts") == {(1, "a", 10), (2, "new", 20)}


def test_row_ids_are_refused_for_version_partition_tables(cat: Any) -> None:
    table = cat.create_table("s.v", columns=COLUMNS, primary_key="id")
    with pytest.raises(NotSupportedError, match="ROW__ID"):
        table.read(with_row_id=True)
