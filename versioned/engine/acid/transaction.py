"""The catalog transaction of one acid write: a transaction, its write id, its heartbeat.

Kept apart so that the writer switches to the shared write-transaction primitive
(``versioned/catalog/write_transaction.py``, being built) in one place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from versioned.catalog.heartbeat import TransactionKeeper
from versioned.catalog.records import CommitInfo, PartitionCommit
from versioned.catalog.store import MetaStore
from versioned.names import TableName


@dataclass
class AcidTransaction:
    """An open transaction with its write id of the table."""

    store: MetaStore
    table: TableName
    txn_id: int
    write_id: int
    keeper: TransactionKeeper

    def commit(
        self,
        *,
        operation: str,
        partitions: Sequence[PartitionCommit],
        metrics: dict[str, Any],
        expected_seq: int | None,
    ) -> CommitInfo:
        """List the files and commit; raises `CommitConflictError` when another writer won."""
        self.keeper.check()
        info = self.store.commit(
            self.txn_id,
            self.table,
            operation=operation,
            partitions=partitions,
            metrics=metrics,
            expected_seq=expected_seq,
        )
        self.keeper.finished(self.txn_id)
        return info


@contextmanager
def acid_transaction(
    store: MetaStore, table: TableName, *, timeout_s: float
) -> Iterator[AcidTransaction]:
    """Open a transaction, allocate its write id of ``table`` and heartbeat it.

    Leaving the block by an exception aborts the transaction (its write id is then aborted
    too, so its files are invisible forever, also to Hive's readers).
    """
    txn = store.begin(timeout_s=timeout_s)
    with TransactionKeeper(store, txn, interval_s=timeout_s / 4) as keeper:
        (write_id,) = store.allocate_write_ids(table, [txn])
        yield AcidTransaction(store, table, txn, write_id, keeper)
