"""The per-row checks of a feed stay small enough for the JVM to compile.

Spark compiles a stage's per-row code into one Java method, and HotSpot interprets (never
compiles) a method of over 8000 bytes of bytecode: a feed whose checks build every rejection
text inline ran several times slower than a plain scan of the same rows.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import functions as F

from tests.support.spark_settings import LOCAL_INTERPRETED
from versioned.engine.feeds.reader import read_feed
from versioned.engine.spark.operation_conf import (
    HUGE_METHOD_LIMIT,
    maintenance_settings,
    write_settings,
)
from versioned.schema import TableSpec

JIT_LIMIT = 8000  # HotSpot's HugeMethodLimit


def _method_sizes(frame: Any) -> list[int]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain("codegen")
    return [int(n) for n in re.findall(r"maxMethodCodeSize:(\d+)", out.getvalue())]


@pytest.fixture
def generating(spark: Any) -> Iterator[Any]:
    """The shared session with Spark's default code generation (the test session interprets
    expressions: tests/conftest.py `LOCAL_INTERPRETED`), restored after the test."""
    before = {key: spark.conf.get(key) for key in LOCAL_INTERPRETED}
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK")
    try:
        yield spark
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)


def test_the_row_checks_of_a_wide_typed_feed_compile_to_methods_the_jvm_compiles(
    generating: Any,
) -> None:
    spark = generating
    types = ["BIGINT", "STRING", "DOUBLE", "VARCHAR(20)", "DATE", "INT", "DECIMAL(10,2)"]
    names = [f"c{i}" for i in range(40)]
    spec = TableSpec.build(
        "db.wide",
        columns=", ".join(
            ["id BIGINT NOT NULL", "p STRING"]
            + [f"{n} {types[i % len(types)]}" for i, n in enumerate(names)]
        ),
        primary_key="id",
        partition_by="p",
    )
    frame = spark.range(3).select(
        "id",
        F.lit("a").alias("p"),
        # values Spark cannot fold to constants, all valid
        *[_value(types[i % len(types)]).alias(n) for i, n in enumerate(names)],
    )
    feed = read_feed(spark, frame, spec)
    sizes = _method_sizes(feed.rows)
    assert sizes, "no whole-stage code generated"
    assert max(sizes) < JIT_LIMIT
    assert feed.rows.count() == 3  # and the rows still pass


def test_engine_operations_split_stages_too_large_for_the_jit(spark: Any) -> None:
    assert write_settings(spark, spark.range(3))[HUGE_METHOD_LIMIT] == str(JIT_LIMIT)
    assert maintenance_settings(spark)[HUGE_METHOD_LIMIT] == str(JIT_LIMIT)


def _value(type_name: str) -> Any:
    if type_name == "DATE":
        return F.date_add(F.lit("2024-01-01").cast("date"), F.col("id").cast("int"))
    spark_types = {"BIGINT": "long", "INT": "int", "VARCHAR(20)": "string"}
    return F.col("id").cast(spark_types.get(type_name, type_name.lower()))
