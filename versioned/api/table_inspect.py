"""`Table.inspect`: what the catalog knows of one table, read without Spark, in one namespace
(pyiceberg's ``tbl.inspect``): its description, its metadata tables and its partitions'
facts. `Table.describe` and `Table.metadata` are its shortcuts; in SQL the metadata tables
are ``db.table__KIND``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.layouts.base import layout_of

if TYPE_CHECKING:
    import pyarrow as pa

    from versioned.api.table import Table


class TableInspect:
    """What the catalog knows of one table (`Table.inspect`)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def describe(self) -> dict[str, Any]:
        """Definition, ownership, location, partitions and current version as plain data,
        with what the layout derives from the definition (acid: ``bucketing_version``,
        ``key_lookup``) and the table's maintenance settings and last compaction."""
        from versioned.api.auto_maintenance import describe_maintenance

        table = self._table
        info = table.refresh().info
        history = table.history()
        partitions = table.catalog.engine_context.store.partitions(table.name)
        return {
            **info.spec.to_dict(),
            "key_scope": info.spec.key_scope,
            "key_scope_reason": info.spec.key_scope_reason,
            **layout_of(info.spec.layout).table_settings(info.spec),
            "owner": info.owner,
            "location": table.catalog.full_path(info.location),
            "created_at": info.created_at,
            # Versions are transaction ids: a write that began earlier can commit later, so
            # the latest commit need not hold the highest version.
            "current_version": max(c.version for c in history) if history else None,
            "commits": len(history),
            "partitions": len(partitions),
            "stream_progress": table.stream_progress(),
            **describe_maintenance(info.spec, history),
        }

    def metadata(self, kind: str) -> pa.Table:
        """One of the table's metadata tables as Arrow: ``history``, ``snapshots``,
        ``partitions``, ``files``, ``stream_progress``, ``dead_letters``, ``transactions``
        or ``locks`` (`versioned.api.metadata_tables`).

        Raises:
            InvalidNameError: ``kind`` is not one of those.
            PermissionDeniedError: The user may not read the table.
        """
        from versioned.api.metadata_tables import metadata_table

        return metadata_table(self._table, kind)

    def partitions(self, as_of: int | None = None) -> list[dict[str, Any]]:
        """The partitions of the latest snapshot (or of version ``as_of``) with their facts
        (versions, files, stored and live rows, entries, read amplification, last
        compaction, whether the table's policy would compact it now): the rows of the
        ``partitions`` metadata table, which ``versioned partitions`` prints too."""
        from versioned.api.metadata_rows import partitions_rows

        return partitions_rows(self._table, as_of)
