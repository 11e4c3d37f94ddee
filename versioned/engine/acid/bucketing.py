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

from versioned.errors import InputError
from versioned.layouts.acid.bucket_hash import BucketingVersion, bucket_ids
from versioned.schema import TableSpec

BUCKET_COLUMN = "#bucket"
"""Column added by `with_buckets`: the row's bucket id (int)."""
BUCKETING_VERSION_PROPERTY = "bucketing_version"


def bucketing_version(spec: TableSpec) -> BucketingVersion:
    """The table's ``bucketing_version`` property: 2 (Hive 3's default) unless it says 1.

    Raises:
        InputError: The property is neither 1 nor 2.
    """
    raw = str(spec.properties.get(BUCKETING_VERSION_PROPERTY, "2")).strip()
    if raw not in ("1", "2"):
        raise InputError(
            f"table property {BUCKETING_VERSION_PROPERTY}={raw!r} of {spec.name} must be 1 or 2",
            bucketing_version=raw,
        )
    return 1 if raw == "1" else 2


def with_buckets(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """``rows`` with `BUCKET_COLUMN`: Hive's bucket of each row by the table's bucket columns
    (in CLUSTERED BY order)."""
    if not spec.bucket_by or not spec.buckets:
        return rows.withColumn(BUCKET_COLUMN, F.lit(0).cast("int"))
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
