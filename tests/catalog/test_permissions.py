"""Every entry point that touches a table checks the permission it needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, PartitionInfo, TableInfo
from versioned.errors import (
    InputError,
    NoSuchDatabaseError,
    NoSuchTableError,
    PermissionDeniedError,
)
from versioned.names import TableName

P1 = ["s1", "2024-01-01"]
OTHER = TableName("sales", "returns")


@dataclass(frozen=True)
class World:
    part: PartitionInfo
    version: int


@pytest.fixture
def world(store: MetaStore, orders: TableInfo) -> World:
    part = store.add_partition(ORDERS, P1)
    txn = store.begin()
    add = FileAdd(part.id, "p/1.parquet", "data", txn, 1, 1)
    store.commit(
        txn,
        ORDERS,
        operation="upsert",
        partitions=[PartitionCommit(part.id, None, txn, add=(add,))],
    )
    return World(part, txn)


def _commit(m: MetaStore, w: World) -> object:
    txn = m.begin()
    add = FileAdd(w.part.id, f"p/{txn}.parquet", "data", txn, 1, 1)
    change = PartitionCommit(w.part.id, check_head=False, add=(add,))
    return m.commit(txn, ORDERS, operation="upsert", partitions=[change])


def _lock(mode: str) -> Callable[[MetaStore, World], object]:
    def take_and_release(m: MetaStore, w: World) -> object:
        txn = m.begin()
        lock = m.lock(txn, ORDERS, mode, partition=P1, wait_s=0)  # type: ignore[arg-type]
        m.commit_transaction(txn)
        return lock

    return take_and_release


ENTRY_POINTS: list[tuple[str, str, Callable[[MetaStore, World], object]]] = [
    ("table", "read", lambda m, w: m.table(ORDERS)),
    ("partitions", "read", lambda m, w: m.partitions(ORDERS)),
    ("partition", "read", lambda m, w: m.partition(ORDERS, P1)),
    ("history", "read", lambda m, w: m.history(ORDERS)),
    ("snapshot", "read", lambda m, w: m.snapshot(ORDERS)),
    ("snapshot_as_of", "read", lambda m, w: m.snapshot(ORDERS, as_of=w.version)),
    ("locks", "read", lambda m, w: m.locks(ORDERS)),
    ("lock_shared_read", "read", _lock("shared_read")),
    ("grants_on_table", "read", lambda m, w: m.grants(database="sales", table="orders")),
    ("check_read", "read", lambda m, w: m.check(ORDERS, "read")),
    ("resolve_read", "read", lambda m, w: m.resolve(ORDERS, "read", with_snapshot=True)),
    ("add_partition", "write", lambda m, w: m.add_partition(ORDERS, ["s9", "2024-01-09"])),
    ("commit", "write", _commit),
    ("lock_shared_write", "write", _lock("shared_write")),
    ("lock_exclusive", "write", _lock("exclusive")),
    ("set_table_properties", "write", lambda m, w: m.set_table_properties(ORDERS, {"a": "b"})),
    ("all_files", "write", lambda m, w: m.all_files(ORDERS)),
    ("forget_files", "write", lambda m, w: m.forget_files(ORDERS, [])),
    ("check_write", "write", lambda m, w: m.check(ORDERS, "write")),
    ("resolve_write", "write", lambda m, w: m.resolve(ORDERS, "write", with_history=True)),
    ("grant", "all", lambda m, w: m.grant("eve", "read", database="sales", table="orders")),
    ("revoke", "all", lambda m, w: m.revoke("eve", "read", database="sales", table="orders")),
    ("check_all", "all", lambda m, w: m.check(ORDERS, "all")),
    ("resolve_all", "all", lambda m, w: m.resolve(ORDERS, "all")),
    ("drop_table", "owner", lambda m, w: m.drop_table(ORDERS)),
]
_WEAKER = {"read": None, "write": "read", "all": "write", "owner": "all"}


@pytest.mark.parametrize(
    ("need", "call"), [(n, c) for _, n, c in ENTRY_POINTS], ids=[e[0] for e in ENTRY_POINTS]
)
def test_entry_point_denies_a_user_without_the_privilege_until_granted(
    store: MetaStore,
    mallory: MetaStore,
    world: World,
    need: str,
    call: Callable[[MetaStore, World], object],
) -> None:
    with pytest.raises(PermissionDeniedError) as raised:
        call(mallory, world)
    assert str(raised.value).startswith("mallory may not")
    assert "alice" in str(raised.value)
    weaker = _WEAKER[need]
    if weaker is not None:
        store.grant("mallory", weaker, database="sales", table="orders")  # type: ignore[arg-type]
        with pytest.raises(PermissionDeniedError):
            call(mallory, world)
    if need != "owner":
        store.grant("mallory", need, database="sales", table="orders")  # type: ignore[arg-type]
        call(mallory, world)
    call(store, world)  # the owner may always


def test_denied_calls_change_nothing(store: MetaStore, mallory: MetaStore, world: World) -> None:
    for _, need, call in ENTRY_POINTS:
        if need != "read":
            with pytest.raises(PermissionDeniedError):
                call(mallory, world)
    assert store.table(ORDERS).current_seq == 1
    assert [p.id for p in store.partitions(ORDERS)] == [world.part.id]
    assert store.locks(ORDERS) == []
    assert store.table(ORDERS).spec.properties == {}


def test_database_grant_applies_to_its_tables_including_later_ones(
    store: MetaStore, mallory: MetaStore, world: World
) -> None:
    store.grant("mallory", "read", database="sales")
    store.create_table(orders_spec(OTHER))
    assert mallory.table(ORDERS).id == world.part.table_id
    assert mallory.table(OTHER).spec.name == OTHER
    assert [t.spec.name for t in mallory.tables("sales")] == [ORDERS, OTHER]
    with pytest.raises(PermissionDeniedError):
        mallory.add_partition(OTHER, P1)
    store.grant("mallory", "write", database="sales")
    mallory.add_partition(OTHER, P1)


def test_denial_says_which_grant_to_ask_for(
    store: MetaStore, mallory: MetaStore, orders: TableInfo
) -> None:
    with pytest.raises(PermissionDeniedError) as raised:
        mallory.add_partition(ORDERS, P1)
    assert str(raised.value) == (
        "mallory may not write to sales.orders: ask its owner (alice) for "
        "`versioned grant write sales.orders mallory`"
    )
    with pytest.raises(PermissionDeniedError, match="`versioned grant write sales mallory`"):
        mallory.create_table(orders_spec(OTHER))


def test_write_implies_read(store: MetaStore, mallory: MetaStore, world: World) -> None:
    store.grant("mallory", "write", database="sales", table="orders")
    assert len(mallory.snapshot(ORDERS).files) == 1
    mallory.check(ORDERS, "read")
    with pytest.raises(PermissionDeniedError):
        mallory.check(ORDERS, "all")


def test_resolve_reads_the_record_snapshot_history_and_grants_of_one_operation(
    store: MetaStore, mallory: MetaStore, world: World
) -> None:
    store.grant("mallory", "write", database="sales", table="orders")
    access = mallory.resolve(ORDERS, "write", with_snapshot=True, with_history=True)
    assert access.granted == {"read", "write"}
    assert access.table == store.table(ORDERS)
    assert access.snapshot == store.snapshot(ORDERS)
    assert access.history is not None
    assert [c.version for c in access.history] == [world.version]
    owner = store.resolve(ORDERS, "read")
    assert owner.granted == {"read", "write", "all"}
    assert (owner.snapshot, owner.history) == (None, None)
    with pytest.raises(InputError, match="unknown privilege"):
        store.resolve(ORDERS, "own")  # type: ignore[arg-type]


def test_revoke_takes_access_away(store: MetaStore, mallory: MetaStore, world: World) -> None:
    store.grant("mallory", "read", database="sales", table="orders")
    mallory.table(ORDERS)
    store.revoke("mallory", "read", database="sales", table="orders")
    with pytest.raises(PermissionDeniedError):
        mallory.table(ORDERS)
    store.revoke("mallory", "read", database="sales", table="orders")  # a no-op now


def test_tables_lists_only_what_the_user_may_read(
    store: MetaStore, mallory: MetaStore, orders: TableInfo
) -> None:
    store.create_table(orders_spec(OTHER))
    own = mallory.create_table(orders_spec(TableName("mallorys", "notes")))
    assert own.owner == "mallory"
    assert [t.spec.name for t in mallory.tables()] == [own.spec.name]
    store.grant("mallory", "read", database="sales", table="returns")
    assert [t.spec.name for t in mallory.tables()] == [own.spec.name, OTHER]
    assert [t.spec.name for t in mallory.tables("sales")] == [OTHER]
    assert [t.spec.name for t in store.tables()] == [ORDERS, OTHER]
    with pytest.raises(NoSuchDatabaseError):
        store.tables("nowhere")
    assert [d.name for d in store.databases()] == ["mallorys", "sales"]
    assert [d.owner for d in store.databases()] == ["mallory", "alice"]


def test_creating_a_table_in_someone_elses_database_needs_write_on_it(
    store: MetaStore, mallory: MetaStore, orders: TableInfo
) -> None:
    with pytest.raises(PermissionDeniedError, match="database sales"):
        mallory.create_table(orders_spec(OTHER))
    store.grant("mallory", "read", database="sales")
    with pytest.raises(PermissionDeniedError):
        mallory.create_table(orders_spec(OTHER))
    store.grant("mallory", "write", database="sales")
    created = mallory.create_table(orders_spec(OTHER))
    assert created.owner == "mallory"
    # The database owner has every privilege on the tables in it, but only the table's
    # owner may drop it.
    store.add_partition(OTHER, P1)
    with pytest.raises(PermissionDeniedError, match="only its owner"):
        store.drop_table(OTHER)
    mallory.drop_table(OTHER)


def test_grants_on_a_database_need_its_owner(
    store: MetaStore, mallory: MetaStore, orders: TableInfo
) -> None:
    with pytest.raises(PermissionDeniedError):
        mallory.grant("mallory", "all", database="sales")
    with pytest.raises(PermissionDeniedError):
        mallory.grants(database="sales")
    store.grant("mallory", "all", database="sales")
    mallory.grant("eve", "read", database="sales")
    eve = MetaStore.connect(store.url, "eve")
    try:
        assert eve.table(ORDERS).owner == "alice"
    finally:
        eve.close()
    assert [(g.principal, g.privilege, g.granted_by) for g in store.grants(database="sales")] == [
        ("eve", "read", "mallory"),
        ("mallory", "all", "alice"),
    ]


def test_granting_twice_keeps_one_grant(store: MetaStore, orders: TableInfo) -> None:
    first = store.grant("mallory", "read", database="sales", table="orders")
    again = store.grant("mallory", "read", database="sales", table="orders")
    assert first == again
    assert (first.database, first.table, first.granted_by) == ("sales", "orders", "alice")
    assert store.grants(database="sales", table="orders") == [first]
    assert store.grants(database="sales") == []


def test_grants_on_missing_objects_or_privileges_fail_clearly(
    store: MetaStore, orders: TableInfo
) -> None:
    with pytest.raises(NoSuchTableError, match="versioned list-tables"):
        store.grant("mallory", "read", database="sales", table="nope")
    with pytest.raises(NoSuchDatabaseError):
        store.grant("mallory", "read", database="nope")
    with pytest.raises(InputError, match="unknown privilege"):
        store.grant("mallory", "admin", database="sales")  # type: ignore[arg-type]


def test_drop_table_removes_every_catalog_row(store: MetaStore, world: World) -> None:
    txn = store.begin()
    store.lock(txn, ORDERS, "shared_write", partition=P1)
    store.grant("mallory", "read", database="sales", table="orders")
    dropped = store.drop_table(ORDERS)
    assert dropped.location == "sales.db/orders"
    with pytest.raises(NoSuchTableError):
        store.table(ORDERS)
    assert store.locks() == []
    again = store.create_table(orders_spec())
    assert again.id != dropped.id and again.current_seq == 0
    assert store.history(ORDERS) == [] and store.partitions(ORDERS) == []
    assert store.all_files(ORDERS) == [] and store.grants(database="sales", table="orders") == []
