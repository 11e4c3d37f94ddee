"""Plain local feed files are named and their CSV header read without Spark
(`files.local_file_uri`, `text.first_nonblank_line`), exactly as Spark would: the same URI
as Spark's file listing, the same first non-blank line as Spark's text reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from versioned.engine.feeds.files import list_feed_files, local_file_uri, local_path
from versioned.engine.feeds.text import first_nonblank_line

CONTENTS = [
    b"id,v\n1,a\n",
    b"\n\n  \nid,v\r\n1,a\r\n",
    b"\r\rid,v\r1,a",
    b"   \r\n \n\xef\xbb\xbfid,v\n",
    b"id,v",
    b"\n \n   \r\n",
    b"",
    b"  id , v  \n",
    b"\t\nid\n",  # a tab is more than spaces, as for Spark's trim
    b"x" * 70_000 + b"\r\n" + b"y\n",
]


def _spark_first(spark: Any, path: Path) -> bytes | None:
    lines = spark.read.text(str(path))
    first = lines.where(F.trim(F.col("value")) != F.lit("")).select(
        F.col("value").cast("binary").alias("b")
    )
    row = first.first()
    return None if row is None else bytes(row["b"])


@pytest.mark.parametrize("content", CONTENTS, ids=range(len(CONTENTS)))
def test_the_first_nonblank_line_is_the_one_spark_reads(
    spark: Any, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "feed.csv"
    path.write_bytes(content)
    expected = _spark_first(spark, path)
    for chunk in (1, 2, 3, 7, 1 << 16):  # lines and "\r\n" cut at every chunk boundary
        assert first_nonblank_line(str(path), chunk) == expected, chunk


def test_a_plain_local_file_is_named_as_spark_lists_it(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "batch-1.csv"
    path.write_text("id\n1\n")
    expected = spark.read.text(str(path)).inputFiles()
    assert [local_file_uri(str(path))] == expected
    assert local_file_uri(f"file://{path}") == local_file_uri(f"file:{path}") == expected[0]
    assert list_feed_files(spark, [str(path)]) == expected
    assert local_path(expected[0]) == str(path)


@pytest.mark.parametrize(
    "name", ["dir", "with space.csv", "*.csv", "_hidden.csv", ".hidden.csv", "f.csv.gz", "%41.csv"]
)
def test_anything_but_a_plain_local_file_is_left_to_spark(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name == "dir":
        path.mkdir()
    elif "*" not in name:
        path.write_text("id\n1\n")
    assert local_file_uri(str(path)) is None
    assert local_file_uri(str(tmp_path / "missing.csv")) is None
    assert local_file_uri("s3a://bucket/feed.csv") is None
    assert local_path("s3a://bucket/feed.csv") is None
