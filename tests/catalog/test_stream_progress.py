"""The progress of streaming writers, checked and recorded inside the commit's SQL transaction,
against SQLite and PostgreSQL catalogs and real files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.catalog.conftest import ORDERS, orders_spec
from tests.catalog.test_schema_history import _schema_versions, _shape, without_partition_summaries
from tests.catalog.test_write_transaction import LOCATION, _on_disk, _staging, _write_version
from versioned.catalog import MetaStore, PartitionCommit, PartitionInfo, TableInfo
from versioned.catalog.engine import SCHEMA_VERSION
from versioned.catalog.records import CommitInfo, StreamMark
from versioned.catalog.write_transaction import write_transaction
from versioned.errors import InputError, PermissionDeniedError, StreamBatchCommittedError
from versioned.storage.filesystem import FileIO

P1 = ["s1", "2024-01-01"]
MARK = StreamMark("q1", 0)


@pytest.fixture
def part(store: MetaStore, orders: TableInfo) -> PartitionInfo:
    return store.add_partition(ORDERS, P1)


@pytest.fixture
def fileio(warehouse: Path) -> FileIO:
    return FileIO.for_root(str(warehouse))


def _commit(store: MetaStore, mark: StreamMark | None) -> CommitInfo:
    """Commit nothing but the mark, in a transaction of its own."""
    txn = store.begin()
    return store.commit(txn, ORDERS, operation="upsert", partitions=[], stream_mark=mark)


def _progress(store: MetaStore) -> dict[str, int]:
    return {p.writer_id: p.batch_id for p in store.stream_progress(ORDERS)}


def test_a_commit_records_its_mark_with_the_commit_it_made(
    store: MetaStore, orders: TableInfo
) -> None:
    info = _commit(store, StreamMark("q1", 0))
    (progress,) = store.stream_progress(ORDERS)
    assert (progress.writer_id, progress.batch_id) == ("q1", 0)
    assert (progress.commit_seq, progress.version) == (info.seq, info.version)


def test_the_same_batch_again_is_refused_and_leaves_the_transaction_open(
    store: MetaStore, orders: TableInfo
) -> None:
    _commit(store, StreamMark("q1", 3))
    txn = store.begin()
    with pytest.raises(StreamBatchCommittedError, match=r"batch 3 of writer 'q1'") as raised:
        store.commit(
            txn, ORDERS, operation="upsert", partitions=[], stream_mark=StreamMark("q1", 3)
        )
    assert (raised.value.batch_id, raised.value.last_batch_id) == (3, 3)  # type: ignore[attr-defined]
    assert len(store.history(ORDERS)) == 1
    assert store.transaction(txn).state == "open"
    assert _progress(store) == {"q1": 3}


def test_a_lower_batch_is_refused_a_higher_one_commits_and_writers_are_independent(
    store: MetaStore, orders: TableInfo
) -> None:
    _commit(store, StreamMark("q1", 5))
    with pytest.raises(StreamBatchCommittedError):
        _commit(store, StreamMark("q1", 4))
    _commit(store, StreamMark("q2", 0))  # another writer counts on its own
    _commit(store, StreamMark("q1", 7))  # gaps are fine: Spark skips ids of empty triggers
    _commit(store, None)  # a commit without a mark leaves the progress alone
    assert _progress(store) == {"q1": 7, "q2": 0}
    assert len(store.history(ORDERS)) == 4


def test_a_refused_write_transaction_is_aborted_and_its_files_deleted(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    mark = StreamMark("q1", 0)
    with write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx:
        add = _write_version(tx, fileio, part)
        change = PartitionCommit(part.id, expected_head=None, new_head=tx.id, add=(add,))
        tx.commit(operation="upsert", partitions=[change], stream_mark=mark)
    committed = _on_disk(warehouse)
    assert committed == {f"{LOCATION}/{add.path}"}

    with (
        pytest.raises(StreamBatchCommittedError),
        write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx,
    ):
        add = _write_version(tx, fileio, part)
        change = PartitionCommit(part.id, expected_head=tx.id - 1, new_head=tx.id, add=(add,))
        tx.commit(operation="upsert", partitions=[change], stream_mark=mark)
    assert (tx.state, store.transaction(tx.id).state) == ("aborted", "aborted")
    assert _on_disk(warehouse) == committed
    assert [f.path for f in store.snapshot(ORDERS).files] == [
        f"{part.path}/version_id={tx.id - 1}/part-0.parquet"
    ]


def test_a_batch_without_rows_is_recorded_without_a_commit(
    store: MetaStore, orders: TableInfo
) -> None:
    store.record_stream_batch(ORDERS, StreamMark("q1", 0))
    with pytest.raises(StreamBatchCommittedError):
        store.record_stream_batch(ORDERS, StreamMark("q1", 0))
    with pytest.raises(StreamBatchCommittedError):
        _commit(store, StreamMark("q1", 0))
    (progress,) = store.stream_progress(ORDERS)
    assert (progress.batch_id, progress.commit_seq, progress.version) == (0, None, None)
    assert store.history(ORDERS) == []


def test_forgetting_a_writer_lets_its_batch_ids_start_again(
    store: MetaStore, orders: TableInfo
) -> None:
    _commit(store, StreamMark("q1", 9))
    _commit(store, StreamMark("q2", 1))
    assert store.forget_stream_progress(ORDERS, "q1") == 1
    assert store.forget_stream_progress(ORDERS, "q1") == 0
    _commit(store, StreamMark("q1", 0))
    assert _progress(store) == {"q1": 0, "q2": 1}


def test_dropping_a_table_drops_its_progress(store: MetaStore, orders: TableInfo) -> None:
    _commit(store, StreamMark("q1", 9))
    store.drop_table(ORDERS)
    store.create_table(orders_spec())
    assert store.stream_progress(ORDERS) == []
    _commit(store, StreamMark("q1", 0))


@pytest.mark.parametrize(
    "mark",
    [StreamMark("", 0), StreamMark("x" * 201, 0), StreamMark("q", -1), StreamMark("q", True)],
    ids=["empty-writer", "long-writer", "negative-batch", "bool-batch"],
)
def test_malformed_marks_are_refused_before_anything_is_written(
    store: MetaStore, orders: TableInfo, mark: StreamMark
) -> None:
    with pytest.raises(InputError):
        _commit(store, mark)
    assert store.history(ORDERS) == []


def test_progress_needs_read_and_recording_needs_write(
    store: MetaStore, mallory: MetaStore, orders: TableInfo
) -> None:
    _commit(store, StreamMark("q1", 0))
    with pytest.raises(PermissionDeniedError):
        mallory.stream_progress(ORDERS)
    with pytest.raises(PermissionDeniedError):
        mallory.record_stream_batch(ORDERS, StreamMark("q1", 1))
    with pytest.raises(PermissionDeniedError):
        mallory.forget_stream_progress(ORDERS, "q1")
    assert _progress(store) == {"q1": 0}


def test_a_version_3_catalog_is_upgraded_with_an_empty_progress_table(catalog_url: str) -> None:
    with MetaStore.connect(catalog_url, "alice") as store:
        store.create_table(orders_spec())
        _commit(store, None)
    fresh = _shape(catalog_url)
    engine = sa.create_engine(catalog_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE stream_progress"))
            without_partition_summaries(conn)
            conn.execute(sa.text("UPDATE catalog_meta SET schema_version = 3"))
    finally:
        engine.dispose()

    with MetaStore.connect(catalog_url, "alice") as store:
        assert _schema_versions(catalog_url) == [3, 4, 5] == [3, 4, SCHEMA_VERSION]
        assert _shape(catalog_url) == fresh
        assert store.stream_progress(ORDERS) == []
        _commit(store, StreamMark("q1", 0))
        assert _progress(store) == {"q1": 0}
        assert len(store.history(ORDERS)) == 2


def test_racing_commits_of_one_batch_commit_it_once(
    connect: Callable[[str], MetaStore], orders: TableInfo
) -> None:
    stores = [connect("alice") for _ in range(4)]
    txns = [s.begin() for s in stores]
    start = threading.Barrier(len(stores))
    outcomes: list[str] = []

    def commit(store: MetaStore, txn: int) -> None:
        start.wait()
        try:
            store.commit(txn, ORDERS, operation="upsert", partitions=[], stream_mark=MARK)
            outcomes.append("committed")
        except StreamBatchCommittedError:
            outcomes.append("refused")

    threads = [
        threading.Thread(target=commit, args=pair) for pair in zip(stores, txns, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["committed", "refused", "refused", "refused"]
    assert len(stores[0].history(ORDERS)) == 1
