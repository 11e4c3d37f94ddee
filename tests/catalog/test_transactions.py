"""Transaction ids, heartbeats, expiry, commit and abort."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable

import pytest

from tests.catalog import workers
from tests.catalog.conftest import ORDERS
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, TableInfo
from versioned.errors import (
    NoSuchTransactionError,
    TransactionExpiredError,
    TransactionStateError,
)


def test_transaction_ids_start_at_one_and_batches_are_contiguous(store: MetaStore) -> None:
    assert store.begin() == 1
    assert store.open_transactions(5) == [2, 3, 4, 5, 6]
    assert store.begin() == 7


@pytest.mark.slow
def test_transaction_ids_are_unique_and_increasing_across_processes(catalog_url: str) -> None:
    # The schema does not exist yet: the processes also race to create it.
    ctx = multiprocessing.get_context("spawn")
    procs, rounds, batch = 4, 25, 2
    barrier = ctx.Barrier(procs)
    queue = ctx.Queue()
    children = [
        ctx.Process(target=workers.allocate_ids, args=(catalog_url, barrier, queue, rounds, batch))
        for _ in range(procs)
    ]
    for child in children:
        child.start()
    results = [queue.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=30)
    errors = [detail for status, detail in results if status != "ok"]
    assert not errors, errors[0]
    every_id: list[int] = []
    for _, batches in results:
        assert len(batches) == rounds
        own = [i for b in batches for i in b]
        assert own == sorted(own) and len(set(own)) == len(own)
        for b in batches:
            assert b == list(range(b[0], b[0] + batch)), f"batch {b} is not contiguous"
        every_id.extend(own)
    assert sorted(every_id) == list(range(1, procs * rounds * batch + 1))
    store = MetaStore.connect(catalog_url, "alice")
    try:
        assert store.begin() == procs * rounds * batch + 1
        assert store.txn_snapshot().high_water_mark == procs * rounds * batch + 1
    finally:
        store.close()


def test_heartbeat_keeps_a_transaction_alive_past_its_timeout(
    store: MetaStore, orders: TableInfo
) -> None:
    part = store.add_partition(ORDERS, ["s1", "2024-01-01"])
    txn = store.begin(timeout_s=1.0)
    store.lock(txn, ORDERS, "shared_write", partition=["s1", "2024-01-01"])
    until = time.monotonic() + 2.0
    while time.monotonic() < until:
        time.sleep(0.3)
        store.heartbeat(txn)
    assert store.reap_expired() == []
    add = FileAdd(part.id, "a.parquet", "data", txn, 1, 1)
    commit = store.commit(
        txn,
        ORDERS,
        operation="upsert",
        partitions=[PartitionCommit(part.id, None, txn, add=(add,))],
    )
    assert commit.txn_id == txn
    assert store.transaction(txn).state == "committed"
    assert store.locks(ORDERS) == []


def test_a_transaction_without_heartbeat_expires_and_loses_its_locks(
    store: MetaStore, orders: TableInfo
) -> None:
    part = store.add_partition(ORDERS, ["s1", "2024-01-01"])
    txn = store.begin(timeout_s=0.5)
    keeper = store.begin(timeout_s=60)
    store.lock(txn, ORDERS, "shared_write", partition=["s1", "2024-01-01"])
    time.sleep(0.8)
    assert store.reap_expired() == [txn]
    info = store.transaction(txn)
    assert info.state == "aborted"
    assert info.abort_reason == "expired: no heartbeat within 0.5s"
    assert store.transaction(keeper).state == "open"
    assert store.locks(ORDERS) == []
    with pytest.raises(TransactionExpiredError) as raised:
        store.commit(
            txn, ORDERS, operation="upsert", partitions=[PartitionCommit(part.id, None, txn)]
        )
    assert vars(raised.value)["txn_id"] == txn
    assert store.history(ORDERS) == []
    with pytest.raises(TransactionExpiredError):
        store.heartbeat(txn)
    other = store.begin()
    lock = store.lock(other, ORDERS, "shared_write", partition=["s1", "2024-01-01"], wait_s=0)
    assert lock.state == "acquired"
    assert txn in store.txn_snapshot().aborted_ids


def test_commit_of_an_expired_transaction_aborts_it_even_without_a_reaper(
    store: MetaStore, orders: TableInfo
) -> None:
    part = store.add_partition(ORDERS, ["s1", "2024-01-01"])
    txn = store.begin(timeout_s=0.3)
    time.sleep(0.5)
    add = FileAdd(part.id, "late.parquet", "data", txn, 1, 1)
    with pytest.raises(TransactionExpiredError, match="heartbeat"):
        store.commit(
            txn,
            ORDERS,
            operation="upsert",
            partitions=[PartitionCommit(part.id, None, txn, add=(add,))],
        )
    assert store.transaction(txn).state == "aborted"
    assert store.snapshot(ORDERS).files == ()
    assert store.history(ORDERS) == []
    assert store.table(ORDERS).current_seq == 0


def test_heartbeat_of_an_expired_transaction_raises_and_aborts_it(store: MetaStore) -> None:
    txn = store.begin(timeout_s=0.2)
    time.sleep(0.4)
    with pytest.raises(TransactionExpiredError):
        store.heartbeat(txn)
    assert store.transaction(txn).state == "aborted"
    with pytest.raises(TransactionExpiredError):
        store.commit_transaction(txn)


def test_finished_transactions_reject_heartbeat_and_commit(store: MetaStore) -> None:
    done, dropped = store.open_transactions(2)
    store.commit_transaction(done)
    store.abort(dropped, "changed my mind")
    store.abort(dropped)  # aborting twice is harmless
    assert store.transaction(dropped).abort_reason == "changed my mind"
    for txn in (done, dropped):
        with pytest.raises(TransactionStateError):
            store.heartbeat(txn)
        with pytest.raises(TransactionStateError):
            store.commit_transaction(txn)
    with pytest.raises(TransactionStateError):
        store.abort(done)
    with pytest.raises(NoSuchTransactionError):
        store.heartbeat(999)
    with pytest.raises(NoSuchTransactionError):
        store.transaction(999)


def test_a_long_abort_reason_is_kept_shortened(store: MetaStore) -> None:
    txn = store.begin()
    store.abort(txn, "boom " * 300)
    reason = store.transaction(txn).abort_reason
    assert reason is not None and len(reason) == 500 and reason.startswith("boom boom")


def test_heartbeat_of_several_transactions_fails_as_a_whole(store: MetaStore) -> None:
    alive, done = store.open_transactions(2, timeout_s=60)
    store.commit_transaction(done)
    before = store.transaction(alive).last_heartbeat
    time.sleep(0.05)
    with pytest.raises(TransactionStateError):
        store.heartbeat(alive, done)
    assert store.transaction(alive).last_heartbeat == before
    store.heartbeat(alive)
    assert store.transaction(alive).last_heartbeat > before


def test_txn_snapshot_reports_open_and_aborted_ids(store: MetaStore) -> None:
    committed, aborted, running = store.open_transactions(3)
    store.commit_transaction(committed)
    store.abort(aborted)
    snap = store.txn_snapshot()
    assert snap.high_water_mark == running
    assert snap.open_ids == {running}
    assert snap.aborted_ids == {aborted}
    assert snap.is_valid(committed)
    assert not snap.is_valid(aborted) and not snap.is_valid(running)
    assert not snap.is_valid(running + 1)
    assert snap.min_open == running


def test_transactions_record_who_opened_them(connect: Callable[[str], MetaStore]) -> None:
    bob = connect("bob")
    txn = bob.begin(timeout_s=42)
    info = connect("alice").transaction(txn)
    assert (info.user, info.state, info.timeout_s) == ("bob", "open", 42)
