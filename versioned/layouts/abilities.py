"""What a layout may do beyond its engine, each a protocol its class implements
(`versioned.layouts.layout.StorageLayout`), checked with `isinstance`: streaming ingest,
the change stream, import of files as they are, compaction planning from metadata, live-row
counts, the mutation API.

A caller asks for the ability it needs through the function named for it (`ingests`,
`streams_changes`, ...), which returns the layout typed as that ability or raises
`NotSupportedError` naming the layout and the operation. A layout class states its abilities
by subclassing them, so mypy checks each method against what the callers expect, as ibis's
backends do with their capability mixins.

Each method imports its module on first call (a layout's registration imports nothing of it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from versioned.errors import NotSupportedError

if TYPE_CHECKING:
    from versioned.catalog.change_log import ChangeLog, LoggedCommit
    from versioned.catalog.records import DataFile, Snapshot, TableWriteIds
    from versioned.layouts.change_task import CommitTask, Images
    from versioned.layouts.ingest import SinkFactory
    from versioned.layouts.layout import StorageLayout
    from versioned.layouts.mutation_format import MutationFormat
    from versioned.options import CompactionThresholds
    from versioned.storage.filesystem import FileIO

ChangeFiles = Callable[["ChangeLog", "LoggedCommit"], tuple[list["DataFile"], list["DataFile"]]]
"""``(log, commit) -> (written, before)``: the catalog files holding what a commit wrote and
those live before it where its pre-images are (``versioned.change_stream``)."""

ChangeImages = Callable[["CommitTask", "FileIO"], "Images"]
"""``(task, fileio) -> Images``: one commit's pre- and post-images, read on an executor
without Spark."""

CompactionDue = Callable[
    ["TableWriteIds | None", "Snapshot", "CompactionThresholds"], dict[int, str]
]
"""``(write_ids, snapshot, thresholds) -> {partition id: why}``: the partitions a compaction
with those thresholds would pick, from catalog metadata only."""

LiveRows = Callable[[Sequence["DataFile"]], int]
"""``(files) -> int``: the live rows of a partition from its live catalog files."""


@runtime_checkable
class CanIngest(Protocol):
    """Streaming ingest (Hive's transaction batches, `versioned.streaming`)."""

    def ingest_sink(self) -> SinkFactory:
        """The sink a transaction batch writes through (`versioned.layouts.ingest`)."""
        ...


@runtime_checkable
class CanStreamChanges(Protocol):
    """The change stream (`versioned.change_stream`): a commit's pre- and post-images."""

    def change_files(self) -> ChangeFiles:
        """See `ChangeFiles`."""
        ...

    def change_images(self) -> ChangeImages:
        """See `ChangeImages`."""
        ...


@runtime_checkable
class CanImportFiles(Protocol):
    """Import of a data collection's files into a table as they are (no Spark); without it
    an import upserts the collection's rows through the engine."""

    def import_files(self) -> Callable[..., tuple[int | None, int]]:
        """``(store, fileio, folder, info, checked, *, error_rate) -> (version, bytes)``."""
        ...


@runtime_checkable
class CanPlanCompaction(Protocol):
    """Which partitions a compaction would pick, from catalog metadata only (the metadata
    tables and ``versioned ui`` show it)."""

    def compaction_due(self) -> CompactionDue:
        """See `CompactionDue`."""
        ...


@runtime_checkable
class CanCountLiveRows(Protocol):
    """A partition's live rows from its live files; without it, its stored rows less its
    entries (each retires exactly one)."""

    def live_rows(self) -> LiveRows:
        """See `LiveRows`."""
        ...


@runtime_checkable
class CanMutate(Protocol):
    """The mutation API (`versioned.mutation`): ROW__ID-ordered mutations on storage."""

    def mutation_format(self) -> MutationFormat:
        """How the mutations sit on the layout's storage."""
        ...


def ingests(layout: StorageLayout, table: object | None = None) -> CanIngest:
    """``layout`` as `CanIngest`, or `NotSupportedError` for ``stream``."""
    if isinstance(layout, CanIngest):
        return layout
    raise NotSupportedError.of(layout.name, "stream", table)


def streams_changes(layout: StorageLayout, table: object | None = None) -> CanStreamChanges:
    """``layout`` as `CanStreamChanges`, or `NotSupportedError` for ``changes``."""
    if isinstance(layout, CanStreamChanges):
        return layout
    raise NotSupportedError.of(layout.name, "changes", table)


def imports_files(layout: StorageLayout, table: object | None = None) -> CanImportFiles:
    """``layout`` as `CanImportFiles`, or `NotSupportedError` for ``import``."""
    if isinstance(layout, CanImportFiles):
        return layout
    raise NotSupportedError.of(layout.name, "import", table)


def plans_compaction(layout: StorageLayout, table: object | None = None) -> CanPlanCompaction:
    """``layout`` as `CanPlanCompaction`, or `NotSupportedError` for ``compact``."""
    if isinstance(layout, CanPlanCompaction):
        return layout
    raise NotSupportedError.of(layout.name, "compact", table)


def mutates(layout: StorageLayout, table: object | None = None) -> CanMutate:
    """``layout`` as `CanMutate`, or `NotSupportedError` for ``mutate``."""
    if isinstance(layout, CanMutate):
        return layout
    raise NotSupportedError.of(layout.name, "mutate", table)
