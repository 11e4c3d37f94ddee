"""The reading side of `Table`: history, snapshots (time travel by version or time), the
latest rows, rows matching a condition, and the net changes between two versions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from versioned.api.catalog import Catalog
    from versioned.catalog.records import CommitInfo, Snapshot, TableInfo
    from versioned.catalog.store import MetaStore
    from versioned.layouts.engine_protocol import TableEngine
    from versioned.names import TableName


class TableReads:
    """Read operations of a table (mixed into `versioned.api.table.Table`)."""

    catalog: Catalog
    _info: TableInfo | None

    @property
    def name(self) -> TableName:  # pragma: no cover - Table defines it
        raise NotImplementedError

    @property
    def _store(self) -> MetaStore:  # pragma: no cover - Table defines it
        raise NotImplementedError

    def _engine(
        self, operation: str, info: TableInfo | None = None
    ) -> TableEngine:  # pragma: no cover - Table defines it
        raise NotImplementedError

    def history(self) -> list[CommitInfo]:
        """Every commit of the table, oldest first."""
        return self._store.history(self.name)

    def metadata(self, kind: str) -> pa.Table:
        """One of the table's metadata tables as Arrow: the shortcut of
        `TableInspect.metadata` (in SQL ``db.table__KIND``).

        Raises:
            InvalidNameError: ``kind`` is not one of those.
            PermissionDeniedError: The user may not read the table.
        """
        from versioned.api.metadata_tables import metadata_table

        return metadata_table(self, kind)  # type: ignore[arg-type]  # self is a Table

    def snapshot(self, as_of: int | None = None, *, as_of_time: Any = None) -> Snapshot:
        """The committed files of the latest version, of the table right after the commit
        of version ``as_of`` (the table's latest version at or below it), or as of
        ``as_of_time``: an aware `datetime` or seconds since the epoch, read as the table's
        last commit made at or before it, compared to the microsecond (the precision
        `history` gives commit times).

        Raises:
            InputError: ``as_of`` is not an int, or ``as_of_time`` is none of those (naive,
                NaN, infinite, outside the years 1 to 9999 in UTC).
            NoSuchVersionError: The table has no version at or below ``as_of``, no commit
                at or before ``as_of_time``, or vacuum removed that snapshot's files.
        """
        return self._store.snapshot(self.name, as_of=as_of, as_of_time=as_of_time)

    def matching(
        self, where: str, as_of: int | None = None, *, as_of_time: Any = None
    ) -> DataFrame:
        """The live rows (at version ``as_of``, or at time ``as_of_time``: see `snapshot`)
        matching the SQL condition ``where``.

        Raises:
            QueryError: ``where`` does not parse or names unknown columns.
        """
        return self._where(self.snapshot(as_of, as_of_time=as_of_time), where)

    def _where(self, snapshot: Snapshot, where: str) -> DataFrame:
        """The live rows of ``snapshot`` matching ``where``."""
        from versioned.engine.spark.errors import user_query_errors

        frame = self._read(snapshot, with_version=False)
        with user_query_errors("--where"):
            return frame.where(where)

    def read(
        self,
        as_of: int | None = None,
        *,
        as_of_time: Any = None,
        with_version: bool = False,
        with_row_id: bool = False,
    ) -> DataFrame:
        """The latest version of every live record (at version ``as_of``, or at time
        ``as_of_time``, if given: see `snapshot`).

        The snapshot is resolved once, now; later commits do not change the DataFrame.
        ``with_row_id`` adds Hive's ``ROW__ID`` struct ``(writeid, bucketid, rowid)``
        (acid layout only; others raise `NotSupportedError`).
        """
        if self._info is not None:  # fails before the catalog is asked
            self._engine("read", self._info)
        snapshot = self.snapshot(as_of, as_of_time=as_of_time)  # fails before Spark starts
        return self._read(snapshot, with_version=with_version, with_row_id=with_row_id)

    def _read(
        self, snapshot: Snapshot, *, with_version: bool, with_row_id: bool = False
    ) -> DataFrame:
        engine = self._engine("read", snapshot.table)
        ctx = self.catalog.engine_context
        if with_row_id:
            return engine.read(ctx, snapshot, with_version=with_version, with_row_id=True)
        return engine.read(ctx, snapshot, with_version=with_version)

    def changes(self, since: int | None = None, until: int | None = None) -> DataFrame:
        """Net change per key between version ``since`` and ``until`` (default: latest).

        Each row has ``_change`` (``insert``, ``update`` or ``delete``) and the record's
        columns: the new values, or for a delete the last values before it. A ``since``
        below the table's first version (``0``, as Delta's ``startingVersion=0``) starts
        from the empty table: every live row is an insert.
        """
        engine = self._engine("changes")
        before = None
        if since is not None:
            history = self.history()
            if history and since >= min(c.version for c in history):
                before = self.snapshot(since)
        after = self.snapshot(until)
        if before is not None and after.seq < before.seq:
            raise InputError(
                f"version {until} of {self.name} was committed before version {since}: "
                "until must name a later commit than since",
                since=since,
                until=until,
            )
        return engine.changes(self.catalog.engine_context, before, after)
