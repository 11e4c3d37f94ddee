"""What a layout offers the mutation API: how ROW__ID-ordered mutations sit on its storage.

The mutation client (`versioned.mutation`) orders, validates, reports and commits
mutations the same way for every layout; what it writes and how it checks the rows it
names at commit are the layout's, reached through the layout's `CanMutate` ability
(`versioned.layouts.abilities`; ``versioned.mutation.formats.format_for``). A layout
without it cannot be a sink table of the mutation API.

The order of calls, per coordinator::

    fmt = mutates(layout_of(spec.layout)).mutation_format()  # versioned.layouts.abilities
    buckets = fmt.row_buckets(spec)                  # the bucket of records to insert
    for each (partition, bucket) group:
        writer = fmt.group_writer(fileio, table, txn_id=..., write_id=...,
                                  partition_path=..., bucket=...)
        writer.insert(row) / writer.delete(row_id)   # in ROW__ID order
        files = writer.close()                       # or writer.discard() on an error

and at commit, per partition whose files include `MutationFormat.delete_kinds`:
``fmt.stale_row_ids(fileio, snapshot, partition_id, files)``.

Plain Python and pyarrow; the Spark step (`MutationFormat.spark_buckets`) is imported only
when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from versioned.catalog.records import FileAdd, Snapshot, TableInfo
from versioned.record_ids import RecordIdentifier
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

RowBuckets = Callable[[pa.Table], npt.NDArray[np.int32]]
"""The bucket number of every row of a table of bucket columns (picklable)."""


class GroupWriter(Protocol):
    """Writes the events of one (partition, bucket) group of one table's transaction."""

    def insert(self, row: Mapping[str, Any]) -> None:
        """Add an insert event of ``row`` (its data columns)."""

    def delete(self, row_id: RecordIdentifier) -> None:
        """Add a delete event of the row ``row_id`` (calls come in ROW__ID order)."""

    def close(self) -> list[FileAdd]:
        """Write what is left; every file written (``partition_id`` None, not committed)."""

    def discard(self) -> None:
        """Drop the group unwritten (an error): no half-written file appears."""


class MutationFormat(Protocol):
    """How one layout stores the mutation API's mutations (its ``mutation_format`` method).

    Attributes:
        shared_kinds: Catalog file kinds every group writing into a directory writes
            alike (a marker): the commit lists such a file once, where any other file
            written twice means two coordinators wrote one group.
        side_kinds: Catalog file kinds that hold no rows (markers, key filters): not
            counted as files written.
        delete_kinds: Catalog file kinds whose events name existing rows by ROW__ID: at
            commit each row they name must be live (`stale_row_ids`).
    """

    shared_kinds: frozenset[str]
    side_kinds: frozenset[str]
    delete_kinds: frozenset[str]

    def row_buckets(self, spec: TableSpec) -> RowBuckets:
        """How the layout buckets the table's rows by their bucket columns (all in
        bucket 0 when the table has none).

        Raises:
            SchemaError: The table's bucketing settings are invalid.
        """

    def group_writer(
        self,
        fileio: FileIO,
        table: TableInfo,
        *,
        txn_id: int,
        write_id: int,
        partition_path: str,
        bucket: int,
    ) -> GroupWriter:
        """The writer of one group of transaction ``txn_id`` (write id ``write_id``) into
        ``partition_path`` (relative to the table) and ``bucket``."""

    def stale_row_ids(
        self, fileio: FileIO, snapshot: Snapshot, partition_id: int, staged: Sequence[FileAdd]
    ) -> list[RecordIdentifier]:
        """The ROW__IDs the staged files of one partition delete that are not live in
        ``snapshot`` (sorted; empty when every one is)."""

    def spark_buckets(self) -> Callable[..., Any]:
        """The Spark step of the layout's tables, imported on first use (starts no Spark):
        ``(frame, spec, *, op_column, bucket_column, group_column) -> DataFrame`` gives each
        mutation the bucket an insert hashes to and the group (bucket) it is written in, and
        sets the inserts' ROW__IDs; ``versioned.mutation.engine.apply`` does the rest."""
