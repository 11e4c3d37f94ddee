"""Importing a data collection into a table as one new version (Howl's IMPORT).

Everything is checked before anything is written: the metadata, the target's name and the
user's write permission, the definition (schema, primary key, sort order, storage format,
partition keys and values), that no partition to add holds data yet, and every listed data
file (inside the folder, listed size, format, columns, row count, no null or repeated key,
no key in two partitions when the key is unique table-wide).

A layout that imports by copy (`TableLayout.imports_by_copy`, the version layout) then, in
one catalog transaction V, copies each partition's files into ``<partition>/version_id=V/``
with a Bloom filter over its keys (so later upserts find the imported keys), and one commit
makes them visible; that needs no Spark. A failed import aborts its transaction, which
removes the files it copied (`write_transaction`). Other layouts (acid) upsert the rows
through their writer in one transaction (`versioned.api.import_rows`).
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from versioned.api.import_rows import ImportedRows, upsert_collection
from versioned.catalog.records import FileAdd, PartitionCommit, Snapshot, TableInfo
from versioned.catalog.store import MetaStore
from versioned.catalog.write_transaction import WriteTransaction, write_transaction
from versioned.collections.data_files import encode_partition_keys, read_key_columns
from versioned.collections.errors import CollectionError, PartitionExistsError
from versioned.collections.folder import CollectionFolder
from versioned.collections.matching import (
    ImportPlan,
    PlannedPartition,
    label,
    plan_import,
    refuse_existing_partitions,
    target_name,
)
from versioned.collections.metadata import CollectionFile
from versioned.errors import NoSuchTableError, VersionedError
from versioned.keys.bloom import (
    DEFAULT_ERROR_RATE,
    WRITE_HEADROOM,
    KeyBloomFilter,
    KeyDigests,
)
from versioned.keys.stats import key_stats
from versioned.layouts.base import layout_of
from versioned.layouts.version_partition.elsewhere import (
    blooms_by_partition,
    keyed_partition_columns,
    part_column,
    probe_elsewhere,
)
from versioned.layouts.version_partition.index import (
    MOVED,
    build_index,
    index_key_columns,
    write_index,
)
from versioned.layouts.version_partition.paths import (
    bloom_file_name,
    index_dir,
    index_file_name,
    version_dir,
)
from versioned.layouts.version_partition.probe import BLOOM_KIND
from versioned.names import TableName
from versioned.options import TXN_TIMEOUT_S
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImportResult:
    """What an import committed.

    Attributes:
        table: The target table.
        version: The version the import became (``None``: the collection held no rows).
        created: Whether the table was created from the collection's metadata.
        partitions: Partitions added.
        files: Data files copied (or written, by a layout that imports through its writer).
        rows: Rows imported (an import through the writer skips stale rows, see
            `versioned.api.import_rows`).
        bytes_written: Size of the files written (data and Bloom filters).
        seconds: Wall time.
    """

    table: str
    version: int | None
    created: bool
    partitions: int
    files: int
    rows: int
    bytes_written: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON output)."""
        return asdict(self)


@dataclass(frozen=True)
class _CheckedPartition:
    planned: PlannedPartition
    files: tuple[CollectionFile, ...]
    keys: pa.Table
    encoded: list[bytes]

    @property
    def rows(self) -> int:
        return sum(f.row_count for f in self.files)


def import_collection(
    catalog: Catalog,
    src: str | os.PathLike[str],
    *,
    table: str | TableName | None = None,
    partition: Mapping[str, str | None] | None = None,
    bloom_error_rate: float = DEFAULT_ERROR_RATE,
) -> ImportResult:
    """Import the collection at ``src``; see `Catalog.import_`."""
    started = time.monotonic()
    folder = CollectionFolder.open(os.fspath(src))
    metadata = folder.metadata
    name = target_name(metadata, table)
    store = catalog.store
    existing = _writable_table(store, name)
    plan = plan_import(metadata, name, existing.spec if existing else None, partition)
    if existing is not None:
        refuse_existing_partitions(plan, _partitions_with_data(store, name))
    checked = _check_data(folder, plan)
    if plan.spec.keys_move and checked:
        _import_keys(plan.spec, checked)  # refuses a key in two partitions of the collection
    # Every check passed: from here on the import writes.
    info = existing or catalog.create_table_from_spec(plan.spec).info
    try:
        imported = _write(catalog, folder, info, checked, bloom_error_rate)
    except BaseException:
        if existing is None:  # the table was made for this import: take it away again
            with suppress(VersionedError):
                catalog.drop_table(name, purge=True)
        raise
    return ImportResult(
        table=str(name),
        version=imported.version,
        created=existing is None,
        partitions=len(checked),
        files=imported.files,
        rows=imported.rows,
        bytes_written=imported.bytes_written,
        seconds=round(time.monotonic() - started, 3),
    )


def _write(
    catalog: Catalog,
    folder: CollectionFolder,
    info: TableInfo,
    checked: list[_CheckedPartition],
    error_rate: float,
) -> ImportedRows:
    """Commit the checked partitions: by copying their files, or through the engine."""
    if not checked:
        return ImportedRows(version=None, rows=0, files=0, bytes_written=0)
    if not layout_of(info.spec.layout).imports_by_copy:
        parts = [(c.files, c.planned.values) for c in checked]
        return upsert_collection(catalog, folder, info, parts)
    version, written = _commit(catalog.store, catalog.fileio, folder, info, checked, error_rate)
    return ImportedRows(
        version=version,
        rows=sum(c.rows for c in checked),
        files=sum(len(c.files) for c in checked),
        bytes_written=written,
    )


def _writable_table(store: MetaStore, name: TableName) -> TableInfo | None:
    """The target table once this user may write it, or None when it does not exist."""
    try:
        store.check(name, "write")
    except NoSuchTableError:
        return None
    return store.table(name)


def _partitions_with_data(
    store: MetaStore, name: TableName
) -> dict[tuple[str | None, ...], int | None]:
    """Partitions holding committed files (a row left by a failed write does not count)."""
    snapshot = store.snapshot(name)
    live = {f.partition_id for f in snapshot.files}
    return {
        p.values: p.head_version
        for pid, p in snapshot.partitions.items()
        if pid in live or p.head_version is not None
    }


def _check_data(folder: CollectionFolder, plan: ImportPlan) -> list[_CheckedPartition]:
    """Check the files of every planned partition and read their keys."""
    metadata = folder.metadata
    key_columns = index_key_columns(plan.spec)
    checked: list[_CheckedPartition] = []
    for planned in plan.partitions:
        # Spark writes one empty file for an empty unpartitioned frame: it holds no rows.
        files = tuple(f for f in planned.source.files if f.row_count > 0)
        if not files:
            continue
        tables = []
        for f in files:
            folder.check_file(f)
            tables.append(
                read_key_columns(
                    folder.fileio,
                    f,
                    file_format=metadata.file_format,
                    data_columns=metadata.data_columns,
                    key_columns=key_columns,
                )
            )
        keys = pa.concat_tables(tables)
        where = (
            f"collection partition ({label(metadata.partition_by, planned.source.values)})"
            if metadata.partition_by
            else "the collection"
        )
        encoded = encode_partition_keys(keys, key_columns, where)
        checked.append(_CheckedPartition(planned, files, keys, encoded))
    return checked


def _commit(
    store: MetaStore,
    fileio: FileIO,
    folder: CollectionFolder,
    info: TableInfo,
    checked: list[_CheckedPartition],
    error_rate: float,
) -> tuple[int | None, int]:
    """Copy, write the Bloom filters, commit; returns the version and the bytes written.

    One `write_transaction`: if anything fails before the commit, the transaction is aborted
    and the folders it wrote are removed.
    """
    if not checked:
        return None, 0
    spec = info.spec
    with write_transaction(store, spec.name, timeout_s=TXN_TIMEOUT_S, fileio=fileio) as tx:
        snapshot = store.snapshot(spec.name)
        changes = _retire_moved_keys(fileio, info, snapshot, checked, tx)
        for item in checked:
            changes.append(_copy_partition(store, fileio, folder, info, item, tx, error_rate))
        files = [a for c in changes for a in c.add]
        total = sum(a.size_bytes for a in files)
        tx.commit(
            operation="import",
            partitions=changes,
            expected_seq=snapshot.seq if spec.keys_move else None,
            metrics={
                "inserted": sum(c.rows for c in checked),
                "moved": sum(a.row_count for a in files if a.kind == "index"),
                "partitions": len(changes),
                "files_written": len(files),
                "bytes_written": total,
                "source": folder.location,
                "source_table": str(folder.metadata.table or ""),
                "source_version": _version(folder.metadata.source.get("version")),
            },
        )
    return tx.id, total


def _copy_partition(
    store: MetaStore,
    fileio: FileIO,
    folder: CollectionFolder,
    info: TableInfo,
    item: _CheckedPartition,
    tx: WriteTransaction,
    error_rate: float,
) -> PartitionCommit:
    """Copy one partition's files into version ``tx.id`` and write its Bloom filter."""
    spec = info.spec
    part = store.add_partition(spec.name, list(item.planned.values))
    if part.head_version is not None:  # a writer got there since the check
        raise PartitionExistsError(
            f"{spec.name} partition {part.path!r} received data (version "
            f"{part.head_version}) while importing; nothing was imported",
            table=str(spec.name),
        )
    tx.own_dir(f"{info.location}/{version_dir(part.path, tx.id)}")
    tx.own_dir(f"{info.location}/{index_dir(part.path, tx.id)}")
    adds: list[FileAdd] = []
    for i, f in enumerate(item.files):
        rel = f"{version_dir(part.path, tx.id)}/part-{i:05d}-{uuid.uuid4().hex}.{spec.file_format}"
        target = f"{info.location}/{rel}"
        folder.fileio.copy_file(f.path, fileio, target)
        size = fileio.size(target)
        if size != f.size_bytes:
            raise CollectionError(
                f"file {f.path!r} of {folder.location} changed while it was "
                f"imported ({size} bytes copied, {f.size_bytes} listed)",
                path=f.path,
            )
        adds.append(FileAdd(part.id, rel, "data", tx.id, size, f.row_count))
    bloom = KeyBloomFilter.build(item.encoded, error_rate=error_rate, headroom=WRITE_HEADROOM)
    rel = f"{index_dir(part.path, tx.id)}/{bloom_file_name()}"
    size = bloom.write(fileio, f"{info.location}/{rel}")
    stats = {**key_stats(item.keys, index_key_columns(spec)), **bloom.sizing_stats()}
    adds.append(FileAdd(part.id, rel, BLOOM_KIND, tx.id, size, len(item.encoded), stats))
    return PartitionCommit(part.id, expected_head=None, new_head=tx.id, add=tuple(adds))


def _retire_moved_keys(
    fileio: FileIO,
    info: TableInfo,
    snapshot: Snapshot,
    checked: list[_CheckedPartition],
    tx: WriteTransaction,
) -> list[PartitionCommit]:
    """For a table-wide key: retire the imported keys' rows in the table's other partitions.

    The imported row wins, as in an upsert: every partition whose Bloom filters may hold an
    imported key gets an ``M`` (moved) index entry for it. Reads no data file.

    Raises:
        CollectionError: A key appears in two partitions of the collection.
    """
    spec = info.spec
    if not spec.keys_move or not snapshot.partitions:
        return []
    keys, own_rows = _import_keys(spec, checked)
    probe = probe_elsewhere(
        fileio,
        info.location,
        keys,
        KeyDigests([k for item in checked for k in item.encoded]),
        own_rows=own_rows,
        partitions=list(snapshot.partitions.values()),
        blooms=blooms_by_partition(snapshot.files),
        key_columns=index_key_columns(spec),
        keyed_partition_columns=keyed_partition_columns(spec),
    )
    changes = []
    ordering = spec.ordering_column
    for pid, rows in probe.hits.items():
        part = snapshot.partitions[pid]
        moved = keys.take(pa.array(rows))
        if ordering and ordering not in moved.column_names:  # unknown here: no ordering value
            moved = moved.append_column(ordering, pa.nulls(moved.num_rows))
        entries = build_index(spec, moved, version=tx.id, ops=MOVED)
        tx.own_dir(f"{info.location}/{index_dir(part.path, tx.id)}")
        rel = f"{index_dir(part.path, tx.id)}/{index_file_name()}"
        size = write_index(fileio, f"{info.location}/{rel}", entries)
        add = FileAdd(pid, rel, "index", tx.id, size, entries.num_rows)
        changes.append(PartitionCommit(pid, part.head_version, tx.id, add=(add,)))
    return changes


def _import_keys(
    spec: TableSpec, checked: list[_CheckedPartition]
) -> tuple[pa.Table, dict[tuple[str | None, ...], np.ndarray]]:
    """The keys of every imported partition in one table (key columns and partition values
    as strings), with their positions per partition; refuses a key in two partitions."""
    tables, own_rows, start = [], {}, 0
    key_cols = list(index_key_columns(spec))
    keyed = [i for i, _ in keyed_partition_columns(spec)]
    seen: dict[tuple[Any, ...], tuple[str | None, ...]] = {}
    for item in checked:
        values = item.planned.values
        for encoded in item.encoded:
            identity = (*[values[i] for i in keyed], encoded)
            other = seen.setdefault(identity, values)
            if other != values:
                raise CollectionError(
                    f"key {encoded.decode(errors='replace')} is in two partitions of the "
                    f"collection ({label(spec.partition_by, other)} and "
                    f"{label(spec.partition_by, values)}), but {spec.name}'s primary key is "
                    "unique table-wide; keep one row per key",
                )
        table = item.keys.select(key_cols)
        for i in range(len(spec.partition_by)):
            column = pa.array([values[i]] * table.num_rows, pa.string())
            table = table.append_column(part_column(i), column)
        tables.append(table)
        own_rows[values] = np.arange(start, start + table.num_rows)
        start += table.num_rows
    return pa.concat_tables(tables), own_rows


def _version(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
