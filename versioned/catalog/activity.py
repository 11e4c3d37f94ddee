"""What is going on around one table: its open transactions, and when each commit's
transaction began (the metadata tables' ``seconds`` of a commit)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog.models import CommitRow, FileRow, LockRow, TransactionRow, WriteIdRow
from versioned.catalog.records import TransactionInfo


def open_transactions_of(session: Session, table_id: int) -> list[TransactionInfo]:
    """Open transactions that lock the table (or a partition of it) or hold a write id of
    it, oldest first."""
    locking = sa.select(LockRow.txn_id).where(LockRow.table_id == table_id)
    writing = sa.select(WriteIdRow.txn_id).where(WriteIdRow.table_id == table_id)
    query = (
        sa.select(TransactionRow)
        .where(TransactionRow.state == "open")
        .where(TransactionRow.id.in_(locking) | TransactionRow.id.in_(writing))
        .order_by(TransactionRow.id)
    )
    return [row.info() for row in session.scalars(query)]


def commit_started_at(session: Session, table_id: int) -> dict[int, float]:
    """When the transaction of each of the table's commits began, by transaction id."""
    query = (
        sa.select(TransactionRow.id, TransactionRow.started_at)
        .join(CommitRow, CommitRow.txn_id == TransactionRow.id)
        .where(CommitRow.table_id == table_id)
    )
    return {int(txn): float(started) for txn, started in session.execute(query)}


def file_counts_by_commit(
    session: Session, table_id: int
) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """Files (count, bytes) each commit added and retired, by commit sequence, among the
    files still in the catalog (vacuum forgets the ones it deleted)."""
    added = sa.select(FileRow.added_seq, sa.func.count(), sa.func.sum(FileRow.size_bytes))
    added = added.where(FileRow.table_id == table_id).group_by(FileRow.added_seq)
    removed = sa.select(FileRow.removed_seq, sa.func.count(), sa.func.sum(FileRow.size_bytes))
    removed = removed.where(FileRow.table_id == table_id, FileRow.removed_seq.is_not(None))
    removed = removed.group_by(FileRow.removed_seq)
    return (
        {int(seq): (int(n), int(size or 0)) for seq, n, size in session.execute(added)},
        {int(seq or 0): (int(n), int(size or 0)) for seq, n, size in session.execute(removed)},
    )
