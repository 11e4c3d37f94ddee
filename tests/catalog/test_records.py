"""Records and errors cross process boundaries: they pickle and compare equal afterwards."""

from __future__ import annotations

import pickle

import pytest

import versioned.errors as errors_module
from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import (
    CommitInfo,
    DatabaseInfo,
    DataFile,
    FileAdd,
    GrantInfo,
    LockInfo,
    MetaStore,
    PartitionCommit,
    PartitionInfo,
    TableInfo,
    TransactionInfo,
    TxnSnapshot,
)
from versioned.errors import CommitConflictError, VersionedError


def test_records_returned_by_the_catalog_pickle(store: MetaStore) -> None:
    table = store.create_table(orders_spec())
    part = store.add_partition(ORDERS, ["a/b", None])
    txn = store.begin()
    lock = store.lock(txn, ORDERS, "shared_write", partition=["a/b", None])
    add = FileAdd(part.id, "f.parquet", "data", txn, 1, 2, {"min": [1, "a"]})
    commit = store.commit(
        txn,
        ORDERS,
        operation="upsert",
        partitions=[PartitionCommit(part.id, None, txn, add=(add,))],
    )
    grant = store.grant("bob", "read", database="sales")
    records: list[object] = [
        table,
        part,
        lock,
        commit,
        grant,
        add,
        PartitionCommit(part.id, None, txn, add=(add,), remove=("x",)),
        store.snapshot(ORDERS),
        store.transaction(txn),
        store.txn_snapshot(),
        store.databases()[0],
        store.all_files(ORDERS)[0],
    ]
    for record in records:
        assert pickle.loads(pickle.dumps(record)) == record
    assert isinstance(records[0], TableInfo) and isinstance(records[1], PartitionInfo)
    assert isinstance(records[2], LockInfo) and isinstance(records[3], CommitInfo)
    assert isinstance(records[4], GrantInfo) and isinstance(records[8], TransactionInfo)
    assert isinstance(records[9], TxnSnapshot) and isinstance(records[10], DatabaseInfo)
    assert isinstance(records[11], DataFile)


def _error_classes() -> list[type[VersionedError]]:
    return [
        obj
        for obj in vars(errors_module).values()
        if isinstance(obj, type) and issubclass(obj, VersionedError)
    ]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_errors_pickle_with_their_context(cls: type[VersionedError]) -> None:
    error = cls("something happened: do this", table="db.t", txn_id=7)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is cls
    assert str(back) == "something happened: do this"
    assert (back.table, back.txn_id) == ("db.t", 7)  # type: ignore[attr-defined]


def test_errors_raised_by_the_catalog_pickle(store: MetaStore) -> None:
    store.create_table(orders_spec())
    part = store.add_partition(ORDERS, ["s", "d"])
    first, second = store.open_transactions(2)
    store.commit(
        first, ORDERS, operation="upsert", partitions=[PartitionCommit(part.id, None, first)]
    )
    with pytest.raises(CommitConflictError) as raised:
        store.commit(
            second, ORDERS, operation="upsert", partitions=[PartitionCommit(part.id, None, second)]
        )
    back = pickle.loads(pickle.dumps(raised.value))
    assert str(back) == str(raised.value)
    assert back.__dict__ == raised.value.__dict__
    assert back.retryable
