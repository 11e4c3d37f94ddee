"""What a layout's engine does for a table: the operations `versioned.api.table.Table` delegates.

`versioned.layouts.base.StorageLayout` says what a layout is (plain data, no Spark); its engine,
loaded through the same registry (`StorageLayout.engine`), does the work in Spark. The
`Table` facade never asks which layout a table has: it asks the layout for the engine of an
operation (`engine_for`), and a layout that lacks the operation raises `NotSupportedError`.

Feed normalisation (`versioned.engine.feeds`) is shared: an engine receives a typed `Feed`
(rows and dead letters) in a `versioned.layouts.table_request.WriteRequest` and writes it in
its own format. Every engine call gets one `EngineContext` (metastore, file system, Spark).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.catalog.records import Snapshot
    from versioned.catalog.store import MetaStore
    from versioned.layouts.layout import StorageLayout
    from versioned.layouts.table_request import CompactRequest, VacuumRequest, WriteRequest
    from versioned.results import CommitResult, CompactionResult, VacuumResult
    from versioned.storage.filesystem import FileIO


DEFAULT_BROADCAST_LIMIT = 20_000_000
"""Index or delete entries up to which reads broadcast them (then they shuffle)."""


@dataclass(frozen=True, kw_only=True)
class EngineContext:
    """What an engine works with, whatever the table: the catalog's metastore (acting as its
    user), the warehouse's file system, the SparkSession and the read tuning.

    Built by the catalog facade (`versioned.api.catalog.Catalog.engine_context`) and handed
    to every engine call in place of its parts. The session is started on first use
    (``spark``), so work that needs no Spark (a dry run, a vacuum) starts none.
    """

    store: MetaStore
    fileio: FileIO
    session: Callable[[], SparkSession]
    """Returns the SparkSession, starting it on first use."""
    broadcast_limit: int = DEFAULT_BROADCAST_LIMIT

    @property
    def spark(self) -> SparkSession:
        """The SparkSession (started on first use)."""
        return self.session()


class TableEngine(Protocol):
    """The operations of one layout, in Spark. Every method gets the `EngineContext`; the
    operations that change a table get the one request `Table` resolved for them."""

    layout: StorageLayout

    def write(self, ctx: EngineContext, request: WriteRequest) -> CommitResult:
        """Apply the request's typed feed as one commit (the upsert, a delete by predicate,
        an import of rows)."""
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

    def compact(self, ctx: EngineContext, request: CompactRequest) -> CompactionResult:
        """Rewrite partitions into their latest rows, one commit per partition."""
        ...

    def vacuum(self, ctx: EngineContext, request: VacuumRequest) -> VacuumResult:
        """Delete files no retained snapshot reads, and old orphans of failed writes."""
        ...

    def register_view(
        self, ctx: EngineContext, session: SparkSession, snapshot: Snapshot, source: str
    ) -> str:
        """Register ``db.table`` in ``session`` as a view of the snapshot's live rows."""
        ...


_ENGINES: dict[str, TableEngine] = {}


def engine_for(layout: StorageLayout, operation: str, table: object | None = None) -> TableEngine:
    """The engine of ``layout`` for ``operation`` (one instance per layout).

    Raises:
        NotSupportedError: The layout does not implement the operation.
    """
    layout.require(operation, table)
    engine = _ENGINES.get(layout.name)
    if engine is None:
        engine = _ENGINES[layout.name] = layout.engine()
    return engine
