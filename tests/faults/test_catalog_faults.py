"""The PostgreSQL catalog goes away in the middle of a commit: every commit happens exactly
once or not at all, an unknown outcome is settled by the transaction id, readers get a
retryable error during an outage and a consistent snapshot after it, and nothing stays open.

Each fault is real: an operator's ``pg_terminate_backend`` of the client's connections, a
crash and restart of the server (``pg_ctl restart -m immediate``, on a cluster with
PostgreSQL's durable defaults), or the network losing the server's answer to COMMIT (a TCP
proxy between client and server). They strike at three moments of a commit: after the
writer staged its files (before the commit's SQL transaction), inside it (as it inserts the
commit's row), and after the server received COMMIT (before the client heard back).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa

from tests.faults.conftest import FaultyCatalog
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, PartitionInfo
from versioned.catalog.records import StreamMark
from versioned.errors import CatalogUnavailableError, StreamBatchCommittedError
from versioned.names import TableName
from versioned.schema import TableSpec

pytestmark = pytest.mark.faults

T = TableName("d", "t")
MOMENTS = ("staged", "inside", "after_commit")
FAULTS = ("terminate", "restart")


def _spec() -> TableSpec:
    return TableSpec.build(T, columns="id BIGINT, day STRING", primary_key="id", partition_by="day")


def _strike(faulty: FaultyCatalog, fault: str) -> None:
    if fault == "terminate":
        faulty.terminate_backends()
    else:
        faulty.cluster.restart()


@contextmanager
def _inside_commit(engine: sa.Engine, fault: Callable[[], object]) -> Iterator[list[str]]:
    """Strike ``fault`` once, as the commit's transaction inserts its commit row."""
    struck: list[str] = []

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not struck and statement.lstrip().upper().startswith("INSERT INTO COMMITS"):
            struck.append(statement)
            fault()

    sa.event.listen(engine, "before_cursor_execute", before)
    try:
        yield struck
    finally:
        sa.event.remove(engine, "before_cursor_execute", before)


def _staged(store: MetaStore, part: PartitionInfo, n: int) -> tuple[int, PartitionCommit]:
    txn = store.begin(timeout_s=60)
    add = FileAdd(part.id, f"{part.path}/v{txn}/f{n}.parquet", "data", txn, 100, 1, {})
    return txn, PartitionCommit(part.id, add=(add,), check_head=False)


def _check_settled(store: MetaStore, committed: dict[int, str]) -> None:
    """Every transaction in ``committed`` made exactly one commit with exactly its file,
    and no transaction or lock is left open."""
    history = store.history(T)
    by_txn = [c.txn_id for c in history]
    assert sorted(by_txn) == sorted(committed), "a commit is missing or doubled"
    live = [f.path for f in store.snapshot(T).files]
    assert sorted(live) == sorted(committed.values())
    assert store.txn_snapshot().open_ids == frozenset()
    assert store.locks(T) == []


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("moment", MOMENTS)
def test_a_commit_struck_by_a_catalog_fault_happens_exactly_once(
    faulty: FaultyCatalog, moment: str, fault: str
) -> None:
    with MetaStore.connect(faulty.url, "alice") as store:
        store.create_table(_spec())
        part = store.add_partition(T, ["2024-01-01"])
        committed: dict[int, str] = {}
        txn, change = _staged(store, part, 0)
        committed[txn] = change.add[0].path
        mark = StreamMark("job", 1)
        engine = store._db.engine  # the catalog's own engine: faults strike its connections
        if moment == "staged":
            _strike(faulty, fault)
            info = store.commit(txn, T, operation="upsert", partitions=[change], stream_mark=mark)
        elif moment == "inside":
            with _inside_commit(engine, lambda: _strike(faulty, fault)) as struck:
                info = store.commit(
                    txn, T, operation="upsert", partitions=[change], stream_mark=mark
                )
            assert struck, "the fault never struck"
        else:
            if fault == "restart":
                faulty.proxy.on_cut = faulty.cluster.restart
            faulty.proxy.drop_after_commit()
            info = store.commit(txn, T, operation="upsert", partitions=[change], stream_mark=mark)
            assert faulty.proxy.cut == 1, "the proxy never cut a COMMIT's answer"
        assert info.txn_id == txn
        # The writer replays its micro-batch (it cannot tell what happened): refused.
        again, replay = _staged(store, part, 1)
        with pytest.raises(StreamBatchCommittedError):
            store.commit(again, T, operation="upsert", partitions=[replay], stream_mark=mark)
        store.abort(again, "replayed batch")
        assert [(p.writer_id, p.batch_id) for p in store.stream_progress(T)] == [("job", 1)]
        # And the table goes on: a next commit after the fault.
        nxt, change = _staged(store, part, 2)
        committed[nxt] = change.add[0].path
        store.commit(nxt, T, operation="upsert", partitions=[change])
        _check_settled(store, committed)


def test_an_outage_longer_than_the_wait_fails_clearly_and_leaves_nothing_open(
    faulty: FaultyCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERSIONED_CATALOG_OUTAGE_S", "2")
    with (
        MetaStore.connect(faulty.url, "alice") as store,
        MetaStore.connect(faulty.url, "bob") as reader,
    ):
        store.create_table(_spec())
        store.grant("bob", "read", database="d", table="t")
        part = store.add_partition(T, ["2024-01-01"])
        first, change = _staged(store, part, 0)
        store.commit(first, T, operation="upsert", partitions=[change])
        before = reader.snapshot(T)
        txn = store.begin(timeout_s=3)
        add = FileAdd(part.id, f"{part.path}/v{txn}/late.parquet", "data", txn, 100, 1, {})
        faulty.cluster.halt()
        try:
            with pytest.raises(CatalogUnavailableError) as failed:
                store.commit(
                    txn, T, operation="upsert", partitions=[PartitionCommit(part.id, add=(add,))]
                )
            assert failed.value.retryable
            with pytest.raises(CatalogUnavailableError) as unreadable:
                reader.snapshot(T)
            assert unreadable.value.retryable and "could not be reached" in str(unreadable.value)
        finally:
            faulty.cluster.resume()
        after = reader.snapshot(T)
        assert (after.seq, after.files) == (before.seq, before.files)  # nothing half-done
        threading.Event().wait(3.5)  # the stranded transaction's timeout
        assert store.reap_expired() == [txn]
        _check_settled(store, {first: change.add[0].path})


def test_a_short_outage_is_ridden_through(faulty: FaultyCatalog) -> None:
    with MetaStore.connect(faulty.url, "alice") as store:
        store.create_table(_spec())
        part = store.add_partition(T, ["2024-01-01"])
        txn, change = _staged(store, part, 0)
        faulty.cluster.halt()
        timer = threading.Timer(2.0, faulty.cluster.resume)
        timer.start()
        try:
            store.commit(txn, T, operation="upsert", partitions=[change])
        finally:
            timer.join()
        _check_settled(store, {txn: change.add[0].path})
