"""Writing a DataFrame as a data collection folder (used by export and `collections.write`).

Spark writes into a hidden ``_staging-<uuid>/`` inside the folder (ignored by Spark and
Hadoop readers), each data file is moved to its ``k=v/`` directory, and the metadata file is
written last, atomically. A folder without the metadata file is therefore an unfinished
write, and readers and import refuse it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import replace

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.collections.data_files import row_count
from versioned.collections.metadata import (
    METADATA_FILE,
    CollectionFile,
    CollectionMetadata,
    CollectionPartition,
)
from versioned.errors import InputError, SchemaError, StorageError
from versioned.names import identifier
from versioned.schema import Column
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import is_hidden, parse_partition_path, partition_path

ROWS_PER_FILE = 2_000_000
_SIMPLE: list[tuple[type[T.DataType], str]] = [
    (T.BooleanType, "BOOLEAN"),
    (T.ByteType, "TINYINT"),
    (T.ShortType, "SMALLINT"),
    (T.IntegerType, "INT"),
    (T.LongType, "BIGINT"),
    (T.FloatType, "FLOAT"),
    (T.DoubleType, "DOUBLE"),
    (T.StringType, "STRING"),
    (T.DateType, "DATE"),
    (T.BinaryType, "BINARY"),
]


def column_type(name: str, kind: T.DataType) -> str:
    """The versioned column type of a Spark type.

    Raises:
        SchemaError: Spark type has no versioned equivalent (arrays, maps, structs, ...).
    """
    if isinstance(kind, T.TimestampType):  # an instant; TIMESTAMP_NTZ has no equivalent
        return "TIMESTAMP"
    for spark_kind, text in _SIMPLE:
        if type(kind) is spark_kind:
            return text
    if isinstance(kind, T.DecimalType):
        return f"DECIMAL({kind.precision},{kind.scale})"
    if isinstance(kind, T.VarcharType):
        return f"VARCHAR({kind.length})"
    if isinstance(kind, T.CharType):
        return f"CHAR({kind.length})"
    raise SchemaError(
        f"column {name} has type {kind.simpleString()}, which versioned tables cannot hold; "
        "cast or drop it first",
        column=name,
    )


def columns_of(schema: T.StructType) -> tuple[Column, ...]:
    """Versioned columns for a DataFrame's schema."""
    return tuple(Column(f.name, column_type(f.name, f.dataType), f.nullable) for f in schema)


def with_partition_values(frame: DataFrame, values: Mapping[str, str | None]) -> DataFrame:
    """``frame`` with a string column per partition key holding its value.

    Raises:
        InputError: A key is not a name, or ``frame`` has a column of that name already.
    """
    for key, value in values.items():
        name = identifier(key, "partition key")
        if name in [c.lower() for c in frame.columns]:
            raise InputError(
                f"partition key {name} is a column of the data already: pass it in "
                "partition_by instead of partition",
                column=name,
            )
        if value is not None and not isinstance(value, str):
            raise InputError(f"partition value of {name} must be a string or None")
        frame = frame.withColumn(name, F.lit(value).cast("string"))
    return frame


def write_collection(
    frame: DataFrame, dest: str, header: CollectionMetadata, *, rows_per_file: int = ROWS_PER_FILE
) -> CollectionMetadata:
    """Write ``frame`` as a collection at ``dest`` and return its metadata.

    Args:
        frame: The rows; it holds every column of ``header``.
        dest: A folder (path or URI) that does not exist or is empty.
        header: The collection's definition (its ``partitions`` are filled in here).
        rows_per_file: Largest file, in rows.

    Raises:
        StorageError: ``dest`` is a file or a folder that is not empty.
    """
    fileio = FileIO.for_root(dest)
    _require_empty(fileio)
    stage = f"_staging-{uuid.uuid4().hex}"
    moved: list[str] = []
    try:
        rows = frame.select(*[c.name for c in header.columns])
        if header.partition_by:
            rows = rows.repartition(*header.partition_by)
        order = [*header.partition_by, *header.sort_by]
        if order:  # partition columns first: Spark's writer then needs no sort of its own
            rows = rows.sortWithinPartitions(*order)
        writer = (
            rows.write.mode("errorifexists")
            .format(header.file_format)
            .option("maxRecordsPerFile", rows_per_file)
        )
        if header.partition_by:
            writer = writer.partitionBy(*header.partition_by)
        writer.save(fileio.full_path(stage))
        partitions = _collect(fileio, stage, header, moved)
        metadata = replace(header, partitions=partitions)
        fileio.write_bytes_atomic(METADATA_FILE, metadata.to_json())
        return metadata
    except BaseException:
        with suppress(StorageError):  # the folder was empty: everything in it is ours
            for rel in moved:
                fileio.delete_file(rel, missing_ok=True)
            fileio.delete_dir(stage, missing_ok=True)
        raise
    finally:
        fileio.delete_dir(stage, missing_ok=True)


def _require_empty(fileio: FileIO) -> None:
    if not fileio.exists(""):
        fileio.makedirs("")
        return
    try:
        fileio.size("")
    except StorageError:
        pass  # a directory
    else:
        raise StorageError(f"{fileio.root} is a file: give a new or empty folder", path=fileio.root)
    if fileio.list_files(""):
        raise StorageError(
            f"{fileio.root} is not empty: a collection is written only into a new or empty "
            "folder, so that no existing file is overwritten",
            path=fileio.root,
        )


def _collect(
    fileio: FileIO, stage: str, header: CollectionMetadata, moved: list[str]
) -> tuple[CollectionPartition, ...]:
    """Move Spark's output out of ``stage`` into its partition directories."""
    by_values: dict[tuple[str | None, ...], list[CollectionFile]] = {}
    for stat in fileio.list_files(stage):
        rel = stat.path[len(stage) + 1 :]
        if is_hidden(rel):  # _SUCCESS, .crc files
            continue
        directory, _, name = rel.rpartition("/")
        values = tuple(v for _, v in parse_partition_path(directory))
        ppath = partition_path(header.partition_by, values)
        target = f"{ppath}/{name}" if ppath else name
        fileio.move(stat.path, target)
        moved.append(target)
        count = row_count(fileio, target, header.file_format)
        by_values.setdefault(values, []).append(CollectionFile(target, stat.size, count))
    return tuple(
        CollectionPartition(values, partition_path(header.partition_by, values), tuple(files))
        for values, files in sorted(by_values.items(), key=lambda kv: _sort_key(kv[0]))
    )


def _sort_key(values: tuple[str | None, ...]) -> tuple[tuple[bool, str], ...]:
    return tuple((v is not None, v or "") for v in values)
