"""The collection metadata format and import planning, without Spark or a catalog."""

from __future__ import annotations

import json
from typing import Any

import pytest

from versioned.collections.errors import (
    CollectionError,
    CollectionFormatError,
    ImportMismatchError,
    PartitionExistsError,
)
from versioned.collections.matching import (
    parse_partition_spec,
    plan_import,
    refuse_existing_partitions,
    target_name,
)
from versioned.collections.metadata import (
    FORMAT_VERSION,
    CollectionFile,
    CollectionMetadata,
    CollectionPartition,
)
from versioned.errors import InputError, UnsafePathError
from versioned.layouts.base import layouts
from versioned.names import TableName
from versioned.schema import TableSpec

ORDERS = TableName("sales", "orders")
COLUMNS = "id BIGINT, amt DOUBLE, store STRING, day INT"

LAYOUTS = {each.name: each for each in layouts()}


def _spec(**kw: Any) -> TableSpec:
    args: dict[str, Any] = dict(
        columns=COLUMNS, primary_key="id", partition_by="store,day", sort_by="id"
    )
    args.update(kw)
    return TableSpec.build(ORDERS, **args)


def _metadata(**kw: Any) -> CollectionMetadata:
    parts = (
        CollectionPartition(
            ("a/b", "1"),
            "store=a%2Fb/day=1",
            (CollectionFile("store=a%2Fb/day=1/p.parquet", 9, 2),),
        ),
        CollectionPartition(
            (None, "2"),
            "store=__HIVE_DEFAULT_PARTITION__/day=2",
            (CollectionFile("store=__HIVE_DEFAULT_PARTITION__/day=2/p.parquet", 9, 1),),
        ),
    )
    spec = _spec(**kw)
    return CollectionMetadata.from_spec(spec, table=ORDERS, partitions=parts)


def _raw(**changes: Any) -> dict[str, Any]:
    data = _metadata().to_dict()
    data.update(changes)
    return data


def _parse(data: dict[str, Any]) -> CollectionMetadata:
    return CollectionMetadata.from_json(json.dumps(data).encode())


def test_metadata_round_trips_through_json() -> None:
    meta = _metadata()
    again = CollectionMetadata.from_json(meta.to_json())
    assert again == meta
    data = json.loads(meta.to_json())
    assert data["format_version"] == FORMAT_VERSION == "1.0"
    assert data["table"] == "sales.orders"
    assert data["storage_format"] == "parquet" and data["layout"] == "versioned"
    assert data["partitions"][0]["values"] == {"store": "a/b", "day": "1"}
    assert again.rows == 3 and len(again.files) == 2


def test_unknown_major_format_version_is_refused_and_newer_minor_read() -> None:
    with pytest.raises(CollectionFormatError, match=r"format 2\.0 .* reads format 1\.x"):
        _parse(_raw(format_version="2.0"))
    with pytest.raises(CollectionFormatError, match="not a versioned collection"):
        _parse(_raw(format="something-else"))
    newer = _raw(format_version="1.7", added_later={"x": 1})
    assert _parse(newer).format_version == "1.7"


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "store=a%2Fb/day=1/../../../../outside.parquet",
        "../outside.parquet",
        "file:///etc/passwd",
        "store=a%2Fb/day=1//p.parquet",
        "store=a%2Fb\\day=1\\p.parquet",
    ],
)
def test_file_paths_that_could_leave_the_folder_are_refused(path: str) -> None:
    data = _raw()
    data["partitions"][0]["files"][0]["path"] = path
    with pytest.raises(UnsafePathError, match="nothing was read"):
        _parse(data)


def test_partition_directory_must_be_the_escaped_form_of_its_values() -> None:
    data = _raw()
    data["partitions"][0]["path"] = "store=a/b/day=1"  # unescaped: one level too deep
    with pytest.raises(CollectionError, match=r"not the escaped form 'store=a%2Fb/day=1'"):
        _parse(data)
    data = _raw()
    data["partitions"][0]["files"][0]["path"] = "store=x/day=1/p.parquet"  # another partition
    with pytest.raises(CollectionError, match="not directly inside its partition's directory"):
        _parse(data)
    data = _raw()
    data["partitions"][0]["files"][0]["path"] = "store=a%2Fb/day=1/_hidden.parquet"
    with pytest.raises(CollectionError, match="hidden"):
        _parse(data)


def test_malformed_metadata_says_which_field() -> None:
    with pytest.raises(CollectionError, match="not valid JSON"):
        CollectionMetadata.from_json(b"{nope")
    with pytest.raises(CollectionError, match="'primary_key' is missing"):
        _parse({k: v for k, v in _raw().items() if k != "primary_key"})
    with pytest.raises(CollectionError, match="unknown column type"):
        _parse(_raw(schema=[{"name": "id", "type": "ARRAY<INT>"}]))
    with pytest.raises(CollectionError, match="invalid column name"):
        _parse(_raw(schema=[{"name": "id; DROP TABLE x", "type": "INT"}]))
    data = _raw()
    data["partitions"][0]["values"] = {"store": "a/b"}
    with pytest.raises(CollectionError, match=r"values for \(store\) but the partition columns"):
        _parse(data)


def test_partition_spec_parsing_decodes_escapes_and_null() -> None:
    assert parse_partition_spec("store=a%2Fb,day=__HIVE_DEFAULT_PARTITION__") == {
        "store": "a/b",
        "day": None,
    }
    assert parse_partition_spec("store=x%2Cy") == {"store": "x,y"}
    for bad in ("store", "store=a,store=b", ",", "bad key=1"):
        with pytest.raises(InputError):
            parse_partition_spec(bad)


def test_plan_for_a_new_table_uses_the_metadata() -> None:
    plan = plan_import(_metadata(), TableName("copy", "orders"), None, layouts=LAYOUTS)
    assert plan.create and plan.spec.name == TableName("copy", "orders")
    assert plan.spec.columns == _spec().columns and plan.spec.sort_by == ("id",)
    assert [p.values for p in plan.partitions] == [("a/b", "1"), (None, "2")]


def test_plan_lists_every_difference_of_an_existing_table() -> None:
    table = _spec(columns="id BIGINT, amt STRING, extra INT, store STRING, day INT", sort_by="amt")
    with pytest.raises(ImportMismatchError) as caught:
        plan_import(_metadata(), ORDERS, table, layouts=LAYOUTS)
    message = str(caught.value)
    assert "schema differs: column amt is DOUBLE in the collection but STRING in the table" in (
        message
    )
    assert "column extra (INT) of the table is missing from the collection" in message
    assert "sort order differs: sorted by (id) in the collection, sorted by (amt)" in message
    assert len(caught.value.differences) == 3  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("partition_by", "expected"),
    [
        ("store,day,region", r"partition key\(s\) region missing from the collection"),
        ("store", r"partition key\(s\) day of the collection are not partition keys"),
        ("day,store", r"partition keys are in another order: \(store, day\) in the collection"),
    ],
)
def test_partition_keys_missing_extra_or_wrong_are_refused(
    partition_by: str, expected: str
) -> None:
    columns = COLUMNS + ", region STRING" if "region" in partition_by else COLUMNS
    with pytest.raises(ImportMismatchError, match=expected):
        plan_import(
            _metadata(), ORDERS, _spec(columns=columns, partition_by=partition_by), layouts=LAYOUTS
        )


def test_existing_partitions_are_named_in_the_refusal() -> None:
    plan = plan_import(_metadata(), ORDERS, _spec(), layouts=LAYOUTS)
    with pytest.raises(PartitionExistsError, match=r"\(store='a/b', day='1'\)"):
        refuse_existing_partitions(plan, {("a/b", "1"): 7, ("zzz", "1"): 8})
    refuse_existing_partitions(plan, {("zzz", "1"): 8})  # other partitions do not matter


def test_no_table_name_anywhere_is_refused() -> None:
    unnamed = CollectionMetadata.from_spec(_spec(), table=None)
    with pytest.raises(ImportMismatchError, match=r"names no table.*--table DB\.TABLE"):
        target_name(unnamed, None)
    assert target_name(unnamed, "x.y") == TableName("x", "y")


def test_unpartitioned_collection_needs_all_partition_values_of_the_table() -> None:
    spec = TableSpec.build(ORDERS, columns="id BIGINT, amt DOUBLE", primary_key="id", sort_by="id")
    part = CollectionPartition((), "", (CollectionFile("p.parquet", 9, 1),))
    loose = CollectionMetadata.from_spec(spec, table=ORDERS, partitions=(part,))
    with pytest.raises(ImportMismatchError, match=r"give them with --partition store=\.\.\."):
        plan_import(loose, ORDERS, _spec(), layouts=LAYOUTS)
    with pytest.raises(ImportMismatchError, match=r"day missing from the given partition"):
        plan_import(loose, ORDERS, _spec(), {"store": "s1"}, layouts=LAYOUTS)
    with pytest.raises(
        ImportMismatchError, match="partition value 'abc' of day is not a valid INT"
    ):
        plan_import(loose, ORDERS, _spec(), {"store": "s1", "day": "abc"}, layouts=LAYOUTS)
    plan = plan_import(loose, ORDERS, _spec(), {"store": "s1", "day": "007"}, layouts=LAYOUTS)
    assert [p.values for p in plan.partitions] == [("s1", "7")]  # spelled as Spark spells it
