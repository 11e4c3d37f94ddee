"""`Table.maintenance`: compaction, vacuum and the table's own policy after a write, in one
namespace (pyiceberg's ``tbl.maintenance``). `Table.compact` and `Table.vacuum` are its
shortcuts.

Each operation resolves the table once with one permission check (`Table.resolve`) and
hands the layout's engine one request (`versioned.layouts.table_request`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from versioned.options import CompactionOptions
from versioned.storage.partition_spec import partition_values
from versioned.storage.space import out_of_space

if TYPE_CHECKING:
    from versioned.api.table import Table
    from versioned.options import CompactionThresholds, Progress, WriteOptions
    from versioned.results import CompactionResult, VacuumResult
    from versioned.schema import TableSpec


class TableMaintenance:
    """The maintenance of one table (`Table.maintenance`)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def compact(
        self,
        partitions: Sequence[str | Mapping[str, Any] | Sequence[str | None]] | None = None,
        *,
        thresholds: CompactionThresholds | None = None,
        options: CompactionOptions | None = None,
        dry_run: bool = False,
        progress: Callable[[str], None] | None = None,
        trigger: Literal["manual", "auto"] = "manual",
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
            options: Tuning (`versioned.options.CompactionOptions`).
            dry_run: Plan only: the result lists the partitions, nothing is written.
            progress: Called with a short message at each stage.
            trigger: Who asked: ``manual``, or ``auto`` (the table's own policy after a
                write, `after_write`); the commit records it.

        Raises:
            PermissionDeniedError: The user may not write the table.
            NoSuchPartitionError: A named partition does not exist.
        """
        from versioned.layouts.table_request import CompactRequest

        table = self._table
        access = table.resolve("compact", with_snapshot=True, with_history=True)
        spec = access.table.spec
        store = table.catalog.engine_context.store
        chosen = None
        if partitions is not None:
            chosen = [
                store.partition(table.name, partition_values(spec.partition_by, p))
                for p in partitions
            ]
        request = CompactRequest(
            operation="compact",
            table=access.table,
            granted=access.granted,
            snapshot=access.snapshot,
            history=access.history,
            progress=progress,
            partitions=chosen,
            thresholds=thresholds,
            options=options or CompactionOptions(),
            dry_run=dry_run,
            trigger=trigger,
        )
        engine = table.engine("compact", access.table)
        ctx = table.catalog.engine_context
        try:
            with out_of_space(f"compaction of {table.name}", ctx.fileio.root):
                return engine.compact(ctx, request)
        finally:
            if not dry_run:
                table.invalidate()

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
        from versioned.layouts.table_request import VacuumRequest

        table = self._table
        access = table.resolve("vacuum")
        request = VacuumRequest(
            operation="vacuum",
            table=access.table,
            granted=access.granted,
            progress=progress,
            retain_hours=retain_hours,
            grace_hours=grace_hours,
            dry_run=dry_run,
        )
        engine = table.engine("vacuum", access.table)
        try:
            return engine.vacuum(table.catalog.engine_context, request)
        finally:
            if not dry_run:
                table.invalidate()

    def after_write(
        self,
        spec: TableSpec,
        progress: Progress | None,
        write_options: WriteOptions | None = None,
    ) -> CompactionResult | None:
        """The table's own maintenance after a committed write (its ``auto_compact``
        properties, `versioned.api.auto_maintenance`); ``None`` when it is off or failed
        (a failure is a `MaintenanceWarning`: the write committed already)."""
        from versioned.api.auto_maintenance import maintain

        return maintain(self, spec, progress, write_options)

    @property
    def table_name(self) -> str:
        """The table's ``db.table``, for messages."""
        return str(self._table.name)
