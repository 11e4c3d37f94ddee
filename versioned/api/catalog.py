"""`versioned.connect()` and the `Catalog` facade users hold."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from versioned.api.catalog_sql import CatalogSql
from versioned.api.metadata_rows import summarise_partition
from versioned.api.metadata_tables import check_table_name
from versioned.api.table import Table
from versioned.catalog import MetaStore
from versioned.catalog.change_watch import CatalogChange, ChangeKind, ChangeWatch
from versioned.catalog.records import PRIVILEGES, GrantInfo, Privilege, TableInfo
from versioned.catalog.tables import location
from versioned.config import Settings, resolve_settings
from versioned.layouts.base import layout_names, layout_of, layouts
from versioned.layouts.engine_protocol import DEFAULT_BROADCAST_LIMIT, EngineContext
from versioned.names import TableName, check_queryable_name, grant_target, principal
from versioned.schema import Column, TableSpec, check_partition_types
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    import os

    from pyspark.sql import DataFrame, SparkSession

    from versioned.api.export import ExportResult
    from versioned.api.import_collection import ImportResult

__all__ = [
    "PRIVILEGES",
    "Catalog",
    "CatalogChange",
    "ChangeKind",
    "ChangeWatch",
    "connect",
    "layout_names",
    "layouts",
]
"""`Catalog` and `connect`, and what their callers name: the privileges of `Catalog.grant`,
the changes `Catalog(on_change=...)` reports, the layouts of `Catalog.create_table` (their
names, and what each declares)."""

log = logging.getLogger(__name__)


def connect(
    catalog: str | None = None,
    warehouse: str | None = None,
    spark: SparkSession | None = None,
    *,
    user: str | None = None,
    spark_master: str | None = None,
) -> Catalog:
    """Open a catalog: arguments win over ``VERSIONED_*`` environment variables and defaults.

    Args:
        catalog: SQLAlchemy URL of the catalog (default ``sqlite:///<warehouse>/catalog.db``).
        warehouse: Root directory or URI of the table data (default ``./warehouse``).
        spark: SparkSession to use; built lazily from ``spark_master`` when needed.
        user: Principal whose permissions apply (default ``VERSIONED_USER`` or the OS user).
        spark_master: Spark master URL (default ``VERSIONED_SPARK_MASTER`` or ``local[*]``).
    """
    settings = resolve_settings(
        catalog=catalog, warehouse=warehouse, spark_master=spark_master, user=user
    )
    return Catalog(settings, spark=spark)


class Catalog:
    """Tables of one catalog and warehouse, seen as one principal."""

    broadcast_limit: int = DEFAULT_BROADCAST_LIMIT
    """Version-index entries up to which reads use a broadcast join (then a shuffle join)."""

    def __init__(
        self,
        settings: Settings,
        *,
        spark: SparkSession | None = None,
        on_spark_start: Callable[[str], None] | None = None,
        on_spark_ready: Callable[[], None] | None = None,
        on_change: ChangeWatch | None = None,
    ) -> None:
        """``on_spark_start`` is told (one line) when this catalog starts a SparkSession,
        which takes seconds: the command line prints it on stderr. ``on_spark_ready`` is
        called once the session this catalog uses runs (a SparkContext takes over Ctrl-C
        when it starts; the command line takes it back there). ``on_change`` is told about
        each change users see as this catalog makes it (`ChangeWatch`: the command line
        says on Ctrl-C what was committed)."""
        self.settings = settings
        self._spark = spark
        self._on_spark_start = on_spark_start
        self._on_spark_ready = on_spark_ready
        self._fileio = FileIO.for_root(settings.warehouse)
        self._fileio.makedirs("")
        self._store = MetaStore.connect(
            settings.catalog_url, settings.user, outage_s=settings.catalog_outage_s
        )
        self._store.watch = on_change
        self._store.summarise = summarise_partition

    @property
    def user(self) -> str:
        """The principal this catalog acts as."""
        return self.settings.user

    @property
    def engine_context(self) -> EngineContext:
        """Internal: the metastore (acting as `user`), the warehouse's file system and the
        SparkSession (started on first use) that the layouts' engines and versioned's own
        clients (streaming, mutation, change stream) and tests work with.

        Not part of the public API: tables are reached through `table` and its operations.
        """
        return EngineContext(
            store=self._store,
            fileio=self._fileio,
            session=self._session,
            broadcast_limit=self.broadcast_limit,
        )

    def _session(self) -> SparkSession:
        return self.spark

    @cached_property
    def spark(self) -> SparkSession:
        """The SparkSession (built on first use when none was given)."""
        from versioned.engine.spark.s3a import apply_to_session, session_settings

        store = self._fileio.object_store  # an S3 warehouse: Spark reaches it through S3A
        if self._spark is not None:
            apply_to_session(self._spark, store)
            return self._spark
        from versioned.engine.spark.session import get_or_create_spark, has_active_session

        if self._on_spark_start is not None and not has_active_session():
            self._on_spark_start(f"starting Spark ({self.settings.spark_master})…")
        session = get_or_create_spark(
            self.settings.spark_master,
            conf=session_settings(store),
            log_level=self.settings.log_level,
        )
        apply_to_session(session, store)  # it may have been running already
        if self._on_spark_ready is not None:
            self._on_spark_ready()
        return session

    def full_path(self, path: str) -> str:
        """The full path or URI of ``path``, relative to the warehouse (a table's location,
        a dead-letter folder of a `CommitResult`)."""
        return self._fileio.full_path(path)

    def require_writable(self) -> None:
        """Raise `CatalogReadOnlyError` when this process cannot write the catalog (its
        SQLite file is read-only here)."""
        self._store.require_writable()

    def close(self) -> None:
        """Release catalog connections (the SparkSession is left running)."""
        self._store.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # tables ---------------------------------------------------------------------------------

    def create_table(
        self,
        name: str,
        *,
        columns: str | Sequence[Column],
        primary_key: Sequence[str] | str,
        partition_by: Sequence[str] | str | None = None,
        op_code_column: str | None = None,
        ordering_column: str | None = None,
        layout: str = "versioned",
        file_format: str | None = None,
        bucket_by: Sequence[str] | str | None = None,
        buckets: int | None = None,
        sort_by: Sequence[str] | str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Table:
        """Create a table and return it.

        Args:
            name: ``db.table``; the database is created when missing.
            columns: ``"sell_id BIGINT, store_id STRING, ..."`` or `Column` objects; partition
                columns are listed here too.
            primary_key: Key column(s); unique within a partition.
            partition_by: Partition column(s), e.g. ``["store_id", "create_date"]``.
            op_code_column: Input column carrying I/U/D op codes (``None``: every row upserts).
            ordering_column: Column ordering changes of one key (e.g. a change timestamp or
                LSN); older changes than the stored state are skipped as stale.
            layout: ``"versioned"`` (version partitions) or ``"acid"`` (Hive ACID deltas).
            file_format: ``"parquet"`` (default) or ``"orc"`` (required by ``acid``).
            properties: Table properties; a new table gets ``auto_compact=true`` unless
                given (its own maintenance after each write: `versioned.api.auto_maintenance`).
        """
        from versioned.maintenance_policy import new_table_properties

        spec = TableSpec.build(
            name,
            columns=columns,
            primary_key=primary_key,
            partition_by=partition_by,
            op_code_column=op_code_column,
            ordering_column=ordering_column,
            layout=layout,
            file_format=file_format or layout_of(layout).default_file_format,
            bucket_by=bucket_by,
            buckets=buckets,
            sort_by=sort_by,
            properties=new_table_properties(properties),
        )
        return self.create_table_from_spec(spec)

    def create_table_from_spec(self, spec: TableSpec) -> Table:
        """Create a table from a ready `TableSpec` (used by import).

        Raises:
            NotSupportedError: The layout cannot create tables in this release.
            SchemaError: The definition does not fit the layout (e.g. its file format).
        """
        layout = layout_of(spec.layout)
        layout.require("create", spec.name)
        layout.check_spec(spec)
        check_partition_types(spec)
        check_queryable_name(spec.name)
        check_table_name(spec.name)
        return Table(self, self._store.create_table(spec, location=self._free_location(spec)))

    def _free_location(self, spec: TableSpec) -> str:
        """``db.db/table``, or a directory of its own next to it when that one holds files (a
        table dropped with its files kept, or files put there by hand): a new table never
        adopts files it did not write, and so its vacuum never deletes them as orphans."""
        default = location(TableName.of(spec.name))
        if not self._fileio.list_files(default):
            return default
        fresh = f"{default}-{uuid.uuid4().hex[:8]}"
        log.info("%s holds files that are not this table's: the table goes in %s", default, fresh)
        return fresh

    def table(
        self, name: str | TableName, *, need: Literal["read", "write"] | None = "read"
    ) -> Table:
        """Open an existing table.

        Args:
            name: ``db.table``.
            need: What the caller will do with it: the table is read now and the user must
                hold this privilege on it (so that a missing grant is reported as the one
                the caller needs). ``None``: name it only, reading nothing now; its first
                operation reads the table and checks its own permission.

        Raises:
            NoSuchTableError: The table does not exist (not with ``need=None``).
            PermissionDeniedError: The user does not hold ``need`` on it.
        """
        table_name = TableName.of(name)
        if need is None:
            return Table(self, table_name)
        return Table(self, self._store.resolve(table_name, need).table)

    def tables(self, database: str | None = None) -> list[TableInfo]:
        """Tables this user may read, optionally of one database."""
        return self._store.tables(database)

    def drop_table(
        self, name: str | TableName, *, purge: bool = True, wait_s: float = 30.0
    ) -> TableInfo:
        """Drop a table from the catalog; with ``purge`` also delete its files.

        The drop takes an exclusive lock on the table first, so it waits for the
        transactions that hold locks on it (a streaming transaction's shared lock on its
        partition) to finish, up to ``wait_s`` seconds.

        Raises:
            LockTimeoutError: Transactions still held locks on the table after ``wait_s``.
        """
        table = TableName.of(name)
        store = self._store
        txn = store.begin()
        try:
            store.lock(txn, table, "exclusive", wait_s=wait_s)
            info = store.drop_table(table)
        except BaseException:
            store.abort(txn, "the drop did not happen")
            raise
        store.commit_transaction(txn)
        if purge:
            self._fileio.delete_dir(info.location)
        return info

    # grants ---------------------------------------------------------------------------------

    def grant(self, who: str, privilege: Privilege, on: str) -> GrantInfo:
        """Grant ``read``, ``write`` or ``all`` on ``db`` or ``db.table`` to a principal."""
        database, table = grant_target(on)
        return self._store.grant(principal(who), privilege, database=database, table=table)

    def revoke(self, who: str, privilege: Privilege, on: str) -> bool:
        """Take back a privilege granted with `grant`.

        Returns:
            Whether the grant existed (revoking a missing grant changes nothing).
        """
        database, table = grant_target(on)
        who = principal(who)
        held = any(
            g.principal == who and g.privilege == privilege
            for g in self._store.grants(database=database, table=table)
        )
        self._store.revoke(who, privilege, database=database, table=table)
        return held

    def grants(self, on: str) -> list[GrantInfo]:
        """Grants on ``db`` or ``db.table``."""
        database, table = grant_target(on)
        return self._store.grants(database=database, table=table)

    def register_views(
        self, spark: SparkSession | None = None, *, metadata: bool = False
    ) -> list[str]:
        """Make every readable table queryable in Spark SQL as ``db.table`` (latest versions).

        Each view reads the snapshot committed when this is called; call it again to see
        later commits (a table with no new commit is not registered again). With
        ``metadata``, each table's metadata tables too (``db.table__history``,
        ``__partitions``...: `versioned.api.metadata_tables`), as of this call. Returns the
        qualified names registered.
        """
        return self._sql.register_views(spark, metadata=metadata)

    def register_data_source(self, spark: SparkSession | None = None) -> None:
        """Make ``spark.readStream.format("versioned").option("table", "db.t").load()``
        stream a table's changes from this catalog, as this user (in ``spark``, default the
        catalog's session). Not done by `connect`: the first registration in a JVM costs
        about a second. See ``docs/change-stream.md``."""
        from versioned.api.change_stream import register_data_source

        register_data_source(spark or self.spark, self)

    def sql(self, query: str) -> DataFrame:
        """Run a read-only Spark SQL query over the latest versions of tables you may read.

        Only queries run (``SELECT``, ``WITH``, ``VALUES``, ``TABLE``); tables are named
        ``DB.TABLE``; files and paths cannot be read. The query runs in a session of its
        own on the same SparkContext (``spark.newSession()``), where reading files by path
        and calling Java methods (``reflect``) are off; your session is not changed.

        Raises:
            QueryError: The text does not parse, is not a query, or names something other
                than tables (nothing runs).
            NoSuchTableError: A table does not exist.
            PermissionDeniedError: You may not read a table the query names.
        """
        return self._sql.sql(query)

    @cached_property
    def _sql(self) -> CatalogSql:
        return CatalogSql(self)

    # import and export ------------------------------------------------------------------------

    def export(
        self,
        name: str | TableName,
        dest: str | os.PathLike[str],
        *,
        partition: Mapping[str, str | None] | None = None,
        as_of: int | None = None,
    ) -> ExportResult:
        """Copy the live rows of a table (or of some partitions) into a new data collection.

        The folder ``dest`` gets the data files, in Hive-style ``k=v/`` directories, and
        ``_versioned_collection.json`` (schema, primary key, partition columns and values,
        sort order, storage format, layout, table name), written last. The table is not
        touched; ``spark.read.parquet(dest)`` reads the rows.

        Args:
            name: ``db.table``; needs read permission.
            dest: A local folder or a URI that does not exist or is empty, outside the
                warehouse.
            partition: Export only partitions with these values, e.g. ``{"store": "7"}``
                (some or all partition columns; ``None`` is the null partition).
            as_of: Export version ``as_of`` instead of the latest.

        Raises:
            PermissionDeniedError: The user may not read the table.
            NoSuchPartitionError: No partition with data matches ``partition``.
            StorageError: ``dest`` is a file or a folder that is not empty.
        """
        from versioned.api.export import export_table
        from versioned.storage.space import out_of_space

        with out_of_space(f"export of {name}", str(dest)):
            return export_table(self, name, dest, partition=partition, as_of=as_of)

    def import_(
        self,
        src: str | os.PathLike[str],
        *,
        table: str | TableName | None = None,
        partition: Mapping[str, str | None] | None = None,
    ) -> ImportResult:
        """Import the data collection at ``src`` as one new version of a table.

        The table is created from the collection's metadata when it does not exist.
        Otherwise the collection must fit it exactly, and every partition it adds must not
        hold data yet. Everything is checked first: a refusal imports nothing. A version
        table gets the collection's files; an acid table gets its rows, upserted by key
        through the acid writer in one transaction (see ``docs/import-export.md``).

        Args:
            src: The collection folder (local path or URI).
            table: Target ``db.table``; default the table the collection names.
            partition: Values of the table's partition keys for a collection without
                partition columns (imported as one partition); for a partitioned collection,
                imports only the partitions with these values.

        Raises:
            ImportMismatchError: The collection does not fit the table (the message lists
                every difference), or names no table and ``table`` was not given.
            PartitionExistsError: A partition to add holds data already.
            PermissionDeniedError: The user may not write the table.
            CollectionError: The folder is incomplete, malformed or was changed.
            UnsafePathError: A listed file resolves to outside the folder.
        """
        from versioned.api.import_collection import import_collection

        return import_collection(self, src, table=table, partition=partition)

    def describe(self, name: str | TableName) -> dict[str, Any]:
        """Everything the catalog knows about a table, as plain data."""
        return self.table(name).describe()
