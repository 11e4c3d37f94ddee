"""Importing a data collection into a table as one new version (Howl's IMPORT).

Everything is checked before anything is written: the metadata, the target's name and the
user's write permission, the definition (schema, primary key, sort order, storage format,
partition keys and values), that no partition to add holds data yet, and every listed data
file (inside the folder, listed size, format, columns, row count, no null or repeated key,
no key in two partitions when the key is unique table-wide).

A layout that imports by copy (its ``import_files`` method: the version layout's
`versioned.layouts.version_partition.collection_import`) then, in one catalog transaction V,
copies each partition's files into ``<partition>/version_id=V/``
with a Bloom filter over its keys (so later upserts find the imported keys), and one commit
makes them visible; that needs no Spark. A failed import aborts its transaction, which
removes the files it copied (`write_transaction`). Other layouts (acid) upsert the rows
through their writer in one transaction (`versioned.api.import_rows`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from versioned.api.import_rows import ImportedRows, upsert_collection
from versioned.catalog.records import Snapshot, TableAccess
from versioned.catalog.store import MetaStore
from versioned.collections.checked import CheckedPartition, import_keys
from versioned.collections.data_files import encode_partition_keys, read_key_columns
from versioned.collections.folder import CollectionFolder
from versioned.collections.matching import (
    ImportPlan,
    label,
    plan_import,
    refuse_existing_partitions,
    target_name,
)
from versioned.errors import NoSuchTableError, VersionedError
from versioned.keys.bloom import (
    DEFAULT_ERROR_RATE,
)
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.abilities import CanImportFiles
from versioned.layouts.base import layout_of, layouts
from versioned.names import TableName
from versioned.results import PlainData

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImportResult(PlainData):
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
    store = catalog.engine_context.store
    existing = _writable_table(store, name)
    registered = {each.name: each for each in layouts()}
    plan = plan_import(
        metadata, name, existing.table.spec if existing else None, partition, layouts=registered
    )
    if existing is not None:
        assert existing.snapshot is not None
        refuse_existing_partitions(plan, _partitions_with_data(existing.snapshot))
    checked = _check_data(folder, plan)
    if plan.spec.keys_move and checked:
        import_keys(plan.spec, checked)  # refuses a key in two partitions of the collection
    # Every check passed: from here on the import writes.
    if existing is None:
        catalog.create_table_from_spec(plan.spec)
    try:
        target = existing or store.resolve(name, "write")
        imported = _write(catalog, folder, target, checked, bloom_error_rate)
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
    access: TableAccess,
    checked: list[CheckedPartition],
    error_rate: float,
) -> ImportedRows:
    """Commit the checked partitions: by copying their files, or through the engine."""
    if not checked:
        return ImportedRows(version=None, rows=0, files=0, bytes_written=0)
    info = access.table
    layout = layout_of(info.spec.layout)
    if not isinstance(layout, CanImportFiles):
        parts = [(c.files, c.planned.values) for c in checked]
        return upsert_collection(catalog, folder, access, parts)
    import_files = layout.import_files()
    ctx = catalog.engine_context
    version, written = import_files(
        ctx.store, ctx.fileio, folder, info, checked, error_rate=error_rate
    )
    return ImportedRows(
        version=version,
        rows=sum(c.rows for c in checked),
        files=sum(len(c.files) for c in checked),
        bytes_written=written,
    )


def _writable_table(store: MetaStore, name: TableName) -> TableAccess | None:
    """The target table and its snapshot once this user may write it (one catalog read),
    or None when it does not exist."""
    try:
        return store.resolve(name, "write", with_snapshot=True)
    except NoSuchTableError:
        return None


def _partitions_with_data(snapshot: Snapshot) -> dict[tuple[str | None, ...], int | None]:
    """Partitions holding committed files (a row left by a failed write does not count)."""
    live = {f.partition_id for f in snapshot.files}
    return {
        p.values: p.head_version
        for pid, p in snapshot.partitions.items()
        if pid in live or p.head_version is not None
    }


def _check_data(folder: CollectionFolder, plan: ImportPlan) -> list[CheckedPartition]:
    """Check the files of every planned partition and read their keys."""
    metadata = folder.metadata
    key_columns = index_key_columns(plan.spec)
    checked: list[CheckedPartition] = []
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
        checked.append(CheckedPartition(planned, files, keys, encoded))
    return checked
