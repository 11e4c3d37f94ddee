"""BucketIdResolver, as Hive's TestBucketIdResolverImpl (no Spark, no catalog)."""

from __future__ import annotations

import pickle

import pytest

from versioned import mutation as vm
from versioned.errors import NotSupportedError, SchemaError
from versioned.layouts.acid.bucket_hash import hive_hash
from versioned.schema import TableSpec


def _spec(version: str = "1", buckets: int = 12, bucket_by: str | None = "id") -> TableSpec:
    return TableSpec.build(
        "m.alerts",
        columns="id INT, msg STRING, continent STRING, country STRING",
        primary_key="id",
        partition_by=["continent", "country"],
        layout="acid",
        file_format="orc",
        bucket_by=bucket_by,
        buckets=buckets if bucket_by else None,
        properties={"bucketing_version": version},
    )


def test_attach_sets_a_row_id_naming_the_bucket_and_keeps_the_other_fields() -> None:
    resolver = vm.BucketIdResolver(_spec())
    record = {"id": 1, "msg": "hello"}
    attached = resolver.attach_bucket_id(record)
    # Hive: id=1 with 12 buckets (bucketing version 1) is bucket 1 -> BucketCodec V1 536936448
    assert attached == {"id": 1, "msg": "hello", "ROW__ID": vm.RecordIdentifier(-1, 536936448, -1)}
    assert record == {"id": 1, "msg": "hello"}
    assert resolver.bucket_of({"id": 1}) == 1


def test_bucket_of_uses_the_tables_hash_version() -> None:
    resolver = vm.BucketIdResolver(_spec("2", 4))
    expected = (hive_hash(300000, "INT", 2) & 0x7FFFFFFF) % 4
    assert resolver.bucket_of({"id": 300000}) == expected
    assert vm.BucketIdResolver(_spec("1", 4)).bucket_of({"id": 300000}) == 300000 % 4


def test_a_record_without_its_bucket_columns_is_refused() -> None:
    with pytest.raises(SchemaError, match="id"):
        vm.BucketIdResolver(_spec()).bucket_of({"msg": "no id"})


def test_an_unbucketed_table_puts_every_record_in_bucket_zero() -> None:
    resolver = vm.BucketIdResolver(_spec(bucket_by=None))
    assert resolver.attach_bucket_id({"id": 7})["ROW__ID"] == vm.RecordIdentifier(-1, 536870912, -1)


def test_a_resolver_pickles() -> None:
    resolver = pickle.loads(pickle.dumps(vm.BucketIdResolver(_spec())))
    assert resolver.bucket_of({"id": 13}) == 1


def test_a_table_whose_layout_stores_no_mutations_has_no_resolver() -> None:
    plain = TableSpec.build("m.plain", columns="id INT, msg STRING", primary_key="id")
    with pytest.raises(NotSupportedError, match="must have layout acid"):
        vm.BucketIdResolver(plain)
