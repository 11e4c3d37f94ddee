"""SQL views of acid tables: ``cat.sql("... FROM db.t")`` shows what `read()` shows, reading
exactly the bucket files the catalog lists for the snapshot."""

from __future__ import annotations

import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.layouts.acid.engine.tables import acid_table
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.paths import write_acid_version_marker


def _acid(cat: Any, name: str = "s.t", **extra: Any) -> Any:
    options: dict[str, Any] = {"columns": "id BIGINT NOT NULL, name STRING, store STRING"}
    options.update(extra)
    return acid_table(cat, name, op_code_column="op", **options)


def _changes(ids: list[int], names: list[str | None], stores: list[str], ops: list[str]) -> Any:
    return pa.table({"id": ids, "name": names, "store": stores, "op": ops})


def _sorted(rows: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in rows), key=repr)


def _same(cat: Any, table: Any, query: str) -> list[tuple[Any, ...]]:
    """The view's rows, after checking they are `read()`'s."""
    got = _sorted(cat.sql(query).collect())
    assert got == _sorted(table.read().collect())
    return got


def test_the_view_merges_updates_deletes_and_reinserts_like_read(cat: Any) -> None:
    table = _acid(cat)
    table.upsert(_changes([1, 2, 3, 4], list("abcd"), list("xxyy"), ["I"] * 4))
    cat.engine_context.store.abort(
        cat.engine_context.store.begin()
    )  # versions (transaction ids) now differ from write ids
    table.upsert(_changes([1, 2, 3, 5], ["A", None, "c2", "e"], list("xxyy"), list("UDUI")))
    table.upsert(_changes([2, 4], ["b2", None], ["x", "y"], ["I", "D"]))
    assert _same(cat, table, "SELECT id, name, store FROM s.t") == [
        (1, "A", "x"),
        (2, "b2", "x"),
        (3, "c2", "y"),
        (5, "e", "y"),
    ]
    assert cat.sql("SELECT count(*) FROM s.t WHERE store = 'y'").first()[0] == 2


def test_the_view_reads_only_the_files_the_catalog_lists(cat: Any) -> None:
    """A directory of a write that never committed holds bytes that are no ORC file (reading
    them would fail), and a copy of a committed bucket file sits unlisted in a committed
    directory (reading it would repeat rows): the view reads neither."""
    table = _acid(cat)
    table.upsert(_changes([1, 2, 3], list("abc"), list("xxy"), ["I"] * 3))
    txn = cat.engine_context.store.begin()
    (write_id,) = cat.engine_context.store.allocate_write_ids(table.name, [txn])
    partition = f"{table.info.location}/store=x"
    ghost = DeltaDir(write_id, write_id, 0)
    cat.engine_context.fileio.write_bytes_atomic(
        f"{partition}/{ghost.name}/bucket_00000", b"not orc"
    )
    write_acid_version_marker(cat.engine_context.fileio, partition, ghost)
    cat.engine_context.store.abort(txn, "writer died")
    listed = next(f for f in table.snapshot().files if f.kind == "delta")
    source = Path(cat.engine_context.fileio.full_path(f"{table.info.location}/{listed.path}"))
    used = {p.name for p in source.parent.iterdir()}
    spare = next(f"bucket_{b:05d}" for b in range(4) if f"bucket_{b:05d}" not in used)
    shutil.copy(source, source.parent / spare)

    assert _same(cat, table, "SELECT id, name, store FROM s.t") == [
        (1, "a", "x"),
        (2, "b", "x"),
        (3, "c", "y"),
    ]


def test_an_unpartitioned_table_and_a_table_without_commits_have_views(cat: Any) -> None:
    flat = _acid(cat, "s.flat", columns="id BIGINT NOT NULL, day DATE", partition_by=None)
    empty = _acid(
        cat,
        "s.empty",
        columns="id BIGINT NOT NULL, amt DECIMAL(10,2), d DATE",
        partition_by="d",
        bucket_by=None,
        buckets=None,
    )
    assert cat.sql("SELECT * FROM s.empty").collect() == []
    assert [f.name for f in cat.sql("SELECT * FROM s.empty").schema.fields] == ["id", "amt", "d"]
    days = [dt.date(2024, 1, 1), dt.date(2024, 1, 2)]
    flat.upsert(pa.table({"id": [1, 2], "day": days, "op": ["I", "I"]}))
    flat.upsert(pa.table({"id": [1], "day": [days[0]], "op": ["D"]}))
    assert _same(cat, flat, "SELECT id, day FROM s.flat") == [(2, days[1])]
    empty.upsert(
        pa.table({"id": [7], "amt": [Decimal("1.5")], "d": [dt.date(2024, 2, 29)], "op": ["I"]})
    )
    assert _same(cat, empty, "SELECT * FROM s.empty") == [
        (7, Decimal("1.50"), dt.date(2024, 2, 29))
    ]


def test_register_views_registers_acid_tables_again_only_after_a_commit(
    cat: Any, spark: Any
) -> None:
    table = _acid(cat)
    table.upsert(_changes([1], ["a"], ["x"], ["I"]))
    external = spark._jsparkSession.sharedState().externalCatalog()
    assert cat.register_views() == ["s.t"]
    created = external.getTable("s", "t").createTime()
    before = _private_tables(spark)
    assert cat.register_views() == ["s.t"]
    assert external.getTable("s", "t").createTime() == created
    table.upsert(_changes([1], ["A"], ["x"], ["U"]))
    cat.register_views()
    assert [tuple(r) for r in spark.sql("SELECT id, name FROM s.t").collect()] == [(1, "A")]
    after = _private_tables(spark)
    assert before and after and not before & after, "the replaced private table is dropped"


def _private_tables(spark: Any) -> set[str]:
    shown = spark.sql("SHOW TABLES IN `__versioned`").collect()
    return {r.tableName for r in shown if r.tableName.startswith("1_s_t_")}
