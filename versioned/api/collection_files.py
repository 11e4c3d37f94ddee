"""Data collections read and written with Spark, without any catalog (Howl's
HIEInputFormat / HIELoader and HIEOutputFormat): the Spark half of `versioned.collections`,
which re-exports `read` and `write`."""

from __future__ import annotations

import datetime as dt
import getpass
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from versioned.collections.folder import CollectionFolder
from versioned.collections.metadata import CollectionMetadata
from versioned.names import TableName
from versioned.schema import TableSpec, check_partition_types

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read(spark: SparkSession, path: str | os.PathLike[str]) -> DataFrame:
    """The rows of the collection at ``path``, with its partition columns restored.

    Columns come in the metadata's order with its types. Only the files the metadata lists
    are read, after checking that each is inside the folder and has its listed size.

    Raises:
        IncompleteCollectionError: ``path`` has no metadata file (not a collection, or a
            write that did not finish).
        CollectionError: The metadata is malformed or a listed file is missing or changed.
        UnsafePathError: A listed file resolves to outside the folder.
    """
    from versioned.engine.spark.collection_reader import read_collection

    folder = CollectionFolder.open(os.fspath(path))
    folder.check_files()
    return read_collection(spark, folder)


_UNNAMED = TableName("default", "unnamed_collection")


def write(
    df: DataFrame,
    path: str | os.PathLike[str],
    *,
    primary_key: Sequence[str] | str,
    sort_by: Sequence[str] | str | None,
    file_format: str = "parquet",
    table: str | None = None,
    partition_by: Sequence[str] | str | None = None,
    partition: Mapping[str, str | None] | None = None,
    op_code_column: str | None = None,
    ordering_column: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> CollectionMetadata:
    """Write ``df`` as a data collection in the new or empty folder ``path``.

    The folder gets the data files (in ``k=v/`` directories when there are partition columns,
    so ``spark.read.parquet(path)`` restores them) and ``_versioned_collection.json``, which
    is written last.

    Args:
        df: The rows; its schema is the collection's schema.
        path: A local folder or a URI (``hdfs://``, ``s3://``, ...) that is new or empty.
        primary_key: Key column(s); import needs them to build the Bloom filters.
        sort_by: Column(s) the data is sorted by within each file, or ``None`` for unsorted.
            Required, so that the sort order is always stated.
        file_format: ``parquet`` or ``orc``.
        table: The table the data is meant for (``db.table``), if known.
        partition_by: Columns of ``df`` to partition by (one directory per value).
        partition: Values of partition keys that are not columns of ``df``, e.g.
            ``{"datestamp": "20101109"}``: added as string columns and partitioned by.
        op_code_column: The op-code column of the intended table, if any.
        ordering_column: The ordering column of the intended table, if any.
        properties: Table properties to carry along.

    Returns:
        The metadata written.

    Raises:
        SchemaError: The definition does not fit ``df`` (unknown key column, bad type, a
            TIMESTAMP partition column, ...).
        StorageError: ``path`` is a file or a folder that is not empty.
    """
    from versioned.engine.spark.collection_writer import (
        columns_of,
        with_partition_values,
        write_collection,
    )

    frame = with_partition_values(df, partition or {})
    pby = _names(partition_by) + [k.lower() for k in (partition or {})]
    name = TableName.parse(table) if table is not None else None
    spec = TableSpec.build(
        name or _UNNAMED,
        columns=columns_of(frame.schema),
        primary_key=primary_key,
        partition_by=pby,
        sort_by=sort_by,
        file_format=file_format,
        op_code_column=op_code_column,
        ordering_column=ordering_column,
        properties=properties,
    )
    # refused as `create-table` and `import` refuse it: the path would hold the instant as
    # wall-clock text of this session's time zone, read back in the reader's
    check_partition_types(spec)
    header = CollectionMetadata.from_spec(
        spec,
        table=name,
        source={
            "kind": "write",
            "written_by": getpass.getuser(),
            "written_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        },
    )
    return write_collection(frame, os.fspath(path), header)


def _names(values: Sequence[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        return [v.strip() for v in values.split(",") if v.strip()]
    return list(values)
