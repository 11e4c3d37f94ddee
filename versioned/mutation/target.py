"""What a coordinator carries to a worker (Hive's ``AcidTable``): plain, picklable values.

No live connection travels: a worker opens its own catalog connection (only to create
partitions) and its own file system from the URL and warehouse root.
"""

from __future__ import annotations

from dataclasses import dataclass

from versioned.catalog.records import TableInfo
from versioned.names import TableName


@dataclass(frozen=True)
class MutationTarget:
    """One table of an open mutation transaction, as its coordinators see it.

    Attributes:
        catalog_url: The catalog's SQLAlchemy URL.
        user: The principal the transaction runs as.
        warehouse: The warehouse root (``FileIO.for_root``).
        table: The table's catalog record (name, spec, location).
        txn_id: The transaction id (the version its files commit as).
        write_id: The table's write id of the transaction.
        create_partitions: Whether coordinators create a partition on its first insert.
        staging_dir: The transaction's private folder of the table, relative to the
            warehouse: coordinators leave their manifests there.
    """

    catalog_url: str
    user: str
    warehouse: str
    table: TableInfo
    txn_id: int
    write_id: int
    create_partitions: bool
    staging_dir: str

    @property
    def name(self) -> str:
        """``db.table``."""
        return str(self.table.spec.name)

    @property
    def table_name(self) -> TableName:
        """The table's name."""
        return self.table.spec.name
