"""End to end, as Hive's TestMutations (Hive 3 semantics: split updates): transactions over
one or several tables, read back without Spark (the catalog's snapshot and pyarrow, as the
client reads: `tests/support/lake_rows.py`, checked against ``Table.read(with_row_id=True)`` in
tests/streaming/test_lake_rows.py) and with a Hive-style directory walk. The two tests that
upsert run on Spark (an acid upsert looks keys up with Spark) and cross-read with it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.mutation.tables import (
    ASIA_INDIA,
    EUROPE_FRANCE,
    EUROPE_UK,
    alerts,
    begun,
    hive_values,
    ids_in_bucket,
    prop,
    record,
    rows,
    spark_rows,
    values,
)
from tests.support.lake_rows import ROW_ID, lake_rows
from versioned import mutation as vm


def _table_dir(cat: Any, table: Any) -> Path:
    return Path(cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://"))


@pytest.mark.parametrize("partitioned", [True, False])
def test_begin_and_commit_without_mutations_commits(lake: Any, partitioned: bool) -> None:
    table = alerts(lake, partitioned=partitioned)
    client = vm.MutatorClient(lake, tables=["m.alerts"])
    txn = client.new_transaction()
    assert txn.state is vm.TransactionState.INACTIVE
    txn.begin()
    txn.commit()
    assert txn.state is vm.TransactionState.COMMITTED
    assert lake.engine_context.store.transaction(txn.transaction_id).state == "committed"
    assert table.history() == []
    client.close()


@pytest.mark.parametrize("partitioned", [True, False])
def test_begin_and_abort_with_an_unused_coordinator_aborts(lake: Any, partitioned: bool) -> None:
    alerts(lake, partitioned=partitioned)
    txn = begun(lake, "m.alerts")
    client = txn.client
    client.coordinator(txn, "m.alerts").close()
    txn.abort()
    assert txn.state is vm.TransactionState.ABORTED
    assert lake.engine_context.store.transaction(txn.transaction_id).state == "aborted"


def test_one_insert_commits_one_file_with_the_row_id_of_the_write(lake: Any) -> None:
    table = alerts(lake)
    resolver = vm.BucketIdResolver(table)
    txn = begun(lake, "m.alerts")
    client = txn.client
    coord = client.coordinator(txn, "m.alerts")
    coord.insert(ASIA_INDIA, record(resolver, 1, "Hello streaming"))
    coord.close()
    assert values(table) == []  # nothing visible before the commit
    txn.commit()
    bucket = resolver.bucket_of({"id": 1})
    assert rows(table) == [("Asia", "India", 1, "Hello streaming", (1, prop(bucket), 0))]
    data = [f.path for f in table.snapshot().files if f.kind in ("delta", "delete_delta")]
    assert data == [f"continent=Asia/country=India/delta_0000001_0000001_0000/bucket_0000{bucket}"]
    assert hive_values(lake, table) == values(table)
    assert table.history()[0].metrics["inserted"] == 1


def test_inserts_into_several_partitions_create_them_and_number_rows_per_file(lake: Any) -> None:
    table = alerts(lake)
    lake.engine_context.store.add_partition("m.alerts", ASIA_INDIA)
    resolver = vm.BucketIdResolver(table)
    france = ids_in_bucket(table, 1, 2)
    txn = begun(lake, "m.alerts", create_partitions=True)
    client = txn.client
    coord = client.coordinator(txn, "m.alerts")
    coord.insert(ASIA_INDIA, record(resolver, 1, "Hello streaming"))
    coord.insert(EUROPE_UK, record(resolver, 2, "Hello streaming"))
    for i in france:
        coord.insert(EUROPE_FRANCE, record(resolver, i, "Bonjour streaming"))
    coord.close()
    assert {p.values for p in lake.engine_context.store.partitions("m.alerts")} == {
        ("Asia", "India"),
        ("Europe", "UK"),
        ("Europe", "France"),
    }
    txn.commit()
    found = rows(table)
    assert [r[4][2] for r in found if r[1] == "France"] == [0, 1]
    assert values(table) == sorted(
        [
            ("Asia", "India", 1, "Hello streaming"),
            ("Europe", "UK", 2, "Hello streaming"),
            *[("Europe", "France", i, "Bonjour streaming") for i in france],
        ],
        key=repr,
    )
    assert hive_values(lake, table) == values(table)


def test_an_unpartitioned_table_takes_an_empty_partition_list(lake: Any) -> None:
    table = alerts(lake, partitioned=False)
    resolver = vm.BucketIdResolver(table)
    txn = begun(lake, "m.alerts")
    client = txn.client
    with client.coordinator(txn, "m.alerts") as coord:
        coord.insert([], record(resolver, 1, "Hello streaming"))
    txn.commit()
    assert values(table) == [(1, "Hello streaming")]
    assert hive_values(lake, table) == values(table)


def test_abort_leaves_nothing_visible_and_deletes_the_reported_files(lake: Any) -> None:
    table = alerts(lake)
    resolver = vm.BucketIdResolver(table)
    txn = begun(lake, "m.alerts")
    client = txn.client
    with client.coordinator(txn, "m.alerts") as coord:
        coord.insert(ASIA_INDIA, record(resolver, 1, "Hello streaming"))
        coord.insert(EUROPE_UK, record(resolver, 2, "Hello streaming"))
    folder = _table_dir(lake, table)
    assert list(folder.rglob("bucket_*"))
    txn.abort()
    assert txn.state is vm.TransactionState.ABORTED
    assert values(table) == []
    assert table.history() == []
    assert list(folder.rglob("bucket_*")) == []
    assert list(folder.rglob("*.json")) == []


def _seed(lake: Any, table: Any) -> dict[str, list[int]]:
    """Write id 1: two India rows and two France rows in one bucket each, one UK row."""
    resolver = vm.BucketIdResolver(table)
    ids = {
        "India": ids_in_bucket(table, 0, 3),
        "UK": [ids_in_bucket(table, 1, 5)[-1]],
        "France": ids_in_bucket(table, 1, 2),
    }
    txn = begun(lake, table.name)
    client = txn.client
    with client.coordinator(txn, table.name) as coord:
        for i in ids["India"][:2]:
            coord.insert(ASIA_INDIA, record(resolver, i, "Hello streaming"))
        coord.insert(EUROPE_UK, record(resolver, ids["UK"][0], "Hello streaming"))
        for i in ids["France"]:
            coord.insert(EUROPE_FRANCE, record(resolver, i, "Bonjour streaming"))
    txn.commit()
    return ids


def test_updates_and_deletes_split_updates_and_keep_untouched_row_ids(lake: Any) -> None:
    table = alerts(lake)
    ids = _seed(lake, table)
    resolver = vm.BucketIdResolver(table)
    stored = {(r[1], r[2]): r for r in rows(table)}
    india, france = ids["India"], ids["France"]

    def rid(country: str, id_: int) -> vm.RecordIdentifier:
        return vm.RecordIdentifier(*stored[(country, id_)][4])

    txn = begun(lake, "m.alerts")
    client = txn.client
    with client.coordinator(txn, "m.alerts") as coord:
        coord.update(
            ASIA_INDIA, {"id": india[1], "msg": "Updated", "ROW__ID": rid("India", india[1])}
        )
        coord.insert(ASIA_INDIA, record(resolver, india[2], "Hello streaming 2"))
        coord.delete(EUROPE_UK, {"ROW__ID": rid("UK", ids["UK"][0])})
        coord.delete(EUROPE_FRANCE, {"ROW__ID": rid("France", france[0])})
        coord.update(
            EUROPE_FRANCE,
            {"id": france[1], "msg": "Mis à jour", "ROW__ID": rid("France", france[1])},
        )
    txn.commit()
    assert rows(table) == sorted(
        [
            ("Asia", "India", india[0], "Hello streaming", (1, prop(0), 0)),
            ("Asia", "India", india[1], "Updated", (2, prop(0), 0)),
            ("Asia", "India", india[2], "Hello streaming 2", (2, prop(0), 1)),
            ("Europe", "France", france[1], "Mis à jour", (2, prop(1), 0)),
        ],
        key=repr,
    )
    assert hive_values(lake, table) == values(table)
    metrics = table.history()[-1].metrics
    assert (metrics["inserted"], metrics["updated"], metrics["deleted"]) == (1, 2, 2)


def test_a_transaction_over_two_tables_commits_both_at_once(lake: Any) -> None:
    alerts_t, audit = alerts(lake), alerts(lake, "m.audit")
    resolver = vm.BucketIdResolver(alerts_t)
    txn = begun(lake, "m.audit", "m.alerts")
    client = txn.client
    for name in ("m.alerts", "m.audit"):
        with client.coordinator(txn, name) as coord:
            coord.insert(ASIA_INDIA, record(resolver, 1, f"into {name}"))
    assert values(alerts_t) == values(audit) == []
    txn.commit()
    assert values(alerts_t) == [("Asia", "India", 1, "into m.alerts")]
    assert values(audit) == [("Asia", "India", 1, "into m.audit")]
    assert alerts_t.history()[0].txn_id == audit.history()[0].txn_id == txn.transaction_id


def test_when_one_table_cannot_commit_no_table_shows_anything(cat: Any) -> None:
    alerts_t, audit = alerts(cat), alerts(cat, "m.audit")
    resolver = vm.BucketIdResolver(alerts_t)
    txn = begun(cat, "m.alerts", "m.audit")
    client = txn.client
    for name in ("m.alerts", "m.audit"):
        with client.coordinator(txn, name) as coord:
            coord.insert(ASIA_INDIA, record(resolver, 1, f"into {name}"))
    # A write that began later commits into a partition of m.audit first: the ROW__IDs the
    # mutation was planned with may be stale there, so the whole transaction conflicts.
    audit.upsert(
        pa.table(
            {
                "id": pa.array([9], pa.int32()),
                "msg": ["upserted"],
                "continent": ["Asia"],
                "country": ["India"],
            }
        )
    )
    with pytest.raises(vm.MutationConflictError) as raised:
        txn.commit()
    assert raised.value.retryable
    assert txn.state is vm.TransactionState.ABORTED
    assert values(alerts_t) == []
    assert values(audit) == [("Asia", "India", 9, "upserted")]
    assert alerts_t.history() == []


def test_an_update_or_delete_with_a_stale_row_id_conflicts_and_changes_nothing(
    cat: Any,
) -> None:
    """Issue 27 item 3: ROW__IDs read, then an upsert of the same keys commits, then a
    mutation transaction uses the old ROW__IDs: before, the update left the key twice and the
    delete deleted nothing, and both committed."""
    table = alerts(cat)
    ids = _seed(cat, table)
    india, france = ids["India"], ids["France"]
    stored = {(r[1], r[2]): vm.RecordIdentifier(*r[4]) for r in rows(table)}
    changed = pa.table(
        {
            "id": pa.array([india[1], france[0]], pa.int32()),
            "msg": ["changed by an upsert"] * 2,
            "continent": ["Asia", "Europe"],
            "country": ["India", "France"],
        }
    )
    table.upsert(changed)  # new ROW__IDs for both rows: the read above is stale for them
    after_upsert = rows(table)

    stale_update = begun(cat, "m.alerts")
    with stale_update.client.coordinator(stale_update, "m.alerts") as coord:
        coord.update(
            ASIA_INDIA, {"id": india[1], "msg": "late", "ROW__ID": stored[("India", india[1])]}
        )
    with pytest.raises(vm.MutationConflictError, match=r"1 row\(s\) of m.alerts partition"):
        stale_update.commit()
    assert stale_update.state is vm.TransactionState.ABORTED

    stale_delete = begun(cat, "m.alerts")
    with stale_delete.client.coordinator(stale_delete, "m.alerts") as coord:
        coord.delete(EUROPE_FRANCE, {"ROW__ID": stored[("France", france[0])]})
        coord.delete(EUROPE_FRANCE, {"ROW__ID": stored[("France", france[1])]})  # still live
    with pytest.raises(vm.MutationConflictError, match="not live any more"):
        stale_delete.commit()
    assert rows(table) == after_upsert  # neither transaction changed anything
    assert hive_values(cat, table) == values(table)

    fresh = {(r[1], r[2]): vm.RecordIdentifier(*r[4]) for r in after_upsert}
    retry = begun(cat, "m.alerts")  # read again, mutate again: it commits
    with retry.client.coordinator(retry, "m.alerts") as coord:
        coord.delete(EUROPE_FRANCE, {"ROW__ID": fresh[("France", france[0])]})
    retry.commit()
    assert [r[2] for r in rows(table) if r[1] == "France"] == [france[1]]
    assert spark_rows(table) == rows(table)  # Spark reads the same rows and ROW__IDs


UTC = dt.UTC
GOOD_WHEN = [  # the closest values to those refused that ORC's Java readers give back exactly
    (1, dt.date(1582, 10, 15), dt.datetime(1969, 12, 31, 23, 59, 58, 500_000, tzinfo=UTC)),
    (2, dt.date(1969, 12, 31), dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)),
    (3, dt.date(2024, 2, 29), dt.datetime(1970, 1, 1, 0, 0, 0, 500_000, tzinfo=UTC)),
    (4, dt.date(9999, 12, 31), dt.datetime(2000, 1, 1, tzinfo=UTC)),
]
FIRST_GREGORIAN = (11, dt.date(1582, 10, 15), dt.datetime(1582, 10, 15, tzinfo=UTC))
"""Kept too; outside the nanosecond range pyarrow's ORC reader reads timestamps in."""


def _when(cat: Any) -> Any:
    return alerts(
        cat,
        "m.when",
        partitioned=False,
        columns="id INT NOT NULL, msg STRING, day DATE, seen TIMESTAMP",
    )


def _insert_when(cat: Any, table: Any, values: list[tuple[Any, ...]]) -> None:
    resolver = vm.BucketIdResolver(table)
    txn = begun(cat, "m.when")
    in_order = sorted(values, key=lambda v: resolver.bucket_of({"id": v[0]}))
    with txn.client.coordinator(txn, "m.when") as coord:
        for id_, day, seen in in_order:
            coord.insert([], record(resolver, id_, "good", day=day, seen=seen))
    txn.commit()


def test_dates_and_timestamps_orc_would_change_are_refused_and_the_rest_land(lake: Any) -> None:
    """Issue 27 item 4: ORC's Java readers (Hive's, Spark's) read a DATE of 1582-10-05..14
    as 1582-10-15, a TIMESTAMP in the last second before 1970 one second later, and, in the
    files pyorc writes, every day before 1582-10-15 in the Julian calendar (1582-10-04 as
    1582-09-24). A record with such a value is refused with the reason; the coordinator
    stays usable and the other records commit with their values exact."""
    table = _when(lake)
    resolver = vm.BucketIdResolver(table)
    utc = UTC
    good = GOOD_WHEN
    bad = [
        (5, dt.date(1582, 10, 4), None, "'1582-10-04' is before 1582-10-15"),
        (6, None, dt.datetime(1, 1, 1, tzinfo=utc), "'0001-01-01 00:00:00.00:00' is before"),
        (7, dt.date(1582, 10, 5), None, "'1582-10-05' is a day ORC's readers skip"),
        (8, dt.date(1582, 10, 14), None, "'1582-10-14' is a day ORC's readers skip"),
        (9, None, dt.datetime(1582, 10, 10, 12, tzinfo=utc), "falls on a day ORC's readers"),
        (10, None, dt.datetime(1969, 12, 31, 23, 59, 59, 500_000), "last second before 1970"),
    ]
    txn = begun(lake, "m.when")
    with txn.client.coordinator(txn, "m.when") as coord:
        for id_, day, seen, reason in bad:
            rec = record(resolver, id_, "bad", day=day, seen=seen)
            with pytest.raises(vm.UnstorableValueError, match=reason) as refused:
                coord.insert([], rec)
            assert "nothing of it was written" in str(refused.value)
    txn.abort()
    _insert_when(lake, table, good)
    got = [(r["id"], r["day"], r["seen"]) for r in lake_rows(table)]
    assert sorted(got) == good
    (row,) = [r for r in lake_rows(table, with_row_id=True) if r["id"] == 3]
    update = begun(lake, "m.when")
    with update.client.coordinator(update, "m.when") as coord:
        late = dt.datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=utc)
        row_id = vm.RecordIdentifier(*row[ROW_ID])
        changed = {"id": 3, "msg": "x", "day": row["day"], "seen": late, "ROW__ID": row_id}
        with pytest.raises(vm.UnstorableValueError, match="last second before 1970"):
            coord.update([], changed)
    update.commit()  # nothing was mutated: the row stays
    assert sorted((r["id"], r["day"], r["seen"]) for r in lake_rows(table)) == good


def test_the_dates_and_timestamps_it_keeps_read_back_exactly_through_spark(cat: Any) -> None:
    """The values next to those refused, written by the mutation API (pyorc), read through
    Spark's ORC reader (`Table.read()`) exactly as written."""
    table = _when(cat)
    _insert_when(cat, table, [*GOOD_WHEN, FIRST_GREGORIAN])
    got = sorted((r["id"], r["day"], r["seen"]) for r in table.read().toArrow().to_pylist())
    assert got == [*GOOD_WHEN, FIRST_GREGORIAN]
