"""Choosing partitions to compact, from catalog metadata only (no Spark)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from versioned.catalog.records import DataFile, PartitionInfo
from versioned.errors import InputError
from versioned.layouts.version_partition.compaction_plan import plan_partition
from versioned.layouts.version_partition.engine.compacted_version import file_shaping
from versioned.options import CompactionOptions, CompactionThresholds
from versioned.storage.partition_spec import partition_path_values as parse_partition_spec
from versioned.storage.partition_spec import partition_values

PART = PartitionInfo(1, 1, ("a",), "p=a", 9, 0.0)
OPTIONS = CompactionOptions(rows_per_file=1000, target_file_bytes=1 << 20)
_ids = iter(range(1, 10_000))


def _file(kind: str, version: int, rows: int = 100, size: int = 1000, **stats: Any) -> DataFile:
    return DataFile(
        next(_ids), 1, f"{kind}-{version}-{rows}", kind, version, size, rows, stats, 1, None
    )


def _version(version: int, rows: int = 100, entries: int = 0) -> list[DataFile]:
    files = [_file("data", version, rows), _file("bloom", version, rows)]
    return files + ([_file("index", version, entries)] if entries else [])


def test_a_single_version_without_index_entries_is_already_compact() -> None:
    assert plan_partition(PART, _version(9), OPTIONS) is None
    assert plan_partition(PART, [], OPTIONS) is None


def test_several_versions_or_too_many_files_need_compaction() -> None:
    plan = plan_partition(PART, _version(3) + _version(9, entries=20), OPTIONS)
    assert plan is not None
    assert (plan.versions, plan.data_rows, plan.index_entries) == (2, 200, 20)
    assert plan.estimated_rows == 180 and plan.files_to_write == 1 and plan.live_files == 5
    assert plan.reasons == ("2 versions", "2 data files for 1", "20 index entries")
    many = [_file("data", 9, 10) for _ in range(5)] + [_file("bloom", 9, 50)]
    assert plan_partition(PART, many, OPTIONS).reasons == ("5 data files for 1",)  # type: ignore[union-attr]


def test_files_to_write_follow_rows_and_bytes_targets() -> None:
    by_rows = plan_partition(PART, _version(3, rows=2500) + _version(9, rows=600), OPTIONS)
    assert by_rows is not None and by_rows.files_to_write == 4  # 3100 rows, 1000 per file
    big = [_file("data", v, rows=10, size=3 << 20) for v in (3, 9)]
    by_bytes = plan_partition(PART, big, OPTIONS)
    assert by_bytes is not None and by_bytes.files_to_write == 6  # 6 MB, 1 MB per file


def test_tombstone_only_index_is_compact_until_its_tombstones_expire() -> None:
    files = [*_version(9), _file("index", 9, 3, tombstones=3, min_version=4)]
    assert plan_partition(PART, files, OPTIONS) is None
    plan = plan_partition(PART, files, OPTIONS, expired_tombstone_versions=frozenset({4}))
    assert plan is not None and plan.reasons == ("expired tombstones",)


def test_thresholds_pick_only_partitions_past_one_of_them() -> None:
    thresholds = CompactionThresholds(min_versions=3, max_index_entries=50, min_small_files=4)
    two = _version(3) + _version(9, entries=10)
    assert plan_partition(PART, two, OPTIONS, thresholds=thresholds) is None
    three = two + _version(10)
    plan = plan_partition(PART, three, OPTIONS, thresholds=thresholds)
    assert plan is not None and plan.reasons == ("3 versions >= 3",)
    entries = _version(3) + _version(9, entries=60)
    plan = plan_partition(PART, entries, OPTIONS, thresholds=thresholds)
    assert plan is not None and plan.reasons == ("60 index entries >= 50",)
    small = [_file("data", 9, 10) for _ in range(4)]
    plan = plan_partition(PART, small, OPTIONS, thresholds=thresholds)
    assert plan is not None and plan.reasons == ("4 small files >= 4",)
    one_big = [_file("data", 9, 900, size=900_000)]
    assert plan_partition(PART, one_big, OPTIONS, thresholds=CompactionThresholds(1, 1, 1)) is None


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("store_id=7/create_date=2024-01-01", ("7", "2024-01-01")),
        ("store_id=a/b/create_date=x=y", ("a/b", "x=y")),
        ("store_id=/create_date=__HIVE_DEFAULT_PARTITION__", (None, None)),
        ("/store_id=7/create_date=2024-01-01/", ("7", "2024-01-01")),
    ],
)
def test_partition_spec_parses_unescaped_hive_paths(text: str, values: tuple[Any, ...]) -> None:
    assert parse_partition_spec(text, ["store_id", "create_date"]) == values


@pytest.mark.parametrize(
    "text", ["create_date=2024-01-01/store_id=7", "store_id=7", "store=7/create_date=1"]
)
def test_partition_spec_must_name_the_partition_columns_in_order(text: str) -> None:
    with pytest.raises(InputError, match=re.escape("store_id=.../create_date=...")):
        parse_partition_spec(text, ["store_id", "create_date"])


def test_partitions_given_as_mappings_or_tuples() -> None:
    assert partition_values(["a", "b"], {"b": 2, "a": "x"}) == ("x", "2")
    assert partition_values(["a", "b"], ("x", None)) == ("x", None)
    with pytest.raises(InputError, match="exactly the partition columns"):
        partition_values(["a", "b"], {"a": "x"})


@pytest.mark.parametrize(
    ("files", "splits", "rows", "expected"),
    [
        (1, 5, 900, (1, 0)),  # one file: coalesce everything into one task
        (1, 1, 900, (1, 0)),
        (3, 8, 9000, (3, 0)),  # more splits than files: coalesce, one file per task
        (4, 4, 9000, (4, 0)),
        (11, 2, 10_200_000, (2, 892_500)),  # 6 files per task: 850k rows + 5 % slack
        (4, 2, 100, (2, 27)),
        (3, 0, 30, (1, 11)),  # a scan reporting no splits: one task rolling over
    ],
)
def test_file_shaping_writes_near_target_files_without_a_shuffle(
    files: int, splits: int, rows: int, expected: tuple[int, int]
) -> None:
    tasks, max_rows = file_shaping(files, splits, rows)
    assert (tasks, max_rows) == expected
    assert tasks <= max(splits, 1)  # never more tasks than the scan has: no shuffle
    if max_rows:  # rolling over: even splits need at most ceil(files / tasks) files each,
        # and no file is more than 5 % over the even share of rows
        assert tasks * -(-files // tasks) * max_rows >= rows
        assert max_rows <= 1.05 * rows / files + 1
