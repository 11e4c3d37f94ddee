"""Reading the small bucket files of a snapshot on the driver (pyarrow), not in a Spark scan.

Every change batch adds a delta and a delete delta per partition and bucket it touches, so
a table with a few deltas is mostly small files: after 3 deltas of 1 % the 1M-row benchmark
table has 640 insert and 480 delete bucket files, 600 of them under 100 rows. Spark's ORC
scan pays ~1.5-2 ms per file whatever its size (open, footer, schema evolution, a
vectorised batch), pyarrow's ORC reader ~0.3 ms: the 480 delete files took Spark 1.0-1.6 s
and pyarrow 0.09 s, and handing the rows to Spark (`SparkSession.createDataFrame` of the
Arrow table) costs ~2 µs a row. So files of at most `DRIVER_FILE_MAX_ROWS` rows are read
here, up to ``read.driver_max_events`` events per read (`layouts.acid.table_rules`, default
1,000,000; ``0`` reads every file with Spark), and the rest by Spark; `events.read_events`
unions the two. Delete events carry no row, so every delete file qualifies; insert events
qualify when pyarrow reads every column exactly as Spark does: not ``DATE`` and
``TIMESTAMP`` (ORC's calendar and time-zone handling differ between the two readers) nor
``CHAR(n)`` (padding). `tests/layouts/acid/engine/test_driver_reads.py` compares both readers.

The rows are read when the DataFrame is built, not when it is evaluated: they are the
snapshot's (files never change once committed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.catalog.records import Snapshot
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.orc_files import read_committed_fields
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, STREAM_OPEN, BucketFileRef
from versioned.layouts.acid.table_rules import driver_read_max_events
from versioned.layouts.engine_protocol import EngineContext
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type

DRIVER_FILE_MAX_ROWS = 5_000
"""Bucket files of at most this many rows may be read on the driver (above it Spark's
per-row speed wins over the per-file saving)."""
_THREADS = 8
_ROW = "#r_"
_PART = "#p_"
PARTITION_ID = "#partition_id"
"""Column of every event read: the catalog's id of the event's partition (0 unpartitioned)."""
_NOT_ON_DRIVER = re.compile(r"^(DATE|TIMESTAMP|CHAR\(\d+\))$")
_INTS = (s.ORIGINAL_WRITE_ID, s.ROW_ID, s.CURRENT_WRITE_ID)


@dataclass(frozen=True)
class KeyMatch:
    """What a key lookup reads: only the ``row`` fields ``fields`` (the others read as
    null), and only the events whose ``row.<c>`` value occurs in column ``c`` of ``values``
    for every column of ``values``. That keeps a superset of the events of the wanted keys
    (each column is matched alone); the caller's join matches keys exactly.

    Files are filtered one at a time as they are read, so a lookup takes any insert file
    on the driver whatever its size: only the matching events stay in memory.
    """

    values: pa.Table
    fields: tuple[str, ...]

    @classmethod
    def of(cls, spec: TableSpec, keys: pa.Table, fields: Sequence[str]) -> KeyMatch:
        """The match of the key values ``keys`` (columns named like the table's)."""
        values = {
            c: keys.column(c).cast(arrow_type(spec.column(c).type)) for c in keys.schema.names
        }
        return cls(pa.table(values), tuple(fields))

    def mask(self, spec: TableSpec, row: pa.StructArray) -> pa.Array:
        """Which events of ``row`` (a file's ``row`` column) to keep."""
        keep = None
        for c in self.values.schema.names:
            stored = row.field(c).cast(arrow_type(spec.column(c).type))
            found = pc.is_in(stored, value_set=self.values.column(c).combine_chunks())
            keep = found if keep is None else pc.and_(keep, found)
        assert keep is not None
        return keep


def driver_readable(spec: TableSpec, *, deletes: bool, match: KeyMatch | None = None) -> bool:
    """Whether pyarrow reads the events of this table's files exactly as Spark does (for a
    lookup: the fields it reads)."""
    if deletes:
        return True
    fields = spec.data_columns if match is None else [spec.column(f) for f in match.fields]
    return not any(_NOT_ON_DRIVER.match(c.type) for c in fields)


def split_for_driver(
    spec: TableSpec,
    refs: Sequence[BucketFileRef],
    *,
    deletes: bool,
    match: KeyMatch | None = None,
) -> tuple[list[BucketFileRef], list[BucketFileRef]]:
    """``(driver, spark)``: the small files the driver reads (smallest first, within the
    table's ``read.driver_max_events``) and the rest. A key lookup (``match``) reads every
    insert file on the driver; so does every read of a file an open streaming batch is
    still appending to (stat ``stream_open``: readers stop at its committed length)."""
    growing = [r for r in refs if r.file.stats.get(STREAM_OPEN)]
    if growing:  # only the driver can stop at a streaming file's committed length
        fixed = [r for r in refs if not r.file.stats.get(STREAM_OPEN)]
        driver, spark = split_for_driver(spec, fixed, deletes=deletes, match=match)
        return [*growing, *driver], spark
    budget = driver_read_max_events(spec)
    if not budget or not driver_readable(spec, deletes=deletes, match=match):
        return [], list(refs)
    if match is not None and not deletes:
        return list(refs), []
    driver, spark = [], []
    for ref in sorted(refs, key=lambda r: r.file.row_count):
        rows = ref.file.row_count
        if rows <= DRIVER_FILE_MAX_ROWS and rows <= budget:
            driver.append(ref)
            budget -= rows
        else:
            spark.append(ref)
    return driver, spark


def read_on_driver(
    ctx: EngineContext,
    snapshot: Snapshot,
    refs: Sequence[BucketFileRef],
    schema: T.StructType,
    match: KeyMatch | None = None,
) -> DataFrame:
    """The events of ``refs`` in ``schema`` (the six event fields, then the partition
    columns), and `PARTITION_ID`, as `events.read_events` returns them. ``refs`` are all
    insert-event files or all delete-event files (whose ``row`` is null and is not read).
    ``match``: only what a key lookup needs (`KeyMatch`; insert files)."""
    spec = snapshot.table.spec
    deletes = refs[0].file.kind == DELETE_KIND
    frame = ctx.spark.createDataFrame(event_table(ctx.fileio, snapshot, refs, match))
    row = schema[s.ROW].dataType
    assert isinstance(row, T.StructType)
    if deletes:
        row_value = F.lit(None).cast(row)
    else:
        row_value = F.struct(
            *[F.col(f"`{_ROW}{f.name}`").cast(f.dataType).alias(f.name) for f in row.fields]
        )
    events = [F.col(n).cast(schema[n].dataType) for n in s.EVENT_FIELDS if n != s.ROW]
    parts = [F.col(f"`{_PART}{p}`").cast(schema[p].dataType).alias(p) for p in spec.partition_by]
    return frame.select(*events, row_value.alias(s.ROW), *parts, F.col(f"`{PARTITION_ID}`"))


def event_table(
    fileio: FileIO,
    snapshot: Snapshot,
    refs: Sequence[BucketFileRef],
    match: KeyMatch | None = None,
) -> pa.Table:
    """The events of ``refs`` as one flat Arrow table: the five event fields but ``row``
    (write ids and row ids as int64), ``#r_<column>`` per data column (insert files),
    ``#p_<column>`` per partition column (the catalog's value, a string) and
    `PARTITION_ID`. ``refs`` and ``match`` as for `read_on_driver`."""
    spec = snapshot.table.spec
    deletes = refs[0].file.kind == DELETE_KIND
    location = snapshot.table.location
    fields: list[str] | None = [n for n in s.EVENT_FIELDS if n != s.ROW]
    if match is not None and not deletes:
        assert fields is not None
        fields += [f"{s.ROW}.{f}" for f in match.fields]
    elif not deletes:
        fields = None

    def read(ref: BucketFileRef) -> pa.Table:
        table = read_committed_fields(fileio, location, ref.file, fields)
        table = table.replace_schema_metadata()
        if match is None or deletes:
            return table
        return table.filter(match.mask(spec, table.column(s.ROW).combine_chunks()))

    with ThreadPoolExecutor(min(_THREADS, len(refs))) as pool:
        tables = list(pool.map(read, refs))
    # Files written before an ALTER have other row types: one flat table per file schema.
    by_schema: dict[pa.Schema, list[int]] = {}
    for i, table in enumerate(tables):
        by_schema.setdefault(table.schema, []).append(i)
    flat = [
        _flatten(spec, snapshot, [refs[i] for i in group], [tables[i] for i in group], deletes)
        for group in by_schema.values()
    ]
    return pa.concat_tables(flat).combine_chunks()


def _flatten(
    spec: TableSpec,
    snapshot: Snapshot,
    refs: Sequence[BucketFileRef],
    tables: Sequence[pa.Table],
    deletes: bool,
) -> pa.Table:
    """Files of one schema as one flat table: the event fields, ``#r_<column>`` per data
    column (inserts), ``#p_<column>`` per partition column (the catalog's value, a string)."""
    table = pa.concat_tables(tables)
    columns = {n: table.column(n) for n in s.EVENT_FIELDS if n != s.ROW}
    for n in _INTS:
        columns[n] = columns[n].cast(pa.int64())
    if not deletes:
        stored = table.column(s.ROW).combine_chunks()
        assert isinstance(stored, pa.StructArray)
        present = {stored.type.field(i).name: i for i in range(stored.type.num_fields)}
        for c in spec.data_columns:
            want = arrow_type(c.type)
            if c.name in present:  # older files lack columns added later (read as null)
                columns[_ROW + c.name] = stored.field(present[c.name]).cast(want)
            else:
                columns[_ROW + c.name] = pa.nulls(len(table), want)
    # Each file's partition: an index per row into the files' partition values.
    which = np.repeat(np.arange(len(refs)), [len(t) for t in tables])
    ids = pa.array([ref.file.partition_id or 0 for ref in refs], pa.int64())
    columns[PARTITION_ID] = ids.take(pa.array(which))
    if spec.partition_by:
        for k, p in enumerate(spec.partition_by):
            values = pa.array([_values(snapshot, ref)[k] for ref in refs], pa.string())
            columns[_PART + p] = values.take(pa.array(which))
    return pa.table(columns)


def _values(snapshot: Snapshot, ref: BucketFileRef) -> tuple[str | None, ...]:
    assert ref.file.partition_id is not None
    return snapshot.partitions[ref.file.partition_id].values
