"""The `Table` facade: one table of a catalog."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from versioned.api.table_reads import TableReads
from versioned.api.table_streams import TableStreams
from versioned.catalog.records import CommitInfo, TableAccess, TableInfo
from versioned.errors import InputError
from versioned.layouts.base import layout_of
from versioned.names import TableName
from versioned.options import CompactionOptions, WriteOptions
from versioned.results import CommitResult
from versioned.schema import Column, TableSpec
from versioned.storage.space import out_of_space

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog
    from versioned.api.table_inspect import TableInspect
    from versioned.api.table_maintenance import TableMaintenance
    from versioned.catalog.store import MetaStore
    from versioned.engine.feeds.reader import Feed
    from versioned.layouts.engine_protocol import EngineContext, TableEngine
    from versioned.layouts.layout import StorageLayout
    from versioned.options import CompactionThresholds, Progress
    from versioned.results import CompactionResult, VacuumResult


class Table(TableReads, TableStreams):
    """A table: its definition and the operations on its data.

    Each operation that changes the table reads what it needs of the catalog once, at its
    start, with one permission check (`MetaStore.resolve`), and hands the layout's engine
    one request built from it (`versioned.layouts.table_request`).
    """

    def __init__(self, catalog: Catalog, info: TableInfo | TableName) -> None:
        """``info``: the table's catalog record, or only its name (the record is then read
        by the first operation, which reports a missing table or grant itself)."""
        self.catalog = catalog
        if isinstance(info, TableName):
            self._name, self._info = info, None
        else:
            self._name, self._info = info.spec.name, info
        self._stale = False

    def __repr__(self) -> str:
        return f"Table({self.name})"

    @property
    def name(self) -> TableName:
        """``db.table``."""
        return self._name

    @property
    def spec(self) -> TableSpec:
        """The table's definition."""
        return self.info.spec

    @property
    def layout(self) -> StorageLayout:
        """What the table's layout declares (plain data: its capabilities, file formats,
        compaction kinds, folders), from the registry."""
        return layout_of((self._info or self.info).spec.layout)

    @property
    def info(self) -> TableInfo:
        """Catalog record as of the last operation or `refresh` (read again on first use
        after an operation changed the table)."""
        if self._info is None or self._stale:
            self.refresh()
        assert self._info is not None
        return self._info

    def refresh(self) -> Table:
        """Re-read the table's catalog record."""
        self._known(self._store.table(self.name))
        return self

    @property
    def _store(self) -> MetaStore:
        return self.catalog.engine_context.store

    def upsert(
        self,
        changes: Any,
        *,
        format: str | None = None,
        op_code_column: str | None = None,
        partial: bool = False,
        ordering_from: str | None = None,
        options: WriteOptions | None = None,
        progress: Callable[[str], None] | None = None,
        evolve: bool = False,
    ) -> CommitResult:
        """Apply a batch of changes atomically as one new version.

        Args:
            changes: A Spark DataFrame, a ``pyarrow.Table``, or a path / list of paths to
                CSV (with header), JSON lines, Parquet or Debezium files.
            format: ``csv``, ``json``, ``parquet`` or ``debezium``; inferred from the file
                extension when omitted.
            op_code_column: Input column with op codes (I/U/D, insert/update/delete); defaults
                to the table's. Without one every row is an upsert.
            partial: The batch is a partial update: table columns it lacks keep each key's
                stored values (a key the table does not have gets NULL there). Without it
                a batch lacking a column fails before anything is written.
            ordering_from: Debezium feeds: fill the table's ordering column from the
                events' ``lsn``, ``binlog`` position or ``ts_ms`` (default: the table
                property ``debezium.ordering_from``). See ``docs/change-feeds.md``.
            options: Tuning (`versioned.options.WriteOptions`).
            progress: Called with a short message at each stage of the write.
            evolve: Add the input's columns the table lacks (nullable, typed from the input)
                as an ``alter`` commit just before the data; see `add_columns`. Without it
                such columns fail the batch before anything is written.

        Returns:
            What was committed. Rows that could not be applied are in the table's dead-letter
            area (``_dead_letter/`` under the table) with their reason, and counted.

        Raises:
            PermissionDeniedError: The user may not write the table (nothing is written).
            SchemaError: The batch does not fit the table (nothing is written).
            NotSupportedError: The table's layout cannot upsert, or (``evolve``) cannot
                add columns (nothing is read).
            InputError: A Debezium batch holds a truncate event (nothing is written).
            CommitConflictError: Concurrent writers kept winning the race; try again.
        """
        started = time.monotonic()
        access = self.resolve("upsert", with_snapshot=True)
        if evolve:  # before Spark reads the feed for its new columns
            layout_of(access.table.spec.layout).require("alter", self.name)
        from versioned.api.feed_precheck import precheck_feed

        check = (
            None  # the feed may carry new columns: checked once they are added
            if evolve
            else precheck_feed(
                changes,
                access.table.spec,
                format=format,
                op_code_column=op_code_column,
                partial=partial,
            )
        )
        if check is not None and check.empty:  # answered without starting Spark
            return _nothing_applied(started)
        feed_args: dict[str, Any] = {"format": format, "op_code_column": op_code_column}
        if partial or ordering_from:
            if evolve:
                raise InputError("--evolve cannot be combined with --partial or --ordering-from")
            feed_args.update(partial=partial, ordering_from=ordering_from)
        write = _Write("upsert", access, options, progress, feed_args, evolve=evolve)
        return self._apply(changes, write)

    def _apply(self, changes: Any, write: _Write) -> CommitResult:
        """Read ``changes`` as the table's feed and hand the engine one write request."""
        from versioned.engine.feeds.kept_values import kept_values_filled
        from versioned.engine.spark.errors import unreadable_input_errors
        from versioned.layouts.table_request import WriteRequest

        ctx = self.catalog.engine_context
        with unreadable_input_errors(_describe_source(changes)):
            access, feed = self._read_feed(ctx, changes, write)
            engine = self._engine(write.operation, access.table)
            request = WriteRequest(
                operation=write.operation,
                table=access.table,
                granted=access.granted,
                snapshot=access.snapshot,
                progress=write.progress,
                feed=feed,
                options=write.options or WriteOptions(),
            )
            try:
                with (
                    out_of_space(f"{write.operation} into {self.name}", ctx.fileio.root),
                    kept_values_filled(ctx, engine, request) as ready,
                ):
                    result = engine.write(ctx, ready)
            finally:
                self._stale = True  # read again on first use: the write may have committed
        if feed.events is not None:
            result = replace(result, tombstones=feed.events.tombstones())
        if result.version is not None and not result.all_rejected:  # a commit with files
            done = self.maintenance.after_write(access.table.spec, write.progress, write.options)
            if done is not None:
                result = replace(result, maintenance=done)
        return result

    def _read_feed(
        self, ctx: EngineContext, changes: Any, write: _Write
    ) -> tuple[TableAccess, Feed]:
        """The feed of ``changes`` for the table; with ``evolve``, the table resolved again
        once the feed's new columns were added (a commit of its own)."""
        from versioned.engine.feeds.reader import read_feed

        access = write.access
        if not write.evolve:
            return access, read_feed(ctx.spark, changes, access.table.spec, **write.feed_args)
        from versioned.api.schema_evolution import read_feed_evolving
        from versioned.schema_changes import SchemaChange

        evolved = read_feed_evolving(ctx.spark, changes, access.table.spec, **write.feed_args)
        if not evolved.added:
            return access, evolved.feed
        self._store.alter_table(
            self.name, SchemaChange(add=evolved.added), reason="upsert with evolve"
        )
        access = self.resolve(write.operation, with_snapshot=True)
        if access.table.spec == evolved.spec:
            return access, evolved.feed
        # another change committed in between: read against the table as it is
        return access, read_feed(ctx.spark, changes, access.table.spec, **write.feed_args)

    def add_columns(self, columns: str | Sequence[Column]) -> CommitInfo:
        """Add nullable columns (``"c STRING, d DECIMAL(10,2)"``) after the existing ones.

        A commit of its own (operation ``alter``) that changes the catalog only: no file is
        rewritten, rows written before read null, ``read(as_of=V)`` keeps the schema of V.
        Dropping and renaming columns are not supported. Needs write permission.

        Raises:
            SchemaError: A column exists already, is NOT NULL, or has a reserved name.
        """
        return self.alter_columns(add=columns)

    def widen_columns(self, columns: str | Sequence[Column]) -> CommitInfo:
        """Widen column types (``"n BIGINT"``): smaller integers to larger ones, FLOAT to
        DOUBLE, DECIMAL(p,s) to DECIMAL(p',s) with p' >= p. Catalog only, like `add_columns`;
        old files are read under the new type.

        Raises:
            SchemaError: Narrowing, another type change, or a partition column.
        """
        return self.alter_columns(widen=columns)

    def alter_columns(
        self,
        *,
        add: str | Sequence[Column] | None = None,
        widen: str | Sequence[Column] | None = None,
    ) -> CommitInfo:
        """Add and widen columns in one ``alter`` commit (see `add_columns`)."""
        from versioned.schema_changes import SchemaChange

        layout_of(self.spec.layout).require("alter", self.name)
        commit = self._store.alter_table(self.name, SchemaChange.parse(add, widen))
        self._stale = True
        return commit

    def set_properties(self, properties: Mapping[str, str | None]) -> CommitInfo:
        """Set table properties (a value of ``None`` removes one), as one ``alter`` commit.

        E.g. ``{"auto_compact": "false"}`` turns the table's own maintenance off
        (`versioned.api.auto_maintenance`). Needs write permission.

        Raises:
            SchemaError: A maintenance setting has a bad value; nothing changed.
        """
        from versioned.maintenance_policy import check_properties
        from versioned.schema_changes import SchemaChange

        changes = tuple((str(k), None if v is None else str(v)) for k, v in properties.items())
        if not changes:
            raise InputError("no table property given to set or remove")
        merged = dict(self.refresh().spec.properties)
        merged.update({k: v for k, v in changes if v is not None})
        check_properties({k: v for k, v in merged.items() if (k, None) not in changes}, self.name)
        commit = self._store.alter_table(self.name, SchemaChange(properties=changes))
        self._stale = True
        return commit

    def delete(
        self,
        where: str,
        *,
        options: WriteOptions | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> CommitResult:
        """Delete the live rows matching the SQL condition ``where``, as one new version.

        The keys of the matching rows (of the latest snapshot) are applied as delete changes
        through the same path as `upsert`, so the delete is one atomic commit, counted in
        ``deleted``, and shows in `changes` and `history`. With an ordering column, a row
        that a concurrent writer changed to a newer ordering value meanwhile is kept (the
        delete is stale for it); without one the delete wins.

        Returns:
            What was committed; ``version`` is ``None`` when no row matched.

        Raises:
            PermissionDeniedError: The user may not write the table.
            QueryError: ``where`` does not parse or names unknown columns.
        """
        from versioned.engine.feeds.row_delete import DELETE_OP_COLUMN, delete_changes
        from versioned.engine.spark.errors import user_query_errors

        started = time.monotonic()
        access = self.resolve("delete", with_snapshot=True)
        assert access.snapshot is not None
        matching = self._where(access.snapshot, where)
        with user_query_errors("--where"):
            empty = matching.isEmpty()
        if empty:
            return _nothing_applied(started)
        feed_args: dict[str, Any] = {"format": None, "op_code_column": DELETE_OP_COLUMN}
        write = _Write("delete", access, options, progress, feed_args)
        return self._apply(delete_changes(matching), write)

    @property
    def maintenance(self) -> TableMaintenance:
        """Compaction, vacuum and the table's own policy after a write
        (`versioned.api.table_maintenance.TableMaintenance`)."""
        from versioned.api.table_maintenance import TableMaintenance

        return TableMaintenance(self)

    def compact(
        self,
        partitions: Sequence[str | Mapping[str, Any] | Sequence[str | None]] | None = None,
        *,
        thresholds: CompactionThresholds | None = None,
        options: CompactionOptions | None = None,
        dry_run: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> CompactionResult:
        """Rewrite partitions into one version holding only their latest rows: the shortcut
        of `TableMaintenance.compact` (its arguments and errors there)."""
        return self.maintenance.compact(
            partitions, thresholds=thresholds, options=options, dry_run=dry_run, progress=progress
        )

    def vacuum(
        self,
        retain_hours: float = 168.0,
        *,
        grace_hours: float = 1.0,
        dry_run: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> VacuumResult:
        """Delete files no snapshot of the last ``retain_hours`` reads, and orphans older
        than ``grace_hours``: the shortcut of `TableMaintenance.vacuum`."""
        return self.maintenance.vacuum(
            retain_hours, grace_hours=grace_hours, dry_run=dry_run, progress=progress
        )

    def resolve(
        self, operation: str, *, with_snapshot: bool = False, with_history: bool = False
    ) -> TableAccess:
        """What ``operation`` (one that changes the table) needs of the catalog, read once
        with one permission check (write): the table's record and grants, and its snapshot
        and history when asked for.

        Raises:
            NotSupportedError: The table's layout (as known already, else as read) does not
                implement the operation; when known, before the catalog is asked.
            PermissionDeniedError: The user may not write the table.
        """
        if self._info is not None:
            self._engine(operation, self._info)
        access = self._store.resolve(
            self.name, "write", with_snapshot=with_snapshot, with_history=with_history
        )
        self._known(access.table)
        self._engine(operation, access.table)
        return access

    def _known(self, info: TableInfo) -> None:
        self._info, self._stale = info, False

    def invalidate(self) -> None:
        """Forget the table's record read so far: the next use reads it again (after an
        operation that may have committed)."""
        self._stale = True

    def engine(self, operation: str, info: TableInfo | None = None) -> TableEngine:
        """The engine of the table's layout for ``operation`` (see `_engine`).

        Raises:
            NotSupportedError: The layout does not implement it.
        """
        return self._engine(operation, info)

    def _engine(self, operation: str, info: TableInfo | None = None) -> TableEngine:
        """The engine of the table's layout for ``operation``, by ``info``, else by the record
        known already (a table keeps its layout), else by its record read now.

        Raises:
            NotSupportedError: The layout does not implement it.
        """
        from versioned.layouts.engine_protocol import engine_for

        layout = (info or self._info or self.info).spec.layout
        return engine_for(layout_of(layout), operation, self.name)

    @property
    def inspect(self) -> TableInspect:
        """What the catalog knows of the table: description, metadata tables, partition
        facts (`versioned.api.table_inspect.TableInspect`)."""
        from versioned.api.table_inspect import TableInspect

        return TableInspect(self)

    def describe(self) -> dict[str, Any]:
        """The table as plain data: the shortcut of `TableInspect.describe`."""
        return self.inspect.describe()


def _describe_source(changes: Any) -> str:
    """How error messages name a feed."""
    if isinstance(changes, str | os.PathLike):
        return os.fspath(changes)
    if isinstance(changes, list | tuple) and changes:
        first = os.fspath(changes[0]) if isinstance(changes[0], str | os.PathLike) else "input"
        return first if len(changes) == 1 else f"{first} (and {len(changes) - 1} more)"
    return type(changes).__name__


def _nothing_applied(started: float) -> CommitResult:
    """The result of a batch without rows: nothing committed."""
    seconds = round(time.monotonic() - started, 3)
    return CommitResult(
        version=None, inserted=0, updated=0, deleted=0, stale=0, rejected=0, seconds=seconds
    )


@dataclass(frozen=True)
class _Write:
    """A write's arguments until its feed is read (then its `WriteRequest` is built)."""

    operation: str
    access: TableAccess
    options: WriteOptions | None
    progress: Progress | None
    feed_args: dict[str, Any]
    evolve: bool = False
