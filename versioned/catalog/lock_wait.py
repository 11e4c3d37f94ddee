"""Requesting a lock and polling, with backoff, until it is granted or the wait times out.

Each step is a short SQL transaction of its own, so a waiting client never holds database
locks while it sleeps. Polling also heartbeats the waiting transaction (a client that is
waiting is alive) and reaps expired transactions, whose locks then go away.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence

from sqlalchemy.orm import Session

from versioned.catalog import access, locks, partitions, tables, transactions
from versioned.catalog.connection import CatalogConnection
from versioned.catalog.records import LockInfo
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
    need: access.Need = "read" if checked_mode == "shared_read" else "write"

    def enqueue(s: Session) -> Step:
        now = time.time()
        # Locking the table row orders lock requests on this table (PostgreSQL).
        table = tables.get_table(s, name, for_update=True)
        access.require_table(s, user, table, need)
        txn = transactions.get(s, txn_id, for_update=True)
        transactions.require_open(txn, now)
        transactions.reap(s, now)
        partition_id = None
        if partition is not None:
            values = partitions.normalise(table, partition)
            partition_id = partitions.get(s, table, values).id
        existing = locks.held(s, txn_id, table.id, partition_id, checked_mode)
        if existing is not None:
            return existing.info(), None
        row = locks.request(
            s,
            txn_id=txn_id,
            table_id=table.id,
            partition_id=partition_id,
            mode=checked_mode,
            now=now,
        )
        found = locks.try_acquire(s, row)
        return row.info(), (found.info() if found else None)

    def poll(lock_id: int) -> Callable[[Session], Step]:
        def unit(s: Session) -> Step:
            now = time.time()
            txn = transactions.get(s, txn_id, for_update=True)
            transactions.require_open(txn, now)
            txn.last_heartbeat = now
            transactions.reap(s, now)
            row = locks.get(s, lock_id)
            if row is None:
                raise TransactionStateError(
                    f"the lock request of transaction {txn_id} on {name} was released while "
                    "it waited (the transaction was committed or aborted meanwhile)",
                    txn_id=txn_id,
                )
            if row.state == locks.ACQUIRED:
                return row.info(), None
            found = locks.try_acquire(s, row)
            return row.info(), (found.info() if found else None)

        return unit

    def step(unit: Callable[[Session], Step]) -> Step:
        try:
            return db.write(unit)
        except TransactionExpiredError:
            on_expired()
            raise

    lock, blocker = step(enqueue)
    deadline = time.monotonic() + max(0.0, wait_s)
    delay = _FIRST_DELAY_S
    while blocker is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            db.write(functools.partial(locks.cancel, lock_id=lock.id))
            where = f" partition {list(partition)!r} of" if partition is not None else ""
            raise LockTimeoutError(
                f"could not take a {mode} lock on{where} {name} within {wait_s:g}s: "
                f"transaction {blocker.txn_id} holds or waits for a {blocker.mode} lock on it; "
                "retry later, or wait longer",
                table=str(name),
                txn_id=txn_id,
                mode=mode,
                blocking_txn_id=blocker.txn_id,
                blocking_mode=blocker.mode,
            )
        time.sleep(min(delay, remaining))
        delay = min(delay * 1.6, _MAX_DELAY_S)
        lock, blocker = step(poll(lock.id))
    return lock
