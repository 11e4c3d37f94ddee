"""Coordinators, as Hive's TestMutatorCoordinator: groups, sequences, buckets, partitions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.mutation.tables import (
    ASIA_INDIA,
    EUROPE_UK,
    alerts,
    begun,
    hive_values,
    ids_in_bucket,
    prop,
    record,
    rows,
    values,
)
from versioned import mutation as vm
from versioned.catalog.store import MetaStore

KENYA = ["Africa", "Kenya"]


@pytest.fixture
def table(lake: Any) -> Any:
    made = alerts(lake)
    lake.engine_context.store.add_partitions("m.alerts", [ASIA_INDIA, EUROPE_UK])
    return made


@pytest.fixture
def txn(lake: Any, table: Any) -> Iterator[vm.Transaction]:
    txn = begun(lake, "m.alerts")
    yield txn
    txn.abort()


def _coord(txn: vm.Transaction) -> vm.MutatorCoordinator:
    return txn.client.coordinator(txn, "m.alerts")


def _del(write_id: int, bucket: int, row_id: int) -> dict[str, Any]:
    return {"ROW__ID": vm.RecordIdentifier(write_id, prop(bucket), row_id)}


def test_returning_to_an_earlier_group_is_refused(txn: vm.Transaction) -> None:
    coord = _coord(txn)
    coord.delete(ASIA_INDIA, _del(1, 0, 0))
    coord.delete(ASIA_INDIA, _del(1, 1, 0))
    with pytest.raises(vm.GroupRevisitedError):
        coord.delete(ASIA_INDIA, _del(1, 0, 5))


def test_updates_and_deletes_out_of_row_id_order_are_refused(txn: vm.Transaction) -> None:
    coord = _coord(txn)
    coord.delete(ASIA_INDIA, _del(1, 0, 4))
    with pytest.raises(vm.RecordSequenceError):
        coord.delete(ASIA_INDIA, _del(1, 0, 1))
    with pytest.raises(vm.RecordSequenceError):
        coord.update(ASIA_INDIA, {"id": 2, "msg": "x", **_del(0, 0, 9)} | _bucket_of(txn, 0))


def _bucket_of(txn: vm.Transaction, bucket: int) -> dict[str, Any]:
    """An id of ``bucket`` (so that the update passes the bucket check)."""
    table = txn.client.store.table("m.alerts")
    return {"id": ids_in_bucket(table, bucket, 1)[0]}


def test_the_sequence_check_restarts_at_every_group_change(txn: vm.Transaction) -> None:
    coord = _coord(txn)
    coord.delete(ASIA_INDIA, _del(5, 0, 5))
    coord.delete(ASIA_INDIA, _del(1, 1, 0))  # a new bucket: lower ROW__IDs are fine again
    coord.delete(EUROPE_UK, _del(0, 1, 0))  # a new partition too


def test_inserts_are_not_sequence_checked(lake: Any, table: Any, txn: vm.Transaction) -> None:
    resolver = vm.BucketIdResolver(table)
    one, two = ids_in_bucket(table, 0, 2)
    coord = _coord(txn)
    coord.insert(ASIA_INDIA, record(resolver, two, "b"))
    coord.insert(ASIA_INDIA, record(resolver, one, "a"))  # same ROW__ID (-1, p, -1) again
    coord.close()
    txn.commit()
    assert [(r[2], r[4][2]) for r in rows(table)] == sorted([(two, 0), (one, 1)], key=repr)


def test_an_insert_or_update_whose_bucket_columns_hash_elsewhere_is_refused(
    table: Any, txn: vm.Transaction
) -> None:
    (id_,) = ids_in_bucket(table, 0, 1)
    coord = _coord(txn)
    with pytest.raises(vm.BucketIdError):
        coord.insert(
            ASIA_INDIA, {"id": id_, "msg": "m", "ROW__ID": vm.RecordIdentifier(-1, prop(1), -1)}
        )
    with pytest.raises(vm.BucketIdError):  # an update of the bucket column moves the row
        coord.update(ASIA_INDIA, {"id": id_, "msg": "m", **_del(1, 1, 0)})


def test_a_delete_with_a_stale_bucket_is_not_bucket_checked(
    table: Any, txn: vm.Transaction
) -> None:
    (id_,) = ids_in_bucket(table, 0, 1)
    coord = _coord(txn)
    coord.delete(ASIA_INDIA, {"id": id_, "msg": "m", **_del(1, 1, 0)})
    coord.close()
    deletes = [f.path for f in _reported(txn) if f.kind == "delete_delta"]
    assert deletes == [
        "continent=Asia/country=India/delete_delta_0000001_0000001_0000/bucket_00001"
    ]


def _reported(txn: vm.Transaction) -> list[Any]:
    from versioned.mutation.manifest import read_manifests

    target = txn.targets["m.alerts"]
    return [f.add for m in read_manifests(txn.client.fileio, target.staging_dir) for f in m.files]


def test_an_insert_uses_only_the_bucket_of_its_row_id(table: Any, txn: vm.Transaction) -> None:
    (id_,) = ids_in_bucket(table, 1, 1)
    coord = _coord(txn)
    coord.insert(
        ASIA_INDIA, {"id": id_, "msg": "m", "ROW__ID": vm.RecordIdentifier(77, prop(1), 99)}
    )
    coord.close()
    txn.commit()
    assert rows(table) == [("Asia", "India", id_, "m", (1, prop(1), 0))]


def test_a_record_whose_partition_columns_name_another_partition_is_refused(
    table: Any, txn: vm.Transaction
) -> None:
    resolver = vm.BucketIdResolver(table)
    coord = _coord(txn)
    with pytest.raises(vm.PartitionColumnUpdateError):
        coord.update(
            ASIA_INDIA,
            {
                "id": 1,
                "msg": "m",
                "continent": "Europe",
                "country": "India",
                **_del(1, resolver.bucket_of({"id": 1}), 0),
            },
        )
    coord.insert(ASIA_INDIA, record(resolver, 1, "m", continent="Asia", country="India"))


def test_the_first_insert_creates_the_partition(lake: Any, txn: vm.Transaction, table: Any) -> None:
    coord = _coord(txn)
    coord.insert(KENYA, record(vm.BucketIdResolver(table), 1, "m"))
    assert ("Africa", "Kenya") in [
        p.values for p in lake.engine_context.store.partitions("m.alerts")
    ]


def test_a_delete_into_a_missing_partition_creates_nothing_and_fails(
    lake: Any, txn: vm.Transaction
) -> None:
    coord = _coord(txn)
    with pytest.raises(vm.MissingPartitionError):
        coord.delete(KENYA, _del(1, 0, 0))
    assert len(lake.engine_context.store.partitions("m.alerts")) == 2


def test_racing_coordinators_all_create_the_same_partition(
    lake: Any, table: Any, txn: vm.Transaction
) -> None:
    resolver = vm.BucketIdResolver(table)
    ids = ids_in_bucket(table, 0, 1) + ids_in_bucket(table, 1, 1)  # one group each
    errors: list[BaseException] = []
    start = threading.Barrier(len(ids))

    def work(id_: int) -> None:
        try:
            start.wait()
            with _coord(txn) as coord:
                coord.insert(["Oceania", "Fiji"], record(resolver, id_, "racing"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    fiji = [
        p
        for p in lake.engine_context.store.partitions("m.alerts")
        if p.values == ("Oceania", "Fiji")
    ]
    assert len(fiji) == 1
    txn.commit()
    assert sorted(r[2] for r in rows(table)) == sorted(ids)


def test_without_partition_creation_the_client_creates_them_before_the_commit(
    lake: Any, table: Any
) -> None:
    txn = begun(lake, "m.alerts", create_partitions=False)
    client = txn.client
    odd = ["Côte d'Ivoire", "a/b:c"]
    with client.coordinator(txn, "m.alerts") as coord:
        coord.insert(odd, record(vm.BucketIdResolver(table), 1, "m"))
    assert len(lake.engine_context.store.partitions("m.alerts")) == 2
    with pytest.raises(vm.PartitionCreationError, match="create_partitions"):
        txn.commit()
    assert txn.state is vm.TransactionState.OPEN
    (created,) = client.create_partitions("m.alerts", [odd])
    txn.commit()
    assert values(table) == [("Côte d'Ivoire", "a/b:c", 1, "m")]
    (data,) = [f.path for f in table.snapshot().files if f.kind == "delta"]
    assert data.startswith(created.path + "/delta_")
    assert hive_values(lake, table) == values(table)


def test_closing_a_coordinator_that_wrote_nothing_reports_nothing(txn: vm.Transaction) -> None:
    _coord(txn).close()
    assert _reported(txn) == []


def test_commit_refuses_while_a_coordinator_of_the_process_is_not_closed(
    table: Any, txn: vm.Transaction
) -> None:
    coord = _coord(txn)
    coord.insert(ASIA_INDIA, record(vm.BucketIdResolver(table), 1, "m"))
    with pytest.raises(vm.MutationTransactionError, match="not closed"):
        txn.commit()
    coord.close()
    txn.commit()
    assert len(rows(table)) == 1


def test_two_coordinators_writing_one_group_make_the_commit_fail(
    table: Any, txn: vm.Transaction
) -> None:
    resolver = vm.BucketIdResolver(table)
    one, two = ids_in_bucket(table, 0, 2)
    for id_ in (one, two):
        with _coord(txn) as coord:
            coord.insert(ASIA_INDIA, record(resolver, id_, "m"))
    with pytest.raises(vm.MutationTransactionError, match="two coordinators"):
        txn.commit()
    assert txn.state is vm.TransactionState.ABORTED
    assert values(table) == []


def test_a_coordinator_connects_to_the_catalog_only_to_create_partitions(
    lake: Any, table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    txn = begun(lake, "m.alerts", create_partitions=False)
    client = txn.client
    connects: list[str] = []
    original = MetaStore.connect
    monkeypatch.setattr(
        MetaStore,
        "connect",
        classmethod(lambda cls, *a, **k: connects.append("x") or original(*a, **k)),
    )
    with client.coordinator(txn, "m.alerts") as coord:
        coord.insert(ASIA_INDIA, record(vm.BucketIdResolver(table), 1, "m"))
    assert connects == []
    txn.abort()
