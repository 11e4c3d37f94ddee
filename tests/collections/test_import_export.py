"""Export and import on real Spark, real files, real SQLite and PostgreSQL catalogs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.collections.conftest import COLUMNS, Source, batch, rows, state
from versioned import collections
from versioned.api.catalog import Catalog, connect
from versioned.collections import (
    METADATA_FILE,
    CollectionError,
    CollectionFormatError,
    ImportMismatchError,
    IncompleteCollectionError,
    PartitionExistsError,
)
from versioned.errors import PermissionDeniedError, StorageError, UnsafePathError

_DEFINITION = (
    "table",
    "schema",
    "primary_key",
    "partition_by",
    "sort_by",
    "storage_format",
    "layout",
    "options",
)


def _definition(path: Path) -> dict[str, Any]:
    data = collections.read_metadata(str(path)).to_dict()
    parts = [(p["values"], p["path"], p["rows"]) for p in data["partitions"]]
    return {**{k: data[k] for k in _DEFINITION}, "partitions": parts}


def _metadata(path: Path) -> dict[str, Any]:
    return json.loads((path / METADATA_FILE).read_text())


def _rewrite(path: Path, data: dict[str, Any]) -> None:
    (path / METADATA_FILE).write_text(json.dumps(data))


def _outside(root: Path) -> list[str]:
    """Every file under ``root`` (the test's tmp dir), to prove nothing new appears."""
    return sorted(str(p) for p in root.rglob("*") if not p.is_dir())


def test_export_copies_live_rows_and_spark_reads_the_folder_as_plain_data(
    source: Source, spark: Any
) -> None:
    table = source.catalog.table("sales.orders")
    expected = rows(table.read())
    assert len(expected) == 23 and (0, 100.0, "updated", "a/b", 1) in expected
    assert not any(r[0] == 5 for r in expected)  # deleted, though its row is in version 1
    files = sorted(p.name for p in source.collection.rglob("*") if p.is_file())
    assert METADATA_FILE in files and METADATA_FILE.startswith("_")
    assert rows(spark.read.parquet(str(source.collection))) == expected
    assert rows(collections.read(spark, str(source.collection))) == expected
    meta = _metadata(source.collection)
    assert (
        meta["table"] == "sales.orders" and meta["source"]["version"] == table.history()[-1].version
    )
    assert meta["primary_key"] == ["id"] and meta["sort_by"] == ["id"]
    assert meta["partition_by"] == ["store", "day"] and meta["storage_format"] == "parquet"
    values = sorted(json.dumps(p["values"]) for p in meta["partitions"])
    assert len(values) == 8 and '{"store": null, "day": "2"}' in values
    assert (source.collection / "store=..%2F..%2Fevil" / "day=1").is_dir()


def test_round_trip_sqlite_to_postgres_keeps_rows_and_metadata(
    source: Source, spark: Any, pg_url: str, tmp_path: Path
) -> None:
    target = connect(catalog=pg_url, warehouse=str(tmp_path / "pg-wh"), spark=spark, user="bob")
    try:
        before = _outside(tmp_path)
        result = target.import_(str(source.collection))
        assert (result.created, result.partitions, result.rows) == (True, 8, 23)
        imported = target.table("sales.orders")
        original = source.catalog.table("sales.orders")
        assert rows(imported.read()) == rows(original.read())
        assert imported.spec.to_dict() == original.spec.to_dict()
        assert [c.operation for c in imported.history()] == ["import"]
        again = tmp_path / "again"
        target.export("sales.orders", str(again))
        assert _definition(again) == _definition(source.collection)
        assert rows(collections.read(spark, str(again))) == rows(original.read())
        new = [p for p in _outside(tmp_path) if p not in before]
        wh = str(tmp_path / "pg-wh" / "sales.db" / "orders")
        assert all(p.startswith((wh, str(again))) for p in new)  # hostile values stayed inside
    finally:
        target.close()


def test_export_as_of_a_version_and_of_some_partitions(source: Source, tmp_path: Path) -> None:
    old = tmp_path / "old"
    before = state(source.catalog)
    result = source.catalog.export("sales.orders", str(old), as_of=source.first_version)
    assert state(source.catalog) == before  # a copy: the table's catalog and files unchanged
    meta = collections.read_metadata(str(old))
    assert result.version == source.first_version == meta.source["version"]
    assert meta.rows == 24  # the deleted key and the old value of key 0 are back
    some = tmp_path / "some"
    source.catalog.export("sales.orders", str(some), partition={"store": "a/b"})
    meta = collections.read_metadata(str(some))
    assert [p.values for p in meta.partitions] == [("a/b", "1"), ("a/b", "2")]
    assert meta.rows == 6
    shutil.rmtree(some)  # the user may do anything with the copy
    assert len(rows(source.catalog.table("sales.orders").read())) == 23


def test_export_never_writes_into_a_folder_that_is_not_empty(
    source: Source, tmp_path: Path
) -> None:
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "keep.txt").write_text("user data")
    with pytest.raises(StorageError, match="is not empty"):
        source.catalog.export("sales.orders", str(dest))
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]
    inside = Path(source.catalog.settings.warehouse) / "exports"
    with pytest.raises(UnsafePathError, match="inside the warehouse"):
        source.catalog.export("sales.orders", str(inside))


def test_export_needs_read_permission(source: Source, spark: Any, tmp_path: Path) -> None:
    mallory = connect(
        catalog=source.catalog.settings.catalog_url,
        warehouse=source.catalog.settings.warehouse,
        spark=spark,
        user="mallory",
    )
    try:
        with pytest.raises(PermissionDeniedError, match=r"mallory may not read sales\.orders"):
            mallory.export("sales.orders", str(tmp_path / "stolen"))
        assert not (tmp_path / "stolen").exists()
    finally:
        mallory.close()


def test_upserts_after_an_import_find_the_imported_keys(source: Source, target: Catalog) -> None:
    target.import_(str(source.collection), table="copy.orders")
    table = target.table("copy.orders")
    assert sum(1 for f in table.snapshot().files if f.kind == "bloom") == 8
    changes = batch(
        [(0, -1.0, "again", "a/b", 1), (4, -4.0, "u", "a/b", 2), (99, 9.0, "new", "a/b", 1)]
    )
    result = table.upsert(changes)
    assert (result.inserted, result.updated) == (1, 2)  # the Bloom filters know 0 and 4
    latest = {r[0]: r for r in rows(table.read())}
    assert len(latest) == 24 and latest[0][1] == -1.0 and latest[4][1] == -4.0
    assert sum(1 for r in rows(table.read()) if r[0] in (0, 4)) == 2  # no stale duplicates


# --- refusals: each names what differs, and nothing is imported ------------------------------


def _refused(target: Catalog, src: Path, error: type[Exception], match: str, **kw: Any) -> None:
    before = state(target)
    with pytest.raises(error, match=match):
        target.import_(str(src), **kw)
    assert state(target) == before


def _existing(target: Catalog, **kw: Any) -> None:
    args: dict[str, Any] = dict(
        columns=COLUMNS, primary_key="id", partition_by="store,day", sort_by="id"
    )
    args.update(kw)
    target.create_table("sales.orders", **args)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (
            dict(columns=COLUMNS + ", region STRING", partition_by="store,day,region"),
            r"partition key\(s\) region missing from the collection",
        ),
        (dict(partition_by="store"), r"partition key\(s\) day of the collection are not partition"),
        (
            dict(columns=COLUMNS + ", region STRING", partition_by="store,region"),
            r"region missing from the collection; partition key\(s\) day of the collection",
        ),
        (
            dict(columns="id BIGINT, amt DECIMAL(10,2), note STRING, store STRING, day INT"),
            "schema differs: column amt is DOUBLE in the collection but DECIMAL",
        ),
        (
            dict(sort_by="amt"),
            r"sort order differs: sorted by \(id\) in the collection, sorted by \(amt\)",
        ),
        (dict(file_format="orc"), "storage format differs: parquet in the collection, orc"),
    ],
    ids=["missing-key", "extra-key", "wrong-keys", "schema", "sort-order", "format"],
)
def test_import_refuses_a_table_that_differs(
    source: Source, target: Catalog, kw: dict[str, Any], match: str
) -> None:
    _existing(target, **kw)
    _refused(target, source.collection, ImportMismatchError, match)


def test_import_refuses_partitions_that_exist(source: Source, target: Catalog) -> None:
    _existing(target)
    target.table("sales.orders").upsert(batch([(500, 1.0, "mine", "x", 2)]))
    _refused(target, source.collection, PartitionExistsError, r"\(store='x', day='2'\)")
    assert len(rows(target.table("sales.orders").read())) == 1


def test_import_into_an_existing_table_adds_new_partitions(source: Source, target: Catalog) -> None:
    _existing(target)
    target.table("sales.orders").upsert(batch([(500, 1.0, "mine", "other", 2)]))
    result = target.import_(str(source.collection))
    assert not result.created and result.partitions == 8
    assert len(rows(target.table("sales.orders").read())) == 24


def test_import_needs_write_permission(source: Source, target: Catalog, spark: Any) -> None:
    _existing(target)
    target.grant("bob", "read", "sales.orders")
    bob = connect(
        catalog=target.settings.catalog_url,
        warehouse=target.settings.warehouse,
        spark=spark,
        user="bob",
    )
    try:
        before = state(target)
        with pytest.raises(PermissionDeniedError, match=r"bob may not write to sales\.orders"):
            bob.import_(str(source.collection))
        assert state(target) == before
    finally:
        bob.close()


def test_import_refuses_a_collection_naming_no_table(
    spark: Any, target: Catalog, tmp_path: Path
) -> None:
    loose = tmp_path / "loose"
    frame = spark.createDataFrame([(1, "a"), (2, "b")], "id BIGINT, name STRING")
    collections.write(frame, str(loose), primary_key="id", sort_by=None)
    _refused(target, loose, ImportMismatchError, "names no table and none was given")
    assert target.import_(str(loose), table="lake.names").rows == 2


def test_import_refuses_a_half_written_collection(
    source: Source, target: Catalog, tmp_path: Path
) -> None:
    half = source.copy(tmp_path / "half")
    (half / METADATA_FILE).unlink()  # a crash before the last step of an export
    _refused(target, half, IncompleteCollectionError, "has no _versioned_collection.json")
    with pytest.raises(IncompleteCollectionError):
        collections.read_metadata(str(half))


def test_import_refuses_an_unknown_format_version(
    source: Source, target: Catalog, tmp_path: Path
) -> None:
    future = source.copy(tmp_path / "future")
    _rewrite(future, {**_metadata(future), "format_version": "2.0"})
    _refused(
        target, future, CollectionFormatError, r"format 2\.0 is not readable .* reads format 1\.x"
    )


def _point_first_file_at(src: Path, path: str) -> None:
    data = _metadata(src)
    data["partitions"][0]["files"][0]["path"] = path
    _rewrite(src, data)


def test_import_refuses_paths_leaving_the_collection(
    source: Source, target: Catalog, tmp_path: Path
) -> None:
    bad = source.copy(tmp_path / "bad")
    first = _metadata(bad)["partitions"][0]
    secret = tmp_path / "secret.parquet"
    shutil.copy(bad / first["files"][0]["path"], secret)
    _point_first_file_at(bad, f"{first['path']}/../../../secret.parquet")
    _refused(target, bad, UnsafePathError, "could leave the collection folder")
    _point_first_file_at(bad, str(secret))
    _refused(target, bad, UnsafePathError, "is not a relative path inside the collection")


@pytest.mark.parametrize("what", ["file", "directory"])
def test_import_refuses_symlinks_out_of_the_collection(
    source: Source, target: Catalog, tmp_path: Path, what: str
) -> None:
    linked = source.copy(tmp_path / "linked")
    first = _metadata(linked)["partitions"][0]
    outside = tmp_path / "outside"
    shutil.copytree(linked / first["path"], outside)  # same bytes: only the link is wrong
    name = Path(first["files"][0]["path"]).name
    if what == "file":  # the listed file links to a copy of itself outside the folder
        (linked / first["path"] / name).unlink()
        os.symlink(outside / name, linked / first["path"] / name)
    else:  # the partition directory links to a copy of itself outside the folder
        shutil.rmtree(linked / first["path"])
        os.symlink(outside, linked / first["path"])
    _refused(target, linked, UnsafePathError, "resolves through a symlink")
    with pytest.raises(UnsafePathError):
        collections.read(target.spark, str(linked))


def test_import_refuses_changed_files_and_disguised_partitions(
    source: Source, target: Catalog, tmp_path: Path
) -> None:
    changed = source.copy(tmp_path / "changed")
    first = _metadata(changed)["partitions"][0]["files"][0]["path"]
    with open(changed / first, "ab") as handle:
        handle.write(b"tail")
    _refused(target, changed, CollectionError, "bytes but the metadata says")
    disguised = source.copy(tmp_path / "disguised")
    data = _metadata(disguised)
    data["partitions"][0]["values"]["store"] = "../../../../escape"  # the path does not follow
    _rewrite(disguised, data)
    _refused(target, disguised, CollectionError, "is not the escaped form")


def test_import_refuses_duplicate_and_null_keys(
    spark: Any, target: Catalog, tmp_path: Path
) -> None:
    dupes = tmp_path / "dupes"
    frame = spark.createDataFrame([(1, "a"), (1, "b"), (None, "c")], "id BIGINT, name STRING")
    collections.write(frame.where("id IS NOT NULL"), str(dupes), primary_key="id", sort_by=None)
    _refused(target, dupes, CollectionError, "repeat a primary key", table="lake.d")
    nulls = tmp_path / "nulls"
    collections.write(frame.where("name = 'c'"), str(nulls), primary_key="id", sort_by=None)
    _refused(target, nulls, CollectionError, "have a null id", table="lake.n")


def test_import_creates_nothing_outside_the_warehouse(
    source: Source, target: Catalog, tmp_path: Path
) -> None:
    before = _outside(tmp_path)
    target.import_(str(source.collection), table="deep.orders")
    new = [p for p in _outside(tmp_path) if p not in before]
    table_dir = str(Path(target.settings.warehouse) / "deep.db" / "orders") + "/"
    assert new and all(p.startswith(table_dir) or p.endswith("target.db") for p in new)
    assert any("store=..%2F..%2Fevil" in p for p in new)


def test_collection_without_partition_values_becomes_the_given_partition(
    spark: Any, target: Catalog, tmp_path: Path
) -> None:
    day = tmp_path / "day"
    frame = spark.createDataFrame(
        [(1, 1.0, "n"), (2, 2.0, None)], "id BIGINT, amt DOUBLE, note STRING"
    )
    collections.write(frame, str(day), primary_key="id", sort_by="id", table="sales.orders")
    _existing(target)
    _refused(
        target, day, ImportMismatchError, r"give them with --partition store=\.\.\.,day=\.\.\."
    )
    _refused(target, day, ImportMismatchError, r"day missing", partition={"store": "s"})
    result = target.import_(str(day), partition={"store": "a/b", "day": "3"})
    assert result.partitions == 1
    assert rows(target.table("sales.orders").read()) == [
        (1, 1.0, "n", "a/b", 3),
        (2, 2.0, None, "a/b", 3),
    ]
