"""The acid layout's part of the mutation API's Spark form (`MutationFormat.spark_buckets`):
each mutation's Hive bucket and the (partition, bucket) group it is written in.

The bucket of an insert is Hive's hash of its bucket columns (`bucketing.with_buckets`: numpy
over Arrow batches, no Python per row) and its ROW__ID becomes ``(-1, property, -1)`` (any
ROW__ID an insert carries is ignored); the bucket of an update or delete is the one its
ROW__ID names.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from versioned.layouts.acid.engine.bucketing import BUCKET_COLUMN, with_buckets
from versioned.record_ids import ROW_ID
from versioned.schema import TableSpec

INSERT = "insert"


def mutation_buckets(
    frame: DataFrame,
    spec: TableSpec,
    *,
    op_column: str,
    bucket_column: str,
    group_column: str,
) -> DataFrame:
    """``frame`` with ``bucket_column`` (an insert's hashed bucket), ``group_column`` (the
    bucket each row is written in) and the inserts' ROW__IDs set."""
    frame = with_buckets(frame, spec).withColumnRenamed(BUCKET_COLUMN, bucket_column)
    op, hashed = _col(op_column), _col(bucket_column)
    prop = _col(ROW_ID).getField("bucketid")
    named = F.when(F.shiftright(prop, 29) == 0, prop).otherwise(
        F.shiftright(prop.bitwiseAND(0x0FFF0000), 16)
    )
    insert_id = F.struct(
        F.lit(-1).cast("bigint").alias("writeid"),
        (F.lit(1 << 29).bitwiseOR(F.shiftleft(hashed, 16))).cast("int").alias("bucketid"),
        F.lit(-1).cast("bigint").alias("rowid"),
    )
    frame = frame.withColumn(ROW_ID, F.when(op == INSERT, insert_id).otherwise(_col(ROW_ID)))
    return frame.withColumn(group_column, F.when(op == INSERT, hashed).otherwise(named))
    return frame


def _col(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")
