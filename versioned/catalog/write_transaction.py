"""The one write transaction every writer uses: begin, heartbeat, compare-and-swap commit,
abort, and one cleanup policy for the files the transaction wrote.

    with write_transaction(store, name, timeout_s=TXN_TIMEOUT_S, fileio=fileio,
                           staging=lambda txn: f"{location}/_staging/txn={txn}") as tx:
        tx.own_dir(f"{location}/{partition}/version_id={tx.id}")   # before writing there
        ...write files...
        tx.commit(operation="upsert", partitions=[...], expected_seq=planned_seq)

Cleanup policy (docs/write-transactions.md): when the block ends without a commit (an
exception, a lost compare-and-swap, an expired transaction, or no commit call at all), the
transaction is aborted, and once the catalog confirms it is aborted (so nothing can ever
commit its files) the files and directories it owns are deleted, best effort. When the
outcome of a commit call is unknown (the catalog failed mid-commit) and the abort cannot
confirm it, nothing is deleted. Whatever survives (a crash, a failed delete) is an orphan:
no catalog record lists it, and vacuum deletes it after its grace period.

Plain Python over the catalog and `FileIO`, so clients without Spark (streaming ingest,
mutation) use it as the engine does. The catalog does not know a layout's folders: the
caller names the staging folder (``staging``) and the paths the transaction owns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from versioned.catalog.change_watch import watched
from versioned.catalog.heartbeat import TransactionKeeper
from versioned.catalog.records import CommitInfo, PartitionCommit, StreamMark
from versioned.catalog.store import MetaStore
from versioned.errors import (
    CommitConflictError,
    CommitRetriesExhaustedError,
    InputError,
    TransactionStateError,
    VersionedError,
)
from versioned.names import TableName
from versioned.storage.filesystem import FileIO

log = logging.getLogger(__name__)
T = TypeVar("T")
State = Literal["open", "committed", "aborted"]
_MAX_REASON = 400


class WriteTransaction:
    """An open catalog transaction writing to one table (made by `write_transaction`).

    Attributes:
        id: The transaction id (also the version a write commits as).
        table: The table it writes to.
        staging_dir: Its private staging folder, or None when the caller named none.
        state: ``open``, then ``committed`` or ``aborted``.
        committed: What the commit made visible, once committed.
    """

    def __init__(
        self,
        store: MetaStore,
        table: TableName,
        txn_id: int,
        *,
        keeper: TransactionKeeper,
        fileio: FileIO | None,
        staging_dir: str | None,
    ) -> None:
        self.id = txn_id
        self.table = table
        self.staging_dir = staging_dir
        self.state: State = "open"
        self.committed: CommitInfo | None = None
        self._store = store
        self._keeper = keeper
        self._fileio = fileio
        self._dirs: list[str] = [] if staging_dir is None else [staging_dir]
        self._files: list[str] = []

    def __repr__(self) -> str:
        return f"WriteTransaction({self.id}, {self.table}, {self.state})"

    def own_dir(self, path: str) -> str:
        """Claim a folder only this transaction writes into (named by its id); returns it.

        Claim it before writing there: on abort it is deleted with everything in it.
        """
        if path not in self._dirs:
            self._dirs.append(path)
        return path

    def own_file(self, path: str) -> str:
        """Claim a file this transaction writes (deleted on abort); returns it."""
        self._files.append(path)
        return path

    def check_alive(self) -> None:
        """Raise unless the transaction is open and its heartbeats still succeed.

        Raises:
            TransactionExpiredError: A heartbeat found it expired (it is aborted).
            TransactionStateError: It was committed or aborted.
        """
        if self.state != "open":
            raise TransactionStateError(
                f"transaction {self.id} is {self.state}, not open: begin a new transaction",
                txn_id=self.id,
                state=self.state,
            )
        self._keeper.check()

    def commit(
        self,
        *,
        operation: str,
        partitions: Sequence[PartitionCommit],
        metrics: Mapping[str, Any] | None = None,
        version: int | None = None,
        expected_seq: int | None = None,
        stream_mark: StreamMark | None = None,
        in_commit_order: bool = False,
    ) -> CommitInfo:
        """Make the transaction's files visible, atomically (see `MetaStore.commit`).

        The compare-and-swap guards are the partitions' ``expected_head`` (and ``remove``)
        and, with ``expected_seq``, the table's commit sequence. ``stream_mark`` (the
        micro-batch the write applies) is recorded in the same SQL transaction.
        ``in_commit_order``: see `MetaStore.commit`.

        Raises:
            CommitConflictError: Another commit changed what this one planned against;
                nothing was written. Leaving the ``with`` block aborts the transaction.
            StreamBatchCommittedError: ``stream_mark``'s batch was applied already; nothing
                was written, and leaving the block aborts the transaction.
            TransactionExpiredError: It expired; nothing was written.
        """
        self.check_alive()
        # Around the catalog's own report, so that a watcher holding Ctrl-C back (the
        # command line) lets it through only once this transaction knows it committed.
        with watched(self._store.watch, "commit", str(self.table)):
            info = self._store.commit(
                self.id,
                self.table,
                operation=operation,
                partitions=partitions,
                metrics=metrics,
                version=version,
                expected_seq=expected_seq,
                stream_mark=stream_mark,
                in_commit_order=in_commit_order,
            )
            self.state = "committed"
            self.committed = info
            self._keeper.finished(self.id)
        return info

    def commit_past_compactions(
        self,
        *,
        operation: str,
        partitions: Sequence[PartitionCommit],
        metrics: Mapping[str, Any] | None = None,
        expected_seq: int | None = None,
        stream_mark: StreamMark | None = None,
        in_commit_order: bool = False,
    ) -> CommitInfo:
        """`commit`; when the table-sequence guard fails and only compactions committed since
        ``expected_seq``, commit again against the new sequence instead of failing.

        Compactions of every layout move no key into a partition and no partition head, and
        keep the versions (or ROW__IDs) of the rows they rewrite, so what the write planned
        still holds; a head or ``remove`` guard that fails still fails.
        """
        while True:
            try:
                return self.commit(
                    operation=operation,
                    partitions=partitions,
                    metrics=metrics,
                    expected_seq=expected_seq,
                    stream_mark=stream_mark,
                    in_commit_order=in_commit_order,
                )
            except CommitConflictError:
                if expected_seq is None:
                    raise
                since = [c for c in self._store.history(self.table) if c.seq > expected_seq]
                if not since or any(c.operation != "compact" for c in since):
                    raise
                expected_seq = max(c.seq for c in since)

    def abort(self, reason: str = "aborted by client") -> None:
        """Abort the transaction and delete the files it owns (see the module's policy).

        Aborting an aborted transaction does nothing; a committed one is left committed.
        """
        if self.state != "open":
            return
        self._keeper.finished(self.id)
        try:
            self._store.abort(self.id, reason[:_MAX_REASON])
        except TransactionStateError as err:  # a commit call that seemed to fail went through
            self.state = "committed"
            log.warning("transaction %s committed after all (%s); its files stay", self.id, err)
            return
        except Exception as err:  # catalog unreachable: cannot know; vacuum decides later
            log.warning(
                "could not abort transaction %s (%s); its files stay until it expires and "
                "vacuum removes them",
                self.id,
                err,
            )
            return
        self.state = "aborted"
        self._remove_owned()

    def _remove_owned(self) -> None:
        """Best effort: a file that cannot be deleted now is an orphan for vacuum."""
        if self._fileio is None:
            return
        for path in reversed(self._files):
            try:
                self._fileio.delete_file(path, missing_ok=True)
            except (VersionedError, OSError) as err:
                log.warning("could not remove %s of aborted transaction %s: %s", path, self.id, err)
        for path in reversed(self._dirs):
            try:
                self._fileio.delete_dir(path, missing_ok=True)
            except (VersionedError, OSError) as err:
                log.warning("could not remove %s of aborted transaction %s: %s", path, self.id, err)


@contextmanager
def write_transaction(
    store: MetaStore,
    table: TableName,
    *,
    timeout_s: float,
    fileio: FileIO | None = None,
    staging: Callable[[int], str] | None = None,
) -> Iterator[WriteTransaction]:
    """Begin a transaction on ``table`` and keep it heartbeated while the block runs.

    The block commits with `WriteTransaction.commit`. Leaving it any other way aborts the
    transaction and deletes the files it owns (its staging folder and what it claimed
    with ``own_dir`` / ``own_file``); the exception, if any, propagates.

    Args:
        timeout_s: The transaction's heartbeat timeout (``versioned.options.TXN_TIMEOUT_S``
            for writers); it is heartbeated every quarter of it.
        fileio: The file system of the transaction's files; without it nothing is deleted.
        staging: The private staging folder of a transaction id, if the writer stages.
    """
    txn_id = store.begin(timeout_s=timeout_s)
    keeper = TransactionKeeper(store, txn_id, interval_s=timeout_s / 4)
    tx = WriteTransaction(
        store,
        table,
        txn_id,
        keeper=keeper,
        fileio=fileio,
        staging_dir=None if staging is None else staging(txn_id),
    )
    keeper.start()
    try:
        yield tx
    except BaseException as exc:
        keeper.stop()
        tx.abort(f"aborted by client: {type(exc).__name__}: {exc}")
        raise
    keeper.stop()
    tx.abort("ended without a commit")


def retry_on_conflict(
    attempts: int,
    fn: Callable[[int], T],
    *,
    on_retry: Callable[[int, CommitConflictError], None] | None = None,
) -> T:
    """Call ``fn(attempt)`` until it returns, retrying when its commit loses a race.

    Each attempt should plan against a fresh state in a new transaction (a
    `write_transaction` inside ``fn``). Only `CommitConflictError` is retried.

    Args:
        attempts: Attempts in all (at least 1).
        on_retry: Called with the attempt that lost and its conflict, before the next one.

    Raises:
        CommitRetriesExhaustedError: Every attempt lost (a `CommitConflictError` naming the
            attempts and the last conflict).
    """
    if not isinstance(attempts, int) or attempts < 1:
        raise InputError(f"attempts must be a positive integer, got {attempts!r}")
    for attempt in range(1, attempts + 1):
        try:
            return fn(attempt)
        except CommitConflictError as err:
            if attempt == attempts:
                raise CommitRetriesExhaustedError.after(attempts, err) from err
            if on_retry is not None:
                on_retry(attempt, err)
    raise AssertionError("unreachable")  # pragma: no cover
