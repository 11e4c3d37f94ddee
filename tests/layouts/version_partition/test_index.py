"""Arrow types of table columns and the version-index file."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from versioned.errors import SchemaError, StorageError
from versioned.layouts.version_partition.index import (
    OP_COLUMN,
    VERSION_COLUMN,
    build_index,
    index_schema,
    read_index,
    write_index,
)
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_schema, arrow_type

TYPES = [
    ("BOOLEAN", pa.bool_()),
    ("TINYINT", pa.int8()),
    ("SMALLINT", pa.int16()),
    ("INT", pa.int32()),
    ("BIGINT", pa.int64()),
    ("FLOAT", pa.float32()),
    ("DOUBLE", pa.float64()),
    ("DECIMAL(10,2)", pa.decimal128(10, 2)),
    ("DECIMAL(38,0)", pa.decimal128(38, 0)),
    ("STRING", pa.string()),
    ("VARCHAR(20)", pa.string()),
    ("CHAR(3)", pa.string()),
    ("DATE", pa.date32()),
    ("TIMESTAMP", pa.timestamp("us", tz="UTC")),
    ("BINARY", pa.binary()),
]


@pytest.mark.parametrize(("hive", "arrow"), TYPES)
def test_every_canonical_type_has_its_arrow_type(hive: str, arrow: pa.DataType) -> None:
    assert arrow_type(hive) == arrow


@pytest.mark.parametrize(
    ("alias", "arrow"),
    [
        ("integer", pa.int32()),
        ("decimal(12, 3)", pa.decimal128(12, 3)),
        ("decimal", pa.decimal128(10, 0)),
        ("varchar(5)", pa.string()),
        ("long", pa.int64()),
        ("text", pa.string()),
    ],
)
def test_type_aliases_map_like_their_canonical_names(alias: str, arrow: pa.DataType) -> None:
    assert arrow_type(alias) == arrow


def test_unknown_type_is_a_schema_error() -> None:
    with pytest.raises(SchemaError):
        arrow_type("INTERVAL")


SPEC = TableSpec.build(
    "db.every_type",
    columns="c_bool BOOLEAN NOT NULL, c_tiny TINYINT, c_small SMALLINT, c_int INT, "
    "c_big BIGINT, c_float FLOAT, c_double DOUBLE, c_dec DECIMAL(10,2), c_str STRING, "
    "c_var VARCHAR(20), c_char CHAR(3), c_date DATE, c_ts TIMESTAMP, c_bin BINARY, "
    "payload STRING, change_ts BIGINT, region STRING",
    primary_key="c_bool,c_tiny,c_small,c_int,c_big,c_float,c_double,c_dec,c_str,c_var,c_char,"
    "c_date,c_ts,c_bin",
    partition_by="region",
    ordering_column="change_ts",
)


def test_arrow_schema_keeps_order_and_nullability() -> None:
    schema = arrow_schema(SPEC)
    assert schema.names == list(SPEC.column_names)
    assert not schema.field("c_bool").nullable and schema.field("c_int").nullable
    subset = arrow_schema(SPEC, ["payload", "c_ts"])
    assert subset.names == ["payload", "c_ts"]
    assert subset.field("c_ts").type == pa.timestamp("us", tz="UTC")
    with pytest.raises(SchemaError):
        arrow_schema(SPEC, ["nope"])


def test_index_schema_is_keys_version_op_and_ordering() -> None:
    schema = index_schema(SPEC)
    assert schema.names == [*SPEC.primary_key, VERSION_COLUMN, OP_COLUMN, "change_ts"]
    assert schema.field(VERSION_COLUMN).type == pa.int64()
    assert schema.field(OP_COLUMN).type == pa.string()
    assert all(not schema.field(k).nullable for k in SPEC.primary_key)
    plain = TableSpec.build("db.t", columns="id BIGINT, v STRING", primary_key="id")
    assert index_schema(plain).names == ["id", VERSION_COLUMN, OP_COLUMN]


def _rows() -> pa.Table:
    utc = dt.UTC
    rows = [
        {
            "c_bool": True,
            "c_tiny": -128,
            "c_small": 32767,
            "c_int": -(2**31),
            "c_big": 2**63 - 1,
            "c_float": 1.5,
            "c_double": -0.0,
            "c_dec": Decimal("12345678.91"),
            "c_str": "é,✓",
            "c_var": "",
            "c_char": "abc",
            "c_date": dt.date(1, 1, 1),
            "c_ts": dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=utc),
            "c_bin": b"\x00\xff",
            "change_ts": 10,
            "payload": "ignored",
        },
        {
            "c_bool": False,
            "c_tiny": 0,
            "c_small": 0,
            "c_int": 0,
            "c_big": 0,
            "c_float": float("inf"),
            "c_double": 1e-300,
            "c_dec": Decimal("-0.01"),
            "c_str": "x",
            "c_var": "v",
            "c_char": "z",
            "c_date": dt.date(9999, 12, 31),
            "c_ts": dt.datetime(1900, 1, 1, tzinfo=utc),
            "c_bin": b"",
            "change_ts": None,
            "payload": "ignored",
        },
    ]
    return pa.Table.from_pylist(rows)


def test_index_round_trips_every_key_type(warehouse: Path) -> None:
    fio = FileIO.for_root(str(warehouse))
    entries = build_index(SPEC, _rows(), version=42, ops=["U", "D"])
    assert entries.schema == index_schema(SPEC)
    rel = "db.db/every_type/region=x/version_id=42/_index/index-1.parquet"
    size = write_index(fio, rel, entries)
    assert size == fio.size(rel)
    again = read_index(fio, rel)
    assert again.equals(entries, check_metadata=False)
    assert again.schema.equals(index_schema(SPEC), check_metadata=False)
    assert again.column(VERSION_COLUMN).to_pylist() == [42, 42]
    assert again.column(OP_COLUMN).to_pylist() == ["U", "D"]
    assert again.column("change_ts").to_pylist() == [10, None]
    assert again.column("c_ts").to_pylist()[0] == dt.datetime(
        2024, 2, 29, 23, 59, 59, 999999, tzinfo=dt.UTC
    )
    assert fio.opened == [rel]


def test_index_parquet_is_plain_parquet_with_utc_micros(warehouse: Path) -> None:
    fio = FileIO.for_root(str(warehouse))
    write_index(fio, "i.parquet", build_index(SPEC, _rows(), version=1, ops="U"))
    logical = pq.ParquetFile(warehouse / "i.parquet").schema.column(12).logical_type
    assert "isAdjustedToUTC=true" in str(logical) and "MICROS" in str(logical).upper()


def test_single_op_applies_to_every_row() -> None:
    entries = build_index(SPEC, _rows(), version=7, ops="D")
    assert entries.column(OP_COLUMN).to_pylist() == ["D", "D"]


def test_empty_index_round_trips(warehouse: Path) -> None:
    fio = FileIO.for_root(str(warehouse))
    entries = build_index(SPEC, _rows().slice(0, 0), version=3, ops="U")
    write_index(fio, "e.parquet", entries)
    assert read_index(fio, "e.parquet").num_rows == 0


@pytest.mark.parametrize("ops", ["X", ["U", None], ["U"], ["U", "u"]])
def test_bad_ops_are_refused(ops: object) -> None:
    with pytest.raises(SchemaError):
        build_index(SPEC, _rows(), version=1, ops=ops)


def test_missing_key_column_or_bad_version_is_refused() -> None:
    with pytest.raises(SchemaError):
        build_index(SPEC, _rows().drop_columns(["c_ts"]), version=1, ops="U")
    with pytest.raises(SchemaError):
        build_index(SPEC, _rows(), version=-1, ops="U")


def test_uncastable_key_values_are_refused() -> None:
    rows = _rows().set_column(1, "c_tiny", pa.array([1000, 1], pa.int64()))
    with pytest.raises(SchemaError):
        build_index(SPEC, rows, version=1, ops="U")


def test_write_refuses_a_table_that_is_not_an_index(warehouse: Path) -> None:
    fio = FileIO.for_root(str(warehouse))
    with pytest.raises(SchemaError):
        write_index(fio, "x.parquet", pa.table({"id": [1]}))
    bad_op = pa.table({"id": [1], VERSION_COLUMN: pa.array([1], pa.int64()), OP_COLUMN: ["Q"]})
    with pytest.raises(SchemaError):
        write_index(fio, "x.parquet", bad_op)
    assert not fio.exists("x.parquet")


def test_reading_a_file_that_is_not_an_index_raises_storage_error(warehouse: Path) -> None:
    fio = FileIO.for_root(str(warehouse))
    fio.write_bytes_atomic("junk.parquet", b"not parquet at all")
    with pytest.raises(StorageError):
        read_index(fio, "junk.parquet")
    pq.write_table(pa.table({"id": [1]}), warehouse / "other.parquet")
    with pytest.raises(StorageError):
        read_index(fio, "other.parquet")
    with pytest.raises(StorageError):
        read_index(fio, "missing.parquet")


def test_null_key_values_are_refused() -> None:
    rows = _rows().set_column(3, "c_int", pa.array([None, 1], pa.int32()))
    with pytest.raises(SchemaError):
        build_index(SPEC, rows, version=1, ops="U")
