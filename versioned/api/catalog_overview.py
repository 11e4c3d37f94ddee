"""What a catalog-wide overview shows of every table a user may read, in a few catalog
queries however many tables there are (no Spark, no data file read).

Per table: its commits (count, last one, the counts of its latest ones), its partitions'
rows of the ``partitions`` metadata table as their last commits summarised them
(`versioned.layouts.partition_facts`), and its streaming writers' progress, all read in one
catalog transaction. A partition whose summary is missing or no longer current (written
before summaries existed, by a commit without a summariser, or before the table's
properties changed) leaves the table's ``partitions`` None: the caller reads the
``partitions`` metadata table for it (`Table.metadata`), which computes every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from versioned.api.metadata_rows import as_int, stream_progress_row, utc_time
from versioned.catalog.records import TableInfo
from versioned.layouts.partition_facts import FIELDS, is_current

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog
    from versioned.catalog.partition_summaries import TableOverview


@dataclass(frozen=True)
class TableFacts:
    """One table's facts for an overview, in the metadata tables' column names.

    Attributes:
        info: The table's catalog record.
        commits: Its number of commits.
        latest: Its latest commits, oldest first, as ``history`` rows restricted to
            ``commit``, ``committed_at`` and the row counts (``inserted``, ``updated``,
            ``deleted``, ``rejected``).
        partitions: Its ``partitions`` rows (without ``values`` and ``last_compaction``),
            or None when some partition has no current summary.
        writers: Its ``stream_progress`` rows.
    """

    info: TableInfo
    commits: int
    latest: list[dict[str, Any]]
    partitions: list[dict[str, Any]] | None
    writers: list[dict[str, Any]]


def catalog_overview(
    catalog: Catalog, database: str | None = None, *, latest: int = 20
) -> list[TableFacts]:
    """`TableFacts` of every table the catalog's user may read (optionally of one
    database), by name, with each one's ``latest`` commits."""
    store = catalog.engine_context.store
    return [_facts(o) for o in store.table_overviews(database, recent=latest)]


def _facts(overview: TableOverview) -> TableFacts:
    spec = overview.table.spec
    partitions: list[dict[str, Any]] | None = []
    for part, summary in overview.partitions:
        if partitions is None or summary is None or not is_current(summary, spec):
            partitions = None
            continue
        row = {"partition": part.path, "head_version": part.head_version}
        partitions.append({**row, **{k: summary[k] for k in FIELDS}})
    latest = [
        {
            "commit": seq,
            "committed_at": utc_time(metrics_at),
            **{k: as_int(metrics.get(k)) for k in ("inserted", "updated", "deleted", "rejected")},
        }
        for seq, metrics_at, metrics in overview.recent
    ]
    writers = [stream_progress_row(p) for p in overview.writers]
    return TableFacts(
        info=overview.table,
        commits=overview.commits,
        latest=latest,
        partitions=partitions,
        writers=writers,
    )
