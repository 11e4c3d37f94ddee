"""The partition calls of the catalog facade (`MetaStore`): creating and reading a table's
partitions (`versioned.catalog.partitions`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from versioned.catalog import clock, partitions
from versioned.catalog.models import TableRow
from versioned.catalog.records import PartitionInfo
from versioned.catalog.store_base import StoreBase
from versioned.names import TableName


class PartitionStore(StoreBase):
    """A table's partitions: created when missing (racing creators all succeed) and read."""

    def add_partition(self, name: TableName, values: Sequence[str | None]) -> PartitionInfo:
        """The partition with ``values``, created when missing (needs write).

        Racing creators, in any number of processes, all succeed and see the same row.
        """

        def create(s: Session, t: TableRow) -> PartitionInfo:
            return partitions.insert(s, t, partitions.normalise(t, values), clock.now(s))

        try:
            return self._on_table(name, "write", create, write=True, idempotent=True)
        except IntegrityError:  # another process inserted it first: read the winner's row
            return self.partition(name, values)

    def add_partitions(
        self, name: TableName, values: Sequence[Sequence[str | None]]
    ) -> list[PartitionInfo]:
        """The partitions with each of ``values``, the missing ones created in one catalog
        transaction (needs write); racing creators all succeed, as with `add_partition`."""

        def create(s: Session, t: TableRow) -> list[PartitionInfo]:
            now = clock.now(s)
            return [partitions.insert(s, t, partitions.normalise(t, v), now) for v in values]

        try:
            return self._on_table(name, "write", create, write=True, idempotent=True)
        except IntegrityError:  # another process inserted one first: the rest again
            return self._on_table(name, "write", create, write=True, idempotent=True)

    def partitions(self, name: TableName) -> list[PartitionInfo]:
        """Every partition of the table, by path (needs read)."""
        return self._on_table(name, "read", lambda s, t: partitions.list_for(s, t.id))

    def partition(self, name: TableName, values: Sequence[str | None]) -> PartitionInfo:
        """The partition with ``values`` (needs read); raises `NoSuchPartitionError`."""
        return self._on_table(
            name, "read", lambda s, t: partitions.get(s, t, partitions.normalise(t, values)).info()
        )
