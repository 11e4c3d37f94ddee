"""`versioned.collections.write` / `read`: collections made and read without any catalog."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

from versioned import collections
from versioned.api.catalog import Catalog
from versioned.collections import METADATA_FILE
from versioned.errors import SchemaError, StorageError

REGIONS = ["a/b", None, "c=d"]


def _events(spark: Any) -> Any:
    data = [(i, f"e{i}", REGIONS[i % 3], dt.date(2024, 1, 1 + i % 2)) for i in reversed(range(12))]
    return spark.createDataFrame(data, "id BIGINT, name STRING, region STRING, day DATE")


def _sorted(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=lambda r: r[0])


def test_write_then_read_restores_partition_columns_and_types(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "events"
    frame = _events(spark)
    meta = collections.write(
        frame,
        str(path),
        primary_key="id",
        sort_by="id",
        partition_by=["region", "day"],
        table="lake.events",
    )
    assert len(meta.partitions) == 6 and meta.rows == 12  # several partitions
    assert ("a/b", "2024-01-01") in [p.values for p in meta.partitions]
    assert (path / "region=a%2Fb" / "day=2024-01-01").is_dir()
    back = collections.read(spark, str(path))
    assert back.columns == ["id", "name", "region", "day"]
    assert isinstance(back.schema["day"].dataType, T.DateType)
    assert _sorted(back) == _sorted(frame)
    plain = spark.read.parquet(str(path))  # Spark alone: the metadata file is skipped
    assert _sorted(plain.select(*frame.columns)) == _sorted(frame)
    for f in meta.files:  # sort_by is honoured inside every file
        ids = pq.read_table(path / f.path).column("id").to_pylist()
        assert ids == sorted(ids)
    data = json.loads((path / METADATA_FILE).read_text())
    assert data["table"] == "lake.events" and data["source"]["kind"] == "write"
    assert data["schema"][3] == {"name": "day", "type": "DATE", "nullable": True}


def test_write_with_partition_values_not_in_the_data_then_import_it(
    spark: Any, tmp_path: Path, target: Catalog
) -> None:
    path = tmp_path / "daily"
    frame = spark.createDataFrame([(1, "x"), (2, "y")], "id BIGINT, name STRING")
    meta = collections.write(
        frame,
        str(path),
        primary_key="id",
        sort_by=None,
        file_format="orc",
        table="lake.daily",
        partition={"datestamp": "20101109"},
    )
    assert [p.path for p in meta.partitions] == ["datestamp=20101109"]
    back = collections.read(spark, str(path))
    assert _sorted(back) == [(1, "x", "20101109"), (2, "y", "20101109")]
    result = target.import_(str(path))
    table = target.table("lake.daily")
    assert result.created and table.spec.file_format == "orc"
    assert table.spec.partition_by == ("datestamp",) and table.spec.sort_by == ()
    assert _sorted(table.read()) == [(1, "x", "20101109"), (2, "y", "20101109")]


@contextmanager
def _session_time_zone(spark: Any, zone: str) -> Iterator[None]:
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("zone", ["America/New_York", "UTC"])
def test_write_refuses_a_timestamp_partition_column_in_any_session_time_zone(
    spark: Any, tmp_path: Path, zone: str
) -> None:
    """Written from New York, a TIMESTAMP partition value was the New York wall-clock time
    in the path, and a reader in UTC got an instant 4 or 5 hours off: refused as
    `create-table` and `import` refuse it, before anything is written."""
    with _session_time_zone(spark, zone):
        frame = spark.sql("SELECT 1L AS id, TIMESTAMP'2024-01-15 12:00:00Z' AS ts, 'x' AS v")
        path = tmp_path / "by-ts"
        with pytest.raises(SchemaError, match="partition column ts is a TIMESTAMP") as caught:
            collections.write(frame, str(path), primary_key="id", sort_by=None, partition_by="ts")
        assert "partition by a DATE or STRING column derived from ts in UTC" in str(caught.value)
        assert not path.exists() or not any(path.iterdir())
        # a TIMESTAMP data column is fine: the same instant for a reader in another zone
        meta = collections.write(frame, str(tmp_path / "ts-data"), primary_key="id", sort_by=None)
        assert meta.partition_by == ()
    other = "UTC" if zone != "UTC" else "America/New_York"
    with _session_time_zone(spark, other):
        back = collections.read(spark, str(tmp_path / "ts-data"))
        assert [r.s for r in back.selectExpr("unix_timestamp(ts) AS s").collect()] == [1705320000]


def test_write_refuses_a_folder_that_is_not_empty_and_unsupported_types(
    spark: Any, tmp_path: Path
) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "data.csv").write_text("keep me")
    frame = _events(spark)
    with pytest.raises(StorageError, match="is not empty"):
        collections.write(frame, str(busy), primary_key="id", sort_by=None)
    assert [p.name for p in busy.iterdir()] == ["data.csv"]
    with pytest.raises(TypeError, match="sort_by"):  # the sort order must always be stated
        collections.write(frame, str(tmp_path / "nosort"), primary_key="id")  # type: ignore[call-arg]
    nested = spark.createDataFrame([(1, [1, 2])], "id BIGINT, xs ARRAY<INT>")
    with pytest.raises(SchemaError, match="column xs has type array<int>"):
        collections.write(nested, str(tmp_path / "nested"), primary_key="id", sort_by=None)
    with pytest.raises(SchemaError, match="primary key column nope"):
        collections.write(frame, str(tmp_path / "nokey"), primary_key="nope", sort_by=None)
