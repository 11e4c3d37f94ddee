"""The `Table` facade: one table of a catalog."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from versioned.api.results import CommitResult
from versioned.catalog.records import CommitInfo, Snapshot, TableInfo
from versioned.errors import InputError
from versioned.names import TableName
from versioned.schema import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from versioned.api.catalog import Catalog
    from versioned.api.maintenance import CompactionResult, VacuumResult
    from versioned.engine.compaction_plan import CompactionOptions, CompactionThresholds
    from versioned.engine.version_writer import WriteOptions


class Table:
    """A table: its definition and the operations on its data."""

    def __init__(self, catalog: Catalog, info: TableInfo) -> None:
        self.catalog = catalog
        self._info = info

    def __repr__(self) -> str:
        return f"Table({self.name})"

    @property
    def name(self) -> TableName:
        """``db.table``."""
        return self._info.spec.name

    @property
    def spec(self) -> TableSpec:
        """The table's definition."""
        return self._info.spec

    @property
    def info(self) -> TableInfo:
        """Catalog record as of the last `refresh`."""
        return self._info

    def refresh(self) -> Table:
        """Re-read the table's catalog record."""
        self._info = self.catalog.store.table(self.name)
        return self

    def history(self) -> list[CommitInfo]:
        """Every commit of the table, oldest first."""
        return self.catalog.store.history(self.name)

    def snapshot(self, as_of: int | None = None) -> Snapshot:
        """The committed files of the latest version, or of version ``as_of``."""
        return self.catalog.store.snapshot(self.name, as_of=as_of)

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
            options: Tuning (`versioned.engine.version_writer.WriteOptions`).
            progress: Called with a short message at each stage of the write.

        Returns:
            What was committed. Rows that could not be applied are in the table's dead-letter
            area (``_dead_letter/`` under the table) with their reason, and counted.

        Raises:
            PermissionDeniedError: The user may not write the table (nothing is written).
            SchemaError: The batch does not fit the table (nothing is written).
            InputError: A Debezium batch holds a truncate event (nothing is written).
            CommitConflictError: Concurrent writers kept winning the race; try again.
        """
        self._require_layout("upsert")
        from versioned.engine.feed_reader import read_feed
        from versioned.engine.kept_values import kept_values_filled
        from versioned.engine.version_writer import write_batch

        store = self.catalog.store
        store.check(self.name, "write")
        info = self.refresh().info
        spark = self.catalog.spark
        feed = read_feed(
            spark,
            changes,
            info.spec,
            format=format,  # type: ignore[arg-type]
            op_code_column=op_code_column,
            partial=partial,
            ordering_from=ordering_from,
        )
        fileio = self.catalog.fileio
        with kept_values_filled(
            spark,
            fileio,
            info.spec,
            feed,
            lambda: store.snapshot(self.name),
            broadcast_limit=self.catalog.broadcast_limit,
            progress=progress,
        ) as ready:
            result = write_batch(
                spark, store, fileio, info, ready, options=options, progress=progress
            )
        if feed.events is not None:
            result = replace(result, tombstones=feed.events.tombstones())
        self.refresh()
        return result

    def read(self, as_of: int | None = None, *, with_version: bool = False) -> DataFrame:
        """The latest version of every live record (at version ``as_of`` if given).

        The snapshot is resolved once, now; later commits do not change the DataFrame.
        """
        self._require_layout("read")
        from versioned.engine.version_reader import read_latest

        return read_latest(
            self.catalog.spark,
            self.catalog.fileio,
            self.snapshot(as_of),
            broadcast_limit=self.catalog.broadcast_limit,
            with_version=with_version,
        )

    def changes(self, since: int | None = None, until: int | None = None) -> DataFrame:
        """Net change per key between version ``since`` and ``until`` (default: latest).

        Each row has ``_change`` (``insert``, ``update`` or ``delete``) and the record's
        columns: the new values, or for a delete the last values before it.
        """
        self._require_layout("changes")
        from versioned.engine.net_changes import net_changes

        before = self.snapshot(since) if since is not None else None
        after = self.snapshot(until)
        return net_changes(
            self.catalog.spark,
            self.catalog.fileio,
            before,
            after,
            broadcast_limit=self.catalog.broadcast_limit,
        )

    def compact(
        self,
        partitions: Sequence[str | Mapping[str, Any] | Sequence[str | None]] | None = None,
        *,
        thresholds: CompactionThresholds | None = None,
        options: CompactionOptions | None = None,
        dry_run: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> CompactionResult:
        """Rewrite partitions into one version holding only their latest rows.

        Each partition is compacted up to its head version at planning time and committed on
        its own; readers of older snapshots keep reading them, and writes that commit
        meanwhile are not lost (see ``docs/compaction-and-vacuum.md``).

        Args:
            partitions: Partitions to compact, each a Hive-style path with plain values
                (``"store_id=7/create_date=2024-01-01"``), a ``{column: value}`` mapping or
                a tuple of values. Default: every partition that is not compact already.
            thresholds: Only partitions past one of these thresholds (the scheduled form).
            options: Tuning (`versioned.engine.compaction_plan.CompactionOptions`).
            dry_run: Plan only: the result lists the partitions, nothing is written.
            progress: Called with a short message at each stage.

        Raises:
            PermissionDeniedError: The user may not write the table.
            NoSuchPartitionError: A named partition does not exist.
        """
        self._require_layout("compact")
        from versioned.engine.compaction_plan import partition_values
        from versioned.engine.compactor import compact_table

        store = self.catalog.store
        store.check(self.name, "write")
        info = self.refresh().info
        chosen = None
        if partitions is not None:
            chosen = [
                store.partition(self.name, partition_values(info.spec.partition_by, p))
                for p in partitions
            ]
        result = compact_table(
            lambda: self.catalog.spark,
            store,
            self.catalog.fileio,
            info,
            partitions=chosen,
            thresholds=thresholds,
            options=options,
            dry_run=dry_run,
            broadcast_limit=self.catalog.broadcast_limit,
            progress=progress,
        )
        self.refresh()
        return result

    def vacuum(
        self,
        retain_hours: float = 168.0,
        *,
        grace_hours: float = 1.0,
        dry_run: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> VacuumResult:
        """Delete files no snapshot of the last ``retain_hours`` reads, and orphan files.

        Orphans are files of failed writes that no commit lists, older than
        ``grace_hours``. ``read(as_of=V)`` for a version older than the retention fails
        afterwards with a clear error. ``_dead_letter/`` is never touched.
        """
        self._require_layout("vacuum")
        from versioned.engine.vacuum import vacuum_table

        store = self.catalog.store
        store.check(self.name, "write")
        info = self.refresh().info
        result = vacuum_table(
            store,
            self.catalog.fileio,
            info,
            retain_hours=retain_hours,
            grace_hours=grace_hours,
            dry_run=dry_run,
            progress=progress,
        )
        self.refresh()
        return result

    def _require_layout(self, operation: str) -> None:
        if self.spec.layout != "versioned":
            raise InputError(
                f"{operation} of {self.name}: the {self.spec.layout} layout is not supported by "
                "this release yet; use a table with --layout versioned"
            )

    def describe(self) -> dict[str, Any]:
        """Definition, ownership, location, partitions and current version as plain data."""
        info = self.refresh().info
        history = self.history()
        partitions = self.catalog.store.partitions(self.name)
        return {
            **info.spec.to_dict(),
            "owner": info.owner,
            "location": self.catalog.fileio.full_path(info.location),
            "created_at": info.created_at,
            "current_version": history[-1].version if history else None,
            "commits": len(history),
            "partitions": len(partitions),
        }
