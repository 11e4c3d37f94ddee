"""Import of a data collection by copy (the version layout's ``import_files`` method).

In one catalog transaction V, each checked partition's files are copied into
``<partition>/version_id=V/`` with a Bloom filter over its keys (so later upserts find the
imported keys), and one commit makes them visible; no Spark. For a table whose key is unique
table-wide, every other partition whose Bloom filters may hold an imported key gets an ``M``
(moved) index entry for it. A failed import aborts its transaction, which removes the files
it copied (`write_transaction`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from versioned.catalog.records import FileAdd, PartitionCommit, Snapshot, TableInfo
from versioned.catalog.store import MetaStore
from versioned.catalog.write_transaction import WriteTransaction, write_transaction
from versioned.collections.checked import CheckedPartition, import_keys
from versioned.collections.errors import CollectionError, PartitionExistsError
from versioned.collections.folder import CollectionFolder
from versioned.keys.bloom import WRITE_HEADROOM, KeyBloomFilter, KeyDigests
from versioned.keys.columns import index_key_columns, keyed_partition_columns
from versioned.keys.stats import key_stats
from versioned.layouts.version_partition.elsewhere import blooms_by_partition, probe_elsewhere
from versioned.layouts.version_partition.index import MOVED, build_index, write_index
from versioned.layouts.version_partition.paths import (
    bloom_file_name,
    index_dir,
    index_file_name,
    version_dir,
)
from versioned.layouts.version_partition.probe import BLOOM_KIND
from versioned.layouts.version_partition.retired_rows import (
    RETIRING_STAT,
    KeyHomes,
    row_versions_of,
)
from versioned.options import TXN_TIMEOUT_S
from versioned.storage.filesystem import FileIO


def import_files(
    store: MetaStore,
    fileio: FileIO,
    folder: CollectionFolder,
    info: TableInfo,
    checked: Sequence[CheckedPartition],
    *,
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
    item: CheckedPartition,
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
    checked: Sequence[CheckedPartition],
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
    keys, own_rows = import_keys(spec, checked)
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
    homes = KeyHomes.of(
        np.full(keys.num_rows, -1, dtype=np.int64), probe, row_versions_of(snapshot.files)
    )
    for pid, rows in probe.hits.items():
        part = snapshot.partitions[pid]
        moved = keys.take(pa.array(rows))
        if ordering and ordering not in moved.column_names:  # unknown here: no ordering value
            moved = moved.append_column(ordering, pa.nulls(moved.num_rows))
        entries = build_index(spec, moved, version=tx.id, ops=MOVED)
        tx.own_dir(f"{info.location}/{index_dir(part.path, tx.id)}")
        rel = f"{index_dir(part.path, tx.id)}/{index_file_name()}"
        size = write_index(fileio, f"{info.location}/{rel}", entries)
        stats = {RETIRING_STAT: homes.retiring_in(pid, rows)}
        add = FileAdd(pid, rel, "index", tx.id, size, entries.num_rows, stats)
        changes.append(PartitionCommit(pid, part.head_version, tx.id, add=(add,)))
    return changes


def _version(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
