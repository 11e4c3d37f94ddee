"""What a layout's change-stream methods work on: one commit's task, and the images they return.

The change stream (`versioned.change_stream`) plans one `CommitTask` per commit on the driver
from the catalog's change log, asking the table's layout which files hold what the commit
wrote and which were live before it (its ``change_files`` method); an executor asks the layout
for the commit's pre- and post-images (``change_images``) and turns them into change rows.
Plain data and pyarrow, no Spark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from versioned.catalog.records import DataFile
from versioned.schema import Column, TableSpec
from versioned.values.arrow_types import arrow_type


@dataclass(frozen=True)
class CommitStamp:
    """Which commit the rows belong to (the values of the change columns but one)."""

    seq: int
    version: int
    committed_at: float


@dataclass(frozen=True)
class Images:
    """The rows around one commit, in the stream's columns.

    Attributes:
        before: Rows live just before the commit, of keys it touched (at most one per key).
        after: Rows the commit wrote (at most one per key).
    """

    before: pa.Table
    after: pa.Table


@dataclass(frozen=True)
class CommitTask:
    """What an executor needs to compute (part of) one commit's change rows.

    Attributes:
        stamp: The commit.
        layout: The table's layout.
        warehouse: The warehouse root (an executor opens files below it).
        location: The table's directory below the warehouse.
        spec: The table at the commit (the columns its files may hold).
        columns: The stream's columns (every row is shaped to them).
        partitions: Values of the partitions the files below lie in, by partition id.
        written: Files holding what the commit wrote: its data and index files (version
            layout), or the delta and delete-delta files holding its events (acid).
        before: Files live just before the commit in the partitions it touched.
        write_ids: The write ids of the commit's events (acid).
    """

    stamp: CommitStamp
    layout: str
    warehouse: str
    location: str
    spec: TableSpec
    columns: tuple[Column, ...]
    partitions: Mapping[int, tuple[str | None, ...]]
    written: tuple[DataFile, ...]
    before: tuple[DataFile, ...]
    write_ids: tuple[int, ...] = ()


def shaped(rows: pa.Table, columns: Sequence[Column]) -> pa.Table:
    """``rows`` in exactly ``columns``: a column the rows lack (written before it was added)
    is null, the others are cast to the column's type (widened columns read wider)."""
    arrays = []
    for c in columns:
        kind = arrow_type(c.type)
        if c.name in rows.column_names:
            arrays.append(rows.column(c.name).cast(kind))
        else:
            arrays.append(pa.nulls(rows.num_rows, kind))
    return pa.Table.from_arrays(
        arrays, schema=pa.schema([pa.field(c.name, arrow_type(c.type)) for c in columns])
    )
