"""The stream agrees with `Table.changes` commit by commit, on both layouts.

For each commit v (previous commit p), the stream's rows of v folded to ``changes()``'s
form (``update_postimage`` as ``update``, pre-images dropped) equal ``changes(p, v)``; the
pre-images equal the rows live at p. The workload: inserts, updates, deletes, an upsert
that rewrites identical values, a delete of a missing key, re-inserts, a key moving
partition and back (the key is unique table-wide), NaN values, a compaction, an added
column, and a `Table.delete`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tests.change_stream.streams import batch, change_reader, create, folded, run_to_memory
from tests.support.layout_profiles import LAYOUTS, table_args
from versioned.api.catalog import Catalog

NAN = float("nan")


def _workload(t: Any) -> None:
    t.upsert(batch([("I", i, f"v{i}", float(i), "xy"[i % 2]) for i in range(1, 9)]))
    t.upsert(
        batch(
            [
                ("U", 1, "v1b", 1.0, "y"),  # update
                ("D", 2, None, None, "x"),  # delete
                ("U", 3, "v3", 3.0, "y"),  # the same values again: no change
                ("U", 4, "v4", 4.0, "y"),  # moves from x to y, values unchanged
                ("D", 99, None, None, "x"),  # a key that does not exist
                ("I", 9, "v9", NAN, "x"),
            ]
        )
    )
    # Before a compaction: the old rows of 2 and 4 in x are still in files, retired there
    # by index entries (a delete, a move away).
    t.upsert(batch([("I", 2, "again", 2.0, "x"), ("U", 4, "v4", 4.0, "x")]))
    t.compact()
    t.upsert(
        batch(
            [
                ("D", 8, None, None, "x"),
                ("U", 4, "v4", 4.5, "y"),  # moves again, with a new value
                ("U", 9, "v9", NAN, "x"),  # NaN equals NaN: no change
                ("U", 5, None, 5.0, "y"),  # a value becomes null
            ]
        )
    )
    t.add_columns("extra STRING")
    t.upsert(batch([("U", 3, "v3", 3.0, "y", "new"), ("D", 6, None, None, "x", None)], extra=True))
    t.delete("id = 7")
    t.upsert(batch([("I", 8, "back", 8.0, "x", None)], extra=True))  # re-inserted


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_commit_s_changes_equal_changes_between_it_and_the_previous_commit(
    spark: Any, cat: Catalog, tmp_path: Path, layout: str
) -> None:
    t = create(cat, layout)
    _workload(t)
    history = t.history()
    operations = [c.operation for c in history if c.operation != "compact"]
    assert operations == [*["upsert"] * 4, "alter", "upsert", "delete", "upsert"]
    assert "compact" in {c.operation for c in history}  # one commit per partition

    rows = run_to_memory(change_reader(spark, cat, "cs.t").load(), tmp_path / "ck")

    by_seq: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_seq.setdefault(r["_commit_seq"], []).append(r)
    # What `changes` says of each commit and what was live before it, each read in one Spark
    # job for all commits (the frames' columns differ across the added column).
    versions = [c.version for c in history]
    befores = [None, *versions[:-1]]
    changes = _tagged([t.changes(p, v) for p, v in zip(befores, versions, strict=True)])
    lives = _tagged([t.read(as_of=p) for p in befores[1:]])
    for i, commit in enumerate(history):
        mine = by_seq.pop(commit.seq, [])
        assert {r["_commit_version"] for r in mine} <= {commit.version}
        columns = [c for c in changes.columns[i] if c != "_change"]
        expected = sorted((_key(r) for r in changes.rows[i]), key=repr)
        assert [_key(r) for r in folded(mine, columns)] == expected, commit
        if i > 0:  # each pre-image is the key's row live before the commit
            live_columns = lives.columns[i - 1]
            live = {r[live_columns.index("id")]: _key(r) for r in lives.rows[i - 1]}
            for r in mine:
                if r["_change_type"] in ("update_preimage", "delete"):
                    assert _key(tuple(r[c] for c in live_columns)) == live[r["id"]]
        if commit.operation in ("compact", "alter"):
            assert mine == []
    assert by_seq == {}
    kinds = {r["_change_type"] for r in rows}
    assert kinds == {"insert", "update_preimage", "update_postimage", "delete"}
    # Re-inserts are inserts, moves are updates; the no-op rewrite is left out.
    upserts = [c.seq for c in history if c.operation == "upsert"]
    assert not [r for r in rows if r["_commit_seq"] == upserts[1] and r["id"] == 3]
    assert _kinds(rows, upserts[2]) == {
        (2, "insert"),
        (4, "update_preimage"),
        (4, "update_postimage"),
    }
    assert _kinds(rows, upserts[3]) == {
        (8, "delete"),
        (4, "update_preimage"),
        (4, "update_postimage"),
        (5, "update_preimage"),
        (5, "update_postimage"),
    }
    assert _kinds(rows, upserts[-1]) == {(8, "insert")}


@dataclass
class _Collected:
    columns: list[list[str]]  # each frame's own columns
    rows: list[list[tuple[Any, ...]]]  # each frame's rows, in its own columns


def _tagged(frames: list[DataFrame]) -> _Collected:
    """The rows of each of ``frames``, collected in one Spark job."""
    tagged = [f.select(F.lit(i).alias("_frame"), "*") for i, f in enumerate(frames)]
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), tagged)
    columns = [f.columns for f in frames]
    rows: list[list[tuple[Any, ...]]] = [[] for _ in frames]
    for row in union.collect():
        i = row["_frame"]
        rows[i].append(tuple(row[c] for c in columns[i]))
    return _Collected(columns, rows)


def _kinds(rows: list[dict[str, Any]], seq: int) -> set[tuple[int, str]]:
    return {(r["id"], r["_change_type"]) for r in rows if r["_commit_seq"] == seq}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_streamed_transactions_agree_with_changes_also_while_their_batch_is_open(
    spark: Any, cat: Catalog, tmp_path: Path, layout: str
) -> None:
    """Hive streaming ingest: a batch of transactions appends to the same files (acid: one
    delta for all its write ids, each commit a longer readable prefix)."""
    from versioned import streaming as vs

    args: dict[str, Any] = table_args(layout, buckets=2)
    t = cat.create_table(
        "cs.s", columns="id INT, msg STRING, country STRING", primary_key="country,id",
        partition_by="country", layout=layout, **args,
    )  # fmt: skip
    t.upsert(batch_of([(100, "stored", "in")]))
    endpoint = vs.EndPoint(cat, "cs.s", ["in"])
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    checkpoint = tmp_path / "ck"
    seen = run_to_memory(change_reader(spark, cat, "cs.s").load(), checkpoint)
    with endpoint.connect() as conn:
        txns = conn.fetch_transaction_batch(3, writer)
        txns.begin_next_transaction()
        txns.write_many([f"{i},first {i}" for i in range(1, 4)])
        txns.commit()
        seen += run_to_memory(change_reader(spark, cat, "cs.s").load(), checkpoint)
        txns.begin_next_transaction()
        txns.write_many(["2,second", "100,replaced", "3,first 3"])
        txns.commit()
        txns.begin_next_transaction()
        txns.write("1,aborted")
        txns.abort()
        seen += run_to_memory(change_reader(spark, cat, "cs.s").load(), checkpoint)
        txns.close()
    seen += run_to_memory(change_reader(spark, cat, "cs.s").load(), checkpoint)
    previous = None
    for commit in t.history():
        mine = [r for r in seen if r["_commit_seq"] == commit.seq]
        expected = sorted(
            (tuple(r) for r in t.changes(previous, commit.version).collect()), key=repr
        )
        assert folded(mine, ["id", "msg", "country"]) == expected, commit
        previous = commit.version
    assert sorted((r["id"], r["_change_type"]) for r in seen if r["_commit_seq"] == 3) == [
        (2, "update_postimage"),
        (2, "update_preimage"),
        (100, "update_postimage"),
        (100, "update_preimage"),
    ]


def batch_of(rows: list[tuple[Any, ...]]) -> Any:
    import pyarrow as pa

    ids, msgs, countries = zip(*rows, strict=True)
    return pa.table(
        {"id": pa.array(ids, pa.int32()), "msg": list(msgs), "country": list(countries)}
    )
