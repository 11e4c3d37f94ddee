"""Requesting a lock and polling, with backoff, until it is granted or the wait times out.

Each step is a short SQL transaction of its own, so a waiting client never holds database
locks while it sleeps. Polling also heartbeats the waiting transaction (a client that is
waiting is alive) and reaps expired transactions, whose locks then go away.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from versioned.catalog import access, clock, locks, partitions, tables, transactions
from versioned.catalog.connection import CatalogConnection
from versioned.catalog.records import LockInfo, LockMode
from versioned.errors import LockTimeoutError, TransactionExpiredError, TransactionStateError
from versioned.names import TableName

_FIRST_DELAY_S = 0.01
_MAX_DELAY_S = 0.25

Step = tuple[LockInfo, LockInfo | None]  # (our lock, what blocks it or None when granted)


def wait_for_lock(
    db: CatalogConnection,
    *,
    user: str,
    txn_id: int,
    name: TableName,
    mode: str,
    partition: Sequence[str | None] | None,
    wait_s: float,
    on_expired: Callable[[], object],
) -> LockInfo:
    """Request a lock and wait for it; see `MetaStore.lock`."""
    checked_mode = locks.check_mode(mode)
    request = _LockRequest(db, user, txn_id, name, checked_mode, partition, on_expired)
    lock, blocker = request.step(request.enqueue)
    deadline = time.monotonic() + max(0.0, wait_s)
    delay = _FIRST_DELAY_S
    while blocker is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            db.write(functools.partial(locks.cancel, lock_id=lock.id))
            raise request.timeout(blocker, wait_s)
        time.sleep(min(delay, remaining))
        delay = min(delay * 1.6, _MAX_DELAY_S)
        lock, blocker = request.step(functools.partial(request.poll, lock.id))
    return lock


@dataclass(frozen=True)
class _LockRequest:
    """One transaction's request for a lock, and the short catalog transactions serving it."""

    db: CatalogConnection
    user: str
    txn_id: int
    name: TableName
    mode: LockMode
    partition: Sequence[str | None] | None
    on_expired: Callable[[], object]

    def step(self, unit: Callable[[Session], Step]) -> Step:
        """Run one step in a catalog transaction of its own."""
        try:
            return self.db.write(unit, idempotent=True)  # a held lock is found, not taken again
        except TransactionExpiredError:
            self.on_expired()
            raise

    def enqueue(self, s: Session) -> Step:
        """Check access, queue the request (unless the lock is held) and try to take it."""
        now = clock.now(s)
        need: access.Need = "read" if self.mode == "shared_read" else "write"
        # Locking the table row orders lock requests on this table (PostgreSQL).
        table = tables.get_table(s, self.name, for_update=True)
        access.require_table(s, self.user, table, need)
        txn = transactions.get(s, self.txn_id, for_update=True)
        transactions.require_open(txn, now)
        transactions.reap(s, now)
        partition_id = None
        if self.partition is not None:
            values = partitions.normalise(table, self.partition)
            partition_id = partitions.get(s, table, values).id
        existing = locks.held(s, self.txn_id, table.id, partition_id, self.mode)
        if existing is not None:
            return existing.info(), None
        row = locks.request(
            s,
            txn_id=self.txn_id,
            table_id=table.id,
            partition_id=partition_id,
            mode=self.mode,
            now=now,
        )
        found = locks.try_acquire(s, row)
        return row.info(), (found.info() if found else None)

    def poll(self, lock_id: int, s: Session) -> Step:
        """Heartbeat the waiting transaction, reap expired ones, and try the lock again."""
        now = clock.now(s)
        txn = transactions.get(s, self.txn_id, for_update=True)
        transactions.require_open(txn, now)
        txn.last_heartbeat = now
        transactions.reap(s, now)
        row = locks.get(s, lock_id)
        if row is None:
            raise TransactionStateError(
                f"the lock request of transaction {self.txn_id} on {self.name} was released "
                "while it waited (the transaction was committed or aborted meanwhile)",
                txn_id=self.txn_id,
            )
        if row.state == locks.ACQUIRED:
            return row.info(), None
        found = locks.try_acquire(s, row)
        return row.info(), (found.info() if found else None)

    def timeout(self, blocker: LockInfo, wait_s: float) -> LockTimeoutError:
        """The error for a request still blocked by ``blocker`` after ``wait_s`` seconds."""
        where = f" partition {list(self.partition)!r} of" if self.partition is not None else ""
        return LockTimeoutError(
            f"could not take a {self.mode} lock on{where} {self.name} within {wait_s:g}s: "
            f"transaction {blocker.txn_id} holds or waits for a {blocker.mode} lock on it; "
            "retry later, or wait longer",
            table=str(self.name),
            txn_id=self.txn_id,
            mode=self.mode,
            blocking_txn_id=blocker.txn_id,
            blocking_mode=blocker.mode,
        )
