"""The catalog transaction of one acid write: the shared write transaction plus a write id.

Built on `versioned.catalog.write_transaction` (begin, heartbeat, compare-and-swap commit,
abort with its cleanup policy); an acid write adds the table's write id of the transaction.

Compactions never conflict with an acid write (Hive's design): a compaction covers only
write ids below every open one and keeps ROW__IDs, so the delete events a write planned
still match, and it moves no partition head and no key. A write guarded by the table's
commit sequence (keys unique table-wide) therefore commits again against the new sequence
when only compactions committed since it planned, instead of re-planning.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from versioned.catalog.records import CommitInfo, PartitionCommit, StreamMark
from versioned.catalog.store import MetaStore
from versioned.catalog.write_transaction import WriteTransaction, write_transaction
from versioned.layouts.engine_protocol import EngineContext
from versioned.names import TableName


@dataclass
class AcidTransaction:
    """An open write transaction with its write id of the table."""

    tx: WriteTransaction
    write_id: int
    store: MetaStore | None = None

    @property
    def txn_id(self) -> int:
        """The catalog transaction id (the version the write commits as, unless a commit of
        a higher version came first: `MetaStore.commit`'s ``in_commit_order``)."""
        return self.tx.id

    @property
    def staging_dir(self) -> str:
        """The transaction's private staging folder (deleted on abort)."""
        assert self.tx.staging_dir is not None
        return self.tx.staging_dir

    def commit(
        self,
        *,
        operation: str,
        partitions: Sequence[PartitionCommit],
        metrics: dict[str, Any],
        expected_seq: int | None,
        stream_mark: StreamMark | None = None,
        in_commit_order: bool = False,
    ) -> CommitInfo:
        """List the files and commit; raises `CommitConflictError` when another writer won
        (with ``expected_seq``: a commit since that sequence other than a compaction), and
        `StreamBatchCommittedError` when ``stream_mark``'s batch was applied already."""
        return self.tx.commit_past_compactions(
            operation=operation,
            partitions=partitions,
            metrics=metrics,
            expected_seq=expected_seq,
            stream_mark=stream_mark,
            in_commit_order=in_commit_order,
        )


@contextmanager
def acid_transaction(
    ctx: EngineContext, table: TableName, *, timeout_s: float, staging_dir: Any
) -> Iterator[AcidTransaction]:
    """Open a write transaction on ``table`` and allocate its write id.

    Leaving the block without a commit aborts the transaction (its write id is then aborted
    too, so its rows are invisible forever, also to Hive's readers) and deletes its files.

    Args:
        staging_dir: The staging folder of a transaction id (``StorageLayout.staging_dir``
            bound to the table's location).
    """
    store = ctx.store
    with write_transaction(
        store, table, timeout_s=timeout_s, fileio=ctx.fileio, staging=staging_dir
    ) as tx:
        (write_id,) = store.allocate_write_ids(table, [tx.id])
        yield AcidTransaction(tx, write_id, store)
