"""The seed's whole recipe through ``vm.apply`` on a 100k-row acid table with 10 % mutations
(the README's "Mutation API" example): read a snapshot with ROW__IDs, join the deltas on the
business key, apply, commit; the result is checked against rows computed in plain Python."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F

from tests.mutation.tables import alerts
from versioned import mutation as vm

ROWS = 100_000
PLACES = [("Asia", "India"), ("Europe", "UK"), ("Europe", "France"), ("America", "Peru")]
KEY = ["continent", "country", "id"]


def _place(id_: int) -> tuple[str, str]:
    return PLACES[id_ % len(PLACES)]


def _changes() -> list[tuple[str, str, int, str | None, str]]:
    """10 % of the table: 4,000 updates, 3,000 deletes, 3,000 inserts of new keys."""
    updates = [(*_place(i), i, f"updated {i}", "U") for i in range(1, 40_000, 10)]
    deletes = [(*_place(i), i, None, "D") for i in range(2, 30_000, 10)]
    inserts = [(*_place(i), i, f"new {i}", "I") for i in range(ROWS, ROWS + 3_000)]
    return updates + deletes + inserts


def _seed(cat: Any) -> None:
    """ids 0..99,999 (msg ``seed <id>``) in one transaction of inserts (the table's upsert
    would check every key against the table: far slower for a first load)."""
    ids = pa.array(range(ROWS), pa.int32())
    seed = cat.spark.createDataFrame(
        pa.table(
            {
                "_op": ["insert"] * ROWS,
                "id": ids,
                "msg": [f"seed {i}" for i in range(ROWS)],
                "continent": [_place(i)[0] for i in range(ROWS)],
                "country": [_place(i)[1] for i in range(ROWS)],
            }
        ).to_pandas()
    )
    client = vm.MutatorClient(cat, tables=["m.alerts"])
    txn = client.new_transaction()
    txn.begin()
    vm.apply(txn, "m.alerts", seed)
    txn.commit()


def _live(table: Any) -> dict[tuple[str, str, int], tuple[str, tuple[int, int, int]]]:
    """key -> (msg, ROW__ID) of every live row."""
    got = table.read(with_row_id=True).toArrow().to_pylist()
    return {
        (r["continent"], r["country"], r["id"]): (
            r["msg"],
            (r["ROW__ID"]["writeid"], r["ROW__ID"]["bucketid"], r["ROW__ID"]["rowid"]),
        )
        for r in got
    }


def test_the_recipe_applies_ten_percent_mutations_to_a_100k_row_table(cat: Any) -> None:
    table = alerts(cat, buckets=4)
    _seed(cat)
    before = _live(table)
    assert len(before) == ROWS
    changes = _changes()

    # The recipe (README "Mutation API"): snapshot with ROW__IDs, join the deltas on the
    # business key, one op per row, apply (buckets, grouping and sorting), commit.
    spark = cat.spark
    deltas = spark.createDataFrame(
        changes, "continent string, country string, id int, msg string, change string"
    )
    snapshot = table.read(with_row_id=True)
    joined = deltas.join(snapshot.select(*KEY, "ROW__ID"), KEY, "left")
    mutations = joined.filter(~((F.col("change") == "D") & F.col("ROW__ID").isNull())).withColumn(
        "_op",
        F.when(F.col("ROW__ID").isNull(), "insert")
        .when(F.col("change") == "D", "delete")
        .otherwise("update"),
    )
    client = vm.MutatorClient(cat, tables=["m.alerts"])
    txn = client.new_transaction()
    txn.begin()
    summary = vm.apply(txn, "m.alerts", mutations)
    txn.commit()
    client.close()

    assert (summary.inserted, summary.updated, summary.deleted) == (3_000, 4_000, 3_000)
    assert summary.groups == len(PLACES) * 4  # every (partition, bucket) of the table
    write_id = txn.targets["m.alerts"].write_id
    assert write_id > max(rid[0] for _, rid in before.values())

    # Expected rows, computed in plain Python from the seed and the changes.
    expected = {key: msg for key, (msg, _) in before.items()}
    for continent, country, id_, msg, change in changes:
        if change == "D":
            expected.pop((continent, country, id_), None)
        else:
            expected[(continent, country, id_)] = msg
    after = _live(table)
    assert {key: msg for key, (msg, _) in after.items()} == expected
    changed = {(c, n, i) for c, n, i, _, change in changes if change != "D"}
    for key, (_, row_id) in after.items():
        if key in changed:  # updated or inserted: a new ROW__ID of the transaction's write
            assert row_id[0] == write_id, key
        else:  # untouched: the very ROW__ID it had
            assert row_id == before[key][1], key
