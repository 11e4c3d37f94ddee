"""A streamed record and the same values in a CSV feed given to ``Table.upsert`` land as the
same values or are rejected for the same reason (Spark reads the feed; the streaming writers
use the Arrow twin of its rules)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from tests.streaming.test_streamed_values import ACCEPTED, REFUSED
from versioned.schema import TableSpec
from versioned.streaming.record_writers import DelimitedInputWriter

EXTRA = [
    ("DECIMAL(10,2)", "1.239"),
    ("VARCHAR(3)", "abcd"),
    ("INT", "9" * 70),
    ("INT", ""),
    ("STRING", ""),
    ("TIMESTAMP", "2024-01-01T10:00+0200"),
    ("TIMESTAMP", "2024-01-01 10:00:05.5-01:30"),
    ("TIMESTAMP", "2024-01-01T10:00:05.123+05"),
    ("BINARY", "aGVsbG8=x"),
]


def _column(type_name: str) -> str:
    return "c_" + "".join(ch if ch.isalnum() else "_" for ch in type_name.lower())


def _comparable(value: Any) -> Any:
    if hasattr(value, "timestamp") and hasattr(value, "hour"):
        return value.timestamp()  # Spark gives naive local time, Arrow an aware UTC time
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def test_streamed_values_agree_with_a_csv_feed(spark: Any, tmp_path: Path) -> None:
    from versioned.engine.feeds.reader import read_feed

    cases = [(t, text) for t, text, _ in ACCEPTED] + REFUSED + EXTRA
    types = list(dict.fromkeys(t for t, _ in cases))
    names = [_column(t) for t in types]
    spec = TableSpec.build(
        "db.t",
        columns=", ".join(["k INT", *(f"{n} {t}" for n, t in zip(names, types, strict=True))]),
        primary_key="k",
    )
    lines: list[list[str]] = []
    for k, (type_name, text) in enumerate(cases):
        fields = [""] * len(names)
        fields[types.index(type_name)] = text
        lines.append([str(k), *fields])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([["k", *names], *lines])
    path = tmp_path / "feed.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")

    feed = read_feed(spark, str(path), spec)
    spark_rows = {r["k"]: [_comparable(r[n]) for n in names] for r in feed.rows.collect()}
    spark_rejected = {
        int(next(csv.reader([r["_raw"]]))[0]): r["_reason"] for r in feed.rejected.collect()
    }

    writer = DelimitedInputWriter(["k", *names], "\t", spec=spec, dead_letter=True)
    out = writer.encode(["\t".join(line) for line in lines])
    streamed_rows = {r["k"]: [_comparable(r[n]) for n in names] for r in out.rows.to_pylist()}
    streamed_rejected = {r.index: r.reason for r in out.rejected}

    assert streamed_rejected == spark_rejected
    assert streamed_rows == spark_rows
