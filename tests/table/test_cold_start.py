"""Each operation as the first thing a process does: no SparkContext is active until versioned
asks for its session (`tests.support.cold_spark`), on a catalog opened without one, as the CLI
opens it. An operation that builds a Spark column before it holds a session fails here with
PySpark's bare ``AssertionError``, as it does in a scheduled job.

tests/fresh runs the same commands as real new processes; this runs in the shared session at
the cost of the operations alone, so every operation of every layout is covered in `make test`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from tests.support.cold_spark import spark_not_started
from tests.support.test_warehouse import catalog_for, warehouse_for
from tests.table.sales import apply, batch, make_table, model_rows
from versioned.api.catalog import Catalog, connect
from versioned.options import CompactionOptions

Operation = Callable[[Catalog], Any]


@pytest.fixture
def warm(spark: Any, tmp_path: Path, layout: str) -> dict[str, Any]:
    """A table with three committed batches (a key moved between partitions, a delete), made
    on the shared session; the test then opens the warehouse cold."""
    warehouse = warehouse_for(tmp_path)
    cat = connect(catalog=catalog_for(tmp_path), warehouse=warehouse, spark=spark, user="alice")
    t = make_table(cat, layout=layout)
    model: dict[int, Any] = {}
    steps = [
        [(i, float(i), "I", "ab"[i % 2]) for i in range(20)],
        [(1, 10.0, "U", "a"), (2, None, "D", "a"), (3, 30.0, "U", "b")],
        [(4, 40.0, "U", "b"), (21, 21.0, "I", "a")],
    ]
    versions = []
    for rows in steps:
        versions.append(t.upsert(batch(rows)).version)
        apply(model, rows)
    cat.close()
    return {
        "warehouse": warehouse,
        "catalog": catalog_for(tmp_path),
        "model": model,
        "versions": versions,
        "tmp": tmp_path,
    }


def _cold(warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch, op: Operation) -> Any:
    """Run ``op`` on a catalog opened cold (no session given, none active)."""
    with spark_not_started(spark, monkeypatch):
        cat = connect(catalog=warm["catalog"], warehouse=warm["warehouse"], user="alice")
        try:
            return op(cat)
        finally:
            cat.close()


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in frame.select("id", "amt", "p").collect())


def _latest(warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    return _cold(warm, spark, monkeypatch, lambda c: _rows(c.table("t.sales").read()))


def test_a_cold_read_sql_and_time_travel(
    warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _latest(warm, spark, monkeypatch) == model_rows(warm["model"])
    first = _cold(
        warm,
        spark,
        monkeypatch,
        lambda c: _rows(c.table("t.sales").read(as_of=warm["versions"][0])),
    )
    assert first == sorted((i, float(i), "ab"[i % 2]) for i in range(20))
    counts = _cold(
        warm, spark, monkeypatch, lambda c: c.sql("SELECT p, count(*) n FROM t.sales GROUP BY p")
        .collect(),
    )  # fmt: skip
    assert dict(tuple(r) for r in counts) == {
        p: sum(1 for _, (_, q) in warm["model"].items() if q == p) for p in "ab"
    }
    partitions = _cold(
        warm, spark, monkeypatch, lambda c: c.sql("SELECT * FROM t.sales__partitions").collect()
    )
    assert {r["values"]["p"] for r in partitions} == {"a", "b"}


def test_a_cold_changes_and_matching(
    warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    since = warm["versions"][0]
    changes = _cold(
        warm, spark, monkeypatch, lambda c: c.table("t.sales").changes(since=since).collect()
    )
    assert {r["id"]: r["_change"] for r in changes} == {
        1: "update", 2: "delete", 3: "update", 4: "update", 21: "insert"
    }  # fmt: skip
    matching = _cold(
        warm, spark, monkeypatch, lambda c: c.table("t.sales").matching("amt >= 30").count()
    )
    assert matching == sum(1 for amt, _ in warm["model"].values() if amt is not None and amt >= 30)


@pytest.mark.parametrize("source", ["arrow", "parquet", "csv"])
def test_a_cold_upsert(
    warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    rows = [(5, 50.0, "U", "a"), (6, None, "D", "a"), (22, 22.0, "I", "b")]
    data: Any = batch(rows)
    if source != "arrow":
        path = warm["tmp"] / f"feed.{source}"
        if source == "parquet":
            pq.write_table(data, path)
        else:
            pacsv.write_csv(data, path)
        data = str(path)
    result = _cold(warm, spark, monkeypatch, lambda c: c.table("t.sales").upsert(data))
    assert (result.inserted, result.updated, result.deleted) == (1, 1, 1)
    apply(warm["model"], rows)
    assert _latest(warm, spark, monkeypatch) == model_rows(warm["model"])


def test_a_cold_delete(warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _cold(warm, spark, monkeypatch, lambda c: c.table("t.sales").delete("amt < 5"))
    gone = [k for k, (amt, _) in warm["model"].items() if amt is not None and amt < 5]
    assert result.deleted == len(gone) > 0
    for key in gone:
        warm["model"].pop(key)
    assert _latest(warm, spark, monkeypatch) == model_rows(warm["model"])


def test_a_cold_compaction_of_each_kind(
    warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind the layout has (acid: minor, major), then the default, each after a change
    so that it has something to merge."""
    probe = connect(catalog=warm["catalog"], warehouse=warm["warehouse"], spark=spark, user="alice")
    kinds = [*probe.table("t.sales").layout.compaction_kinds, None]
    for n, kind in enumerate(kinds):
        rows = [(7, 70.0 + n, "U", "b")]
        probe.table("t.sales").upsert(batch(rows))
        apply(warm["model"], rows)
        options = CompactionOptions(kind=kind) if kind else None
        result = _cold(
            warm, spark, monkeypatch, lambda c, o=options: c.table("t.sales").compact(options=o)
        )
        assert result.compacted >= 1, (kind, result)
        assert _latest(warm, spark, monkeypatch) == model_rows(warm["model"]), kind
    probe.close()


def test_a_cold_vacuum_export_and_import(
    warm: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cold(warm, spark, monkeypatch, lambda c: c.table("t.sales").compact())
    vacuumed = _cold(
        warm, spark, monkeypatch, lambda c: c.table("t.sales").vacuum(0, grace_hours=0)
    )
    assert vacuumed.retired_files >= 1
    dest = str(warm["tmp"] / "exported")
    exported = _cold(warm, spark, monkeypatch, lambda c: c.export("t.sales", dest))
    assert exported.rows == len(warm["model"])
    imported = _cold(warm, spark, monkeypatch, lambda c: c.import_(dest, table="t.copy"))
    assert imported.rows == len(warm["model"])
    copy = _cold(warm, spark, monkeypatch, lambda c: _rows(c.table("t.copy").read()))
    assert copy == model_rows(warm["model"])
