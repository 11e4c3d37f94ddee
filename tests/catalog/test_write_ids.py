"""Per-table write ids of the acid layout: allocation, a snapshot's valid write id list, the
upgrade of catalogs written before write ids. SQLite and PostgreSQL alike."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import MetaStore, TableInfo
from versioned.errors import InputError, TransactionStateError
from versioned.names import TableName

OTHER = TableName("sales", "other")


def _commit(store: MetaStore, txn: int, name: TableName = ORDERS) -> int:
    """Commit ``txn`` to the table without files; returns the commit's sequence number."""
    return store.commit(txn, name, operation="upsert", partitions=[]).seq


def test_write_ids_count_from_one_per_table_and_a_batch_gets_contiguous_ids(
    store: MetaStore, orders: TableInfo
) -> None:
    store.create_table(orders_spec(OTHER))
    batch = store.open_transactions(3)
    single = store.begin()

    assert store.allocate_write_ids(ORDERS, [batch[2], batch[0], batch[1]]) == [1, 2, 3]
    assert store.allocate_write_ids(OTHER, [single]) == [1]
    assert store.allocate_write_ids(ORDERS, [single]) == [4]
    # asking again returns the same ids, whatever the order
    assert store.allocate_write_ids(ORDERS, batch) == [2, 3, 1]


def test_write_ids_are_refused_for_finished_or_partly_allocated_transactions(
    store: MetaStore, orders: TableInfo
) -> None:
    done, aborted, first, second = store.open_transactions(4)
    store.commit_transaction(done)
    store.abort(aborted)
    for txn in (done, aborted):
        with pytest.raises(TransactionStateError):
            store.allocate_write_ids(ORDERS, [txn])
    store.allocate_write_ids(ORDERS, [first])
    with pytest.raises(InputError, match="all together"):
        store.allocate_write_ids(ORDERS, [first, second])
    with pytest.raises(InputError):
        store.allocate_write_ids(ORDERS, [second, second])
    assert store.allocate_write_ids(ORDERS, [second]) == [2]  # nothing was taken by failures


def test_the_latest_snapshot_lists_open_and_aborted_write_ids_as_hive_does(
    store: MetaStore, orders: TableInfo
) -> None:
    t1, t2, t3, t4 = store.open_transactions(4)
    assert store.allocate_write_ids(ORDERS, [t1, t2, t3, t4]) == [1, 2, 3, 4]
    _commit(store, t1)
    store.abort(t2)
    seq = _commit(store, t4)

    ids = store.write_ids(ORDERS, seq)
    assert (ids.table, ids.high_water_mark, ids.open_ids, ids.aborted_ids) == (
        "sales.orders",
        4,
        (3,),
        (2,),
    )
    assert ids.min_open == 3
    assert [w for w in range(1, 6) if ids.is_valid(w)] == [1, 4]
    assert dict(ids.versions) == {1: t1, 4: t4}


def test_an_older_snapshot_sees_write_ids_committed_after_it_as_not_valid(
    store: MetaStore, orders: TableInfo
) -> None:
    t1, t2, t3 = store.open_transactions(3)
    store.allocate_write_ids(ORDERS, [t1, t2, t3])
    first = _commit(store, t2)
    _commit(store, t1)
    store.abort(t3)

    then = store.write_ids(ORDERS, first)
    assert (then.high_water_mark, then.open_ids, then.aborted_ids) == (2, (1,), ())
    assert [w for w in (1, 2, 3) if then.is_valid(w)] == [2]
    now = store.write_ids(ORDERS, store.table(ORDERS).current_seq)
    assert (now.high_water_mark, now.open_ids, now.aborted_ids) == (3, (), (3,))
    assert [w for w in (1, 2, 3) if now.is_valid(w)] == [1, 2]


def test_a_table_without_write_ids_has_an_empty_list(store: MetaStore, orders: TableInfo) -> None:
    ids = store.write_ids(ORDERS, 0)
    assert (ids.high_water_mark, ids.open_ids, ids.aborted_ids, ids.min_open) == (0, (), (), None)


def test_racing_allocations_get_distinct_contiguous_write_ids(
    catalog_url: str, orders: TableInfo
) -> None:
    got: list[list[int]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def allocate() -> None:
        try:
            with MetaStore.connect(catalog_url, "alice") as mine:
                txns = mine.open_transactions(2)
                start.wait()
                got.append(mine.allocate_write_ids(ORDERS, txns))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=allocate) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(w for ids in got for w in ids) == list(range(1, 9))
    assert all(ids[1] == ids[0] + 1 for ids in got)


def test_dropping_a_table_drops_its_write_ids(store: MetaStore, orders: TableInfo) -> None:
    store.allocate_write_ids(ORDERS, [store.begin()])
    store.drop_table(ORDERS)
    store.create_table(orders_spec())
    assert store.allocate_write_ids(ORDERS, [store.begin()]) == [1]


def test_a_version_2_catalog_is_upgraded_with_an_empty_write_id_table(catalog_url: str) -> None:
    from tests.catalog.test_schema_history import (
        _schema_versions,
        _shape,
        without_partition_summaries,
    )

    with MetaStore.connect(catalog_url, "alice") as store:
        store.create_table(orders_spec())
    fresh = _shape(catalog_url)
    engine = sa.create_engine(catalog_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE table_write_ids"))
            without_partition_summaries(conn)
            conn.execute(sa.text("UPDATE catalog_meta SET schema_version = 2"))
    finally:
        engine.dispose()

    with MetaStore.connect(catalog_url, "alice") as store:
        assert _schema_versions(catalog_url) == [2, 3, 4, 5]
        assert _shape(catalog_url) == fresh
        assert store.allocate_write_ids(ORDERS, [store.begin()]) == [1]
