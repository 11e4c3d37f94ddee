"""Change rows from pre- and post-images (pyarrow only, no Spark)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from versioned.change_stream.change_rows import change_rows, output_schema
from versioned.layouts.change_task import CommitStamp, Images, shaped
from versioned.schema import Column

COLUMNS = (Column("id", "INT"), Column("v", "STRING"), Column("n", "DOUBLE"))
NAN = float("nan")


def _rows(rows: list[tuple[Any, ...]]) -> pa.Table:
    names = ["id", "v", "n"]
    columns = list(zip(*rows, strict=True)) if rows else [[], [], []]
    return shaped(pa.table(dict(zip(names, columns, strict=True))), COLUMNS)


def _changes(before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]) -> list[Any]:
    table = change_rows(
        Images(_rows(before), _rows(after)),
        record_key=["id"],
        stamp=CommitStamp(seq=7, version=42, committed_at=1.5),
        schema=output_schema(COLUMNS),
    )
    assert table.schema == output_schema(COLUMNS)
    assert set(table.column("_commit_version").to_pylist()) <= {42}
    assert set(table.column("_commit_seq").to_pylist()) <= {7}
    return [
        (r["_change_type"], r["id"], r["v"], "NaN" if r["n"] != r["n"] else r["n"])
        for r in table.to_pylist()
    ]


def test_deletes_then_update_pairs_then_inserts() -> None:
    before = [(1, "a", 1.0), (2, "b", 2.0)]
    after = [(3, "c", 3.0), (1, "a2", 1.0)]
    assert _changes(before, after) == [
        ("delete", 2, "b", 2.0),
        ("update_preimage", 1, "a", 1.0),
        ("update_postimage", 1, "a2", 1.0),
        ("insert", 3, "c", 3.0),
    ]


def test_a_key_whose_values_did_not_change_is_left_out() -> None:
    assert _changes([(1, "a", 1.0), (2, None, NAN)], [(1, "a", 1.0), (2, None, NAN)]) == []


def test_null_against_a_value_is_a_change() -> None:
    assert _changes([(1, "a", None)], [(1, "a", 0.0)]) == [
        ("update_preimage", 1, "a", None),
        ("update_postimage", 1, "a", 0.0),
    ]


def test_a_pre_image_found_twice_counts_once() -> None:
    assert _changes([(1, "a", 1.0), (1, "a", 1.0)], []) == [("delete", 1, "a", 1.0)]


def test_columns_a_file_predates_read_null_and_types_widen() -> None:
    old = pa.table({"id": pa.array([1], pa.int16()), "v": ["a"]})
    assert shaped(old, COLUMNS).to_pylist() == [{"id": 1, "v": "a", "n": None}]
    assert shaped(old, COLUMNS).schema.field("id").type == pa.int32()


def test_the_commit_time_is_a_utc_timestamp() -> None:
    table = change_rows(
        Images(_rows([]), _rows([(1, "a", 1.0)])),
        record_key=["id"],
        stamp=CommitStamp(seq=1, version=1, committed_at=1.5),
        schema=output_schema(COLUMNS),
    )
    stamp = table.column("_commit_timestamp")[0]
    assert stamp.type == pa.timestamp("us", tz="UTC")
    assert stamp.value == 1_500_000
