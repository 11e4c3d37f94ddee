"""What a layout's engine does for a table: the operations `versioned.api.table.Table` delegates.

`versioned.layouts.base.TableLayout` says what a layout is (plain data, no Spark); its engine,
loaded through the same registry (`TableLayout.load_engine`), does the work in Spark. The
`Table` facade never asks which layout a table has: it asks the layout for the engine of an
operation (`engine_for`), and a layout that lacks the operation raises `NotSupportedError`.

Feed normalisation (`versioned.engine.feeds`) is shared: an engine receives a typed `Feed`
(rows and dead letters) and writes it in its own format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.catalog.records import PartitionInfo, Snapshot, TableInfo
    from versioned.catalog.store import MetaStore
    from versioned.engine.feeds.reader import Feed
    from versioned.layouts.layout import TableLayout
    from versioned.options import CompactionOptions, CompactionThresholds, Progress, WriteOptions
    from versioned.results import CommitResult, CompactionResult, VacuumResult
    from versioned.storage.filesystem import FileIO


class EngineContext(Protocol):
    """What an engine needs from the catalog facade (`versioned.api.catalog.Catalog`)."""

    @property
    def spark(self) -> SparkSession:
        """The SparkSession (built on first use)."""
        ...

    @property
    def store(self) -> MetaStore:
        """The metastore, acting as the catalog's principal."""
        ...

    @property
    def fileio(self) -> FileIO:
        """The warehouse's file system."""
        ...

    @property
    def broadcast_limit(self) -> int:
        """Index or delete entries up to which reads broadcast them."""
        ...


class TableEngine(Protocol):
    """The operations of one layout, in Spark. Every method gets the catalog as `EngineContext`."""

    layout: TableLayout

    def write(
        self,
        ctx: EngineContext,
        table: TableInfo,
        feed: Feed,
        *,
        options: WriteOptions | None,
        progress: Progress | None,
        operation: str,
    ) -> CommitResult:
        """Apply a typed feed as one commit (the upsert, and a delete by predicate)."""
        ...

    def read(
        self,
        ctx: EngineContext,
        snapshot: Snapshot,
        *,
        with_version: bool,
        with_row_id: bool = False,
    ) -> DataFrame:
        """The live rows of a snapshot (``with_version``: the version that wrote each;
        ``with_row_id``: Hive's ``ROW__ID`` struct, layouts that have one)."""
        ...

    def changes(self, ctx: EngineContext, before: Snapshot | None, after: Snapshot) -> DataFrame:
        """Net change per key between two snapshots (``_change`` plus the record)."""
        ...

    def compact(
        self,
        ctx: EngineContext,
        table: TableInfo,
        *,
        partitions: Sequence[PartitionInfo] | None,
        thresholds: CompactionThresholds | None,
        options: CompactionOptions | None,
        dry_run: bool,
        progress: Progress | None,
    ) -> CompactionResult:
        """Rewrite partitions into their latest rows, one commit per partition."""
        ...

    def vacuum(
        self,
        ctx: EngineContext,
        table: TableInfo,
        *,
        retain_hours: float,
        grace_hours: float,
        dry_run: bool,
        progress: Progress | None,
    ) -> VacuumResult:
        """Delete files no retained snapshot reads, and old orphans of failed writes."""
        ...

    def register_view(
        self, ctx: EngineContext, session: SparkSession, snapshot: Snapshot, source: str
    ) -> str:
        """Register ``db.table`` in ``session`` as a view of the snapshot's live rows."""
        ...


_ENGINES: dict[str, TableEngine] = {}


def engine_for(layout: TableLayout, operation: str, table: object | None = None) -> TableEngine:
    """The engine of ``layout`` for ``operation`` (one instance per layout).

    Raises:
        NotSupportedError: The layout does not implement the operation.
    """
    layout.require(operation, table)
    engine = _ENGINES.get(layout.name)
    if engine is None:
        engine = _ENGINES[layout.name] = layout.load_engine()
    return engine
