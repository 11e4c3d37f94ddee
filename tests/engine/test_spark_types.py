"""Column types to Spark types (no SparkSession needed)."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from versioned.engine.spark.types import max_length, spark_schema, spark_type
from versioned.errors import SchemaError
from versioned.schema import TableSpec


@pytest.mark.parametrize(
    ("hive_type", "expected"),
    [
        ("BOOLEAN", T.BooleanType()),
        ("TINYINT", T.ByteType()),
        ("SMALLINT", T.ShortType()),
        ("INT", T.IntegerType()),
        ("integer", T.IntegerType()),
        ("BIGINT", T.LongType()),
        ("FLOAT", T.FloatType()),
        ("DOUBLE", T.DoubleType()),
        ("DECIMAL(12,3)", T.DecimalType(12, 3)),
        ("decimal", T.DecimalType(10, 0)),
        ("STRING", T.StringType()),
        ("VARCHAR(20)", T.StringType()),
        ("CHAR(2)", T.StringType()),
        ("DATE", T.DateType()),
        ("TIMESTAMP", T.TimestampType()),
        ("BINARY", T.BinaryType()),
    ],
)
def test_spark_type_of_every_canonical_type(hive_type: str, expected: T.DataType) -> None:
    assert spark_type(hive_type) == expected


def test_unknown_type_raises() -> None:
    with pytest.raises(SchemaError):
        spark_type("INTERVAL")


def test_max_length_only_for_char_types() -> None:
    assert max_length("VARCHAR(20)") == 20
    assert max_length("char(2)") == 2
    assert max_length("STRING") is None


def test_spark_schema_keeps_order_and_nullability() -> None:
    spec = TableSpec.build(
        "db.t", columns="id BIGINT NOT NULL, amt DECIMAL(10,2), day DATE", primary_key="id"
    )
    assert spark_schema(spec) == T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("amt", T.DecimalType(10, 2), True),
            T.StructField("day", T.DateType(), True),
        ]
    )
    assert spark_schema(spec, ["day", "id"]).fieldNames() == ["day", "id"]
    with pytest.raises(SchemaError):
        spark_schema(spec, ["nope"])
