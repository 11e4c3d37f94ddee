"""Writing a small batch's ACID events on the driver with pyorc, without a Spark write job.

Spark's ORC writer pays ~25 ms per file (a task's output, the commit's renames, checksum
files), and a batch writes a file per partition and bucket it touches, for its inserts and
for its deletes: a 1 % batch of a table of 20 partitions and 8 buckets writes 320 files,
~8 s on 2 cores whatever the row count. A write of at most
``write.driver_max_events`` events (`layouts.acid.table_rules`, default 250,000) is
collected to the driver as Arrow instead, and each bucket file is written with
`AcidBucketWriter` (pyorc, ~1 ms a file plus ~3 µs a row), which also adds the ORC user
metadata Hive writes (``hive.acid.key.index``, ``hive.acid.stats``, ``hive.acid.version``)
and Spark's writer cannot. The files are those of the Spark path
(`event_writer.write_insert_events` / `write_delete_events`): one per (partition, bucket),
insert row ids from 0 in key order, delete events sorted by ROW__ID, zlib compression;
only their ORC schema differs where Spark's cannot say Hive's (``CHAR``/``VARCHAR``, which
Spark writes as ``string``). `tests/layouts/acid/engine/test_driver_events.py` compares the two.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.bucket_codec import encode_bucket_property
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.engine.bucketing import BUCKET_COLUMN
from versioned.layouts.acid.engine.event_writer import (
    PARTITION_VALUE,
    STATEMENT_ID,
    Claim,
    PlacedFile,
    WrittenFile,
    bucket_id_of,
    partition_value_strings,
    register_files,
)
from versioned.layouts.acid.engine.events import ROW_ID_FIELDS
from versioned.layouts.acid.orc_files import open_bucket_writer
from versioned.layouts.acid.paths import bucket_file_path
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path

_VALUE = PARTITION_VALUE
_FILE_BUCKET = "#file_bucket"


def _groups(
    table: pa.Table, partitions: int
) -> Iterator[tuple[tuple[str | None, ...], int, pa.Table]]:
    """The rows of ``table`` per (partition values, file bucket), each group contiguous."""
    names = [f"{_VALUE}{i}" for i in range(partitions)] + [_FILE_BUCKET]
    table = table.sort_by([(n, "ascending") for n in names])
    keys = list(zip(*[table.column(n).to_pylist() for n in names], strict=True))
    start = 0
    for end in range(1, len(keys) + 1):
        if end == len(keys) or keys[end] != keys[start]:
            key = keys[start]
            yield tuple(key[:-1]), int(key[-1]), table.slice(start, end - start)
            start = end


def insert_fields(spec: TableSpec) -> dict[str, Column]:
    """What `write_inserts_on_driver` needs of a row (table columns and `BUCKET_COLUMN`),
    by the name it expects."""
    fields = {c: F.col(c) for c in spec.column_names}
    fields[_FILE_BUCKET] = F.col(BUCKET_COLUMN)
    fields.update(partition_value_strings(spec))
    return fields


def write_inserts_on_driver(
    collected: pa.Table,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    *,
    write_id: int,
    version: int,
    claim: Claim,
) -> list[WrittenFile] | None:
    """Write the rows of ``collected`` (columns `insert_fields`) as insert events of
    ``write_id`` into ``delta_W_W_0000`` of their partitions (as
    `event_writer.write_insert_events`).

    Returns ``None``, having written nothing, when a date or timestamp lies before the
    Gregorian calendar (`_before_gregorian`): Spark's writer must write those rows.
    """
    parts = list(spec.partition_by)
    keys = [k for k in spec.primary_key if k not in parts]
    if _before_gregorian(collected):
        return None
    directory = DeltaDir(write_id, write_id, STATEMENT_ID)
    placed: list[PlacedFile] = []
    for values, bucket, group in _groups(collected, len(parts)):
        ordered = group.sort_by([(k, "ascending") for k in keys]) if keys else group
        target = bucket_file_path(partition_path(parts, values), directory, bucket)
        path = claim(f"{table_location}/{target}")
        prop = encode_bucket_property(bucket, STATEMENT_ID)
        with open_bucket_writer(fileio, path, spec.data_columns, bucket_property=prop) as out:
            out.insert(write_id, ordered)
        placed.append(PlacedFile(values, bucket, target, fileio.size(path)))
    return register_files(placed, spec, fileio, table_location, directory, version, claim)


_GREGORIAN_DAY = (dt.date(1582, 10, 16) - dt.date(1970, 1, 1)).days
"""The first whole day of the Gregorian calendar, in days since 1970-01-01."""


def _before_gregorian(table: pa.Table) -> bool:
    """Whether a date or timestamp of ``table`` lies before 1582-10-16.

    ORC's C++ writer (pyorc) leaves the file's calendar at ORC's default, the hybrid
    Julian/Gregorian one, and Java readers (Spark, Hive) then shift such days by up to ten:
    0001-01-01 reads as 0000-12-30. Spark's writer marks its files proleptic Gregorian.
    """
    for column in table.columns:
        if pa.types.is_date32(column.type):
            low = pc.min(column.cast(pa.int32())).as_py()
            if low is not None and low < _GREGORIAN_DAY:
                return True
        elif pa.types.is_timestamp(column.type):
            micros = column.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
            low = pc.min(micros).as_py()
            if low is not None and low < _GREGORIAN_DAY * 86_400_000_000:
                return True
    return False


def delete_fields(spec: TableSpec, prefix: str = "") -> dict[str, Column]:
    """What `write_deletes_on_driver` needs of a stored row (partition columns and ROW__ID
    fields, each named with ``prefix``), by the name it expects."""
    fields = {f: F.col(prefix + f) for f in ROW_ID_FIELDS}
    fields[_FILE_BUCKET] = bucket_id_of(F.col(prefix + s.BUCKET))
    fields.update(partition_value_strings(spec, prefix))
    return fields


def write_deletes_on_driver(
    collected: pa.Table,
    spec: TableSpec,
    fileio: FileIO,
    table_location: str,
    *,
    write_id: int,
    version: int,
    claim: Claim,
) -> list[WrittenFile]:
    """Write delete events of ``write_id`` for the stored rows of ``collected`` (columns
    `delete_fields`) into ``delete_delta_W_W_0000`` of each row's partition and bucket (as
    `event_writer.write_delete_events`)."""
    directory = DeltaDir(write_id, write_id, STATEMENT_ID, delete=True)
    placed: list[PlacedFile] = []
    for values, bucket, group in _groups(collected, len(spec.partition_by)):
        target = bucket_file_path(partition_path(spec.partition_by, values), directory, bucket)
        path = claim(f"{table_location}/{target}")
        prop = encode_bucket_property(bucket, STATEMENT_ID)
        with open_bucket_writer(
            fileio, path, spec.data_columns, bucket_property=prop, events="delete"
        ) as out:
            out.delete(write_id, group.select(list(ROW_ID_FIELDS)))
        placed.append(PlacedFile(values, bucket, target, fileio.size(path)))
    return register_files(placed, spec, fileio, table_location, directory, version, claim)
