"""Where a stream writes: one table, or one partition of it (Hive's ``HiveEndPoint``).

An `EndPoint` is a plain value; `EndPoint.connect` checks it against the catalog (the table
exists and the user may write it; partition values are given exactly when the table is
partitioned; the partition exists, or is created when asked) and opens a
`StreamingConnection`. Nothing here needs Spark: a streaming client writes files directly
and uses the catalog for transactions, as Hive's clients write to HDFS and use the
metastore.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from versioned.catalog.records import PartitionInfo, TableInfo
from versioned.catalog.store import MetaStore
from versioned.errors import NoSuchPartitionError, NoSuchTableError
from versioned.layouts.abilities import ingests
from versioned.layouts.base import layout_of
from versioned.layouts.ingest_errors import InvalidPartition, InvalidTable, StreamingConnectionError
from versioned.names import TableName
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext
    from versioned.streaming.connection import StreamingConnection

DEFAULT_TRANSACTION_TIMEOUT_S = 300.0
"""Transactions of a connection expire unless heartbeated within this many seconds."""


class CatalogHandle(Protocol):
    """What a stream needs of a catalog (`versioned.Catalog`): its metastore and warehouse
    file system, through its internal accessor (no Spark is started for them)."""

    @property
    def engine_context(self) -> EngineContext:
        """The catalog's metastore, file system and (lazy) Spark session."""
        ...


class EndPoint:
    """A table, or one partition of it, to stream records into."""

    def __init__(
        self,
        catalog: CatalogHandle,
        table: str | TableName,
        partition_values: Sequence[str | None] | None = None,
    ) -> None:
        """Name the endpoint; nothing is checked until `connect`.

        Args:
            catalog: An open catalog (``versioned.connect(...)``).
            table: ``DB.TABLE``.
            partition_values: One value per partition column, in the table's order (``None``
                is the null partition); ``None`` or ``[]`` for an unpartitioned table.
        """
        self.catalog = catalog
        self.table = table if isinstance(table, TableName) else TableName.parse(table)
        self.partition_values: tuple[str | None, ...] = tuple(partition_values or ())
        self._info: TableInfo | None = None

    def __repr__(self) -> str:
        values = list(self.partition_values)
        return f"EndPoint({str(self.table)!r}, partition_values={values})"

    @property
    def store(self) -> MetaStore:
        """The catalog's metastore, acting as its user."""
        return self.catalog.engine_context.store

    @property
    def fileio(self) -> FileIO:
        """The warehouse's file system."""
        return self.catalog.engine_context.fileio

    @property
    def info(self) -> TableInfo:
        """The table as the catalog has it (read once).

        Raises:
            InvalidTable: No such table, or the user may not read it.
        """
        if self._info is None:
            try:
                self._info = self.store.table(self.table)
            except NoSuchTableError as exc:
                raise InvalidTable(f"no table {self.table} to stream into: {exc}") from exc
        return self._info

    @property
    def dead_letter_dir(self) -> str:
        """Where the stream's rejected records go, relative to the warehouse (one folder
        ``stream=<transaction>/`` per transaction)."""
        return layout_of(self.spec.layout).dead_letter_dir(self.info.location)

    @property
    def spec(self) -> TableSpec:
        """The table's definition (record writers type records by it)."""
        return self.info.spec

    def connect(
        self,
        *,
        create_partition: bool = False,
        agent: str | None = None,
        transaction_timeout_s: float = DEFAULT_TRANSACTION_TIMEOUT_S,
    ) -> StreamingConnection:
        """Check the endpoint and open a connection to it.

        Args:
            create_partition: Create the partition when it does not exist (atomically: racing
                connections all succeed and share one partition).
            agent: Who is streaming (e.g. ``flume-1``), recorded with every commit.
            transaction_timeout_s: A transaction not heartbeated for this long is aborted by
                the catalog (heartbeat at about half of it; see `TransactionBatch.heartbeat`).

        Raises:
            InvalidTable: No such table.
            StreamingConnectionError: Partition values do not fit the table.
            NotSupportedError: The table's layout cannot be streamed into (checked before
                a partition is created).
            InvalidPartition: The partition does not exist and ``create_partition`` is false.
            PermissionDeniedError: The user may not write the table.
        """
        from versioned.streaming.connection import StreamingConnection

        if transaction_timeout_s <= 0:
            raise StreamingConnectionError("transaction_timeout_s must be positive")
        try:  # first: the grant a user without one is told to ask for is write
            self.store.check(self.table, "write")
        except NoSuchTableError as exc:
            raise InvalidTable(f"no table {self.table} to stream into: {exc}") from exc
        ingests(layout_of(self.spec.layout), self.spec.name)
        partition = self._partition(create_partition)
        return StreamingConnection(self, partition, agent=agent, timeout_s=transaction_timeout_s)

    def _partition(self, create: bool) -> PartitionInfo:
        """The endpoint's partition (the root of an unpartitioned table)."""
        spec = self.spec
        keys = spec.partition_by
        if keys and not self.partition_values:
            raise StreamingConnectionError(
                f"table {self.table} is partitioned by ({', '.join(keys)}): "
                "give partition_values, one per column"
            )
        if not keys and self.partition_values:
            raise StreamingConnectionError(
                f"table {self.table} is not partitioned: give no partition_values "
                f"(got {list(self.partition_values)})"
            )
        if len(self.partition_values) != len(keys):
            raise StreamingConnectionError(
                f"table {self.table} is partitioned by ({', '.join(keys)}): "
                f"{len(keys)} partition values needed, got {list(self.partition_values)}"
            )
        store = self.store
        if create or not keys:  # an unpartitioned table's root is made on first use
            return store.add_partition(self.table, self.partition_values)
        try:
            return store.partition(self.table, self.partition_values)
        except NoSuchPartitionError as exc:
            raise InvalidPartition(
                f"table {self.table} has no partition {list(self.partition_values)}: "
                "connect with create_partition=True to create it"
            ) from exc
