"""The client process's side of the mutation API (Hive's ``MutatorClient``).

The client checks its sink tables once (they exist, their layout stores the mutation API's
mutations, i.e. has a `MutationFormat`, and this user may write them), opens transactions
over all of them and hands out coordinators. It runs where the job is launched;
coordinators may run anywhere (they pickle to plain values).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from versioned.catalog.records import PartitionInfo, TableInfo
from versioned.catalog.store import MetaStore
from versioned.errors import InputError
from versioned.layouts.base import layout_of
from versioned.mutation.coordinator import MutatorCoordinator
from versioned.mutation.errors import MutationTransactionError
from versioned.mutation.formats import format_for
from versioned.mutation.target import MutationTarget
from versioned.mutation.transaction import LockFailureListener, Transaction
from versioned.names import TableName
from versioned.storage.filesystem import FileIO
from versioned.transaction_state import TransactionState

if TYPE_CHECKING:
    from versioned.streaming.endpoint import CatalogHandle

DEFAULT_TRANSACTION_TIMEOUT_S = 300.0
"""A transaction whose heartbeat is silent this long is aborted by the catalog."""


class MutatorClient:
    """Transactions of mutations over a set of tables whose layout stores them (acid).

    Attributes:
        tables: ``db.table`` of every sink table.
        creates_partitions: Whether coordinators create partitions on their first insert
            (the ``create_partitions`` argument).
        transaction_timeout_s: The heartbeat timeout of its transactions.
        heartbeat: Whether `Transaction.begin` starts a heartbeat thread.
        lock_wait_s: How long `Transaction.begin` waits for each table's lock.
    """

    def __init__(
        self,
        catalog: CatalogHandle,
        tables: Sequence[str | TableName],
        *,
        create_partitions: bool = True,
        lock_failure_listener: LockFailureListener | None = None,
        transaction_timeout_s: float = DEFAULT_TRANSACTION_TIMEOUT_S,
        heartbeat: bool = True,
        lock_wait_s: float = 30.0,
    ) -> None:
        """Connect to ``tables`` of ``catalog`` (``versioned.connect(...)``).

        Raises:
            InputError: No table, a table named twice, or a non-positive timeout.
            NoSuchTableError: A table does not exist (or cannot be read).
            NotSupportedError: A table's layout does not store the mutation API's mutations
                (it has no ``mutation_format`` method; of the layouts shipped, only acid has).
            PermissionDeniedError: This user may not write a table.
        """
        if isinstance(tables, str | TableName) or not tables:
            raise InputError("give the sink tables as a list of 'db.table' names")
        if not transaction_timeout_s > 0:
            raise InputError(f"transaction_timeout_s must be > 0, got {transaction_timeout_s}")
        context = catalog.engine_context
        self.store: MetaStore = context.store
        self.fileio: FileIO = context.fileio
        self.creates_partitions = bool(create_partitions)
        self.lock_failure_listener = lock_failure_listener
        self.transaction_timeout_s = float(transaction_timeout_s)
        self.heartbeat = bool(heartbeat)
        self.lock_wait_s = float(lock_wait_s)
        self._infos: dict[str, TableInfo] = {}
        for table in tables:
            info = self.store.table(TableName.of(table))
            name = str(info.spec.name)
            if name in self._infos:
                raise InputError(f"table {name} is named twice")
            format_for(info.spec)  # raises NotSupportedError for a layout without one
            self.store.check(info.spec.name, "write")
            self._infos[name] = info
        self.tables = tuple(self._infos)
        self._coordinators: weakref.WeakSet[MutatorCoordinator] = weakref.WeakSet()
        self.closed = False

    def __repr__(self) -> str:
        return f"MutatorClient({list(self.tables)})"

    def __enter__(self) -> MutatorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def new_transaction(self) -> Transaction:
        """Open a transaction over every sink table (``INACTIVE`` until `Transaction.begin`)."""
        self._check_open()
        txn_id = self.store.begin(timeout_s=self.transaction_timeout_s)
        return Transaction(self, txn_id)

    def coordinator(self, txn: Transaction, table: str | TableName) -> MutatorCoordinator:
        """A coordinator that writes ``table``'s mutations in ``txn`` (picklable).

        Raises:
            MutationTransactionError: ``txn`` is not open.
            InputError: ``table`` is not a sink table of this client.
        """
        if txn.state is not TransactionState.OPEN:
            raise MutationTransactionError(
                f"transaction {txn.transaction_id} is {txn.state.value}: begin() it before "
                "making coordinators"
            )
        name = self._name(table)
        coordinator = MutatorCoordinator(txn.targets[name])
        self._coordinators.add(coordinator)
        return coordinator

    def create_partitions(
        self, table: str | TableName, partitions: Iterable[Sequence[str | None]]
    ) -> list[PartitionInfo]:
        """Create the partitions (those missing) of ``table`` in one catalog call: for
        transactions whose coordinators do not create partitions, before the commit."""
        name = self._name(table)
        return self.store.add_partitions(self.table_name(name), [list(p) for p in partitions])

    def close(self) -> None:
        """Release the client (the catalog stays open: it is the caller's)."""
        self.closed = True

    # for transactions -------------------------------------------------------------------------

    def target(self, name: str, txn_id: int, write_id: int) -> MutationTarget:
        """What the coordinators of ``name`` in transaction ``txn_id`` carry."""
        info = self._infos[name]
        return MutationTarget(
            catalog_url=self.store.url,
            user=self.store.user,
            warehouse=self.fileio.root,
            table=info,
            txn_id=txn_id,
            write_id=write_id,
            create_partitions=self.creates_partitions,
            staging_dir=layout_of(info.spec.layout).staging_dir(info.location, txn_id),
        )

    def check_coordinators_closed(self, txn: Transaction) -> None:
        """Raise if a coordinator of ``txn`` made in this process holds unreported writes."""
        open_ones = [
            c
            for c in list(self._coordinators)
            if c.target.txn_id == txn.transaction_id and c.pending
        ]
        if open_ones:
            raise MutationTransactionError(
                f"{len(open_ones)} coordinator(s) of transaction {txn.transaction_id} are not "
                f"closed ({open_ones[0]!r}): close them before commit, or their mutations "
                "are not part of it",
                txn_id=txn.transaction_id,
            )

    def table_name(self, name: str) -> TableName:
        """The `TableName` of a sink table."""
        return self._infos[name].spec.name

    def _name(self, table: str | TableName) -> str:
        name = str(TableName.of(table))
        if name not in self._infos:
            raise InputError(f"{name} is not a sink table of this client ({list(self.tables)})")
        return name

    def _check_open(self) -> None:
        if self.closed:
            raise MutationTransactionError("the mutation client is closed")
