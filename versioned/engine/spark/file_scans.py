"""Spark scans over explicit file lists (the files a catalog snapshot names).

Above ``spark.sql.sources.parallelPartitionDiscovery.threshold`` (32) paths Spark stats
the files of ``DataFrameReader.load(paths)`` with a distributed job while it builds the
DataFrame: ~2-3 s per scan for a few hundred files on ``local[2]``, paid by every read and
every key lookup. The files are known from the snapshot; stat'ing them on the driver takes
~0.5 ms each locally. `driver_listing` raises the threshold for the one ``load`` call and
puts the caller's setting back: only the listing strategy changes, never the result.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pyspark.sql import DataFrame, DataFrameReader, SparkSession

DRIVER_LISTING_MAX_PATHS = 10_000
"""Scans of up to this many explicit files stat them on the driver."""
_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"


@contextmanager
def driver_listing(spark: SparkSession, paths: int) -> Iterator[None]:
    """Let Spark stat ``paths`` explicit files on the driver instead of in a Spark job."""
    current = spark.conf.get(_LISTING_THRESHOLD, None)
    if paths > DRIVER_LISTING_MAX_PATHS or paths <= int(current or 32):
        yield
        return
    spark.conf.set(_LISTING_THRESHOLD, str(paths))
    try:
        yield
    finally:
        if current is None:
            spark.conf.unset(_LISTING_THRESHOLD)
        else:
            spark.conf.set(_LISTING_THRESHOLD, current)


def load_files(spark: SparkSession, reader: DataFrameReader, paths: Sequence[str]) -> DataFrame:
    """``reader.load(paths)`` with the files stat'ed on the driver (`driver_listing`)."""
    with driver_listing(spark, len(paths)):
        return reader.load(list(paths))
