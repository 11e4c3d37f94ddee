"""Schema history in the catalog: alter commits, columns per snapshot, permissions, and the
upgrade of catalogs written before schema history existed. SQLite and PostgreSQL alike."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import MetaStore, TableInfo
from versioned.catalog.engine import SCHEMA_VERSION
from versioned.errors import PermissionDeniedError, SchemaError
from versioned.names import TableName
from versioned.schema import TableSpec
from versioned.schema_changes import SchemaChange

COUNTS = TableName("sales", "counts")


def _commit_nothing(store: MetaStore, name: TableName = ORDERS) -> int:
    """A data-less upsert commit; returns its version."""
    txn = store.begin()
    store.commit(txn, name, operation="upsert", partitions=[])
    return txn


def _column_types(spec: TableSpec) -> dict[str, str]:
    return {c.name: c.type for c in spec.columns}


def test_alter_is_its_own_commit_and_each_snapshot_has_the_columns_of_its_commit(
    store: MetaStore, orders: TableInfo
) -> None:
    before = _commit_nothing(store)
    commit = store.alter_table(ORDERS, SchemaChange.parse(add="note STRING, qty INT"))
    after = _commit_nothing(store)

    history = store.history(ORDERS)
    assert [c.operation for c in history] == ["upsert", "alter", "upsert"]
    assert (commit.operation, commit.user, commit.version) == ("alter", "alice", history[1].version)
    assert commit.metrics["added_columns"] == ["note STRING", "qty INT"]
    assert store.table(ORDERS).spec.column_names[-2:] == ("note", "qty")
    assert store.snapshot(ORDERS, as_of=before).table.spec == orders_spec()
    for version in (commit.version, after, None):
        spec = store.snapshot(ORDERS, as_of=version).table.spec
        assert spec.column_names == (*orders_spec().column_names, "note", "qty")
    assert store.snapshot(ORDERS, as_of=commit.version).files == ()  # catalog only


def test_widening_is_recorded_per_commit(store: MetaStore) -> None:
    store.create_table(
        TableSpec.build(COUNTS, columns="id INT, n SMALLINT, d DECIMAL(5,2)", primary_key="id")
    )
    first = _commit_nothing(store, COUNTS)
    store.alter_table(COUNTS, SchemaChange.parse(widen="n BIGINT, d DECIMAL(12,2), id BIGINT"))
    old = _column_types(store.snapshot(COUNTS, as_of=first).table.spec)
    new = _column_types(store.snapshot(COUNTS).table.spec)
    assert old == {"id": "INT", "n": "SMALLINT", "d": "DECIMAL(5,2)"}
    assert new == {"id": "BIGINT", "n": "BIGINT", "d": "DECIMAL(12,2)"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (SchemaChange.parse(widen="total FLOAT"), "cannot change total from DOUBLE to FLOAT"),
        (SchemaChange.parse(widen="total STRING"), "only widening that keeps every stored value"),
        (SchemaChange.parse(widen="store_id VARCHAR(9)"), "partition column store_id"),
        (SchemaChange.parse(add="total DOUBLE"), "cannot add total: the table has a column"),
        (SchemaChange.parse(add="must INT NOT NULL"), "rows written before have no value"),
        (SchemaChange.parse(add="version_id BIGINT"), "reserved"),
        (SchemaChange.parse(widen="nosuch BIGINT"), "no such column"),
    ],
    ids=["narrow", "retype", "partition", "exists", "not-null", "reserved", "missing"],
)
def test_refused_changes_change_nothing_and_leave_no_open_transaction(
    store: MetaStore, orders: TableInfo, change: SchemaChange, message: str
) -> None:
    _commit_nothing(store)
    with pytest.raises(SchemaError, match=message):
        store.alter_table(ORDERS, change)
    assert store.table(ORDERS).spec == orders_spec()
    assert [c.operation for c in store.history(ORDERS)] == ["upsert"]
    assert store.txn_snapshot().open_ids == frozenset()


def test_every_problem_of_a_change_is_listed_at_once(store: MetaStore, orders: TableInfo) -> None:
    with pytest.raises(SchemaError) as raised:
        store.alter_table(ORDERS, SchemaChange.parse(add="total INT", widen="total FLOAT"))
    assert len(vars(raised.value)["problems"]) == 2
    assert "Dropping and renaming columns are not supported" in str(raised.value)


def test_altering_needs_write_permission(
    store: MetaStore, connect: Callable[[str], MetaStore], orders: TableInfo
) -> None:
    bob = connect("bob")
    change = SchemaChange.parse(add="note STRING")
    with pytest.raises(PermissionDeniedError):
        bob.alter_table(ORDERS, change)
    store.grant("bob", "read", database="sales", table="orders")
    with pytest.raises(PermissionDeniedError):
        bob.alter_table(ORDERS, change)
    assert store.table(ORDERS).spec == orders_spec()
    assert store.txn_snapshot().open_ids == frozenset()
    store.grant("bob", "write", database="sales", table="orders")
    assert bob.alter_table(ORDERS, change).user == "bob"
    assert store.table(ORDERS).spec.column_names[-1] == "note"


def test_a_dropped_table_takes_its_schema_history_along(
    store: MetaStore, orders: TableInfo
) -> None:
    store.alter_table(ORDERS, SchemaChange.parse(add="note STRING"))
    store.drop_table(ORDERS)
    again = store.create_table(orders_spec())
    assert again.spec == orders_spec()
    assert store.snapshot(ORDERS).table.spec == orders_spec()


# upgrading catalogs written before schema history ---------------------------------------------


def _as_written_by_version_1(url: str) -> None:
    """Turn a catalog into what release 1 left: no ``table_schemas``, schema version 1.

    Version 2 differs from version 1 by exactly that table and the version rows.
    """
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE table_schemas"))
            without_partition_summaries(conn)
            conn.execute(sa.text("DELETE FROM catalog_meta WHERE id <> 1"))
            conn.execute(sa.text("UPDATE catalog_meta SET schema_version = 1"))
    finally:
        engine.dispose()


def without_partition_summaries(conn: sa.Connection) -> None:
    """Undo version 5 (what a catalog of version 4 or older lacks)."""
    conn.execute(sa.text("ALTER TABLE partitions DROP COLUMN summary"))
    conn.execute(sa.text("ALTER TABLE partitions DROP COLUMN summary_seq"))


def test_a_version_4_catalog_is_upgraded_with_partitions_not_summarised(
    catalog_url: str,
) -> None:
    with MetaStore.connect(catalog_url, "alice") as store:
        store.create_table(orders_spec())
        store.add_partition(ORDERS, ["1", "2024-01-01"])
    fresh = _shape(catalog_url)
    engine = sa.create_engine(catalog_url)
    try:
        with engine.begin() as conn:
            without_partition_summaries(conn)
            conn.execute(sa.text("UPDATE catalog_meta SET schema_version = 4"))
    finally:
        engine.dispose()

    with MetaStore.connect(catalog_url, "alice") as store:
        assert _schema_versions(catalog_url) == [4, 5] == [4, SCHEMA_VERSION]
        assert _shape(catalog_url) == fresh
        assert [s for o in store.table_overviews() for _, s in o.partitions] == [None]


def _shape(url: str) -> dict[str, object]:
    """Tables, columns (name, type, nullability), indexes and unique constraints."""
    engine = sa.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        shape: dict[str, object] = {}
        for table in sorted(inspector.get_table_names()):
            shape[table] = (
                [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)],
                sorted(tuple(i["column_names"]) for i in inspector.get_indexes(table)),
                sorted(tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)),
                sorted(tuple(f["constrained_columns"]) for f in inspector.get_foreign_keys(table)),
            )
        return shape
    finally:
        engine.dispose()


def _schema_versions(url: str) -> list[int]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT schema_version FROM catalog_meta ORDER BY id"))
            return [int(r[0]) for r in rows]
    finally:
        engine.dispose()


def test_a_version_1_catalog_is_upgraded_on_open_and_keeps_its_tables(
    catalog_url: str,
) -> None:
    with MetaStore.connect(catalog_url, "alice") as store:
        store.create_table(orders_spec())
        version = _commit_nothing(store)
    fresh_shape = _shape(catalog_url)
    _as_written_by_version_1(catalog_url)

    with MetaStore.connect(catalog_url, "alice") as store:
        assert _schema_versions(catalog_url) == list(range(1, SCHEMA_VERSION + 1))
        assert _shape(catalog_url) == fresh_shape
        assert store.snapshot(ORDERS, as_of=version).table.spec == orders_spec()
        store.alter_table(ORDERS, SchemaChange.parse(add="note STRING"))
        assert store.snapshot(ORDERS, as_of=version).table.spec == orders_spec()
        assert store.snapshot(ORDERS).table.spec.column_names[-1] == "note"


def test_connections_opening_a_version_1_catalog_at_once_upgrade_it_once(
    catalog_url: str,
) -> None:
    with MetaStore.connect(catalog_url, "alice") as store:
        store.create_table(orders_spec())
    _as_written_by_version_1(catalog_url)
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_it() -> None:
        try:
            start.wait()
            MetaStore.connect(catalog_url, "alice").close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _schema_versions(catalog_url) == list(range(1, SCHEMA_VERSION + 1))
    with MetaStore.connect(catalog_url, "alice") as store:
        assert store.snapshot(ORDERS).table.spec == orders_spec()
