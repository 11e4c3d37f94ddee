"""Reading a data collection with Spark: the listed files only, typed by the metadata."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from versioned.collections.folder import CollectionFolder
from versioned.engine.spark.file_scans import load_files
from versioned.engine.spark.types import spark_type


def read_collection(spark: SparkSession, folder: CollectionFolder) -> DataFrame:
    """The rows of a collection, columns in metadata order, partition columns restored.

    Only the files the metadata lists are read (never a directory listing), with the
    metadata's types; partition values come from each file's ``k=v/`` directory.
    """
    meta = folder.metadata
    types = {c.name: c.type for c in meta.columns}
    fields = [T.StructField(c.name, spark_type(c.type)) for c in meta.data_columns]
    fields += [T.StructField(p, spark_type(types[p])) for p in meta.partition_by]
    schema = T.StructType(fields)
    names = [c.name for c in meta.columns]
    paths = [folder.fileio.full_path(f.path) for f in meta.files]
    if not paths:
        return spark.createDataFrame([], schema).select(*names)
    reader = spark.read.format(meta.file_format).schema(schema)
    frame = load_files(spark, reader.option("basePath", folder.fileio.full_path("")), paths)
    return frame.select(*names)
