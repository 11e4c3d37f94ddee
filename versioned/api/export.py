"""Exporting a table's snapshot to a data collection folder (Howl's EXPORT)."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from versioned.catalog.records import Snapshot
from versioned.collections.matching import label
from versioned.collections.metadata import CollectionMetadata
from versioned.errors import InputError, NoSuchPartitionError, StorageError, UnsafePathError
from versioned.layouts.base import layout_of
from versioned.names import TableName
from versioned.results import PlainData
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog


@dataclass(frozen=True)
class ExportResult(PlainData):
    """What an export wrote.

    Attributes:
        path: The collection folder.
        table: The exported table.
        version: The version exported (``None``: the table had no commit).
        partitions: Partitions in the collection.
        files: Data files written.
        rows: Rows written.
        bytes_written: Size of the data files.
        seconds: Wall time.
    """

    path: str
    table: str
    version: int | None
    partitions: int
    files: int
    rows: int
    bytes_written: int
    seconds: float


def export_table(
    catalog: Catalog,
    name: str | TableName,
    dest: str | os.PathLike[str],
    *,
    partition: Mapping[str, str | None] | None = None,
    as_of: int | None = None,
) -> ExportResult:
    """Copy the live rows of a snapshot of ``name`` into a new collection at ``dest``.

    See `Catalog.export`.
    """
    from versioned.engine.spark.collection_writer import write_collection
    from versioned.layouts.engine_protocol import engine_for

    started = time.monotonic()
    dest = os.fspath(dest)
    table_name = name if isinstance(name, TableName) else TableName.parse(name)
    table = catalog.table(table_name, need="read")
    spec = table.spec
    engine = engine_for(layout_of(spec.layout), "export", spec.name)
    ctx = catalog.engine_context
    _refuse_inside_warehouse(ctx.fileio, dest)
    snapshot = _partitions_of(table.snapshot(as_of), partition)
    _refuse_used_destination(dest)  # before Spark starts; the writer checks again
    frame = engine.read(ctx, snapshot, with_version=False)
    header = CollectionMetadata.from_spec(
        snapshot.table.spec,  # the columns of the exported version
        table=spec.name,
        source={
            "kind": "export",
            "table": str(spec.name),
            "version": snapshot.version,
            "partition_filter": dict(partition) if partition else None,
            "exported_by": catalog.user,
            "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        },
    )
    metadata = write_collection(frame, dest, header)
    return ExportResult(
        path=FileIO.for_root(dest).root,
        table=str(spec.name),
        version=snapshot.version,
        partitions=len(metadata.partitions),
        files=len(metadata.files),
        rows=metadata.rows,
        bytes_written=sum(f.size_bytes for f in metadata.files),
        seconds=round(time.monotonic() - started, 3),
    )


def _partitions_of(snapshot: Snapshot, partition: Mapping[str, str | None] | None) -> Snapshot:
    """The snapshot restricted to the partitions matching ``partition`` (all when None)."""
    spec = snapshot.table.spec
    if partition is None:
        return snapshot
    if not spec.partition_by:
        raise InputError(f"{spec.name} is not partitioned: export it without --partition")
    unknown = [k for k in partition if k not in spec.partition_by]
    if unknown:
        raise InputError(
            f"{', '.join(unknown)} not partition column(s) of {spec.name}, which is "
            f"partitioned by ({', '.join(spec.partition_by)})",
            table=str(spec.name),
        )
    index = {k: i for i, k in enumerate(spec.partition_by)}
    wanted = {k: None if v == "" else v for k, v in partition.items()}
    live = {f.partition_id for f in snapshot.files}
    chosen = {
        pid: p
        for pid, p in snapshot.partitions.items()
        if pid in live and all(p.values[index[k]] == v for k, v in wanted.items())
    }
    if not chosen:
        held = sorted(p.path for pid, p in snapshot.partitions.items() if pid in live)
        shown = ", ".join(held[:10]) + (f", ... ({len(held)} in all)" if len(held) > 10 else "")
        raise NoSuchPartitionError(
            f"{spec.name} has no partition with {label(list(wanted), list(wanted.values()))} "
            f"holding data at version {snapshot.version}; partitions with data: "
            f"{shown or 'none'}",
            table=str(spec.name),
        )
    files = tuple(f for f in snapshot.files if f.partition_id in chosen)
    return replace(snapshot, files=files, partitions=chosen)


def _refuse_used_destination(dest: str) -> None:
    """A file, or a folder holding files, is not a destination (nothing is overwritten)."""
    fileio = FileIO.for_root(dest)
    if not fileio.exists(""):
        return
    try:
        fileio.size("")
    except StorageError:  # a directory
        if fileio.list_files(""):
            raise StorageError(
                f"{fileio.root} is not empty: a collection is written only into a new or "
                "empty folder, so that no existing file is overwritten",
                path=fileio.root,
            ) from None
    else:
        raise StorageError(f"{fileio.root} is a file: give a new or empty folder", path=fileio.root)


def _refuse_inside_warehouse(warehouse: FileIO, dest: str) -> None:
    """A collection inside the warehouse could be taken for table files (and vacuumed)."""
    target = FileIO.for_root(dest).root
    root = warehouse.root
    if "://" not in target and "://" not in root:
        target, root = os.path.realpath(target), os.path.realpath(root)
    if target == root or target.startswith(root.rstrip("/") + "/"):
        raise UnsafePathError(
            f"export destination {target} is inside the warehouse {root}: export to a folder "
            "outside it, so that the copy is never mistaken for table files",
            path=target,
        )
