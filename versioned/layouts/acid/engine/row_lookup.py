"""Finding the current ROW__ID (and ordering value) of each key of a batch.

Only the insert files that may hold a key are read, and of them only the key columns, the
ordering column and the ROW__ID fields (Spark prunes the nested ``row`` struct). Which
files may hold a key is decided on the driver without opening a data file
(`layouts.acid.file_pruning`): the key's partition (every partition when keys move), its
bucket when the bucket columns are part of the key, the file's min/max key in the catalog
and the file's Bloom filter side file (`layouts.acid.key_filters`). Delete files are read
only where they may delete rows of the kept files: same partition and bucket, written no
earlier. A batch of new keys reads no data file at all.

The chosen insert files are read on the driver (`driver_reads.KeyMatch`: pyarrow reads only
the key, ordering and ROW__ID fields and keeps, file by file, the events whose key values
occur in the batch), so Spark joins the batch with a few stored rows instead of scanning
every key of the table: on the 10M-row benchmark table a 1 % batch's lookup went from a
Spark scan of 10M keys to ~2.5 s of pyarrow reads. Tables whose key or ordering column is a
``DATE`` or ``TIMESTAMP``, or with ``read.driver_max_events=0``, keep the Spark scan.

Why our own filters and not ORC's: ORC's stripe and row-group min/max and Bloom filters
(Spark 4 pushes predicates on nested fields such as ``row.<key>`` into ORC,
``spark.sql.optimizer.nestedPredicatePushdown.supportedFileSources`` defaults to
``parquet,orc``) are consulted only after a file is opened, and only for a literal
predicate: the lookup is a join with the batch, so Spark pushes nothing, and even an
``IN`` list of the batch's keys would open every bucket file for its footer and indexes. A
new key would still cost one file open per bucket file of its bucket. The catalog's min/max
and a Bloom side file decide before any data file is opened, and the bucket files stay
exactly what Hive writes.

Measured (``benchmarks/acid_lookup.py``: 200k rows, 4 buckets on the key, 20 deltas of 1 %
updates, so 84 insert and 80 delete bucket files; batches of 2,000 keys, three runs each,
every run adding its delta; 2 cores shared with other jobs at load 15-22, so the seconds
are rough and the files are the figure to trust):

====================  =========================  =========================
batch                 before: s (min) / files    after: s (min) / files
====================  =========================  =========================
1 % updates           9.3 / 164, 172, 180        11.2 / 163, 172, 180
new keys, above max   7.7 / 188, 192, 196        2.7 / 0, 0, 0
new keys, in range    7.2 / 200, 204, 208        2.8 / 0, 24, 50
====================  =========================  =========================

Random 1 % updates gain nothing: every delta holds a few of the batch's keys, so nearly
every file may hold one (pruning them costs ~0.2 s on the driver: 84 Bloom files read).
New keys above the stored range are pruned by min/max alone; new keys inside it by the
Bloom filters, where a large base file probed with ~500 keys still tests positive ~40 % of
the time (`key_filters.KEY_BLOOM_ERROR_RATE`) and then brings the delete files of its
bucket. Writing the filters costs ~0.2 s per 50k-key bucket file on the driver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.engine.bucketing import BUCKET_COLUMN
from versioned.layouts.acid.engine.driver_reads import KeyMatch
from versioned.layouts.acid.engine.events import ROW_ID_FIELDS, live_events
from versioned.layouts.acid.file_pruning import (
    NO_PARTITION,
    FilePruning,
    batch_keys,
    deletes_for,
    key_blooms,
    prune_insert_files,
)
from versioned.layouts.acid.key_filters import filter_key_columns
from versioned.layouts.acid.snapshot_dirs import SnapshotFiles
from versioned.layouts.engine_protocol import EngineContext
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

STORED = "#s_"
"""Prefix of the stored row's columns in `stored_rows`."""
_PART = "#p_"


@dataclass(frozen=True)
class LookupScope:
    """Which files a lookup reads: partition ids and bucket ids (``None``: all)."""

    partitions: frozenset[int | None] | None
    buckets: frozenset[int] | None


@dataclass(frozen=True)
class KeyLookup:
    """What the lookup of one batch reads.

    Attributes:
        scope: The partitions and buckets the batch's keys can live in.
        files: The insert files that may hold a key, and the delete files of their
            partitions and buckets.
        pruning: How the insert files were chosen.
        snapshot_files: Bucket files of the snapshot (insert and delete events).
        match: The batch's key values the reads keep (`driver_reads.KeyMatch`), when the
            key has columns outside the partition of types the filters hold.
        batch_rows: Rows (keys) of the batch.
    """

    scope: LookupScope
    files: SnapshotFiles
    pruning: FilePruning
    snapshot_files: int
    match: KeyMatch | None
    batch_rows: int

    @property
    def files_read(self) -> int:
        """Bucket files the lookup reads (insert and delete events)."""
        return len(self.files.inserts) + len(self.files.deletes)

    @property
    def files_skipped(self) -> int:
        """Bucket files of the snapshot the lookup does not read."""
        return self.snapshot_files - self.files_read


def bucket_is_keyed(spec: TableSpec) -> bool:
    """Whether a key's bucket is a function of the key (bucket columns within the key)."""
    return bool(spec.bucket_by) and set(spec.bucket_by) <= set(spec.primary_key)


def plan_lookup(
    fileio: FileIO, snapshot: Snapshot, files: SnapshotFiles, batch: DataFrame
) -> KeyLookup:
    """Choose the files the lookup of ``batch``'s keys reads (collects the batch's keys).

    ``batch`` has the table's columns and `BUCKET_COLUMN`, one row per record key.
    """
    spec = snapshot.table.spec
    parts = list(spec.partition_by)
    filtered = filter_key_columns(spec) or ()
    wanted = [
        *[F.col(p).cast("string").alias(_PART + p) for p in parts],
        *[F.col(c) for c in filtered],
        F.col(BUCKET_COLUMN),
    ]
    keys: pa.Table = batch.select(*wanted).toArrow()
    probe = batch_keys(
        keys,
        partition_columns=None if spec.keys_move else [_PART + p for p in parts],
        partitions=list(snapshot.partitions.values()),
        bucket_column=BUCKET_COLUMN if bucket_is_keyed(spec) else None,
        filter_columns=filtered or None,
    )
    scope = _scope(probe.partition_ids, probe.buckets)
    in_scope = files.only(scope.partitions, scope.buckets)
    root = snapshot.table.location
    pruning = prune_insert_files(fileio, root, in_scope.inserts, probe, key_blooms(snapshot.files))
    deletes = deletes_for(pruning.kept, in_scope.deletes)
    chosen = SnapshotFiles(files.write_ids, pruning.kept, deletes, files.states)
    match = None
    if filtered:
        match = KeyMatch.of(spec, keys.select(list(filtered)), _stored_fields(spec))
    snapshot_files = len(files.inserts) + len(files.deletes)
    return KeyLookup(scope, chosen, pruning, snapshot_files, match, keys.num_rows)


def _stored_fields(spec: TableSpec) -> list[str]:
    """The ``row`` fields a lookup reads: the record key's and the ordering column."""
    fields = [c for c in spec.record_key if c not in spec.partition_by]
    if spec.ordering_column and spec.ordering_column not in fields:
        fields.append(spec.ordering_column)
    return fields


def _scope(partition_ids: np.ndarray | None, buckets: np.ndarray | None) -> LookupScope:
    partitions = None
    if partition_ids is not None:
        partitions = frozenset(int(p) for p in np.unique(partition_ids) if p != NO_PARTITION)
    keyed = None if buckets is None else frozenset(int(b) for b in np.unique(buckets))
    return LookupScope(partitions, keyed)


def stored_rows(
    ctx: EngineContext, snapshot: Snapshot, lookup: KeyLookup, batch: DataFrame
) -> DataFrame:
    """The live stored row of each batch key: its record key, partition columns, ordering
    value and ROW__ID fields, each prefixed with `STORED`. Keys the table lacks are absent."""
    spec = snapshot.table.spec
    live = live_events(ctx, snapshot, lookup.files, match=lookup.match)
    wanted = list(dict.fromkeys([*spec.partition_by, *spec.record_key]))
    if spec.ordering_column and spec.ordering_column not in wanted:
        wanted.append(spec.ordering_column)
    flat = live.select(
        *[
            F.col(c) if c in spec.partition_by else F.col(s.ROW).getField(c).alias(c)
            for c in wanted
        ],
        *ROW_ID_FIELDS,
    )
    keys = list(spec.record_key)
    probe = batch.select(*[F.col(k).alias(f"#k_{k}") for k in keys])
    cond = [F.col(k).eqNullSafe(F.col(f"#k_{k}")) for k in keys]
    found = flat.join(probe, cond, "left_semi")
    return found.select(*[F.col(c).alias(STORED + c) for c in [*wanted, *ROW_ID_FIELDS]])
