"""Adding and widening columns of acid tables: the catalog changes, the ORC files do not.

Bucket files written before a column was added have no such field in their ``row`` struct;
ORC's schema evolution reads it as null. Old files are read under widened types. A bucket
column keeps its type: Hive's bucket hash depends on it.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from tests.layouts.acid.engine.tables import acid_table
from versioned.errors import SchemaError


def _acid(cat: Any, **extra: Any) -> Any:
    columns = "id BIGINT NOT NULL, qty INT, store STRING"
    return acid_table(cat, **{"columns": columns, "op_code_column": "op", "buckets": 2, **extra})


def _batch(**columns: Any) -> pa.Table:
    types = {"id": pa.int64(), "qty": pa.int32(), "store": pa.string(), "op": pa.string()}
    return pa.table({k: pa.array(v, types.get(k)) for k, v in columns.items()})


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def test_columns_added_to_an_acid_table_read_null_in_files_written_before(cat: Any) -> None:
    t = _acid(cat)
    v1 = t.upsert(_batch(id=[1, 2, 3], qty=[10, 20, 30], store=["x", "x", "y"], op=["I"] * 3))
    files = {f.path: f.size_bytes for f in t.snapshot().files}
    commit = t.add_columns("note STRING")
    assert {f.path: f.size_bytes for f in t.snapshot().files} == files  # catalog only
    assert commit.operation == "alter"
    before = [(1, 10, "x", None), (2, 20, "x", None), (3, 30, "y", None)]
    assert _rows(t.read()) == before == _rows(cat.sql("SELECT * FROM s.t"))
    new = _batch(id=[2, 3, 4], qty=[21, 0, 40], store=["x", "y", "y"], op=["U", "D", "I"])
    t.upsert(new.append_column("note", pa.array(["two", None, "four"])))
    latest = [(1, 10, "x", None), (2, 21, "x", "two"), (4, 40, "y", "four")]
    assert _rows(t.read()) == latest == _rows(cat.sql("SELECT * FROM s.t"))
    assert _rows(t.read(as_of=v1.version)) == [(1, 10, "x"), (2, 20, "x"), (3, 30, "y")]
    evolving = _batch(id=[1], qty=[11], store=["x"], op=["U"]).append_column(
        "note", pa.array(["one"])
    )
    t.upsert(evolving.append_column("tag", pa.array(["t1"])), evolve=True)
    assert t.refresh().spec.column_names == ("id", "qty", "store", "note", "tag")
    assert _rows(t.read().where("id = 1")) == [(1, 11, "x", "one", "t1")]


def test_widened_columns_of_an_acid_table_read_files_written_before(cat: Any) -> None:
    t = _acid(cat)
    t.upsert(_batch(id=[1, 2], qty=[-(2**31), 2**31 - 1], store=["x", "y"], op=["I", "I"]))
    t.widen_columns("qty BIGINT")
    expected = [(1, -(2**31), "x"), (2, 2**31 - 1, "y")]
    assert _rows(t.read()) == expected == _rows(cat.sql("SELECT * FROM s.t"))
    assert t.read().schema["qty"].dataType.simpleString() == "bigint"
    wide = pa.table({"id": [2, 3], "qty": [2**40, 3], "store": ["y", "y"], "op": ["U", "I"]})
    t.upsert(wide)
    assert _rows(t.read()) == [(1, -(2**31), "x"), (2, 2**40, "y"), (3, 3, "y")]


def test_a_bucket_column_of_an_acid_table_cannot_be_widened(cat: Any) -> None:
    t = _acid(cat, columns="id INT NOT NULL, qty INT, store STRING")
    t.upsert(_batch(id=[1, 2], qty=[1, 2], store=["x", "x"], op=["I", "I"]).cast(
        pa.schema([("id", pa.int32()), ("qty", pa.int32()), ("store", pa.string()),
                   ("op", pa.string())])))  # fmt: skip
    with pytest.raises(SchemaError, match="cannot change the type of bucket column id: a row's"):
        t.widen_columns("id BIGINT")
    assert t.refresh().spec.column("id").type == "INT"
    assert [c.operation for c in t.history()] == ["upsert"]
