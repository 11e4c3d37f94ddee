"""ACID bucket files: schema, insert and delete events, user metadata, stripes, round trips."""

from __future__ import annotations

import datetime as dt
import io
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as porc
import pyorc
import pytest

from versioned.errors import SchemaError
from versioned.layouts.acid.acid_metadata import AcidStats, format_key_index, parse_key_index
from versioned.layouts.acid.bucket_codec import RecordIdentifier, encode_bucket_property
from versioned.layouts.acid.errors import AcidFileError
from versioned.layouts.acid.orc_files import (
    AcidBucketWriter,
    open_bucket_writer,
    read_bucket,
    read_bucket_file,
)
from versioned.layouts.acid.orc_schema import acid_arrow_schema, acid_orc_schema, orc_type
from versioned.schema import Column, TableSpec
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_schema

B0 = encode_bucket_property(0)
B3 = encode_bucket_property(3)
REPO = Path(__file__).resolve().parents[3]

EVERY_TYPE = [
    Column("id", "BIGINT", nullable=False),
    Column("flag", "BOOLEAN"),
    Column("tiny", "TINYINT"),
    Column("small", "SMALLINT"),
    Column("num", "INT"),
    Column("ratio", "FLOAT"),
    Column("score", "DOUBLE"),
    Column("price", "DECIMAL(12,3)"),
    Column("name", "STRING"),
    Column("code", "VARCHAR(8)"),
    Column("grade", "CHAR(4)"),
    Column("born", "DATE"),
    Column("seen", "TIMESTAMP"),
    Column("blob", "BINARY"),
]
UTC = dt.UTC


def every_type_rows() -> pa.Table:
    rows = [
        {
            "id": 1,
            "flag": True,
            "tiny": -128,
            "small": 32767,
            "num": -2147483648,
            "ratio": 1.5,
            "score": -0.1,
            "price": Decimal("123456789.125"),
            "name": "Zoë 日本",
            "code": "abc",
            "grade": "ab",
            "born": dt.date(1, 1, 1),
            "seen": dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
            "blob": b"\x00\xff\x10",
        },
        {name: None for name in (c.name for c in EVERY_TYPE)} | {"id": 2},
        {
            "id": 3,
            "flag": False,
            "tiny": 127,
            "small": -32768,
            "num": 2147483647,
            "ratio": float("inf"),
            "score": 1e300,
            "price": Decimal("-0.001"),
            "name": "",
            "code": "12345678",
            "grade": "abcd",
            "born": dt.date(9999, 12, 31),
            "seen": dt.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
            "blob": b"",
        },
    ]
    spec = TableSpec.build("db.t", columns=EVERY_TYPE, primary_key="id", layout="acid")
    return pa.Table.from_pylist(rows, schema=arrow_schema(spec))


def write(columns: list[Column], **options: object) -> tuple[io.BytesIO, AcidBucketWriter]:
    buf = io.BytesIO()
    options.setdefault("bucket_property", B0)
    return buf, AcidBucketWriter(buf, columns, **options)  # type: ignore[arg-type]


def test_acid_orc_schema_is_hives_struct() -> None:
    cols = [Column("id", "INT"), Column("msg", "STRING")]
    assert acid_orc_schema(cols) == (
        "struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,"
        "currentTransaction:bigint,row:struct<id:int,msg:string>>"
    )
    assert orc_type("decimal(10, 2)") == "decimal(10,2)"
    assert orc_type("varchar(5)") == "varchar(5)"
    assert orc_type("CHAR(3)") == "char(3)"
    assert orc_type("TIMESTAMP") == "timestamp"
    with pytest.raises(SchemaError):
        orc_type("ARRAY<INT>")


def test_every_column_type_round_trips() -> None:
    rows = every_type_rows()
    buf, writer = write(EVERY_TYPE)
    assert writer.insert(7, rows) == 0
    summary = writer.close()
    got = read_bucket_file(buf.getvalue(), EVERY_TYPE)
    assert got.events.schema == acid_arrow_schema(EVERY_TYPE)
    back = pa.Table.from_struct_array(got.events.column("row").combine_chunks())
    expected = rows.to_pylist()
    expected[0]["grade"] = "ab  "  # ORC pads CHAR(4) values with spaces
    assert back.to_pylist() == expected
    assert summary.stats == AcidStats(inserts=3)


def test_insert_events_carry_row_ids_per_write_id_and_the_bucket_property() -> None:
    cols = [Column("id", "INT"), Column("msg", "STRING")]
    buf, writer = write(cols, bucket_property=B3, streaming=True)
    first = pa.table({"id": pa.array([1, 2], pa.int32()), "msg": ["a", "b"]})
    assert writer.insert(2, first) == 0
    assert writer.insert(2, first.slice(0, 1)) == 2  # same write id: row ids continue
    assert writer.insert(3, first) == 0  # a new write id restarts at 0
    writer.close()
    events = read_bucket_file(buf.getvalue(), cols).events
    assert events.column("operation").to_pylist() == [0] * 5
    assert events.column("originalTransaction").to_pylist() == [2, 2, 2, 3, 3]
    assert events.column("currentTransaction").to_pylist() == [2, 2, 2, 3, 3]
    assert events.column("rowId").to_pylist() == [0, 1, 2, 0, 1]
    assert set(events.column("bucket").to_pylist()) == {B3}


def test_write_ids_must_not_go_back() -> None:
    cols = [Column("id", "INT")]
    _, writer = write(cols)
    writer.insert(5, pa.table({"id": pa.array([1], pa.int32())}))
    with pytest.raises(AcidFileError, match="write id order"):
        writer.insert(4, pa.table({"id": pa.array([1], pa.int32())}))


def test_delete_events_have_a_null_row_and_are_sorted() -> None:
    cols = [Column("id", "INT"), Column("msg", "STRING")]
    buf, writer = write(cols, events="delete")
    writer.delete(
        9, [RecordIdentifier(2, B3, 1), RecordIdentifier(1, B0, 4), RecordIdentifier(2, B0, 0)]
    )
    summary = writer.close()
    got = read_bucket_file(buf.getvalue(), cols)
    assert got.events.column("row").to_pylist() == [None, None, None]
    assert got.events.column("operation").to_pylist() == [2, 2, 2]
    assert got.events.column("currentTransaction").to_pylist() == [9, 9, 9]
    keys = list(
        zip(
            got.events.column("originalTransaction").to_pylist(),
            got.events.column("bucket").to_pylist(),
            got.events.column("rowId").to_pylist(),
            strict=True,
        )
    )
    assert keys == [(1, B0, 4), (2, B0, 0), (2, B3, 1)]
    assert summary.stats == AcidStats(deletes=3)
    assert got.stats == AcidStats(0, 0, 3)
    assert got.key_index == (RecordIdentifier(2, B3, 1),)


def test_deletes_from_an_arrow_table() -> None:
    cols = [Column("id", "INT")]
    buf, writer = write(cols, events="delete")
    keys = pa.table(
        {
            "originalTransaction": pa.array([3, 1], pa.int64()),
            "bucket": pa.array([B0, B0], pa.int32()),
            "rowId": pa.array([0, 7], pa.int64()),
        }
    )
    writer.delete(4, keys)
    writer.close()
    events = read_bucket_file(buf.getvalue(), cols).events
    assert events.column("rowId").to_pylist() == [7, 0]


def test_insert_and_delete_events_do_not_mix() -> None:
    cols = [Column("id", "INT")]
    _, inserts = write(cols)
    with pytest.raises(AcidFileError, match="delete_delta_"):
        inserts.delete(2, [RecordIdentifier(1, B0, 0)])
    _, deletes = write(cols, events="delete")
    with pytest.raises(AcidFileError, match="cannot write insert events"):
        deletes.insert(2, pa.table({"id": pa.array([1], pa.int32())}))


def test_user_metadata_is_written_as_hive_writes_it() -> None:
    cols = [Column("id", "INT")]
    buf, writer = write(cols, stripe_rows=1024)
    writer.insert(1, pa.table({"id": pa.array(range(2500), pa.int32())}))
    writer.insert(2, pa.table({"id": pa.array(range(10), pa.int32())}))
    summary = writer.close()
    got = read_bucket_file(buf.getvalue())
    assert got.user_metadata["hive.acid.version"] == b"2"
    assert got.user_metadata["hive.acid.stats"] == b"2510,0,0"
    assert got.user_metadata["hive.acid.key.index"] == (
        f"1,{B0},1023;1,{B0},2047;2,{B0},9;".encode()
    )
    assert got.stripes == 3
    assert summary.key_index == got.key_index
    # Each key-index entry is the last event of its stripe.
    stripes = porc.ORCFile(pa.BufferReader(buf.getvalue()))
    lasts = []
    for i in range(stripes.nstripes):
        batch = stripes.read_stripe(i)
        lasts.append(
            RecordIdentifier(
                batch.column(1)[-1].as_py(),
                batch.column(2)[-1].as_py(),
                batch.column(3)[-1].as_py(),
            )
        )
    assert tuple(lasts) == got.key_index


def test_hive_readers_see_the_metadata_keys_once() -> None:
    cols = [Column("id", "INT")]
    buf, writer = write(cols, streaming=True, stripe_rows=2)
    for w in (1, 2, 3):
        writer.insert(w, pa.table({"id": pa.array([w, w], pa.int32())}))
        writer.flush()
    writer.close()
    reader = pyorc.Reader(io.BytesIO(buf.getvalue()))
    assert sorted(reader.user_metadata) == [
        "hive.acid.key.index",
        "hive.acid.stats",
        "hive.acid.version",
    ]


def test_metadata_strings_parse() -> None:
    keys = (RecordIdentifier(1, B0, 3), RecordIdentifier(12, B3, 0))
    text = format_key_index(keys)
    assert text == f"1,{B0},3;12,{B3},0;"
    assert parse_key_index(text) == keys
    assert parse_key_index("") == ()
    assert AcidStats.parse("4,0,2") == AcidStats(4, 0, 2)
    assert AcidStats(4, 0, 2).to_string() == "4,0,2"
    for bad in ("1,2", "a,b,c", "1,-1,0"):
        with pytest.raises(AcidFileError):
            AcidStats.parse(bad)
    with pytest.raises(AcidFileError, match="bad entry"):
        parse_key_index("1,2;")


def test_streaming_flush_gives_readable_logical_lengths() -> None:
    cols = [Column("id", "INT"), Column("msg", "STRING")]
    buf, writer = write(cols, streaming=True)
    lengths = []
    for w in (1, 2, 3):
        writer.insert(w, pa.table({"id": pa.array([w], pa.int32()), "msg": [f"m{w}"]}))
        lengths.append(writer.flush())
    writer.insert(4, pa.table({"id": pa.array([4], pa.int32()), "msg": ["uncommitted"]}))
    assert lengths == sorted(lengths) and len(set(lengths)) == 3
    assert writer.flush() > lengths[-1]
    assert writer.flush() == writer.flush()  # nothing new: same length
    data = buf.getvalue()
    for i, length in enumerate(lengths, start=1):
        got = read_bucket_file(data, cols, length=length)
        assert got.events.column("currentTransaction").to_pylist() == list(range(1, i + 1))
        assert got.user_metadata == {}  # intermediate footers carry no hive.acid.* keys
    writer.close()
    assert read_bucket_file(buf.getvalue()).events.num_rows == 4


def test_flush_needs_a_streaming_writer() -> None:
    _, writer = write([Column("id", "INT")])
    with pytest.raises(AcidFileError, match="streaming=True"):
        writer.flush()
    with pytest.raises(AcidFileError, match="multiple of 1024"):
        write([Column("id", "INT")], stripe_rows=1000)


def test_rows_must_have_the_data_columns() -> None:
    _, writer = write([Column("id", "INT"), Column("msg", "STRING")])
    with pytest.raises(SchemaError, match="msg"):
        writer.insert(1, pa.table({"id": pa.array([1], pa.int32())}))
    with pytest.raises(SchemaError, match="do not fit"):
        writer.insert(1, pa.table({"id": pa.array([2**40]), "msg": ["x"]}))


def test_non_acid_and_truncated_files_are_refused() -> None:
    plain = io.BytesIO()
    with pyorc.Writer(plain, "struct<a:int>") as w:
        w.write((1,))
    with pytest.raises(AcidFileError, match="not an ACID bucket file"):
        read_bucket_file(plain.getvalue())
    buf, writer = write([Column("id", "INT")])
    writer.insert(1, pa.table({"id": pa.array([1], pa.int32())}))
    writer.close()
    with pytest.raises(AcidFileError, match="cannot read"):
        read_bucket_file(buf.getvalue()[:-5])
    with pytest.raises(AcidFileError, match="closed"):
        writer.close()


def test_fileio_writes_atomically_and_reads_back(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    cols = [Column("id", "INT")]
    rel = "p=1/delta_0000001_0000001_0000/bucket_00000"
    with (
        pytest.raises(RuntimeError),
        open_bucket_writer(fileio, rel, cols, bucket_property=B0) as w,
    ):
        w.insert(1, pa.table({"id": pa.array([1], pa.int32())}))
        raise RuntimeError("crash before close")
    assert not fileio.exists(rel)
    assert fileio.list_files() == []  # no temporary file left behind
    with open_bucket_writer(fileio, rel, cols, bucket_property=B0) as w:
        w.insert(1, pa.table({"id": pa.array([5, 6], pa.int32())}))
    got = read_bucket(fileio, rel, cols)
    assert got.events.column("row").to_pylist() == [{"id": 5}, {"id": 6}]


def test_timestamps_do_not_depend_on_the_local_time_zone(tmp_path: Path) -> None:
    cols = [Column("id", "INT"), Column("seen", "TIMESTAMP")]
    when = dt.datetime(2024, 7, 1, 12, 30, tzinfo=UTC)
    path = tmp_path / "bucket_00000"
    with path.open("wb") as out, AcidBucketWriter(out, cols, bucket_property=B0) as writer:
        writer.insert(1, pa.table({"id": pa.array([1], pa.int32()), "seen": [when]}))
    code = (
        "import sys; from versioned.layouts.acid.orc_files import read_bucket_file;"
        "from versioned.schema import Column;"
        "cols=[Column('id','INT'),Column('seen','TIMESTAMP')];"
        "t=read_bucket_file(open(sys.argv[1],'rb').read(), cols).events;"
        "print(t.column('row')[0].as_py()['seen'].isoformat())"
    )
    for zone in ("America/New_York",):
        env = {**os.environ, "TZ": zone, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == when.isoformat()
