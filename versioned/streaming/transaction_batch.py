"""A batch of transactions fetched at once from a connection (Hive's ``TransactionBatch``).

The catalog opens the batch's transactions together (consecutive ids; on acid tables,
contiguous write ids, so the batch writes one ``delta_FIRST_LAST`` directory) and they are
used one after the other: `begin_next_transaction`, `write` / `write_many`, then `commit`
or `abort`. Committed records are visible to every reader at once; aborted ones never.
A transaction not heartbeated within the connection's ``transaction_timeout_s`` is aborted
by the catalog: call `heartbeat` at about half that interval (one call covers the current
and every unused transaction of the batch), or fetch the batch with ``auto_heartbeat=True``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from versioned.catalog.records import PartitionCommit
from versioned.errors import (
    CatalogError,
    CommitConflictError,
    NoSuchTableError,
    StorageError,
    TransactionExpiredError,
    TransactionStateError,
)
from versioned.errors import TransactionError as CatalogTransactionError
from versioned.layouts.abilities import ingests
from versioned.layouts.base import layout_of
from versioned.layouts.ingest import IngestSink, SinkContext, SinkFactory
from versioned.layouts.ingest_errors import StreamingIOFailure, StreamingTransactionError
from versioned.storage.space import is_out_of_space
from versioned.streaming.auto_heartbeat import AutoHeartbeat
from versioned.streaming.dead_letters import write_dead_letters
from versioned.streaming.encoding import RecordWriter, RejectedRecord
from versioned.transaction_state import TransactionState

if TYPE_CHECKING:
    from versioned.streaming.connection import StreamingConnection


COMMIT_PAUSE_S = (0.02, 1.0)
"""A commit that loses a race to other writers' commits (`CommitConflictError`: the sink
plans again against what they committed) is tried again after a random pause ("full
jitter") of up to 20 ms doubled per attempt, at most 1 s, so that racing writers fall out of
step. It keeps trying, heartbeating its transactions, until the transaction timeout: a lost
race is no reason to give up records already read."""


class TransactionBatch:
    """Transactions to write records into one endpoint, used one after the other."""

    def __init__(
        self,
        connection: StreamingConnection,
        size: int,
        writer: RecordWriter,
        *,
        auto_heartbeat: bool = False,
    ) -> None:
        """Open ``size`` transactions; use `StreamingConnection.fetch_transaction_batch`."""
        endpoint = connection.endpoint
        self.connection = connection
        self.writer = writer
        self._store = endpoint.store
        self._table = endpoint.info
        self._timeout_s = connection.transaction_timeout_s
        self.txn_ids = tuple(self._store.open_transactions(size, timeout_s=self._timeout_s))
        self._index = -1
        self._state = TransactionState.INACTIVE
        self._closed = False
        self._dead: str | None = None
        self.rejected = 0
        """Records of committed transactions sent to the dead-letter area."""
        self._letters: list[tuple[str, RejectedRecord]] = []
        self._written = 0
        try:
            write_ids: tuple[int, ...] = ()
            layout = layout_of(self._table.spec.layout)
            # A later transaction of the batch may commit after another writer's higher
            # version: on such a layout it then takes a fresh version above it.
            self._in_commit_order = layout.versions_follow_commits
            if layout.allocates_write_ids:
                write_ids = tuple(self._store.allocate_write_ids(endpoint.table, self.txn_ids))
            self.write_ids = write_ids
            spec = self._table.spec
            sink: SinkFactory = ingests(layout, spec.name).ingest_sink()
            self._sink: IngestSink = sink(
                SinkContext(
                    self._store,
                    endpoint.fileio,
                    self._table,
                    connection.partition,
                    self.txn_ids,
                    write_ids,
                    connection.agent,
                    connection.kept,
                )
            )
        except BaseException:
            self._abort_unused(0, "the batch could not start")
            raise
        self._heartbeat = (
            AutoHeartbeat(self._store, self._timeout_s / 2, self._alive_ids, self.txn_ids[0])
            if auto_heartbeat
            else None
        )

    def __repr__(self) -> str:
        return (
            f"TransactionBatch(txns {self.txn_ids[0]}..{self.txn_ids[-1]}, "
            f"current={self.current_transaction_id}, {self._state.value})"
        )

    def __enter__(self) -> TransactionBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # state ------------------------------------------------------------------------------------

    @property
    def current_transaction_id(self) -> int | None:
        """The current transaction's id (``None`` before the first `begin_next_transaction`)."""
        return self.txn_ids[self._index] if self._index >= 0 else None

    @property
    def current_write_id(self) -> int | None:
        """The current transaction's write id (acid tables), else ``None``."""
        return self.write_ids[self._index] if self._index >= 0 and self.write_ids else None

    @property
    def current_transaction_state(self) -> TransactionState:
        """`TransactionState` of the current transaction."""
        return self._state

    def remaining_transactions(self) -> int:
        """Transactions of the batch not begun yet."""
        return 0 if self._closed else len(self.txn_ids) - self._index - 1

    @property
    def closed(self) -> bool:
        """Whether the batch was closed (or died of an I/O failure)."""
        return self._closed

    # transactions -----------------------------------------------------------------------------

    def begin_next_transaction(self) -> None:
        """Start the next transaction of the batch and take its shared lock on the endpoint.

        Raises:
            StreamingTransactionError: The batch or its connection is closed, the current
                transaction is still open, or no transaction is left.
        """
        self._check_usable("begin a transaction")
        if self._state is TransactionState.OPEN:
            raise StreamingTransactionError(
                f"transaction {self.current_transaction_id} is still open: commit or abort it "
                "before beginning the next"
            )
        if self.remaining_transactions() == 0:
            raise StreamingTransactionError(
                f"no transaction left in this batch of {len(self.txn_ids)}: fetch a new batch"
            )
        self._index += 1
        txn_id = self.txn_ids[self._index]
        partition = self.connection.partition
        values = partition.values if self._table.spec.partition_by else None
        try:
            self._store.lock(txn_id, self._table.spec.name, "shared_read", partition=values)
        except TransactionExpiredError as exc:
            self._state = TransactionState.ABORTED
            raise self._expired(exc) from exc
        self._state = TransactionState.OPEN

    def write(self, record: bytes | str) -> None:
        """Write one record into the current transaction (see `write_many`)."""
        self.write_many([record])

    def write_many(
        self, records: Iterable[bytes | str], *, sources: Sequence[str] | None = None
    ) -> int:
        """Write records into the current transaction, typed by the batch's record writer.

        Args:
            records: The records.
            sources: Where each record came from (e.g. ``app.log:17``), kept with the ones
                a dead-letter writer rejects; default: the record's place in the
                transaction.

        Returns:
            How many of the records were rejected (writers with dead letters; they go to
            the table's dead-letter area when the transaction commits).

        Raises:
            StreamingTransactionError: No transaction is open, or the batch is closed.
            SerializationError: A record does not parse or fit the table (writers without
                dead letters); no record of the call is written, the batch stays usable.
            StreamingIOFailure: Storage failed: the batch is dead and its transactions
                aborted.
        """
        self._check_open("write")
        encoded = self.writer.encode(records)
        offset = self._written
        for r in encoded.rejected:
            where = sources[r.index] if sources is not None else str(offset + r.index)
            self._letters.append((where, r))
        self._written += encoded.rows.num_rows + len(encoded.rejected)
        if encoded.rows.num_rows:
            txn_id, write_id = self._current()
            self._io(lambda: self._sink.write(txn_id, write_id, encoded.rows), "write")
        return len(encoded.rejected)

    def commit(self) -> None:
        """Commit the current transaction: its records become visible to every reader.

        Raises:
            StreamingTransactionError: No transaction is open, the batch is closed, or the
                transaction expired (not heartbeated within the timeout; it is aborted).
            CommitConflictError: Other writers' commits kept racing this one for the whole
                transaction timeout (`COMMIT_PAUSE_S`); the transaction is still open.
            StreamingIOFailure: Storage failed: the batch is dead and its transactions
                aborted.
        """
        self._check_open("commit")
        txn_id, write_id = self._current()
        letters = self._io(lambda: self._dead_letters(txn_id), "writing dead letters")
        deadline = time.monotonic() + self.connection.transaction_timeout_s
        attempt = 0
        try:
            while True:
                attempt += 1
                prepared = self._io(lambda: self._sink.prepare_commit(txn_id, write_id), "commit")
                metrics = {"agent": self.connection.agent, **prepared.metrics}
                if attempt > 1:  # races lost to other writers' commits before this one
                    metrics["lost_races"] = attempt - 1
                if letters is not None:
                    metrics.update(rejected=len(self._letters), dead_letters=letters)
                try:
                    self._store.commit(
                        txn_id,
                        self._table.spec.name,
                        operation="stream",
                        partitions=list(prepared.changes),
                        metrics=metrics,
                        expected_seq=prepared.expected_seq,
                        version=prepared.version,
                        unless_since=prepared.unless_since,
                        in_commit_order=self._in_commit_order,
                    )
                    break
                except CommitConflictError:
                    if time.monotonic() >= deadline:
                        raise  # the transaction is still open: commit again, or abort
                    self.heartbeat()
                    first, most = COMMIT_PAUSE_S
                    time.sleep(random.uniform(0, min(most, first * 2 ** min(attempt, 16))))
        except TransactionExpiredError as exc:
            self._sink.abort(txn_id)
            self._state = TransactionState.ABORTED
            self._forget_records()
            raise self._expired(exc) from exc
        except CatalogTransactionError as exc:
            self._sink.abort(txn_id)
            self._state = TransactionState.ABORTED
            self._forget_records()
            raise StreamingTransactionError(f"transaction {txn_id} cannot commit: {exc}") from exc
        self._sink.committed(txn_id)
        self.rejected += len(self._letters)
        self._state = TransactionState.COMMITTED
        self._forget_records()

    def abort(self) -> None:
        """Abort the current transaction: none of its records will ever be visible.

        A no-op when no transaction is open or the batch is closed.
        """
        if self._closed or self._state is not TransactionState.OPEN:
            return
        txn_id, _ = self._current()
        self._sink.abort(txn_id)
        self._store.abort(txn_id, "aborted by the streaming client")
        self._state = TransactionState.ABORTED
        self._forget_records()

    def heartbeat(self) -> None:
        """Keep the current and every unused transaction alive (a no-op once closed).

        Raises:
            StreamingTransactionError: A transaction of the batch already expired.
        """
        if self._closed:
            return
        try:
            self._store.heartbeat(*self._alive_ids())
        except TransactionExpiredError as exc:
            raise self._expired(exc) from exc
        except TransactionStateError:
            pass  # the catalog already finished one (e.g. aborted it): nothing to keep alive

    def close(self) -> None:
        """Abort the current (if open) and unused transactions and finish the batch's files.

        The state is then ``INACTIVE``, whatever the last transaction's outcome (Hive's
        ``TestStreaming.testTransactionBatchCommit_Delimited``). Closing twice is a no-op.
        """
        if self._closed:
            return
        if self._heartbeat is not None:
            self._heartbeat.stop()
        try:
            if self._dead is None:
                self.abort()
                self._abort_unused(self._index + 1, "the transaction batch was closed unused")
                self._finish_files_unless_dropped()
        finally:
            self._closed = True
            self._state = TransactionState.INACTIVE  # as Hive's TransactionBatch after close

    # helpers ----------------------------------------------------------------------------------

    def _dead_letters(self, txn_id: int) -> str | None:
        endpoint = self.connection.endpoint
        location = self._table.location
        return write_dead_letters(
            endpoint.fileio,
            self._table.spec,
            location,
            txn_id,
            self.connection.agent,
            self._letters,
        )

    def _forget_records(self) -> None:
        self._letters = []
        self._written = 0

    def _current(self) -> tuple[int, int]:
        write_id = self.current_write_id
        txn_id = self.current_transaction_id
        assert txn_id is not None
        return txn_id, write_id if write_id is not None else txn_id

    def _check_usable(self, what: str) -> None:
        if self._dead is not None:
            raise StreamingTransactionError(
                f"cannot {what}: the batch died of an I/O failure: {self._dead}"
            )
        if self._closed:
            raise StreamingTransactionError(f"cannot {what}: the transaction batch has been closed")
        if self.connection.closed:
            raise StreamingTransactionError(
                f"cannot {what}: the streaming connection has been closed"
            )

    def _check_open(self, what: str) -> None:
        self._check_usable(what)
        if self._state is not TransactionState.OPEN:
            raise StreamingTransactionError(
                f"cannot {what}: no transaction is open (state {self._state.value}); "
                "call begin_next_transaction first"
            )

    def _io(self, work: Any, what: str) -> Any:
        """Run sink work; an I/O failure kills the batch and aborts its transactions."""
        try:
            return work()
        except (OSError, StorageError) as exc:
            self._die(f"{what} failed: {exc}")
            full = is_out_of_space(exc)
            if isinstance(exc, StreamingIOFailure) and not full:
                raise
            advice = (
                " (the file system is full: free some space, then write the transaction again; "
                "`versioned vacuum` removes what it wrote)"
                if full
                else ""
            )
            raise StreamingIOFailure(
                f"{what} failed, the batch is closed and its transactions aborted{advice}: {exc}",
                out_of_space=full,
            ) from exc

    def _die(self, reason: str) -> None:
        self._dead = reason
        if self._state is TransactionState.OPEN:
            txn_id, _ = self._current()
            self._store.abort(txn_id, reason)
            self._state = TransactionState.ABORTED
        self._abort_unused(self._index + 1, reason)
        if self._heartbeat is not None:
            self._heartbeat.stop()
        self._closed = True

    def _alive_ids(self) -> list[int]:
        """The current transaction if open, and the unused ones."""
        start = self._index if self._state is TransactionState.OPEN else self._index + 1
        return list(self.txn_ids[max(start, 0) :])

    def _abort_unused(self, start: int, reason: str) -> None:
        for txn_id in self.txn_ids[start:]:
            self._store.abort(txn_id, reason)

    def _finish_files_unless_dropped(self) -> None:
        """`_finish_files`; if the table was dropped meanwhile, there is nothing to finish."""
        try:
            self._finish_files()
        except (StorageError, CatalogError):
            try:
                self._store.table(self._table.spec.name)
            except NoSuchTableError:
                return
            raise

    def _finish_files(self) -> None:
        """Commit the sink's last change (final file lengths) in a transaction of its own."""
        closing = self._sink.close()
        changes = [closing] if isinstance(closing, PartitionCommit) else list(closing or ())
        if not changes:
            return
        txn_id = self._store.begin(timeout_s=self._timeout_s)
        try:
            self._store.commit(
                txn_id,
                self._table.spec.name,
                operation="stream_close",
                partitions=changes,
                metrics={"agent": self.connection.agent},
                in_commit_order=self._in_commit_order,
            )
        except BaseException:
            self._store.abort(txn_id, "closing the stream's files failed")
            raise

    def _expired(self, exc: Exception) -> StreamingTransactionError:
        return StreamingTransactionError(
            f"transaction {self.current_transaction_id} expired: it was not heartbeated within "
            f"transaction_timeout_s={self._timeout_s:g} s, and the catalog aborted it ({exc}); "
            "heartbeat at about half the timeout, or fetch batches with auto_heartbeat=True"
        )
