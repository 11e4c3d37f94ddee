from __future__ import annotations

import pickle

import pytest

from versioned.errors import (
    CommitConflictError,
    InvalidNameError,
    PermissionDeniedError,
    SchemaError,
    VersionedError,
)
from versioned.names import TableName, identifier, principal
from versioned.schema import Column, TableSpec, normalise_type, parse_columns


@pytest.mark.parametrize(
    "bad", ["", "../x", "a;drop table t", "a b", "1abc", "x" * 129, "ünï", "a/b", "a.b", "a-b"]
)
def test_hostile_identifiers_are_rejected(bad: str):
    with pytest.raises(InvalidNameError):
        identifier(bad)


def test_identifiers_are_case_insensitive():
    assert identifier("Sell_ID") == "sell_id"
    assert TableName.parse("Test.Sell") == TableName("test", "sell")
    assert TableName.parse("sell") == TableName("default", "sell")


@pytest.mark.parametrize("bad", ["a.b.c", ".", "db.", ".t", "../etc.passwd", "db.t;x"])
def test_bad_table_names_are_rejected(bad: str):
    with pytest.raises(InvalidNameError):
        TableName.parse(bad)


def test_principal_names():
    assert principal("etl.bot@corp") == "etl.bot@corp"
    for bad in ["", "a b", "x;y", "../p"]:
        with pytest.raises(InvalidNameError):
            principal(bad)


def test_parse_columns_handles_parameterised_types_and_not_null():
    cols = parse_columns("id BIGINT NOT NULL, amt decimal(10, 2), name varchar(20), d date")
    assert [c.to_dict() for c in cols] == [
        {"name": "id", "type": "BIGINT", "nullable": False},
        {"name": "amt", "type": "DECIMAL(10,2)", "nullable": True},
        {"name": "name", "type": "VARCHAR(20)", "nullable": True},
        {"name": "d", "type": "DATE", "nullable": True},
    ]


@pytest.mark.parametrize("bad", ["BIGINTEGER", "DECIMAL(50,2)", "DECIMAL(5,6)", "VARCHAR(1,2)", ""])
def test_unknown_or_invalid_types_are_rejected(bad: str):
    with pytest.raises(SchemaError):
        normalise_type(bad)


def _spec(**kw) -> TableSpec:
    args = dict(columns="id BIGINT, v STRING, p STRING", primary_key="id", partition_by="p")
    args.update(kw)
    return TableSpec.build("db.t", **args)


def test_spec_round_trips_through_plain_data():
    spec = _spec(ordering_column="v", properties={"k": "v"}, sort_by="id")
    assert TableSpec.from_dict(spec.to_dict()) == spec
    assert [c.name for c in spec.data_columns] == ["id", "v"]


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"primary_key": "nope"}, "primary key column nope"),
        ({"partition_by": "zz"}, "partition column zz"),
        ({"ordering_column": "zz"}, "ordering column zz"),
        ({"columns": "id BIGINT, id STRING, p STRING"}, "duplicate column"),
        ({"columns": "id BIGINT, version_id INT, p STRING"}, "reserved"),
        ({"columns": "id BIGINT, __key_hash BIGINT, p STRING"}, "reserved"),
        ({"bucket_by": "v"}, "--buckets"),
        ({"buckets": 4}, "--bucket-by"),
        ({"buckets": 5000, "bucket_by": "v"}, "4096"),
        ({"columns": "id BIGINT, p STRING", "partition_by": "id,p"}, "at least one column"),
    ],
)
def test_invalid_specs_say_what_is_wrong(kw, message):
    with pytest.raises(SchemaError, match=message):
        _spec(**kw)


def test_acid_layout_defaults_to_orc():
    from versioned.layouts.base import layout_of

    assert layout_of("acid").default_file_format == "orc"


def test_errors_pickle_with_their_attributes():
    err = CommitConflictError("lost the race", partition="p=1", expected=3)
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, CommitConflictError) and isinstance(back, VersionedError)
    assert (str(back), back.partition, back.expected, back.retryable) == (
        "lost the race",
        "p=1",
        3,
        True,
    )
    denied = pickle.loads(pickle.dumps(PermissionDeniedError("no", user="mallory")))
    assert denied.user == "mallory" and denied.exit_code == 77


def test_column_from_dict_validates():
    with pytest.raises(InvalidNameError):
        Column.from_dict({"name": "../x", "type": "INT"})
