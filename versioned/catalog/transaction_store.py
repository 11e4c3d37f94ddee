"""The transaction, write-id and lock calls of the catalog facade (`MetaStore`)."""

from __future__ import annotations

from collections.abc import Sequence

from versioned.catalog import activity, clock, locks, tables, transactions, write_ids
from versioned.catalog.lock_wait import wait_for_lock
from versioned.catalog.records import (
    DEFAULT_TXN_TIMEOUT_S,
    LockInfo,
    LockMode,
    TableWriteIds,
    TransactionInfo,
    TxnSnapshot,
)
from versioned.catalog.store_base import StoreBase
from versioned.names import TableName


class TransactionStore(StoreBase):
    """Transactions (open, heartbeat, commit empty, abort, reap), per-table write ids and
    table / partition locks."""

    # transactions -----------------------------------------------------------------------------

    def open_transactions(
        self, count: int = 1, *, timeout_s: float = DEFAULT_TXN_TIMEOUT_S
    ) -> list[int]:
        """Open ``count`` transactions with consecutive, never reused ids.

        A connection lost while opening them opens them again: the ones the lost attempt
        may have opened are never heartbeated, and expire after ``timeout_s``."""

        return self._db.write(
            lambda s: transactions.open_batch(
                s, count=count, user=self.user, timeout_s=timeout_s, now=clock.now(s)
            ),
            idempotent=True,
        )

    def begin(self, *, timeout_s: float = DEFAULT_TXN_TIMEOUT_S) -> int:
        """Open one transaction; heartbeat it more often than ``timeout_s``."""
        return self.open_transactions(1, timeout_s=timeout_s)[0]

    def heartbeat(self, *txn_ids: int) -> None:
        """Keep open transactions alive.

        Raises:
            TransactionExpiredError: One of them already expired (it is aborted).
            TransactionStateError: One of them was committed or aborted.
        """
        if txn_ids:
            self._expiring(
                lambda s: transactions.heartbeat(s, txn_ids, clock.now(s)), idempotent=True
            )

    def table_transactions(self, name: TableName) -> list[TransactionInfo]:
        """Open transactions that lock the table or hold a write id of it (needs read)."""
        return self._on_table(name, "read", lambda s, t: activity.open_transactions_of(s, t.id))

    def commit_started_at(self, name: TableName) -> dict[int, float]:
        """When the transaction of each commit of the table began, by transaction id
        (needs read)."""
        return self._on_table(name, "read", lambda s, t: activity.commit_started_at(s, t.id))

    def commit_file_counts(
        self, name: TableName
    ) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
        """Files (count, bytes) each commit of the table added and retired, by commit
        sequence (needs read)."""
        return self._on_table(name, "read", lambda s, t: activity.file_counts_by_commit(s, t.id))

    def transaction(self, txn_id: int) -> TransactionInfo:
        """The state of a transaction."""
        return self._db.read(lambda s: transactions.get(s, txn_id).info())

    def abort(self, txn_id: int, reason: str = "aborted by client") -> None:
        """Abort an open transaction and release its locks (aborting twice is a no-op)."""
        self._db.write(
            lambda s: transactions.abort(s, txn_id, reason, clock.now(s)),
            confirm=lambda s: transactions.ended_as(s, txn_id, transactions.ABORTED),
        )

    def commit_transaction(self, txn_id: int) -> None:
        """Commit a transaction that changed no table, releasing its locks."""
        self._expiring(
            lambda s: transactions.commit_empty(s, txn_id, clock.now(s)),
            confirm=lambda s: transactions.ended_as(s, txn_id, transactions.COMMITTED),
        )

    def reap_expired(self) -> list[int]:
        """Abort every transaction that missed its heartbeat deadline; returns their ids."""
        return self._db.write(lambda s: transactions.reap(s, clock.now(s)), idempotent=True)

    def txn_snapshot(self) -> TxnSnapshot:
        """High-water mark, open and aborted transaction ids (what ACID readers may see)."""
        return self._db.read(transactions.snapshot)

    # write ids (acid layout) ------------------------------------------------------------------

    def allocate_write_ids(self, name: TableName, txn_ids: Sequence[int]) -> list[int]:
        """Per-table write ids for open transactions, contiguous in the order given (needs
        write); transactions that have them already get the same ones back.

        Raises:
            TransactionExpiredError: A transaction expired (it is aborted).
            TransactionStateError: A transaction was committed or aborted.
        """
        return self._expiring_on_table(
            name, lambda s, t: write_ids.allocate(s, t, txn_ids, clock.now(s)), idempotent=True
        )

    def write_ids(self, name: TableName, seq: int) -> TableWriteIds:
        """The table's write ids as its snapshot at commit ``seq`` sees them (needs read)."""
        return self._on_table(name, "read", lambda s, t: write_ids.write_id_list(s, t, seq))

    # locks ------------------------------------------------------------------------------------

    def lock(
        self,
        txn_id: int,
        name: TableName,
        mode: LockMode,
        *,
        partition: Sequence[str | None] | None = None,
        wait_s: float = 30.0,
    ) -> LockInfo:
        """Lock a table, or one partition of it, for a transaction; wait up to ``wait_s``.

        ``shared_read`` needs read permission, the other modes need write. The lock is
        released when the transaction commits, aborts or expires.

        Raises:
            LockTimeoutError: Conflicting locks were still there after ``wait_s`` seconds.
        """
        return wait_for_lock(
            self._db,
            user=self.user,
            txn_id=txn_id,
            name=tables.table_name(name),
            mode=mode,
            partition=partition,
            wait_s=wait_s,
            on_expired=self.reap_expired,
        )

    def locks(self, name: TableName | None = None) -> list[LockInfo]:
        """Locks on one table (needs read), or on every table this user may read."""
        if name is not None:
            return self._on_table(name, "read", lambda s, t: locks.list_for(s, [t.id]))
        return self._db.read(
            lambda s: locks.list_for(s, [t.id for t in tables.list_tables(s, self.user, None)])
        )
