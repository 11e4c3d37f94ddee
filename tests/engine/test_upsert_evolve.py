"""``upsert(..., evolve=True)``: new input columns are added just before the data commits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from versioned.api.catalog import Catalog
from versioned.api.table import Table
from versioned.errors import SchemaError


def _table(cat: Catalog) -> Table:
    t = cat.create_table(
        "t.items", columns="id BIGINT, qty INT, p STRING", primary_key="id", partition_by="p"
    )
    t.upsert(pa.table({"id": [1, 2], "qty": pa.array([1, 2], pa.int32()), "p": ["a", "b"]}))
    return t


def _types(t: Table) -> dict[str, str]:
    return {c.name: c.type for c in t.spec.columns}


def _rows(t: Table, *columns: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().select(*columns).collect())


def test_evolve_adds_new_columns_typed_from_the_input_in_an_alter_commit_before_the_data(
    cat: Catalog,
) -> None:
    t = _table(cat)
    batch = pa.table(
        {
            "id": [3],
            "qty": pa.array([3], pa.int32()),
            "p": ["a"],
            "Price": pa.array([2.5], pa.float64()),
            "when": pa.array([pa.scalar(19000, pa.date32()).as_py()], pa.date32()),
        }
    )
    result = t.upsert(batch, evolve=True)
    assert _types(t) == {
        "id": "BIGINT",
        "qty": "INT",
        "p": "STRING",
        "price": "DOUBLE",
        "when": "DATE",
    }
    history = t.history()
    assert [c.operation for c in history] == ["upsert", "alter", "upsert"]
    assert history[1].metrics["added_columns"] == ["price DOUBLE", "when DATE"]
    assert history[1].metrics["reason"] == "upsert with evolve"
    assert history[2].version == result.version and result.inserted == 1
    assert _rows(t, "id", "price") == [(1, None), (2, None), (3, 2.5)]
    again = t.upsert(batch, evolve=True)  # the columns exist now: no second alter
    assert [c.operation for c in t.history()][-1] == "upsert" and again.updated == 1


def test_evolve_types_json_values_by_inference_and_csv_values_as_strings(
    cat: Catalog, tmp_path: Path
) -> None:
    t = _table(cat)
    feed = tmp_path / "feed.json"
    feed.write_text(
        json.dumps({"id": 3, "qty": 3, "p": "a", "n": 7, "x": 1.5, "ok": True, "tag": "t"}) + "\n"
    )
    t.upsert(str(feed), evolve=True)
    csv = tmp_path / "feed.csv"
    csv.write_text("id,qty,p,n,x,ok,tag,code\n4,4,b,,,,,0042\n")  # every column: not partial
    t.upsert(str(csv), evolve=True)
    assert list(_types(t).items())[3:] == [
        ("n", "BIGINT"),
        ("ok", "BOOLEAN"),
        ("tag", "STRING"),
        ("x", "DOUBLE"),
        ("code", "STRING"),
    ]
    assert _rows(t, "id", "n", "x", "ok", "tag", "code") == [
        (1, None, None, None, None, None),
        (2, None, None, None, None, None),
        (3, 7, 1.5, True, "t", None),
        (4, None, None, None, None, "0042"),
    ]


def test_without_evolve_unknown_columns_fail_the_batch_before_anything_is_written(
    cat: Catalog,
) -> None:
    t = _table(cat)
    files = {f.path for f in t.snapshot().files}
    batch = pa.table({"id": [3], "qty": pa.array([3], pa.int32()), "p": ["a"], "extra": ["x"]})
    with pytest.raises(SchemaError, match=r"unknown column.*extra"):
        t.upsert(batch)
    assert [c.operation for c in t.history()] == ["upsert"]
    assert "extra" not in t.refresh().spec.column_names
    assert {f.path for f in t.snapshot().files} == files


def test_evolve_changes_nothing_when_the_batch_has_another_whole_batch_problem(
    cat: Catalog,
) -> None:
    t = _table(cat)
    no_key = pa.table({"qty": pa.array([3], pa.int32()), "p": ["a"], "extra": ["x"]})
    with pytest.raises(SchemaError, match="missing key column"):
        t.upsert(no_key, evolve=True)
    assert [c.operation for c in t.history()] == ["upsert"]
    assert "extra" not in t.refresh().spec.column_names


def test_a_write_failing_after_the_alter_leaves_a_readable_table_and_a_retry_completes(
    cat: Catalog, spark: Any
) -> None:
    """The columns are committed first; a data write that then fails leaves them added and
    null, every version reads as before, and the same upsert run again writes the data."""
    t = _table(cat)
    rows = spark.createDataFrame([(3, 3, "a", "x")], "id BIGINT, qty INT, p STRING, note STRING")
    failing = rows.withColumn(
        "note", F.when(F.col("id") == 3, F.raise_error(F.lit("source went away"))).cast("string")
    )
    with pytest.raises(Exception, match="source went away"):
        t.upsert(failing, evolve=True)
    assert [c.operation for c in t.history()] == ["upsert", "alter"]
    assert _rows(t, "id", "qty", "p", "note") == [(1, 1, "a", None), (2, 2, "b", None)]
    assert t.read(as_of=t.history()[0].version).columns == ["id", "qty", "p"]
    assert cat.engine_context.store.txn_snapshot().open_ids == frozenset()
    t.upsert(rows, evolve=True)
    assert [c.operation for c in t.history()] == ["upsert", "alter", "upsert"]
    assert _rows(t, "id", "note") == [(1, None), (2, None), (3, "x")]


@pytest.mark.parametrize(
    ("frame_schema", "message"),
    [
        ("id BIGINT, qty INT, p STRING, tags ARRAY<STRING>", "array<string>"),
        ("id BIGINT, qty INT, p STRING, version_id BIGINT", "reserved"),
    ],
)
def test_evolve_refuses_columns_a_table_cannot_hold(
    cat: Catalog, spark: Any, frame_schema: str, message: str
) -> None:
    t = _table(cat)
    with pytest.raises(SchemaError, match=message):
        t.upsert(spark.createDataFrame([], frame_schema), evolve=True)
    assert [c.operation for c in t.history()] == ["upsert"]


def test_evolve_asks_for_alter_table_for_debezium_feeds(cat: Catalog, tmp_path: Path) -> None:
    t = _table(cat)
    feed = tmp_path / "cdc.json"
    event = {"op": "c", "before": None, "after": {"id": 3, "qty": 3, "p": "a", "extra": "x"}}
    feed.write_text(json.dumps(event) + "\n")
    with pytest.raises(SchemaError, match="alter-table --add-columns"):
        t.upsert(str(feed), format="debezium", evolve=True)
    assert [c.operation for c in t.history()] == ["upsert"]
