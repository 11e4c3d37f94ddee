"""The key lookup of an acid upsert reads only the bucket files that may hold its keys.

Files that must not be read are overwritten with garbage before the upsert: Spark fails on
any of them it opens, so an upsert that succeeds did not read them. They are restored
afterwards and the table is checked to read back exactly as expected.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa

from versioned.storage.filesystem import FileIO

BUCKET_KINDS = ("delta", "delete_delta", "base")


def _table(cat: Any, columns: str = "id BIGINT NOT NULL, name STRING", **extra: Any) -> Any:
    return cat.create_table(
        "s.t", columns=columns, primary_key="id", layout="acid", bucket_by="id", **extra
    )


def _rows(ids: list[Any], name: str) -> pa.Table:
    return pa.table({"id": ids, "name": [name] * len(ids)})


def _bucket_files(cat: Any, table: Any) -> dict[str, Path]:
    root = Path(cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://"))
    return {f.path: root / f.path for f in table.snapshot().files if f.kind in BUCKET_KINDS}


@contextmanager
def _garbage(files: list[Path]) -> Iterator[None]:
    """The files hold garbage inside the block (Spark fails to read them); restored after."""
    saved = {f: f.read_bytes() for f in files}
    for f in files:
        f.write_bytes(b"not an ORC file" * 64)
    try:
        yield
    finally:
        for f, data in saved.items():
            f.write_bytes(data)


def _last_lookup(table: Any) -> tuple[int, int]:
    metrics = table.history()[-1].metrics
    return metrics["lookup_files_read"], metrics["lookup_files_skipped"]


def test_a_batch_of_new_keys_opens_no_data_file(cat: Any) -> None:
    table = _table(cat, buckets=4)
    table.upsert(_rows(list(range(0, 400, 2)), "a"))
    table.upsert(_rows(list(range(0, 40, 4)), "b"))  # updates: a delta and a delete delta
    stored = _bucket_files(cat, table)
    FileIO.reset_opened_files()

    with _garbage(list(stored.values())):
        above = table.upsert(_rows(list(range(1000, 1020)), "new"))
        inside = table.upsert(_rows([101, 203, 305], "odd"))  # within every file's range

    assert (above.inserted, above.updated, inside.inserted, inside.updated) == (20, 0, 3, 0)
    assert _last_lookup(table)[0] == 0
    opened_old = [p for p in FileIO.opened_files if p.rpartition("/")[2].startswith("bucket_")]
    assert not [p for p in opened_old if p.split("/", 2)[-1] in stored]
    ids = {r["id"]: r["name"] for r in table.read().collect()}
    assert len(ids) == 200 + 20 + 3
    assert (ids[0], ids[2], ids[1000], ids[203]) == ("b", "a", "new", "odd")


def test_an_update_reads_only_the_files_that_may_hold_its_key(cat: Any) -> None:
    table = _table(cat, buckets=1)  # one bucket: only the key filters prune
    for start in (0, 1000, 2000):
        table.upsert(_rows(list(range(start, start + 50)), f"v{start}"))
    table.upsert(_rows([1010], "first update"))  # delta 4 (+ a delete delta)
    files = _bucket_files(cat, table)
    # Deltas 2 (its first row, deleted since) and 4 (its live row) hold the key.
    holders = ("delta_0000002_", "delta_0000004_", "delete_delta_0000004_")
    not_read = [f for p, f in files.items() if not p.startswith(holders)]

    with _garbage(not_read):
        result = table.upsert(_rows([1010], "second update"))

    assert (len(files), len(not_read)) == (5, 2)
    assert (result.inserted, result.updated) == (0, 1)
    assert _last_lookup(table) == (3, 2)
    rows = table.read().where("id = 1010").collect()
    assert [r["name"] for r in rows] == ["second update"]
    assert table.read().count() == 150


def test_keys_are_looked_up_only_in_their_own_bucket_files(cat: Any) -> None:
    # DOUBLE keys get no key filters, so only the bucket (a function of the key) prunes.
    table = _table(cat, columns="id DOUBLE NOT NULL, name STRING", buckets=4)
    table.upsert(_rows([float(i) for i in range(40)], "a"))
    files = _bucket_files(cat, table)
    (key_file,) = [f for f in table.snapshot().files if f.kind == "delta" and 7.0 in _ids(cat, f)]
    others = [f for p, f in files.items() if p != key_file.path]

    with _garbage(others):
        result = table.upsert(_rows([7.0], "seven"))

    assert (result.updated, _last_lookup(table)) == (1, (1, len(files) - 1))
    assert table.read().where("id = 7.0").collect()[0]["name"] == "seven"


def _ids(cat: Any, file: Any) -> set[float]:
    from versioned.layouts.acid.orc_files import read_bucket

    location = cat.table("s.t").info.location
    events = read_bucket(cat.engine_context.fileio, f"{location}/{file.path}").events
    return {row["id"] for row in events.column("row").to_pylist()}


def test_without_the_bucket_columns_in_the_key_every_bucket_file_may_hold_it(cat: Any) -> None:
    table = cat.create_table(
        "s.t",
        columns="id DOUBLE NOT NULL, name STRING",
        primary_key="id",
        layout="acid",
        bucket_by="name",
        buckets=4,
    )
    table.upsert(pa.table({"id": [float(i) for i in range(40)], "name": list("abcd") * 10}))
    files = _bucket_files(cat, table)

    result = table.upsert(_rows([7.0], "b"))  # the key's row may sit in any bucket

    assert (result.updated, _last_lookup(table)) == (1, (len(files), 0))
    assert table.read().where("id = 7.0").count() == 1
