"""Scans built from the catalog's file list (`engine.spark.known_files`, what reads of a table
on an object store use): the rows, partition values and types Spark's reader gives, without
a question to the file system while the scan is built (a file that is not there fails only
when the scan runs). tests/storage/test_s3_warehouse.py counts the requests on S3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

from versioned.engine.spark.known_files import KnownFile, known_files_frame

SCHEMA = T.StructType(
    [
        T.StructField("k", T.LongType()),
        T.StructField("v", T.StringType()),
        T.StructField("p", T.StringType()),
        T.StructField("version_id", T.LongType()),
    ]
)


def _files(root: Path) -> list[KnownFile]:
    """Three files in two partitions (one with a '/' in its value, one compacted)."""
    placed = {
        "p=a/version_id=3/part-1.parquet": [(1, "one"), (2, "two")],
        "p=b%2Fc/version_id=4/part-2.parquet": [(3, "three")],
        "p=a/version_id=5/compacted-9/part-3.parquet": [(4, "four")],
    }
    known = []
    for rel, rows in placed.items():
        path = root / rel
        path.parent.mkdir(parents=True)
        k, v = zip(*rows, strict=True)
        pq.write_table(pa.table({"k": pa.array(k, pa.int64()), "v": list(v)}), path)
        known.append(KnownFile(rel, path.stat().st_size))
    return known


def test_the_scan_reads_the_files_rows_with_their_partition_values(
    spark: Any, tmp_path: Path
) -> None:
    known = _files(tmp_path)
    frame = known_files_frame(spark, "parquet", SCHEMA, str(tmp_path), known)
    assert frame.schema == SCHEMA
    assert sorted(tuple(r) for r in frame.collect()) == [
        (1, "one", "a", 3),
        (2, "two", "a", 3),
        (3, "three", "b/c", 4),
        (4, "four", "a", 5),
    ]
    # Spark's reader over the same files, for comparison
    reader = spark.read.schema(SCHEMA).option("basePath", str(tmp_path))
    loaded = reader.parquet(*[str(tmp_path / f.path) for f in known])
    assert sorted(frame.collect()) == sorted(loaded.collect())
    assert frame.where("p = 'b/c'").count() == 1  # partition pruning sees the values


def test_building_the_scan_asks_the_file_system_nothing(spark: Any, tmp_path: Path) -> None:
    """Spark's reader checks that each path exists as it builds the scan; the known files'
    scan is built from the catalog's word alone: a missing file fails only when read."""
    known = [*_files(tmp_path), KnownFile("p=z/version_id=7/part-lost.parquet", 1234)]
    with pytest.raises(Exception, match=r"PATH_NOT_FOUND|does not exist"):
        spark.read.schema(SCHEMA).option("basePath", str(tmp_path)).parquet(
            *[str(tmp_path / f.path) for f in known]
        )
    frame = known_files_frame(spark, "parquet", SCHEMA, str(tmp_path), known)
    assert sorted(Path(p).name for p in frame.inputFiles())[-1] == "part-lost.parquet"
    assert frame.where("p = 'a'").count() == 3  # the lost file's partition is pruned
    with pytest.raises(Exception, match=r"part-lost|FileNotFound|does not exist"):
        frame.count()


def test_scans_of_different_files_below_one_folder_stay_apart_in_a_query(
    spark: Any, tmp_path: Path
) -> None:
    """Spark reuses a scan's output for an equal scan in the same query (two versions of a
    table, or the changes between them): scans of different file sets are not equal."""
    known = _files(tmp_path)
    older = known_files_frame(spark, "parquet", SCHEMA, str(tmp_path), known[:2])
    newer = known_files_frame(spark, "parquet", SCHEMA, str(tmp_path), known)
    # both sides of a full join are shuffled by the key: one exchange would serve both
    joined = newer.alias("n").join(older.alias("o"), on="k", how="full_outer")
    assert sorted(r.k for r in joined.where("o.v IS NULL").collect()) == [4]
    again = known_files_frame(spark, "parquet", SCHEMA, str(tmp_path), list(reversed(known)))
    assert newer.alias("n").join(again.alias("a"), on="k", how="full_outer").count() == 4
