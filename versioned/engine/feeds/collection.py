"""A data collection's rows as a feed of upserts: how an import writes through a layout's
writer (layouts whose import does not copy files, `StorageLayout.imports_by_copy`)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.collections.errors import CollectionError
from versioned.collections.folder import CollectionFolder
from versioned.collections.metadata import CollectionFile
from versioned.engine.feeds.reader import Feed, read_feed
from versioned.engine.feeds.rows import REASON
from versioned.engine.spark.types import spark_type
from versioned.schema import TableSpec

CollectionPart = tuple[Sequence[CollectionFile], tuple[str | None, ...]]
"""Files of one collection partition and the values of the table partition they become."""
_UPSERT = "U"


def collection_feed(
    spark: SparkSession, folder: CollectionFolder, spec: TableSpec, parts: Sequence[CollectionPart]
) -> Feed:
    """The rows of ``parts`` as upserts into the table ``spec``.

    Raises:
        CollectionError: A row would be rejected (the collection was checked against the
            table, so this is a value the table's conversion refuses); nothing is written.
    """
    rows = partition_rows(spark, folder, spec, parts)
    if spec.op_code_column:  # every row is an upsert, whatever the table's op codes
        rows = rows.withColumn(spec.op_code_column, F.lit(_UPSERT))
    feed = read_feed(spark, rows, spec)
    refused = feed.rejected.select(REASON).take(1)
    if refused:
        raise CollectionError(
            f"a row of {folder.location} does not fit {spec.name}: {refused[0][REASON]}; "
            "nothing was imported"
        )
    return feed


def partition_rows(
    spark: SparkSession, folder: CollectionFolder, spec: TableSpec, parts: Sequence[CollectionPart]
) -> DataFrame:
    """The rows of the listed files in ``spec``'s columns: data columns typed by the
    collection's metadata, partition columns the given values (only listed files are read)."""
    meta = folder.metadata
    schema = T.StructType([T.StructField(c.name, spark_type(c.type)) for c in meta.data_columns])
    frames = []
    for files, values in parts:
        paths = [folder.fileio.full_path(f.path) for f in files]
        data = spark.read.format(meta.file_format).schema(schema).load(paths)
        partition = [
            F.lit(v).cast(spark_type(spec.column(p).type)).alias(p)
            for p, v in zip(spec.partition_by, values, strict=True)
        ]
        frames.append(data.select(*schema.names, *partition).select(*spec.column_names))
    if not frames:
        empty = T.StructType([T.StructField(c.name, spark_type(c.type)) for c in spec.columns])
        return spark.createDataFrame([], empty)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result
