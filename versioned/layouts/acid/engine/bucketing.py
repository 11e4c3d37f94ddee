"""Hive's bucket of every row of a Spark DataFrame, vectorised over Arrow batches.

Spark's ``hash()`` is not Hive's bucket hash, so the bucket is computed by
`versioned.layouts.acid.bucket_ids` (numpy over Arrow buffers) inside ``mapInArrow``: no
Python per row. An unbucketed table puts every row in bucket 0 (no Python at all).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.spark.python_workers import require_python_workers
from versioned.layouts.acid.bucket_hash import bucket_ids
from versioned.layouts.acid.table_rules import BUCKETING_VERSION_PROPERTY, bucketing_version
from versioned.schema import TableSpec

BUCKET_COLUMN = "#bucket"
"""Column added by `with_buckets`: the row's bucket id (int)."""

__all__ = ["BUCKETING_VERSION_PROPERTY", "BUCKET_COLUMN", "bucketing_version", "with_buckets"]


def with_buckets(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """``rows`` with `BUCKET_COLUMN`: Hive's bucket of each row by the table's bucket columns
    (in CLUSTERED BY order)."""
    if not spec.bucket_by or not spec.buckets:
        return rows.withColumn(BUCKET_COLUMN, F.lit(0).cast("int"))
    require_python_workers(rows.sparkSession)
    columns = list(spec.bucket_by)
    types = [spec.column(c).type for c in columns]
    buckets, version = int(spec.buckets), bucketing_version(spec)

    def add_bucket(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids = bucket_ids(batch, columns, types, buckets, version)
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, pa.array(ids, pa.int32())],
                names=[*batch.schema.names, BUCKET_COLUMN],
            )

    schema = T.StructType([*rows.schema.fields, T.StructField(BUCKET_COLUMN, T.IntegerType())])
    return rows.mapInArrow(add_bucket, schema)
