"""Upsert behaviours on real Spark, real files and a real SQLite catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.test_warehouse import files_under, read_text
from versioned.api.catalog import Catalog, connect
from versioned.errors import PermissionDeniedError, SchemaError

COLUMNS = "id BIGINT, amt DOUBLE, op STRING, store STRING"


def _table(cat: Catalog, layout: str, name: str = "t.sales", **kw: Any) -> Any:
    args: dict[str, Any] = dict(
        columns=COLUMNS, primary_key="id", partition_by="store", op_code_column="op", layout=layout
    )
    args.update(kw)
    return cat.create_table(name, **args)


def _batch(rows: list[tuple[int, float | None, str, str | None]]) -> pa.Table:
    ids, amts, ops, stores = zip(*rows, strict=True)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "amt": pa.array(amts, pa.float64()),
            "op": list(ops),
            "store": pa.array(stores, pa.string()),
        }
    )


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in frame.select("id", "amt", "store").collect())


@pytest.mark.cluster
def test_bad_rows_go_to_dead_letters_and_the_rest_commits(
    cat: Catalog, tmp_path: Path, layout: str
) -> None:
    t = _table(cat, layout)
    feed = tmp_path / "feed.csv"
    feed.write_text("id,amt,op,store\n1,1.5,I,a\n2,oops,I,a\n,3.0,I,a\n4,4.0,Z,b\n5,5.0,insert,b\n")
    result = t.upsert(str(feed))
    assert (result.inserted, result.rejected) == (2, 3)
    assert _rows(t.read()) == [(1, 1.5, "a"), (5, 5.0, "b")]
    dead_dir = f"{t.info.location}/_dead_letter"
    letters = [
        json.loads(line)
        for p in files_under(cat, dead_dir)
        if p.endswith(".json")
        for line in read_text(cat, f"{dead_dir}/{p}").splitlines()
    ]
    reasons = sorted(d["_reason"] for d in letters)
    assert len(reasons) == 3
    assert any("amt" in r and "DOUBLE" in r for r in reasons)
    assert any("primary key" in r for r in reasons)
    assert any("unknown op code 'Z'" in r for r in reasons)
    assert {d["_raw"] for d in letters} >= {"2,oops,I,a", "4,4.0,Z,b"}
    assert t.history()[-1].metrics["rejected"] == 3


def test_whole_batch_problem_fails_before_anything_is_written(cat: Catalog, layout: str) -> None:
    t = _table(cat, layout)
    t.upsert(_batch([(1, 1.0, "I", "a")]))
    before = sorted(files_under(cat))
    with pytest.raises(SchemaError, match="nope"):
        t.upsert(pa.table({"id": [2], "amt": [2.0], "op": ["I"], "store": ["a"], "nope": [1]}))
    after = sorted(files_under(cat))
    data = [p for p in before if not p.rpartition("/")[2].startswith("catalog.db")]
    assert data  # the first batch's files
    assert [p for p in after if not p.rpartition("/")[2].startswith("catalog.db")] == data
    assert len(t.history()) == 1


def test_permission_denied_writes_nothing(cat: Catalog, spark: Any, layout: str) -> None:
    t = _table(cat, layout)
    t.upsert(_batch([(1, 1.0, "I", "a")]))
    mallory = connect(
        catalog=cat.settings.catalog_url,
        warehouse=cat.settings.warehouse,
        spark=spark,
        user="mallory",
    )
    with pytest.raises(PermissionDeniedError):
        mallory.table("t.sales")
    cat.grant("mallory", "read", "t.sales")
    mt = mallory.table("t.sales")
    assert _rows(mt.read()) == [(1, 1.0, "a")]
    with pytest.raises(PermissionDeniedError, match="mallory"):
        mt.upsert(_batch([(2, 2.0, "I", "a")]))
    assert len(t.history()) == 1
    cat.grant("mallory", "write", "t.sales")
    assert mt.upsert(_batch([(2, 2.0, "I", "a")])).inserted == 1
    mallory.close()


def test_json_and_parquet_inputs(cat: Catalog, tmp_path: Path, layout: str) -> None:
    t = _table(cat, layout)
    jl = tmp_path / "b.jsonl"
    jl.write_text(
        '{"id": 1, "amt": 1.0, "op": "I", "store": "a"}\n'
        '{"id": 2, "amt": 2.0, "op": "i", "store": "b"}\n{broken\n'
    )
    assert t.upsert(str(jl)).rejected == 1
    pq.write_table(
        _batch([(1, 10.0, "update", "a"), (2, None, "DELETE", "b")]), tmp_path / "c.parquet"
    )
    result = t.upsert(str(tmp_path / "c.parquet"))
    assert (result.updated, result.deleted) == (1, 1)
    assert _rows(t.read()) == [(1, 10.0, "a")]


def test_debezium_envelopes(cat: Catalog, tmp_path: Path, layout: str) -> None:
    t = _table(cat, layout, columns="id BIGINT, amt DOUBLE, store STRING", op_code_column=None)
    plain = [
        {"op": "c", "after": {"id": 1, "amt": 1.0, "store": "a"}, "source": {"lsn": 10}},
        {"op": "c", "after": {"id": 2, "amt": 2.0, "store": "a"}, "source": {"lsn": 11}},
        {
            "op": "u",
            "before": {"id": 1, "amt": 1.0, "store": "a"},
            "after": {"id": 1, "amt": 1.5, "store": "a"},
            "source": {"lsn": 12},
        },
    ]
    (tmp_path / "dbz1.json").write_text("\n".join(json.dumps(e) for e in plain) + "\n")
    result = t.upsert(str(tmp_path / "dbz1.json"), format="debezium")
    assert (result.inserted, result.rejected) == (2, 0)
    wrapped = {
        "schema": {},
        "payload": {
            "op": "d",
            "before": {"id": 2, "amt": 2.0, "store": "a"},
            "after": None,
            "source": {"lsn": 13},
        },
    }
    (tmp_path / "dbz2.json").write_text(json.dumps(wrapped) + "\n")
    assert t.upsert(str(tmp_path / "dbz2.json"), format="debezium").deleted == 1
    assert _rows(t.read()) == [(1, 1.5, "a")]


def test_hostile_partition_values_round_trip(cat: Catalog, layout: str) -> None:
    t = _table(cat, layout)
    values = ["../x", "a/b", "%", "a=b", "ünï", None, "x'y\\z"]
    t.upsert(_batch([(i, float(i), "I", v) for i, v in enumerate(values)]))
    assert sorted(r[2] or "" for r in _rows(t.read())) == sorted(v or "" for v in values)
    written = [p for p in files_under(cat) if not p.startswith("catalog.db")]
    assert written and all(p.startswith(f"{t.info.location}/") for p in written)  # none escaped
    t.upsert(_batch([(0, 99.0, "U", "../x"), (1, None, "D", "a/b")]))
    latest = {r[0]: r for r in _rows(t.read())}
    assert latest[0] == (0, 99.0, "../x") and 1 not in latest
    got = cat.sql("SELECT id, amt, store FROM t.sales").collect()
    assert sorted(tuple(r) for r in got) == sorted(latest.values())


def test_sql_view_equals_read_and_follows_new_commits(cat: Catalog, layout: str) -> None:
    t = _table(cat, layout)
    t.upsert(_batch([(1, 1.0, "I", "a"), (2, 2.0, "I", "b"), (3, 3.0, "I", "b")]))
    view = cat.sql("SELECT id, amt, store FROM t.sales")  # registers the view first
    assert sorted(tuple(r) for r in view.collect()) == _rows(t.read())
    t.upsert(_batch([(2, 20.0, "U", "b"), (3, None, "D", "b")]))
    assert "t.sales" in cat.register_views()  # re-registers: the new commit shows
    assert sorted(
        tuple(r) for r in cat.spark.sql("SELECT id, amt, store FROM t.sales").collect()
    ) == [(1, 1.0, "a"), (2, 20.0, "b")]


def test_losing_a_commit_race_retries_as_a_newer_version(
    cat: Catalog, spark: Any, layout: str
) -> None:
    """Writer B commits to the same partition while A is between planning and committing:
    A's commit loses the compare-and-swap and A retries as a new version."""
    t = _table(cat, layout)
    t.upsert(_batch([(1, 1.0, "I", "a"), (2, 2.0, "I", "a")]))
    other = connect(
        catalog=cat.settings.catalog_url,
        warehouse=cat.settings.warehouse,
        spark=spark,
        user="alice",
    ).table("t.sales")
    raced: list[Any] = []

    def race(message: str) -> None:
        if message.startswith("writing") and not raced:
            raced.append(other.upsert(_batch([(1, 100.0, "U", "a"), (3, 3.0, "I", "a")])))

    result = t.upsert(_batch([(1, 10.0, "U", "a"), (2, 20.0, "U", "a")]), progress=race)
    assert raced and result.version > raced[0].version
    assert _rows(t.read()) == [(1, 10.0, "a"), (2, 20.0, "a"), (3, 3.0, "a")]
    versions = [c.version for c in t.history()]
    assert versions == sorted(versions) and len(versions) == 3
    assert _unlisted_files(cat, t) == set()  # the lost attempt removed what it wrote


def _unlisted_files(cat: Catalog, t: Any) -> set[str]:
    """Files under the table that no catalog record lists (dead letters aside)."""
    listed = {f.path for f in cat.engine_context.store.all_files(t.name)}
    on_disk = files_under(cat, t.info.location)
    return {p for p in on_disk - listed if not p.startswith("_dead_letter/")}


def test_a_write_that_fails_before_its_commit_removes_the_files_it_wrote(
    cat: Catalog, layout: str
) -> None:
    """The failed write's transaction is aborted and the files it wrote before failing (the
    version layout's index and Bloom files, written while planning) are deleted at once,
    not left for vacuum."""
    t = _table(cat, layout)
    t.upsert(_batch([(1, 1.0, "I", "a")]))

    def fail(message: str) -> None:
        if message.startswith("writing"):
            raise RuntimeError("the driver lost its executors")

    with pytest.raises(RuntimeError, match="lost its executors"):
        t.upsert(_batch([(1, 10.0, "U", "a"), (2, 2.0, "I", "b")]), progress=fail)
    assert _unlisted_files(cat, t) == set()
    aborted = cat.engine_context.store.txn_snapshot().aborted_ids
    assert len(aborted) == 1
    assert "RuntimeError" in (cat.engine_context.store.transaction(min(aborted)).abort_reason or "")
    assert _rows(t.read()) == [(1, 1.0, "a")]


def test_unpartitioned_table_and_composite_key(cat: Catalog, layout: str) -> None:
    t = cat.create_table(
        "t.pairs", columns="a BIGINT, b STRING, v INT", primary_key="a,b", layout=layout
    )
    t.upsert(pa.table({"a": [1, 1, 2], "b": ["x", "y", "x"], "v": [1, 2, 3]}))
    t.upsert(pa.table({"a": [1, 2], "b": ["y", "y"], "v": [20, 30]}))
    got = sorted(tuple(r) for r in t.read().collect())
    assert got == [(1, "x", 1), (1, "y", 20), (2, "x", 3), (2, "y", 30)]


def test_float_keys_and_partitions_match_as_sql_equality_does(cat: Catalog, layout: str) -> None:
    """The latest view joins on a hash of the key columns: -0.0 and 0.0 (and every NaN) must
    hash alike, as the Bloom key encoding and SQL equality treat them, or an update of key
    0.0 would leave the row of -0.0 alive next to it."""
    t = cat.create_table(
        "t.floats",
        columns="k DOUBLE NOT NULL, v STRING, p STRING",
        primary_key="k",
        partition_by="p",
        layout=layout,
    )
    t.upsert(
        pa.table({"k": [-0.0, float("nan"), 1.5], "v": ["a", "b", "c"], "p": ["x", None, "x"]})
    )
    t.upsert(pa.table({"k": [0.0, float("nan")], "v": ["A", "B"], "p": ["x", None]}))
    got = sorted((str(r["k"]), r["v"], r["p"]) for r in t.read().collect())
    assert got == [("0.0", "A", "x"), ("1.5", "c", "x"), ("nan", "B", None)]
    t.upsert(pa.table({"k": [1.5], "v": ["C"], "p": ["y"]}))  # the key is unique table-wide
    got = sorted((str(r["k"]), r["v"], r["p"]) for r in t.read().collect())
    assert got == [("0.0", "A", "x"), ("1.5", "C", "y"), ("nan", "B", None)]
