"""The catalog facade's reads of partition summaries and catalog-wide overviews
(`versioned.catalog.partition_summaries`)."""

from __future__ import annotations

from versioned.catalog import partition_summaries, tables
from versioned.catalog.partition_summaries import TableOverview
from versioned.catalog.store_base import StoreBase


class SummaryReads(StoreBase):
    """Reads of what commits summarised, for pages over many tables."""

    def table_overviews(
        self, database: str | None = None, *, recent: int = 20
    ) -> list[TableOverview]:
        """A `TableOverview` of every table this user may read (optionally of one
        database), by name, in one read transaction."""
        db = None if database is None else tables.database_name(database)
        return self._db.read(
            lambda s: partition_summaries.overviews(s, self.user, db, recent=recent)
        )
