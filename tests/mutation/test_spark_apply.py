"""``vm.apply``: a DataFrame of mutations applied by coordinators on Spark's executors."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tests.mutation.tables import alerts, begun, ids_in_bucket, rows, values
from versioned import mutation as vm

SCHEMA = "_op string, id int, msg string, continent string, country string"


def _frame(cat: Any, data: list[tuple[Any, ...]], schema: str = SCHEMA) -> DataFrame:
    return cat.spark.createDataFrame(data, schema)


def _seeded(cat: Any) -> Any:
    """m.alerts with ids 1..6 in Asia/India and 7..8 in Europe/UK (one commit)."""
    table = alerts(cat)
    txn = begun(cat)
    data = [("insert", i, f"m{i}", "Asia", "India") for i in range(1, 7)]
    data += [("insert", i, f"m{i}", "Europe", "UK") for i in (7, 8)]
    summary = vm.apply(txn, "m.alerts", _frame(cat, data), partitions=3)
    assert (summary.inserted, summary.updated, summary.deleted) == (8, 0, 0)
    assert summary.groups == 4  # two partitions, two buckets each (ids 1..8 fill both)
    assert summary.files == 4
    txn.commit()
    return table


def _snapshot(table: Any) -> DataFrame:
    return table.read(with_row_id=True)


@pytest.mark.cluster
def test_inserts_updates_and_deletes_apply_and_commit(cat: Any) -> None:
    table = _seeded(cat)
    before = {r[2]: r[-1] for r in rows(table)}
    snap = _snapshot(table)
    updates = snap.filter("id IN (2, 7)").withColumn("msg", F.lit("changed"))
    deletes = snap.filter("id = 3")
    changes = updates.withColumn("_op", F.lit("update")).unionByName(
        deletes.withColumn("_op", F.lit("delete"))
    )
    inserts = _frame(cat, [("insert", 9, "new", "Europe", "France")])
    txn = begun(cat)
    summary = vm.apply(txn, "m.alerts", changes.unionByName(inserts, allowMissingColumns=True))
    assert (summary.inserted, summary.updated, summary.deleted) == (1, 2, 1)
    assert len(values(table)) == 8 and len(table.history()) == 1  # nothing visible yet
    txn.commit()
    expected = {(c, n, i, f"m{i}") for c, n, i in [("Asia", "India", i) for i in (1, 4, 5, 6)]}
    expected |= {("Europe", "UK", 8, "m8"), ("Asia", "India", 2, "changed")}
    expected |= {("Europe", "UK", 7, "changed"), ("Europe", "France", 9, "new")}
    assert set(values(table)) == expected
    after = {r[2]: r[-1] for r in rows(table)}
    write_id = after[9][0]
    assert write_id == before[1][0] + 1
    assert all(after[i] == before[i] for i in (1, 4, 5, 6, 8))
    assert after[2][0] == after[7][0] == write_id


def test_an_unknown_op_fails_with_a_mutation_error_and_aborts(cat: Any) -> None:
    table = alerts(cat)
    txn = begun(cat)
    data = [("insert", 1, "a", "Asia", "India"), ("upsert", 2, "b", "Asia", "India")]
    with pytest.raises(vm.UnknownOperationError, match="'upsert'") as raised:
        vm.apply(txn, "m.alerts", _frame(cat, data), partitions=1)
    assert "aborted" in str(raised.value)
    assert txn.state is vm.TransactionState.ABORTED
    assert values(table) == [] and table.history() == []


def test_an_update_or_delete_without_row_id_is_refused(cat: Any) -> None:
    alerts(cat)
    for op in ("update", "delete"):
        txn = begun(cat)
        with pytest.raises(vm.MissingRowIdError, match=f"a {op} of m.alerts has no ROW__ID"):
            vm.apply(txn, "m.alerts", _frame(cat, [(op, 1, "a", "Asia", "India")]))
        assert txn.state is vm.TransactionState.ABORTED


def test_a_delete_in_a_missing_partition_is_refused(cat: Any) -> None:
    table = _seeded(cat)
    gone = _snapshot(table).filter("id = 7").withColumn("country", F.lit("Wales"))
    txn = begun(cat)
    with pytest.raises(vm.MissingPartitionError, match="no partition"):
        vm.apply(txn, "m.alerts", gone.withColumn("_op", F.lit("delete")))
    assert len(values(table)) == 8


def test_an_update_of_a_bucket_column_is_refused(cat: Any) -> None:
    table = _seeded(cat)
    bucket = vm.BucketIdResolver(table).bucket_of({"id": 1})
    elsewhere = ids_in_bucket(table, 1 - bucket, 1)[0]
    changed = _snapshot(table).filter("id = 1").withColumn("id", F.lit(elsewhere))
    txn = begun(cat)
    with pytest.raises(vm.BucketIdError, match="records never move between buckets"):
        vm.apply(txn, "m.alerts", changed.withColumn("_op", F.lit("update")))
    assert txn.state is vm.TransactionState.ABORTED


def test_a_frame_without_the_needed_columns_is_refused_before_anything_runs(cat: Any) -> None:
    alerts(cat)
    txn = begun(cat)
    frame = _frame(cat, [("insert", 1, "a", "Asia", "India")])
    with pytest.raises(vm.MutationSchemaError, match=r"lack column.*msg"):
        vm.apply(txn, "m.alerts", frame.drop("msg"))
    with pytest.raises(vm.MutationSchemaError, match="'_op'"):
        vm.apply(txn, "m.alerts", frame.drop("_op"))
    with pytest.raises(vm.MutationSchemaError, match="ROW__ID"):
        vm.apply(txn, "m.alerts", frame.withColumn("ROW__ID", F.lit(1)))
    assert txn.state is vm.TransactionState.OPEN
    txn.abort()


def test_apply_then_abort_leaves_nothing_visible(cat: Any) -> None:
    table = alerts(cat)
    txn = begun(cat)
    summary = vm.apply(txn, "m.alerts", _frame(cat, [("insert", 1, "a", "Asia", "India")]))
    assert summary.inserted == 1
    txn.abort()
    assert values(table) == [] and table.history() == []


@pytest.mark.cluster
def test_apply_on_two_tables_commits_both_at_once(cat: Any) -> None:
    first, second = alerts(cat), alerts(cat, "m.audit")
    txn = begun(cat, "m.alerts", "m.audit")
    for name in ("m.alerts", "m.audit"):
        vm.apply(txn, name, _frame(cat, [("insert", 1, name, "Asia", "India")]))
    assert values(first) == values(second) == []
    txn.commit()
    assert values(first) == [("Asia", "India", 1, "m.alerts")]
    assert values(second) == [("Asia", "India", 1, "m.audit")]
    assert first.history()[0].txn_id == second.history()[0].txn_id == txn.transaction_id
