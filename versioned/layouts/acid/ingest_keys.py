"""Where the keys of a streamed transaction live now in an acid table (their ROW__IDs).

Rows the batch itself committed are kept in memory (their key and ROW__ID), less those
other writers' delete events retired since (a key that moved to another partition). Stored
rows are found as an upsert's key lookup finds them, without Spark: the key filters of the
snapshot's insert files (partition, bucket, min/max key, Bloom filter; `file_pruning`)
choose the files that may hold a key, and only those are read, only their key and event
fields (`pyarrow`), less the rows their delete events removed. A key of a new record reads
no data file unless a Bloom filter gives a false positive.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.catalog.records import PartitionInfo, TableWriteIds
from versioned.keys.bloom import KeyBloomFilter
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.bucket_hash import bucket_ids
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.file_pruning import (
    NO_PARTITION,
    batch_keys,
    deletes_for,
    key_blooms,
    prune_insert_files,
)
from versioned.layouts.acid.key_filters import filter_key_columns
from versioned.layouts.acid.orc_files import read_committed_fields
from versioned.layouts.acid.snapshot_dirs import BucketFileRef, snapshot_files
from versioned.layouts.acid.table_rules import bucketing_version
from versioned.layouts.ingest import SinkContext
from versioned.schema import TableSpec
from versioned.values.arrow_types import arrow_type

_ROW_ID = (s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID)
_PART = "#p_"
_BUCKET = "#bucket"


def key_fields(spec: TableSpec) -> list[str]:
    """The key columns stored inside bucket files (the primary key less partition columns)."""
    return [k for k in spec.primary_key if k not in spec.partition_by]


class StoredKeys:
    """The live ROW__IDs of keys, for one streaming batch (see the module docstring)."""

    PARTITION = "#partition"
    """Column of `live_row_ids`: the partition id of the row."""

    def __init__(self, context: SinkContext, own: Sequence[DeltaDir]) -> None:
        """``own``: the batch's insert directories (their delete twins are the batch's too)."""
        self._context = context
        self._spec = context.table.spec
        self._own = {d.name for d in own}
        self._own_deletes = {dataclasses.replace(d, delete=True).name for d in own}
        self._keys = key_fields(self._spec)
        self._mine: pa.Table | None = None
        self.partitions: dict[int, PartitionInfo] = {}
        self._blooms: dict[str, KeyBloomFilter] = context.kept.setdefault("acid_blooms", {})
        self.blooms_read = 0
        """Bloom files read from storage (each once per connection)."""
        self.seq = 0
        """The table's commit sequence the last `live_row_ids` looked the keys up at."""

    def live_row_ids(self, rows: pa.Table) -> pa.Table:
        """``#partition`` and ROW__ID of every live row that has the key of a row of
        ``rows`` (the data columns of one transaction, one row per key)."""
        keys = rows.select(self._keys)
        mine = None
        if self._mine is not None and self._mine.num_rows:
            mine = self._mine.join(keys, self._keys, join_type="left semi")
        return self._stored(keys, mine).select([self.PARTITION, *_ROW_ID])

    def committed(self, new: pa.Table | None) -> None:
        """The batch committed ``new`` (key columns and ROW__IDs of its inserted rows)."""
        if new is None or not new.num_rows:
            return
        pid = pa.array([self._context.partition.id] * new.num_rows, pa.int64())
        new = new.append_column(self.PARTITION, pid)
        if self._mine is None:
            self._mine = new
            return
        kept = self._mine.join(new.select(self._keys), self._keys, join_type="left anti")
        self._mine = pa.concat_tables([kept.select(new.schema.names), new])

    def _stored(self, keys: pa.Table, mine: pa.Table | None) -> pa.Table:
        """Live rows with one of ``keys``: stored ones read from the files, and ``mine``
        (rows this batch committed with them), both less the rows delete events retired.

        Another batch may have retired a row of this one (its key moved to that batch's
        partition): the delete events of other writers apply to this batch's rows too."""
        context = self._context
        spec = self._spec
        name = spec.name
        snapshot = context.store.snapshot(name)
        self.seq = snapshot.seq
        ids = context.store.write_ids(name, snapshot.seq)
        self.partitions = dict(snapshot.partitions)
        files = snapshot_files(snapshot, ids)
        probe_keys, partition_columns, bucketed = self._probe_table(keys)
        filtered = filter_key_columns(spec)
        probe = batch_keys(
            probe_keys,
            partition_columns=partition_columns,
            partitions=list(snapshot.partitions.values()),
            bucket_column=_BUCKET if bucketed else None,
            filter_columns=filtered,
        )
        scope_p = None
        if probe.partition_ids is not None:
            scope_p = {int(p) for p in np.unique(probe.partition_ids) if p != NO_PARTITION}
        scope_b = None if probe.buckets is None else {int(b) for b in np.unique(probe.buckets)}
        in_scope = files.only(scope_p, scope_b)
        inserts = [r for r in in_scope.inserts if r.directory not in self._own]
        location = context.table.location
        blooms = key_blooms(snapshot.files)
        kept = prune_insert_files(
            context.fileio, location, inserts, probe, blooms, load=self._bloom
        ).kept
        empty = _empty(spec, self._keys, self.PARTITION)
        rows = [self._read(r, keys, ids) for r in kept]
        deletes = {d.file.path: d for d in deletes_for(kept, in_scope.deletes)}
        if mine is not None and mine.num_rows:
            rows.append(mine.select(empty.schema.names).cast(empty.schema))
            # This batch's own delete events are in ``mine`` already (`committed`).
            own = [r for r in in_scope.inserts if r.directory in self._own]
            others = [d for d in in_scope.deletes if d.directory not in self._own_deletes]
            deletes.update((d.file.path, d) for d in deletes_for(own, others))
        if not rows:
            return empty
        found = pa.concat_tables([empty, *rows])
        deleted = [self._read_deletes(r, ids) for r in deletes.values()]
        if not deleted:
            return found
        gone = pa.concat_tables(deleted)
        return found.join(gone, [self.PARTITION, *_ROW_ID], join_type="left anti")

    def _bloom(self, path: str) -> KeyBloomFilter:
        """A Bloom file's filter, read once per connection (committed files never change)."""
        found = self._blooms.get(path)
        if found is None:
            found = self._blooms[path] = KeyBloomFilter.read(self._context.fileio, path)
            self.blooms_read += 1
        return found

    def _probe_table(self, keys: pa.Table) -> tuple[pa.Table, list[str] | None, bool]:
        spec = self._spec
        columns: dict[str, Any] = {k: keys.column(k) for k in self._keys}
        partition_columns = None
        if not spec.keys_move:
            values = self._context.partition.values
            for p, v in zip(spec.partition_by, values, strict=True):
                columns[_PART + p] = pa.array([v] * keys.num_rows, pa.string())
            partition_columns = [_PART + p for p in spec.partition_by]
        bucketed = bool(spec.bucket_by) and set(spec.bucket_by) <= set(spec.primary_key)
        if bucketed:
            types = [spec.column(c).type for c in spec.bucket_by]
            num = spec.buckets or 1
            columns[_BUCKET] = pa.array(
                bucket_ids(keys, list(spec.bucket_by), types, num, bucketing_version(spec))
            )
        return pa.table(columns), partition_columns, bucketed

    def _read(self, ref: BucketFileRef, keys: pa.Table, ids: TableWriteIds) -> pa.Table:
        fields = [*_ROW_ID, s.CURRENT_WRITE_ID, *[f"{s.ROW}.{k}" for k in self._keys]]
        context = self._context
        events = read_committed_fields(context.fileio, context.table.location, ref.file, fields)
        events = events.filter(_valid(events.column(s.CURRENT_WRITE_ID), ids))
        row = events.column(s.ROW).combine_chunks()
        stored = {k: row.field(k).cast(arrow_type(self._spec.column(k).type)) for k in self._keys}
        table = pa.table(
            {
                **stored,
                **{f: events.column(f).cast(pa.int64()) for f in _ROW_ID},
                self.PARTITION: pa.array([ref.file.partition_id] * events.num_rows, pa.int64()),
            }
        )
        wanted = keys.cast(pa.schema([(k, table.schema.field(k).type) for k in self._keys]))
        return table.join(wanted, self._keys, join_type="left semi")

    def _read_deletes(self, ref: BucketFileRef, ids: TableWriteIds) -> pa.Table:
        fields = [*_ROW_ID, s.CURRENT_WRITE_ID]
        context = self._context
        events = read_committed_fields(context.fileio, context.table.location, ref.file, fields)
        events = events.filter(_valid(events.column(s.CURRENT_WRITE_ID), ids))
        return pa.table(
            {
                self.PARTITION: pa.array([ref.file.partition_id] * events.num_rows, pa.int64()),
                **{f: events.column(f).cast(pa.int64()) for f in _ROW_ID},
            }
        )


def _valid(write_ids: pa.ChunkedArray, ids: TableWriteIds) -> pa.ChunkedArray:
    """Which write ids are valid in the snapshot."""
    valid = pc.less_equal(write_ids, ids.high_water_mark)
    invalid = [*ids.open_ids, *ids.aborted_ids]
    if invalid:
        valid = pc.and_(valid, pc.invert(pc.is_in(write_ids, pa.array(invalid, pa.int64()))))
    return valid


def _empty(spec: TableSpec, keys: list[str], partition: str) -> pa.Table:
    fields = [pa.field(k, arrow_type(spec.column(k).type)) for k in keys]
    fields += [pa.field(f, pa.int64()) for f in _ROW_ID] + [pa.field(partition, pa.int64())]
    return pa.schema(fields).empty_table()
