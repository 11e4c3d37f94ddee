"""One long transaction over the client's tables (Hive's mutation ``Transaction``).

``new_transaction()`` opens the catalog transaction (``INACTIVE``); `Transaction.begin`
takes a ``shared_write`` lock on every sink table, in name order, allocates each table's
write id and starts heartbeating on a catalog connection of its own (``OPEN``). Coordinators
write the files; `Transaction.commit` makes exactly the files their manifests report visible
in every table at once (``MetaStore.commit_tables``: one SQL transaction), or
`Transaction.abort` makes sure none ever is.

Locks and deadlocks: Hive's metastore has no deadlock detector, and the seed warns that the
API could deadlock with other writers. Here every multi-table lock request (``begin``) and
every multi-table commit goes through the tables in one order, their sorted names, so two
mutation transactions never wait on each other in a cycle; a lock wait still times out
(``lock_wait_s``) with the catalog's retryable `LockTimeoutError` (CLI exit 75), after which
the transaction is aborted, releasing the locks it took: begin a new one.

Lost transactions: when a heartbeat finds the transaction expired or ended elsewhere, the
client's ``lock_failure_listener(transaction_id, error)`` is called (once, from the
heartbeat thread; or from `heartbeat` / `commit` when the caller heartbeats itself) and
`commit` fails with `MutationTransactionError`.

Concurrent writers: the commit moves the head of every partition it writes to the
transaction id, so an upsert that planned before it conflicts and plans again; and it
conflicts itself (`MutationConflictError`, the transaction is aborted) when a write that
began after it already committed into one of those partitions, since the ROW__IDs it was
given may be stale then, or when a ROW__ID its updates and deletes name is not live at commit
(the layout's check, `MutationFormat.stale_row_ids`: a write that began before it changed
the row).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from versioned.catalog.heartbeat import TransactionKeeper
from versioned.catalog.store import MetaStore
from versioned.errors import (
    CommitConflictError,
    LockTimeoutError,
    TransactionExpiredError,
    TransactionStateError,
    VersionedError,
)
from versioned.mutation.commit_plan import plan_commits, remove_files
from versioned.mutation.errors import MutationConflictError, MutationTransactionError
from versioned.mutation.target import MutationTarget
from versioned.transaction_state import TransactionState

if TYPE_CHECKING:
    from versioned.mutation.client import MutatorClient

log = logging.getLogger(__name__)
LockFailureListener = Callable[[int, Exception], None]


class Transaction:
    """A transaction of a `MutatorClient` over its tables (see the module docstring)."""

    def __init__(self, client: MutatorClient, txn_id: int) -> None:
        """Use ``MutatorClient.new_transaction``."""
        self.client = client
        self.transaction_id = txn_id
        self.targets: dict[str, MutationTarget] = {}
        self._state = TransactionState.INACTIVE
        self._keeper: TransactionKeeper | None = None
        self._heart_store: MetaStore | None = None
        self._failure: Exception | None = None
        self._told = threading.Lock()
        self._listened = False

    def __repr__(self) -> str:
        return f"Transaction({self.transaction_id}, {self._state.value})"

    @property
    def state(self) -> TransactionState:
        """`TransactionState`: ``INACTIVE`` until `begin`, then ``OPEN``, then
        ``COMMITTED`` or ``ABORTED``."""
        return self._state

    @property
    def _store(self) -> MetaStore:
        return self.client.store

    def begin(self) -> None:
        """Lock every sink table (``shared_write``, in name order), allocate the write ids
        and start heartbeating.

        Raises:
            LockTimeoutError: A lock was not granted within ``lock_wait_s`` (retryable); the
                transaction is aborted (its locks released): begin a new one.
            MutationTransactionError: It was begun already, or is lost.
        """
        if self._state is not TransactionState.INACTIVE:
            raise MutationTransactionError(
                f"transaction {self.transaction_id} is {self._state.value}: begin a new one"
            )
        client = self.client
        try:
            for name in sorted(client.tables):
                self._store.lock(
                    self.transaction_id,
                    client.table_name(name),
                    "shared_write",
                    wait_s=client.lock_wait_s,
                )
            for name in sorted(client.tables):
                ids = self._store.allocate_write_ids(client.table_name(name), [self.transaction_id])
                self.targets[name] = client.target(name, self.transaction_id, ids[0])
        except LockTimeoutError:
            self._abort_quietly("a lock of begin() timed out")
            raise
        except (TransactionExpiredError, TransactionStateError) as exc:
            self._abort_quietly(f"begin() failed: {exc}")
            raise self._lost(exc) from exc
        self._state = TransactionState.OPEN
        if client.heartbeat:
            self._start_heartbeat()

    def heartbeat(self) -> None:
        """Keep the transaction alive (for callers with ``heartbeat=False``).

        Raises:
            MutationTransactionError: It is lost (expired, or ended elsewhere); the lock
                failure listener was called.
        """
        self._require_open("heartbeat")
        try:
            self._store.heartbeat(self.transaction_id)
        except (TransactionExpiredError, TransactionStateError) as exc:
            self._lost_now(exc)
            raise self._lost(exc) from exc

    def commit(self) -> None:
        """Make every file the coordinators reported visible, in every table at once.

        Raises:
            MutationTransactionError: It is not open, is lost (listener called; it is
                aborted), a coordinator of this process is not closed, or two coordinators
                wrote the same group (it is aborted).
            PartitionCreationError: A partition written into does not exist and
                ``create_partitions`` is off; the transaction stays open.
            MutationConflictError: A write that began later committed into one of its
                partitions first, or an update or delete names a row that is not live any
                more (a write since the read its ROW__ID came from changed it); it is aborted.
        """
        self._require_open("commit")
        if self._failure is not None:
            self._abort_quietly("its heartbeat failed")
            raise self._lost(self._failure)
        self.client.check_coordinators_closed(self)
        try:
            plans = plan_commits(self.client, self)
        except (MutationTransactionError, MutationConflictError):
            self.abort()
            raise
        self._stop_heartbeat()
        try:
            if plans:
                self._store.commit_tables(self.transaction_id, plans)
            else:
                self._store.commit_transaction(self.transaction_id)
        except CommitConflictError as exc:
            self._abort_quietly(f"commit conflict: {exc}")
            raise MutationConflictError(
                f"transaction {self.transaction_id} cannot commit: {exc.message} It is "
                "aborted; read the tables again and apply the mutations in a new transaction",
                txn_id=self.transaction_id,
            ) from exc
        except (TransactionExpiredError, TransactionStateError) as exc:
            self._lost_now(exc)
            self._abort_quietly(f"lost: {exc}")
            raise self._lost(exc) from exc
        except BaseException:
            self._abort_quietly("the commit failed")
            raise
        self._state = TransactionState.COMMITTED
        self._clean_staging(committed=True)

    def abort(self) -> None:
        """Abort: nothing the coordinators wrote ever becomes visible; their reported
        files are deleted (unreported ones are orphans for vacuum). A no-op once ended."""
        if self._state in (TransactionState.COMMITTED, TransactionState.ABORTED):
            return
        self._abort_quietly("aborted by the mutation client")

    # helpers ----------------------------------------------------------------------------------

    def _require_open(self, what: str) -> None:
        if self._state is not TransactionState.OPEN:
            raise MutationTransactionError(
                f"cannot {what} transaction {self.transaction_id}: it is "
                f"{self._state.value}" + (" (call begin() first)" if what != "commit" else ""),
                txn_id=self.transaction_id,
            )

    def _abort_quietly(self, reason: str) -> None:
        self._stop_heartbeat()
        try:
            self._store.abort(self.transaction_id, reason)
        except TransactionStateError:  # committed after all (a commit whose reply was lost)
            self._state = TransactionState.COMMITTED
            return
        except VersionedError as exc:
            log.warning("could not abort transaction %s: %s", self.transaction_id, exc)
            return
        self._state = TransactionState.ABORTED
        self._clean_staging(committed=False)

    def _clean_staging(self, *, committed: bool) -> None:
        """After an abort, the reported files and the staging folders go; after a commit,
        the staging folders (the manifests). Best effort: leftovers are vacuum's."""
        fileio = self.client.fileio
        for target in self.targets.values():
            try:
                if not committed:
                    remove_files(fileio, target)
                fileio.delete_dir(target.staging_dir, missing_ok=True)
            except (VersionedError, OSError) as exc:
                log.warning("could not clean %s: %s", target.staging_dir, exc)

    def _start_heartbeat(self) -> None:
        client = self.client
        self._heart_store = MetaStore.connect(self._store.url, self._store.user, create=False)
        self._keeper = TransactionKeeper(
            self._heart_store,
            self.transaction_id,
            interval_s=client.transaction_timeout_s / 4,
            on_failure=self._lost_now,
        )
        self._keeper.start()

    def _stop_heartbeat(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.stop()
        store, self._heart_store = self._heart_store, None
        if store is not None:
            store.close()

    def _lost_now(self, error: Exception) -> None:
        """The transaction is lost: remember why and tell the listener, once."""
        with self._told:
            if self._failure is None:
                self._failure = error
            if self._listened or self.client.lock_failure_listener is None:
                return
            self._listened = True
        try:
            self.client.lock_failure_listener(self.transaction_id, error)
        except Exception:  # the listener's own bug must not hide the failure
            log.exception("the lock failure listener raised")

    def _lost(self, error: Exception) -> MutationTransactionError:
        return MutationTransactionError(
            f"transaction {self.transaction_id} is lost: {error}. Nothing it wrote is "
            "visible; apply the mutations again in a new transaction (heartbeat more often "
            "than transaction_timeout_s, or keep heartbeat=True)",
            txn_id=self.transaction_id,
        )
