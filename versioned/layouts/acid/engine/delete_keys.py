"""Delete events as one 64-bit number each, for the merge on read.

A delete event removes the insert event with the same ``(partition, originalTransaction,
bucket, rowId)``. Spark's anti join on those four columns hashes and compares four values
per row, and its broadcast carries four columns per delete event. When the delete events
are read on the driver (`driver_reads`), their ranges are known: each field then fits in a
few bits above its smallest value (``bucket`` holds BucketCodec V1 properties, ``1 << 29``
and up, but the few buckets of a table span a narrow range), and when the four widths add
up to at most `MAX_BITS` the four values pack into one ``bigint`` without loss. Spark then
joins on one ``bigint`` (its ``LongHashedRelation``), the broadcast is one column, and an
insert event whose field lies outside the delete events' range gets a null key, which
matches nothing, as no delete event can name it.

Otherwise (`without_deleted`) the join is on the four columns (numbers too: the partition's
catalog id, `driver_reads.PARTITION_ID`, stands for its values). On the 10M-row table of
`benchmarks/acid.py` after 10 deltas (846k delete events in 1,600 files), the merge of every
row took ~11.8 s joined on the partition values and the ROW__ID, ~9.2 s on the four numbers
and ~8.7 s on the packed key (medians of 5 on a quiet machine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.engine.driver_reads import PARTITION_ID, event_table, split_for_driver
from versioned.layouts.acid.snapshot_dirs import SnapshotFiles
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.layouts.engine_protocol import EngineContext

MAX_BITS = 63
"""The packed key is a non-negative ``bigint``."""
KEY_FIELDS = (PARTITION_ID, s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID)
"""What a delete event matches an insert event on."""
_KEY = "#d_key"


def without_driver_deleted(
    ctx: EngineContext, snapshot: Snapshot, files: SnapshotFiles, rows: DataFrame
) -> DataFrame | None:
    """``rows`` (insert events with `KEY_FIELDS`) without those the snapshot's valid delete
    events name, the delete events read on the driver: joined on packed keys, or on the four
    fields when their ranges need more than `MAX_BITS` bits. None when some delete files are
    for Spark to read (`driver_reads.split_for_driver`)."""
    spec = snapshot.table.spec
    on_driver, rest = split_for_driver(spec, files.deletes, deletes=True)
    if rest or not on_driver:
        return None
    events = valid_rows(
        event_table(ctx.fileio, snapshot, on_driver), s.CURRENT_WRITE_ID, files.write_ids
    )
    if events.num_rows == 0:
        return rows
    spark = ctx.spark
    broadcast = events.num_rows <= ctx.broadcast_limit
    packing = KeyPacking.of(events, KEY_FIELDS)
    if packing is None:
        deletes = spark.createDataFrame(events.select(list(KEY_FIELDS)))
        return without_deleted(rows, deletes, broadcast=broadcast)
    keys = spark.createDataFrame(pa.table({_KEY: packing.pack(events)}))
    if broadcast:
        keys = F.broadcast(keys)
    return rows.join(keys, packing.column() == F.col(_KEY), "left_anti")


def without_deleted(rows: DataFrame, deletes: DataFrame, *, broadcast: bool) -> DataFrame:
    """``rows`` without those the events of ``deletes`` name, joined on the four
    `KEY_FIELDS` (both frames have them)."""
    named = deletes.select(*[F.col(f"`{c}`").alias(f"#d_{c}") for c in KEY_FIELDS])
    if broadcast:
        named = F.broadcast(named)
    cond = [F.col(f"`{c}`") == F.col(f"`#d_{c}`") for c in KEY_FIELDS]
    return rows.join(named, cond, "left_anti")


@dataclass(frozen=True)
class PackedField:
    """One field of the key: its column, smallest and largest value among the delete
    events, and the bits it takes (``(largest - smallest).bit_length()``)."""

    column: str
    low: int
    high: int
    bits: int


@dataclass(frozen=True)
class KeyPacking:
    """How the fields pack into one number, most significant first."""

    fields: tuple[PackedField, ...]

    @classmethod
    def of(cls, table: pa.Table, columns: Sequence[str]) -> KeyPacking | None:
        """The packing of the ``columns`` of ``table`` (delete events, at least one), or
        None when their ranges need more than `MAX_BITS` bits."""
        fields = []
        for name in columns:
            values = _int64(table, name)
            low, high = int(values.min()), int(values.max())
            fields.append(PackedField(name, low, high, (high - low).bit_length()))
        if sum(f.bits for f in fields) > MAX_BITS:
            return None
        return cls(tuple(fields))

    def pack(self, table: pa.Table) -> np.ndarray:
        """The keys of the rows of ``table`` (all within the ranges: the delete events)."""
        key = np.zeros(table.num_rows, dtype=np.int64)
        for f in self.fields:
            key = (key << f.bits) | (_int64(table, f.column) - f.low)
        return key

    def column(self) -> Column:
        """The key of each row in Spark; null for a row with a field outside its range."""
        key: Column = F.lit(0).cast("bigint")
        inside: Column = F.lit(True)
        for f in self.fields:
            value = F.col(f.column).cast("bigint")
            inside = inside & value.between(f.low, f.high)
            key = F.shiftleft(key, f.bits).bitwiseOR(value - F.lit(f.low))
        return F.when(inside, key)


def valid_rows(table: pa.Table, column: str, write_ids: ValidWriteIdList) -> pa.Table:
    """The rows of ``table`` whose write id in ``column`` is valid in ``write_ids`` (as
    `events.valid_write_id` in Spark)."""
    ids = _int64(table, column)
    keep = ids <= write_ids.high_water_mark
    if write_ids.invalid_ids:
        keep &= ~np.isin(ids, np.array(write_ids.invalid_ids, dtype=np.int64))
    return table.filter(pa.array(keep))


def _int64(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).cast(pa.int64()).to_numpy(zero_copy_only=False))
