"""The write-transaction primitive: begin, heartbeat, compare-and-swap commit, abort, cleanup,
and the retry-on-conflict helper, against SQLite and PostgreSQL catalogs and real files."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.catalog.conftest import ORDERS
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, PartitionInfo, TableInfo
from versioned.catalog.models import TransactionRow
from versioned.catalog.write_transaction import (
    WriteTransaction,
    retry_on_conflict,
    write_transaction,
)
from versioned.errors import (
    CommitConflictError,
    CommitRetriesExhaustedError,
    InputError,
    TransactionExpiredError,
)
from versioned.storage.filesystem import FileIO

ROOT = Path(__file__).resolve().parents[2]
P1 = ["s1", "2024-01-01"]
LOCATION = "sales.db/orders"


@pytest.fixture
def part(store: MetaStore, orders: TableInfo) -> PartitionInfo:
    return store.add_partition(ORDERS, P1)


@pytest.fixture
def fileio(warehouse: Path) -> FileIO:
    return FileIO.for_root(str(warehouse))


def _staging(txn: int) -> str:
    return f"{LOCATION}/_staging/txn={txn}"


def _write_version(tx: WriteTransaction, fileio: FileIO, part: PartitionInfo) -> FileAdd:
    """Stage a file, move it into the transaction's own version folder, as writers do."""
    assert tx.staging_dir is not None
    fileio.write_bytes_atomic(f"{tx.staging_dir}/part-0.parquet", b"rows")
    folder = tx.own_dir(f"{LOCATION}/{part.path}/version_id={tx.id}")
    fileio.move(f"{tx.staging_dir}/part-0.parquet", f"{folder}/part-0.parquet")
    rel = f"{part.path}/version_id={tx.id}/part-0.parquet"
    return FileAdd(part.id, rel, "data", tx.id, 4, 1)


def _on_disk(warehouse: Path) -> set[str]:
    return {str(p.relative_to(warehouse)) for p in warehouse.rglob("*") if p.is_file()}


def test_a_committed_write_transaction_makes_its_files_visible_and_keeps_them(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    with write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx:
        add = _write_version(tx, fileio, part)
        info = tx.commit(
            operation="upsert",
            partitions=[PartitionCommit(part.id, expected_head=None, new_head=tx.id, add=(add,))],
            metrics={"inserted": 1},
        )
    assert (tx.state, info.txn_id, info.version) == ("committed", tx.id, tx.id)
    assert store.transaction(tx.id).state == "committed"
    assert [f.path for f in store.snapshot(ORDERS).files] == [add.path]
    assert _on_disk(warehouse) == {f"{LOCATION}/{add.path}"}


def test_an_exception_aborts_the_transaction_and_removes_its_staged_and_written_files(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    fileio.write_bytes_atomic(f"{LOCATION}/_dead_letter/batch=1/rows.json", b"{}")
    with (
        pytest.raises(RuntimeError, match="spark died"),
        write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx,
    ):
        _write_version(tx, fileio, part)
        fileio.write_bytes_atomic(f"{tx.staging_dir}/_temporary/0/part-1.parquet", b"half")
        index = tx.own_file(f"{LOCATION}/{part.path}/_index/version_id={tx.id}/bloom")
        fileio.write_bytes_atomic(index, b"bits")
        raise RuntimeError("spark died")
    info = store.transaction(tx.id)
    assert (tx.state, info.state) == ("aborted", "aborted")
    assert "RuntimeError: spark died" in (info.abort_reason or "")
    assert store.snapshot(ORDERS).files == () and store.history(ORDERS) == []
    # Only what the transaction did not own is left: the dead letters of the batch.
    assert _on_disk(warehouse) == {f"{LOCATION}/_dead_letter/batch=1/rows.json"}
    assert not (warehouse / LOCATION / part.path / f"version_id={tx.id}").exists()


def test_a_block_left_without_a_commit_aborts_and_cleans_up(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    with write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx:
        _write_version(tx, fileio, part)
    assert store.transaction(tx.id).abort_reason == "ended without a commit"
    assert _on_disk(warehouse) == set()


def test_an_exception_after_the_commit_keeps_the_committed_files(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    with (
        pytest.raises(KeyError),
        write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx,
    ):
        add = _write_version(tx, fileio, part)
        tx.commit(
            operation="upsert", partitions=[PartitionCommit(part.id, None, tx.id, add=(add,))]
        )
        raise KeyError("reporting failed")
    assert store.transaction(tx.id).state == "committed"
    assert _on_disk(warehouse) == {f"{LOCATION}/{add.path}"}


def test_heartbeats_keep_a_write_transaction_alive_past_its_timeout(
    store: MetaStore, part: PartitionInfo, fileio: FileIO
) -> None:
    with write_transaction(store, ORDERS, timeout_s=0.8, fileio=fileio, staging=_staging) as tx:
        add = _write_version(tx, fileio, part)
        time.sleep(2.0)  # the work outlasts the timeout; the heartbeat thread covers it
        assert store.reap_expired() == []
        tx.check_alive()
        tx.commit(
            operation="upsert", partitions=[PartitionCommit(part.id, None, tx.id, add=(add,))]
        )
    assert store.transaction(tx.id).state == "committed"


@pytest.mark.slow
def test_a_stalled_writer_whose_transaction_expired_cannot_commit(
    catalog_url: str, store: MetaStore, part: PartitionInfo, warehouse: Path
) -> None:
    """The writer process is stopped (as by a long GC pause or a frozen VM) past its
    timeout: no heartbeat goes out, and when it resumes its commit fails as expired."""
    timeout_s = 1.0
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.catalog.workers", "stalled-commit", catalog_url,
         str(warehouse), str(timeout_s)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    try:
        ready, _, _ = select.select([child.stdout], [], [], 120)
        line = child.stdout.readline() if ready else ""
        assert line.startswith("txn "), f"writer did not start: {child.stderr.read()}"
        txn = int(line.split()[1])
        child.send_signal(signal.SIGSTOP)
        time.sleep(3 * timeout_s)
        child.send_signal(signal.SIGCONT)
        child.stdin.write("commit now\n")
        child.stdin.flush()
        outcome, errors = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
    assert outcome.strip() == "TransactionExpiredError", errors
    assert store.transaction(txn).state == "aborted"
    assert store.snapshot(ORDERS).files == () and store.history(ORDERS) == []
    assert _on_disk(warehouse) == set()  # expired means aborted: its file could go at once


def test_an_expired_transaction_cannot_commit_and_its_files_go(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    """Another client reaps the transaction (its heartbeats were lost) before the commit."""
    with (
        pytest.raises(TransactionExpiredError),
        write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx,
    ):
        add = _write_version(tx, fileio, part)
        # Pretend the last heartbeat was long ago: what a lost network link looks like.
        _backdate_heartbeat(store, tx.id)
        assert store.reap_expired() == [tx.id]
        tx.commit(
            operation="upsert", partitions=[PartitionCommit(part.id, None, tx.id, add=(add,))]
        )
    info = store.transaction(tx.id)
    assert (info.state, tx.state) == ("aborted", "aborted")
    assert store.snapshot(ORDERS).files == ()
    assert _on_disk(warehouse) == set()


def _backdate_heartbeat(store: MetaStore, txn: int) -> None:
    engine = sa.create_engine(store.url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.update(TransactionRow)
                .where(TransactionRow.id == txn)
                .values(last_heartbeat=TransactionRow.last_heartbeat - 3600)
            )
    finally:
        engine.dispose()


def test_a_lost_compare_and_swap_raises_a_conflict_and_cleans_up_only_the_loser(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    with (
        pytest.raises(CommitConflictError, match="head version"),
        write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as late,
    ):
        planned = store.snapshot(ORDERS).partitions[part.id].head_version
        late_add = _write_version(late, fileio, part)
        with write_transaction(
            store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging
        ) as first:
            add = _write_version(first, fileio, part)
            first.commit(
                operation="upsert",
                partitions=[PartitionCommit(part.id, planned, first.id, add=(add,))],
            )
        late.commit(
            operation="upsert",
            partitions=[PartitionCommit(part.id, planned, late.id, add=(late_add,))],
        )
    assert store.transaction(late.id).state == "aborted"
    assert [f.path for f in store.snapshot(ORDERS).files] == [add.path]
    assert _on_disk(warehouse) == {f"{LOCATION}/{add.path}"}


def test_the_table_sequence_guard_refuses_a_commit_planned_before_another(
    store: MetaStore, part: PartitionInfo, fileio: FileIO
) -> None:
    with write_transaction(store, ORDERS, timeout_s=60, fileio=fileio) as tx:
        planned_seq = store.snapshot(ORDERS).seq
        with write_transaction(store, ORDERS, timeout_s=60) as other:
            other.commit(operation="upsert", partitions=[])
        with pytest.raises(CommitConflictError, match="table changed since this write planned"):
            tx.commit(operation="upsert", partitions=[], expected_seq=planned_seq)
        tx.commit(operation="upsert", partitions=[], expected_seq=planned_seq + 1)
    assert store.transaction(tx.id).state == "committed"


def test_retry_on_conflict_retries_in_a_new_transaction_until_the_commit_wins(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    """The first attempt is overtaken by another writer; the second re-plans and wins."""
    txns: list[int] = []
    retries: list[tuple[int, str]] = []

    def attempt(n: int) -> int:
        planned = store.snapshot(ORDERS).partitions[part.id].head_version
        with write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx:
            txns.append(tx.id)
            add = _write_version(tx, fileio, part)
            if n == 1:
                _commit_other_writer(store, part)
            tx.commit(
                operation="upsert",
                partitions=[PartitionCommit(part.id, planned, tx.id, add=(add,))],
            )
            return tx.id

    def on_retry(n: int, err: CommitConflictError) -> None:
        retries.append((n, type(err).__name__))

    version = retry_on_conflict(3, attempt, on_retry=on_retry)
    assert retries == [(1, "CommitConflictError")]
    assert version == txns[1] and store.transaction(txns[0]).state == "aborted"
    assert store.snapshot(ORDERS).partitions[part.id].head_version == version
    assert f"{LOCATION}/{part.path}/version_id={txns[0]}/part-0.parquet" not in _on_disk(warehouse)


def test_retry_on_conflict_gives_up_after_its_attempts_with_a_clear_error(
    store: MetaStore, part: PartitionInfo, fileio: FileIO, warehouse: Path
) -> None:
    txns: list[int] = []

    def attempt(n: int) -> None:
        planned = store.snapshot(ORDERS).partitions[part.id].head_version
        with write_transaction(store, ORDERS, timeout_s=60, fileio=fileio, staging=_staging) as tx:
            txns.append(tx.id)
            add = _write_version(tx, fileio, part)
            _commit_other_writer(store, part)  # always overtaken
            tx.commit(
                operation="upsert",
                partitions=[PartitionCommit(part.id, planned, tx.id, add=(add,))],
            )

    with pytest.raises(CommitRetriesExhaustedError) as raised:
        retry_on_conflict(2, attempt)
    err = raised.value
    assert isinstance(err, CommitConflictError) and err.exit_code == 75
    assert str(err).startswith("gave up after 2 attempt(s), each lost to a concurrent commit")
    assert "head version" in str(err) and vars(err)["attempts"] == 2
    assert vars(err)["txn_id"] == txns[1]
    assert [store.transaction(t).state for t in txns] == ["aborted", "aborted"]
    assert not any(f"version_id={t}/" in p for t in txns for p in _on_disk(warehouse))


def test_retry_on_conflict_does_not_retry_other_errors() -> None:
    calls: list[int] = []

    def attempt(n: int) -> None:
        calls.append(n)
        raise TransactionExpiredError("expired", txn_id=1)

    with pytest.raises(TransactionExpiredError):
        retry_on_conflict(3, attempt)
    assert calls == [1]
    with pytest.raises(InputError, match="attempts must be a positive integer"):
        retry_on_conflict(0, attempt)


def _commit_other_writer(store: MetaStore, part: PartitionInfo) -> None:
    head = store.snapshot(ORDERS).partitions[part.id].head_version
    txn = store.begin()
    store.commit(txn, ORDERS, operation="upsert", partitions=[PartitionCommit(part.id, head, txn)])
