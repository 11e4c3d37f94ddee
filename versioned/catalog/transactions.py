"""Catalog transactions: id allocation, heartbeats, commit and abort, expiry.

Ids come from one counter row that is incremented inside the SQL transaction that inserts
the transaction rows, so a batch is contiguous and ids only grow (Hive's
``fetchTransactionBatch``). A transaction whose ``last_heartbeat + timeout_s`` lies in the
past (client clock) is expired: it is aborted and its locks are released.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog.connection import Found
from versioned.catalog.models import TXN_COUNTER, CounterRow, LockRow, TransactionRow
from versioned.catalog.records import TxnSnapshot
from versioned.errors import (
    InputError,
    NoSuchTransactionError,
    TransactionExpiredError,
    TransactionStateError,
)

OPEN, COMMITTED, ABORTED = "open", "committed", "aborted"
_MAX_REASON = 500  # width of transactions.abort_reason


def allocate(session: Session, *, count: int, user: str, timeout_s: float, now: float) -> list[int]:
    """Open ``count`` transactions with consecutive ids; returns the ids in order."""
    if not isinstance(count, int) or count < 1:
        raise InputError(f"count must be a positive integer, got {count!r}", count=count)
    if not timeout_s > 0:
        raise InputError(f"timeout_s must be positive, got {timeout_s!r}", timeout_s=timeout_s)
    # The UPDATE takes the row lock (PostgreSQL) or runs under BEGIN IMMEDIATE (SQLite), so
    # the value read back is ours until commit.
    session.execute(
        sa.update(CounterRow)
        .where(CounterRow.name == TXN_COUNTER)
        .values(value=CounterRow.value + count)
    )
    last = session.scalar(sa.select(CounterRow.value).where(CounterRow.name == TXN_COUNTER))
    assert last is not None, "the txn counter row is created with the schema"
    ids = list(range(last - count + 1, last + 1))
    session.execute(
        sa.insert(TransactionRow),
        [
            {
                "id": txn_id,
                "state": OPEN,
                "user": user,
                "started_at": now,
                "last_heartbeat": now,
                "timeout_s": float(timeout_s),
                "expired": False,
            }
            for txn_id in ids
        ],
    )
    return ids


def allocate_committed(session: Session, *, user: str, now: float) -> int:
    """A new transaction id, committed at once and empty: a fresh version for a commit that
    keeps its table's versions in commit order (`commits.apply`)."""
    (txn_id,) = allocate(session, count=1, user=user, timeout_s=1.0, now=now)
    finish(session, get(session, txn_id), COMMITTED, now, None)
    return txn_id


def open_batch(
    session: Session, *, count: int, user: str, timeout_s: float, now: float
) -> list[int]:
    """Reap expired transactions, then open ``count`` new ones (see `allocate`)."""
    reap(session, now)
    return allocate(session, count=count, user=user, timeout_s=timeout_s, now=now)


def abort(session: Session, txn_id: int, reason: str, now: float) -> None:
    """Abort an open transaction; aborting an aborted one is a no-op.

    Raises:
        TransactionStateError: It was committed.
    """
    row = get(session, txn_id, for_update=True)
    if row.state == ABORTED:
        return
    if row.state != OPEN:
        require_open(row, now)
    finish(session, row, ABORTED, now, reason)


def commit_empty(session: Session, txn_id: int, now: float) -> None:
    """Commit an open transaction that changed no table."""
    row = get(session, txn_id, for_update=True)
    require_open(row, now)
    finish(session, row, COMMITTED, now, None)


def ended_as(session: Session, txn_id: int, state: str) -> Found[None] | None:
    """Found when transaction ``txn_id`` ended in ``state`` (a lost commit or abort of it
    happened), else None."""
    row = session.get(TransactionRow, txn_id)
    return Found(None) if row is not None and row.state == state else None


def get(session: Session, txn_id: int, *, for_update: bool = False) -> TransactionRow:
    """The transaction row; ``for_update`` locks it until commit (PostgreSQL)."""
    query = sa.select(TransactionRow).where(TransactionRow.id == txn_id)
    if for_update:
        query = query.with_for_update()
    row = session.scalars(query).one_or_none()
    if row is None:
        raise NoSuchTransactionError(
            f"no transaction {txn_id}: open one with begin()", txn_id=txn_id
        )
    return row


def is_expired(row: TransactionRow, now: float) -> bool:
    """Whether an open transaction missed its heartbeat deadline."""
    return row.last_heartbeat + row.timeout_s < now


def require_open(row: TransactionRow, now: float) -> None:
    """Raise unless the transaction is open and within its heartbeat timeout.

    Raises:
        TransactionExpiredError: It expired (whether or not it was aborted for it yet).
        TransactionStateError: It was committed or aborted.
    """
    if row.expired or (row.state == OPEN and is_expired(row, now)):
        raise expired_error(row)
    if row.state != OPEN:
        how = f"aborted ({row.abort_reason})" if row.state == ABORTED else row.state
        raise TransactionStateError(
            f"transaction {row.id} is {how}, not open: begin a new transaction",
            txn_id=row.id,
            state=row.state,
        )


def expired_error(row: TransactionRow) -> TransactionExpiredError:
    """The error for using an expired transaction."""
    return TransactionExpiredError(
        f"transaction {row.id} expired: no heartbeat within {row.timeout_s:g}s, so it was "
        "aborted and nothing it wrote is visible; heartbeat more often than the timeout and "
        "retry in a new transaction",
        txn_id=row.id,
        timeout_s=row.timeout_s,
    )


def heartbeat(session: Session, txn_ids: Iterable[int], now: float) -> None:
    """Push the deadline of open transactions forward."""
    for txn_id in sorted(set(txn_ids)):  # one lock order, so heartbeats never deadlock
        row = get(session, txn_id, for_update=True)
        require_open(row, now)
        row.last_heartbeat = now


def finish(
    session: Session, row: TransactionRow, state: str, now: float, reason: str | None
) -> None:
    """Mark an open transaction committed or aborted and release its locks."""
    row.state = state
    row.finished_at = now
    row.abort_reason = None if reason is None else str(reason)[:_MAX_REASON]
    session.flush()
    release_locks(session, [row.id])


def release_locks(session: Session, txn_ids: list[int]) -> None:
    """Delete every lock (held or waited for) of the transactions."""
    if txn_ids:
        session.execute(sa.delete(LockRow).where(LockRow.txn_id.in_(txn_ids)))


def reap(session: Session, now: float) -> list[int]:
    """Abort every open transaction past its heartbeat deadline; returns their ids."""
    query = (
        sa.select(TransactionRow)
        .where(
            TransactionRow.state == OPEN,
            TransactionRow.last_heartbeat + TransactionRow.timeout_s < now,
        )
        .order_by(TransactionRow.id)
    )
    if session.get_bind().dialect.name == "postgresql":
        # A row locked by a committing transaction is not stuck; leave it to the next reap.
        query = query.with_for_update(skip_locked=True)
    rows = list(session.scalars(query))
    for row in rows:
        row.state = ABORTED
        row.expired = True
        row.finished_at = now
        row.abort_reason = f"expired: no heartbeat within {row.timeout_s:g}s"
    session.flush()
    ids = [r.id for r in rows]
    release_locks(session, ids)
    return ids


def snapshot(session: Session) -> TxnSnapshot:
    """High-water mark, open and aborted ids, read consistently."""
    # The counter is read first: a transaction opened after it is above the mark anyway.
    hwm = session.scalar(sa.select(CounterRow.value).where(CounterRow.name == TXN_COUNTER))
    rows = session.execute(
        sa.select(TransactionRow.id, TransactionRow.state).where(
            TransactionRow.state.in_((OPEN, ABORTED)), TransactionRow.id <= (hwm or 0)
        )
    ).all()
    return TxnSnapshot(
        high_water_mark=int(hwm or 0),
        open_ids=frozenset(i for i, state in rows if state == OPEN),
        aborted_ids=frozenset(i for i, state in rows if state == ABORTED),
    )
