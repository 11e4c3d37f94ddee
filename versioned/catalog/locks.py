"""Table and partition locks with Hive 2 semantics and first-come-first-served fairness.

``shared_read`` is compatible with ``shared_read`` and ``shared_write``; ``shared_write``
conflicts with ``shared_write`` and ``exclusive``; ``exclusive`` conflicts with everything.
A table-level lock overlaps every partition of its table. A request is inserted ``waiting``
and granted once no overlapping, conflicting lock of another transaction with a lower id
exists, held or waiting, so a later request never overtakes an earlier one.

Requests are inserted while the table row is locked (``SELECT ... FOR UPDATE``; SQLite
serializes all writers anyway), so lock ids follow request order and a request sees every
request with a lower id.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog.models import LockRow
from versioned.catalog.records import LOCK_MODES, LockInfo, LockMode
from versioned.errors import InputError

WAITING, ACQUIRED = "waiting", "acquired"

CONFLICTS: dict[str, tuple[str, ...]] = {
    "shared_read": ("exclusive",),
    "shared_write": ("shared_write", "exclusive"),
    "exclusive": LOCK_MODES,
}
_STRENGTH = {"shared_read": 0, "shared_write": 1, "exclusive": 2}


def check_mode(mode: str) -> LockMode:
    """Validate a lock mode."""
    if mode not in LOCK_MODES:
        raise InputError(
            f"unknown lock mode {mode!r}; use one of {', '.join(LOCK_MODES)}", mode=mode
        )
    return mode  # type: ignore[return-value]  # checked just above


def held(
    session: Session, txn_id: int, table_id: int, partition_id: int | None, mode: str
) -> LockRow | None:
    """A lock the transaction already holds on the same object that is at least as strong."""
    rows = session.scalars(
        sa.select(LockRow).where(
            LockRow.txn_id == txn_id,
            LockRow.table_id == table_id,
            LockRow.state == ACQUIRED,
            LockRow.partition_id.is_(None)
            if partition_id is None
            else LockRow.partition_id == partition_id,
        )
    )
    for row in rows:
        if _STRENGTH[row.mode] >= _STRENGTH[mode]:
            return row
    return None


def request(
    session: Session,
    *,
    txn_id: int,
    table_id: int,
    partition_id: int | None,
    mode: str,
    now: float,
) -> LockRow:
    """Insert a waiting lock request (the table row must be locked by the caller)."""
    row = LockRow(
        txn_id=txn_id,
        table_id=table_id,
        partition_id=partition_id,
        mode=mode,
        state=WAITING,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return row


def blocker(session: Session, lock: LockRow) -> LockRow | None:
    """The earliest lock that keeps ``lock`` from being granted, or None."""
    overlapping = (
        sa.true()
        if lock.partition_id is None
        else sa.or_(LockRow.partition_id.is_(None), LockRow.partition_id == lock.partition_id)
    )
    return session.scalars(
        sa.select(LockRow)
        .where(
            LockRow.table_id == lock.table_id,
            LockRow.id < lock.id,
            LockRow.txn_id != lock.txn_id,
            LockRow.mode.in_(CONFLICTS[lock.mode]),
            overlapping,
        )
        .order_by(LockRow.id)
        .limit(1)
    ).first()


def try_acquire(session: Session, lock: LockRow) -> LockRow | None:
    """Grant ``lock`` if nothing blocks it; returns the blocker otherwise."""
    found = blocker(session, lock)
    if found is None:
        lock.state = ACQUIRED
        session.flush()
    return found


def get(session: Session, lock_id: int) -> LockRow | None:
    """The lock row, or None when it was released."""
    return session.get(LockRow, lock_id)


def cancel(session: Session, lock_id: int) -> None:
    """Delete a lock request."""
    session.execute(sa.delete(LockRow).where(LockRow.id == lock_id))


def list_for(session: Session, table_ids: list[int] | None) -> list[LockInfo]:
    """Locks on the given tables (all tables when None), in request order."""
    query = sa.select(LockRow).order_by(LockRow.id)
    if table_ids is not None:
        query = query.where(LockRow.table_id.in_(table_ids))
    return [r.info() for r in session.scalars(query)]
