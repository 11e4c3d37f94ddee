"""Importing a checked collection by upserting its rows through the table's engine.

For layouts whose files are not the collection's files (the acid layout writes ACID events
into bucket files): the rows of every planned partition are one upsert by primary key, in
one transaction, through the layout's writer, so the import gets the write path's
guarantees (staged files claimed by the transaction, one catalog commit, ``operation``
``import`` in the history). The partitions it adds hold no data yet (checked before), so
each row is an insert, except that a key unique table-wide moves here from another
partition, as in an upsert; with an ordering column, a row older than its key's stored
state elsewhere is stale and skipped, as in an upsert. A commit conflict fails the import
(nothing is imported) instead of retrying into partitions another writer may have filled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from versioned.catalog.records import TableAccess
from versioned.collections.folder import CollectionFolder
from versioned.collections.metadata import CollectionFile
from versioned.layouts.base import layout_of
from versioned.options import WriteOptions

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog


@dataclass(frozen=True)
class ImportedRows:
    """What an import through the engine committed."""

    version: int | None
    rows: int
    files: int
    bytes_written: int


def upsert_collection(
    catalog: Catalog,
    folder: CollectionFolder,
    access: TableAccess,
    parts: Sequence[tuple[Sequence[CollectionFile], tuple[str | None, ...]]],
) -> ImportedRows:
    """Upsert the rows of ``parts`` (files and their table partition's values) into the
    table ``access`` resolved (the user may write it) as one commit.

    Raises:
        CollectionError: A row does not fit the table (nothing is written).
        CommitConflictError: Another writer committed first; nothing was imported.
    """
    from versioned.engine.feeds.collection import collection_feed
    from versioned.layouts.engine_protocol import engine_for
    from versioned.layouts.table_request import WriteRequest

    info = access.table
    spec = info.spec
    engine = engine_for(layout_of(spec.layout), "import", spec.name)
    ctx = catalog.engine_context
    request = WriteRequest(
        operation="import",
        table=info,
        granted=access.granted,
        # None: the write plans on the latest snapshot once its transaction is open, as
        # the import's checks of the partitions it fills ran a while ago.
        snapshot=None,
        feed=collection_feed(ctx.spark, folder, spec, parts),
        options=WriteOptions(max_attempts=1),
    )
    result = engine.write(ctx, request)
    return ImportedRows(
        version=result.version,
        rows=result.inserted + result.updated,
        files=result.files_written,
        bytes_written=result.bytes_written,
    )
