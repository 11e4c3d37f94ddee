"""Sub-expressions bound once: a projection of their own (`Bindings`) or a lambda (`let`)."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import functions as F

from versioned.engine.spark.bindings import Bindings, let


def _optimized(frame: Any) -> str:
    return str(frame._jdf.queryExecution().optimizedPlan().toString())


def test_a_bound_value_is_computed_once_however_often_it_is_used(spark: Any) -> None:
    frame = spark.range(3).select(F.col("id").cast("string").alias("raw"))
    costly = F.hex(F.try_to_binary(F.trim("raw"), F.lit("base64")))
    uses = [F.concat(costly, F.lit(str(n))).alias(f"u{n}") for n in range(6)]
    assert _optimized(frame.select(*uses)).count("unbase64") == 6  # written out: copies

    bindings = Bindings("#b")
    bound = bindings.bind(costly)
    twice = bindings.bind(F.concat(bound, bound), level=1)  # level 1 reads level 0
    uses = [F.concat(bound, twice, F.lit(str(n))).alias(f"u{n}") for n in range(6)]
    result = bindings.apply(frame).select(*uses)
    assert _optimized(result).count("unbase64") == 1
    assert len(bindings) == 2
    expected = frame.select(F.hex(F.try_to_binary(F.trim("raw"), F.lit("base64"))).alias("h"))
    rows = [r.h for r in expected.collect()]
    assert [r.u0 for r in result.collect()] == [
        h + h + h + "0" if h is not None else None for h in rows
    ]


def test_bindings_refuse_a_frame_with_a_column_of_their_name(spark: Any) -> None:
    bindings = Bindings("#b")
    bindings.bind(F.lit(1))
    with pytest.raises(ValueError, match="#b0"):
        bindings.apply(spark.range(1).select(F.lit(2).alias("#b0")))


def test_let_names_a_value_once_for_its_body(spark: Any) -> None:
    frame = spark.createDataFrame([("  7 ",), (None,)], "raw STRING")
    sql = let("CAST(trim(raw) AS INT)", lambda n: f"concat_ws(',', {n}, {n} + 1, {n} * 2)")
    value = F.expr(sql)
    assert [r.v for r in frame.select(value.alias("v")).collect()] == ["7,8,14", ""]
    analyzed = frame.select(value.alias("v"))._jdf.queryExecution().analyzed().toString()
    assert str(analyzed).count("trim(") == 1
