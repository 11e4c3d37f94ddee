"""Where layout 1 puts versions, index files and Bloom files."""

from __future__ import annotations

import pytest

from versioned.layouts.version_partition.paths import (
    bloom_file_name,
    index_dir,
    index_file_name,
    version_dir,
    version_of,
)
from versioned.storage.partition_paths import is_hidden, partition_path


def test_version_dir_under_a_partition_and_unpartitioned() -> None:
    part = partition_path(["store_id", "create_date"], ["7", "2024-01-01"])
    assert version_dir(part, 42) == "store_id=7/create_date=2024-01-01/version_id=42"
    assert version_dir("", 42) == "version_id=42"
    assert version_dir("a=1/", 0) == "a=1/version_id=0"
    assert index_dir(part, 42) == "_index/store_id=7/create_date=2024-01-01/version_id=42"
    assert index_dir("", 5) == "_index/version_id=5"


@pytest.mark.parametrize("bad", [-1, True, 1.0, "3", None])
def test_version_must_be_a_non_negative_int(bad: object) -> None:
    with pytest.raises(ValueError):
        version_dir("", bad)  # type: ignore[arg-type]


def test_index_and_bloom_names_are_fresh_and_hidden_from_data_scans() -> None:
    names = {index_file_name() for _ in range(100)} | {bloom_file_name() for _ in range(100)}
    assert len(names) == 200
    for name in names:
        assert is_hidden(f"{index_dir('p=1', 3)}/{name}")  # a data scan never sees them
    assert index_file_name().endswith(".parquet")
    assert not is_hidden(index_file_name())  # an index scan reads index files ...
    assert bloom_file_name().endswith(".bin")
    assert is_hidden(bloom_file_name())  # ... and skips Bloom files


def test_hidden_follows_spark_listing_rules() -> None:
    assert not is_hidden("p=1/version_id=3/part-00000.parquet")
    assert not is_hidden("_region=eu/version_id=3/part-0.parquet")  # a partition directory
    assert not is_hidden("p=__HIVE_DEFAULT_PARTITION__/version_id=1/part-0.parquet")
    assert is_hidden("p=1/version_id=3/_tmp.abc")
    assert is_hidden("p=1/version_id=3/.part-0.parquet.crc")
    assert is_hidden("p=1/version_id=3/_SUCCESS")


def test_version_of_a_file_path() -> None:
    assert version_of("db.db/t/p=1/version_id=42/part-0.parquet") == 42
    assert version_of("_index/p=1/version_id=7/index-x.parquet") == 7
    assert version_of("db.db/t/p=1/part-0.parquet") is None
    assert version_of("p=version_id=3/x") is None
