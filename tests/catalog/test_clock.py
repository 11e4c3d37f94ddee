"""A client whose wall clock is off by minutes: commit order, heartbeats, deadlines and
time travel keep to the catalog's clock (`versioned.catalog.clock`).

The client's clock is faked by replacing ``time.time`` in this process, which is every
clock versioned's Python code could read; the catalog's clock is the database's (SQLite's
own read of the system clock, PostgreSQL's server), which the fake does not reach.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from tests.catalog.conftest import ORDERS
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, PartitionInfo, TableInfo
from versioned.catalog.records import TxnSnapshot

REAL_TIME = time.time
MINUTES = 60.0


@contextmanager
def clock_off_by(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Iterator[None]:
    """This process's ``time.time`` runs ``seconds`` ahead (negative: behind) inside."""
    with monkeypatch.context() as patch:
        patch.setattr(time, "time", lambda: REAL_TIME() + seconds)
        yield


def _commit(store: MetaStore, part: PartitionInfo, n: int) -> float:
    txn = store.begin()
    add = FileAdd(part.id, f"{part.path}/f{n}.parquet", "data", txn, 100, 10, {})
    info = store.commit(
        txn,
        ORDERS,
        operation="upsert",
        partitions=[PartitionCommit(part.id, add=(add,), check_head=False)],
    )
    return info.committed_at


def _open(snapshot: TxnSnapshot, txn: int) -> bool:
    return txn in snapshot.open_ids


@pytest.fixture
def part(store: MetaStore, orders: TableInfo) -> PartitionInfo:
    return store.add_partition(ORDERS, ["s1", "2024-01-01"])


@pytest.mark.parametrize("skew", [-10 * MINUTES, 10 * MINUTES])
def test_commit_times_are_the_catalogs_whatever_the_clients_clock(
    store: MetaStore, part: PartitionInfo, monkeypatch: pytest.MonkeyPatch, skew: float
) -> None:
    before = REAL_TIME()
    with clock_off_by(monkeypatch, skew):
        skewed = _commit(store, part, 1)
    time.sleep(1.1)  # time travel resolves to the second
    middle = REAL_TIME()
    time.sleep(1.1)
    fair = _commit(store, part, 2)
    with clock_off_by(monkeypatch, -skew):
        other_way = _commit(store, part, 3)
    after = REAL_TIME()
    # one clock: within the moments the test saw, and in commit order
    assert before - 1 <= skewed <= middle + 1
    assert skewed <= fair <= other_way <= after + 1
    commits = sorted(store.history(ORDERS), key=lambda c: c.seq)
    assert [c.committed_at for c in commits] == sorted(c.committed_at for c in commits)
    # time travel by the reader's (true) clock finds the commit made before that moment
    assert store.snapshot(ORDERS, as_of_time=middle).seq == commits[0].seq


def test_a_client_ahead_does_not_expire_other_clients_transactions(
    connect: Callable[[str], MetaStore], monkeypatch: pytest.MonkeyPatch, orders: TableInfo
) -> None:
    alice, bob = connect("alice"), connect("bob")
    txn = alice.begin(timeout_s=5 * MINUTES)
    with clock_off_by(monkeypatch, 10 * MINUTES):
        assert bob.reap_expired() == []
    assert _open(alice.txn_snapshot(), txn)
    alice.heartbeat(txn)


def test_a_client_behind_keeps_its_transaction_alive_by_heartbeats(
    connect: Callable[[str], MetaStore], monkeypatch: pytest.MonkeyPatch, orders: TableInfo
) -> None:
    alice, bob = connect("alice"), connect("bob")
    with clock_off_by(monkeypatch, -10 * MINUTES):
        txn = alice.begin(timeout_s=3.0)
        for _ in range(3):
            time.sleep(1.0)
            alice.heartbeat(txn)
    assert bob.reap_expired() == []
    assert _open(bob.txn_snapshot(), txn)
    alice.abort(txn, "done")


def test_a_client_ahead_cannot_keep_a_silent_transaction_alive(
    connect: Callable[[str], MetaStore], monkeypatch: pytest.MonkeyPatch, orders: TableInfo
) -> None:
    alice, bob = connect("alice"), connect("bob")
    with clock_off_by(monkeypatch, 10 * MINUTES):
        txn = alice.begin(timeout_s=1.0)
    time.sleep(1.5)
    assert bob.reap_expired() == [txn]
    assert not _open(bob.txn_snapshot(), txn)


def test_the_catalogs_clock_is_the_true_one(
    store: MetaStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    with clock_off_by(monkeypatch, 10 * MINUTES):
        seen = store.now()
    assert abs(seen - REAL_TIME()) < 5
