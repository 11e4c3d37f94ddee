"""The `Table` facade: one table of a catalog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.catalog.records import CommitInfo, TableInfo
from versioned.names import TableName
from versioned.schema import TableSpec

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog


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
