"""A transaction batch into an acid table: one ``delta_FIRST_LAST`` that grows per commit.

As Hive's streaming writer does, the batch's write ids ``FIRST..LAST`` share one delta
directory with one ``bucket_NNNNN`` per bucket. Each commit appends the transaction's
insert events to those files, flushes them with an ORC intermediate footer (a prefix of the
file that ends there is a complete ORC file) and records the flushed length twice: in Hive's
``bucket_NNNNN_flush_length`` side file, for Hive's readers, and in the catalog, for ours
(the file's ``size_bytes`` grows by `FileGrowth`, and its stats say ``stream_open`` so
that readers read only that prefix, on the driver). Events of an aborted or expired
transaction may stay in a file, but their write id is never valid, so no reader shows them.
`AcidIngestSink.close` writes the final footer (with Hive's ``hive.acid.*`` metadata),
records the full length and the key filters of each insert file, and removes the side
files.

Primary keys hold as for upsert: before a commit the transaction's keys are looked up
(the batch's own rows in memory; stored rows through the key filters, reading only the key
fields of files that may hold one, `acid_keys`) and a stored row with the key gets a
delete event, in the batch's ``delete_delta_FIRST_LAST`` (the range Hive's getAcidState
pairs with the insert delta; a ``delete_delta_W_W`` inside it would count as obsolete), one
complete file per transaction and bucket, ``bucket_N_K``, sorted by ROW__ID as Hive's
readers expect of every delete file (appending to one file would leave it sorted per
transaction only). New keys read no data file.

On an object store a file is visible only once closed, and cannot grow: there each
transaction of the batch writes its own ``delta_W_W`` and ``delete_delta_W_W`` of complete
bucket files (with their key filters), which is what Hive's streaming writer leaves for
batches of one transaction, so that a committed transaction is readable at once by our
readers and by Hive's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.catalog.records import DataFile, FileAdd, FileGrowth, PartitionCommit, SinceCheck
from versioned.errors import NotSupportedError
from versioned.keys.latest import last_per_key
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.bucket_codec import encode_bucket_property
from versioned.layouts.acid.bucket_hash import bucket_ids
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.flush_length import FlushLengthFile
from versioned.layouts.acid.ingest_keys import StoredKeys, key_fields
from versioned.layouts.acid.key_filters import KEY_BLOOM_KIND, write_key_filter
from versioned.layouts.acid.orc_files import AcidBucketWriter, open_bucket_writer
from versioned.layouts.acid.paths import bucket_file_path, marker_path, write_acid_version_marker
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, MARKER_KIND, STREAM_OPEN
from versioned.layouts.acid.table_rules import bucketing_version
from versioned.layouts.ingest import PreparedCommit, SinkContext
from versioned.storage.filesystem import FileIO

INSERT_KIND = "delta"
_STATEMENT = None  # a streaming delta has no statement suffix (Hive's -1)


@dataclass
class _GrowingFile:
    """One bucket file of the batch, appended to at each commit."""

    rel: str
    partition_id: int
    partition_path: str
    bucket: int
    kind: str
    out: Any
    writer: AcidBucketWriter
    side: FlushLengthFile
    length: int = 0
    rows: int = 0
    recorded: bool = False


class AcidIngestSink:
    """Writes one transaction batch into an acid table (see the module docstring)."""

    def __init__(self, context: SinkContext) -> None:
        """A sink for one batch.

        Raises:
            NotSupportedError: The table has an ordering column (skipping stale records
                needs the stored ordering values, which only upsert reads).
        """
        spec = context.table.spec
        if spec.ordering_column is not None:
            raise NotSupportedError(
                f"cannot stream into {spec.name}: it has an ordering column "
                f"({spec.ordering_column}), and skipping stale records needs the stored "
                "ordering values, which only upsert reads. Load it with `versioned upsert`",
                layout="acid",
                operation="stream",
                table=str(spec.name),
            )
        self._context = context
        self._spec = spec
        self._fileio: FileIO = context.fileio
        self._location = context.table.location
        low, high = min(context.write_ids), max(context.write_ids)
        self._per_txn = self._fileio.object_store is not None  # see the module docstring
        self._inserts = DeltaDir(low, high, _STATEMENT)
        self._deletes = DeltaDir(low, high, _STATEMENT, delete=True)
        own = [DeltaDir(w, w, _STATEMENT) for w in context.write_ids]
        self._files: dict[tuple[int, str, int], _GrowingFile] = {}
        self._pending: list[pa.Table] = []
        self._touched: set[tuple[int, str, int]] = set()
        self._markers: set[tuple[int, str]] = set()  # (partition id, directory name)
        self._new_markers: set[tuple[int, str]] = set()
        self._delete_adds: dict[int, list[FileAdd]] = {}
        self._insert_adds: dict[int, list[FileAdd]] = {}
        self._keys = StoredKeys(context, own if self._per_txn else [self._inserts])
        self._new_ids: pa.Table | None = None
        self._prepared: tuple[int, PreparedCommit] | None = None
        self._rows: pa.Table | None = None

    # IngestSink -------------------------------------------------------------------------------

    def write(self, txn_id: int, write_id: int, rows: pa.Table) -> None:
        self._pending.append(rows)

    def prepare_commit(self, txn_id: int, write_id: int) -> PreparedCommit:
        """Append and flush the transaction's events; the catalog change to commit.

        The change is planned against the table as the keys were looked up: it commits
        only if no write changed the partitions holding those keys since (the commit's
        ``expected_seq`` and `_since_check`), so that a row another writer replaced
        meanwhile is not left live beside this transaction's. Asked again for the same
        transaction (its commit lost that race), its insert events stay in the files and
        its delete events are planned again against the table as it is now."""
        if self._prepared is not None and self._prepared[0] == txn_id:
            return self._replanned(txn_id, write_id)
        rows = pa.concat_tables(self._pending) if self._pending else None
        self.abort(txn_id)
        old = None
        if rows is not None and rows.num_rows:
            keys = key_fields(self._spec)  # none: the key is the partition's columns
            rows = last_per_key(rows, keys)[0] if keys else rows.slice(rows.num_rows - 1)
            old = self._keys.live_row_ids(rows)
            self._write_deletes(txn_id, write_id, old)
            self._new_ids = self._write_inserts(txn_id, write_id, rows)
        for key in self._touched:
            growing = self._files[key]
            growing.length = growing.writer.flush()
            growing.side.append(growing.length)
        self._rows = rows
        return self._prepare(txn_id, write_id, rows, old)

    def _replanned(self, txn_id: int, write_id: int) -> PreparedCommit:
        """The change again, with delete events for the keys' rows live now."""
        rows = self._rows
        if rows is None or not rows.num_rows:
            return (
                self._prepared[1]
                if self._prepared is not None
                else self._prepare(txn_id, write_id, rows, None)
            )
        before = {a.path for adds in self._delete_adds.values() for a in adds}
        self._delete_adds = {}
        self._new_markers = set()  # the change lists its directories' markers again
        old = self._keys.live_row_ids(rows)
        self._write_deletes(txn_id, write_id, old)
        after = {a.path for adds in self._delete_adds.values() for a in adds}
        for rel in sorted(before - after):  # a delete file of the first plan, now wrong
            self._fileio.delete_file(f"{self._location}/{rel}", missing_ok=True)
        return self._prepare(txn_id, write_id, rows, old)

    def _prepare(
        self, txn_id: int, write_id: int, rows: pa.Table | None, old: pa.Table | None
    ) -> PreparedCommit:
        replaced = 0 if old is None else old.num_rows
        changes = self._changes(txn_id)
        mine = self._context.partition.id
        change = changes.pop(mine, PartitionCommit(mine, check_head=False))
        metrics = {
            "inserted": 0 if rows is None else rows.num_rows - replaced,
            "updated": replaced,
            "write_id": write_id,
        }
        looked_up = old is not None
        prepared = PreparedCommit(
            change,
            metrics,
            others=tuple(changes.values()),
            expected_seq=self._keys.seq if looked_up else None,
            unless_since=self._since_check(old) if old is not None else None,
        )
        self._prepared = (txn_id, prepared)
        return prepared

    def _since_check(self, old: pa.Table) -> SinceCheck:
        """What makes commits since the key lookup a conflict: new insert or delete events
        in a partition where a key of the transaction may live (its own partition, and the
        partitions of the rows it replaces; any partition when keys move between them)."""
        mine = self._context.partition.id
        anywhere = self._spec.keys_move
        watched = {mine, *pc.unique(old.column(StoredKeys.PARTITION)).to_pylist()}
        since = self._keys.seq

        def check(files: Sequence[DataFile]) -> str | None:
            hits = [
                f
                for f in files
                if f.added_seq > since
                and f.kind in (INSERT_KIND, DELETE_KIND)
                and (anywhere or f.partition_id in watched)
            ]
            if not hits:
                return None
            return (
                f"{len(hits)} event file(s) were committed since this transaction looked its "
                "keys up, where they may live"
            )

        return check

    def committed(self, txn_id: int) -> None:
        for key in self._touched:
            growing = self._files[key]
            growing.recorded = True
        self._keys.committed(self._new_ids)
        self._markers |= self._new_markers
        self.abort(txn_id)

    def abort(self, txn_id: int) -> None:
        self._pending = []
        self._touched = set()
        self._new_markers = set()
        self._delete_adds = {}
        self._insert_adds = {}
        self._new_ids = None
        self._prepared = None

    def close(self) -> list[PartitionCommit]:
        """Final footers, full lengths and key filters of the recorded files; side files go."""
        by_partition: dict[int, list[Any]] = {}
        for growing in self._files.values():
            growing.writer.close()
            growing.out.close()
            growing.side.delete()
            if not growing.recorded:
                continue  # nothing of it was ever committed: an orphan for vacuum
            size = self._fileio.size(f"{self._location}/{growing.rel}")
            stats: dict[str, Any] = {
                "write_id": self._inserts.max_write_id,
                "bucket": growing.bucket,
            }
            items = by_partition.setdefault(growing.partition_id, [])
            if growing.kind == INSERT_KIND:
                filters = write_key_filter(self._fileio, self._location, growing.rel, self._spec)
                if filters is not None:
                    stats.update(filters.stats)
                    items.append(
                        FileAdd(
                            growing.partition_id,
                            filters.bloom_path,
                            KEY_BLOOM_KIND,
                            self._context.txn_ids[-1],
                            filters.bloom_size,
                            filters.keys,
                        )
                    )
            items.append(FileGrowth(growing.rel, size, growing.rows, stats))
        return [
            PartitionCommit(
                pid,
                check_head=False,
                add=tuple(i for i in items if isinstance(i, FileAdd)),
                grow=tuple(i for i in items if isinstance(i, FileGrowth)),
            )
            for pid, items in by_partition.items()
        ]

    # writing ----------------------------------------------------------------------------------

    def _write_inserts(self, txn_id: int, write_id: int, rows: pa.Table) -> pa.Table:
        """Append ``rows`` as insert events (on an object store: write them as the complete
        files of the transaction's own delta); the ROW__IDs they got, with their keys."""
        spec = self._spec
        types = [spec.column(c).type for c in spec.bucket_by]
        num = spec.buckets or 1
        buckets = bucket_ids(rows, list(spec.bucket_by), types, num, bucketing_version(spec))
        keys = [k for k in spec.primary_key if k not in spec.partition_by]
        pid = self._context.partition.id
        placed = []
        for bucket in np.unique(buckets):
            group = rows.filter(pa.array(buckets == bucket))
            if keys:
                group = group.sort_by([(k, "ascending") for k in keys])
            if self._per_txn:
                first = self._write_insert_file(txn_id, write_id, int(bucket), group)
            else:
                growing = self._file(pid, self._context.partition.path, INSERT_KIND, int(bucket))
                first = growing.writer.insert(write_id, group)
                growing.rows += group.num_rows
            ids = {
                s.ORIGINAL_WRITE_ID: pa.array([write_id] * group.num_rows, pa.int64()),
                s.BUCKET: pa.array(
                    [encode_bucket_property(int(bucket), _STATEMENT)] * group.num_rows, pa.int64()
                ),
                s.ROW_ID: pa.array(np.arange(first, first + group.num_rows), pa.int64()),
            }
            placed.append(pa.table({**{k: group.column(k) for k in keys}, **ids}))
        return pa.concat_tables(placed)

    def _write_insert_file(self, txn_id: int, write_id: int, bucket: int, rows: pa.Table) -> int:
        """``rows`` as the complete file ``delta_W_W/bucket_N`` with its key filters (object
        stores); the row id of its first event."""
        pid, path = self._context.partition.id, self._context.partition.path
        directory = DeltaDir(write_id, write_id, _STATEMENT)
        rel = bucket_file_path(path, directory, bucket)
        prop = encode_bucket_property(bucket, _STATEMENT)
        where = f"{self._location}/{rel}"
        with open_bucket_writer(
            self._fileio, where, self._spec.data_columns, bucket_property=prop
        ) as writer:
            first = writer.insert(write_id, rows)
        stats: dict[str, Any] = {"write_id": write_id, "bucket": bucket}
        adds = self._insert_adds.setdefault(pid, [])
        filters = write_key_filter(self._fileio, self._location, rel, self._spec)
        if filters is not None:
            stats.update(filters.stats)
            bloom = FileAdd(
                pid, filters.bloom_path, KEY_BLOOM_KIND, txn_id, filters.bloom_size, filters.keys
            )
            adds.append(bloom)
        size = self._fileio.size(where)
        adds.append(FileAdd(pid, rel, INSERT_KIND, txn_id, size, rows.num_rows, stats))
        adds.extend(self._marker(pid, path, directory, txn_id))
        return first

    def _write_deletes(self, txn_id: int, write_id: int, old: pa.Table) -> None:
        """Delete events for the stored rows ``old`` (ROW__IDs with ``#partition``): per
        partition and bucket one complete file ``delete_delta_FIRST_LAST/bucket_N_K`` (``K``:
        the transaction's place in the batch), sorted by ROW__ID as Hive's readers expect
        of every delete file."""
        if not old.num_rows:
            return
        directory = self._deletes
        attempt: int | None = self._context.txn_ids.index(txn_id)
        if self._per_txn:
            directory, attempt = DeltaDir(write_id, write_id, _STATEMENT, delete=True), None
        partitions = self._keys.partitions
        for pid in pc.unique(old.column(StoredKeys.PARTITION)).to_pylist():
            mine = old.filter(pc.equal(old.column(StoredKeys.PARTITION), pid))
            bucket_of = pc.shift_right(
                pc.bit_wise_and(mine.column(s.BUCKET), 0x0FFF0000), 16
            ).to_numpy()
            path = partitions[pid].path
            adds = self._delete_adds.setdefault(pid, [])
            for bucket in np.unique(bucket_of):
                events = mine.filter(pa.array(bucket_of == bucket))
                rel = bucket_file_path(path, directory, int(bucket), attempt)
                prop = encode_bucket_property(int(bucket), _STATEMENT)
                where = f"{self._location}/{rel}"
                columns = self._spec.data_columns
                with open_bucket_writer(
                    self._fileio, where, columns, bucket_property=prop, events="delete"
                ) as writer:
                    writer.delete(write_id, events)
                size = self._fileio.size(where)
                stats = {"write_id": write_id, "bucket": int(bucket)}
                adds.append(FileAdd(pid, rel, DELETE_KIND, txn_id, size, events.num_rows, stats))
            adds.extend(self._marker(pid, path, directory, txn_id))

    def _file(self, pid: int, partition_path: str, kind: str, bucket: int) -> _GrowingFile:
        key = (pid, kind, bucket)
        self._touched.add(key)
        found = self._files.get(key)
        if found is not None:
            return found
        rel = bucket_file_path(partition_path, self._inserts, bucket)
        out = self._fileio.open_output(f"{self._location}/{rel}")
        writer = AcidBucketWriter(
            out,
            self._spec.data_columns,
            bucket_property=encode_bucket_property(bucket, _STATEMENT),
            streaming=True,
        )
        side = FlushLengthFile(self._fileio, f"{self._location}/{rel}")
        growing = _GrowingFile(rel, pid, partition_path, bucket, kind, out, writer, side)
        self._files[key] = growing
        return growing

    def _changes(self, txn_id: int) -> dict[int, PartitionCommit]:
        """The catalog change of this commit, per partition: files first committed now are
        added (with their directory's marker), the others grow."""
        items: dict[int, list[Any]] = {pid: list(a) for pid, a in self._delete_adds.items()}
        for pid, adds in self._insert_adds.items():
            items.setdefault(pid, []).extend(adds)
        for key in sorted(self._touched):
            growing = self._files[key]
            part = items.setdefault(growing.partition_id, [])
            stats = {STREAM_OPEN: True, "bucket": growing.bucket}
            if growing.recorded:
                part.append(FileGrowth(growing.rel, growing.length, growing.rows, stats))
                continue
            part.append(
                FileAdd(
                    growing.partition_id,
                    growing.rel,
                    growing.kind,
                    txn_id,
                    growing.length,
                    growing.rows,
                    {**stats, "write_id": self._inserts.max_write_id},
                )
            )
            part.extend(
                self._marker(growing.partition_id, growing.partition_path, self._inserts, txn_id)
            )
        return {
            pid: PartitionCommit(
                pid,
                check_head=False,
                add=tuple(i for i in found if isinstance(i, FileAdd)),
                grow=tuple(i for i in found if isinstance(i, FileGrowth)),
            )
            for pid, found in items.items()
        }

    def _marker(self, pid: int, path: str, directory: DeltaDir, txn_id: int) -> Sequence[FileAdd]:
        """The ``_orc_acid_version`` marker of one of the batch's directories in a
        partition, once."""
        which = (pid, directory.name)
        if which in self._markers or which in self._new_markers:
            return ()
        self._new_markers.add(which)
        write_acid_version_marker(self._fileio, f"{self._location}/{path}".rstrip("/"), directory)
        rel = marker_path(path, directory)
        size = self._fileio.size(f"{self._location}/{rel}")
        return (FileAdd(pid, rel, MARKER_KIND, txn_id, size, 0),)
