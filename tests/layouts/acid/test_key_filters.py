"""Key filters of insert bucket files and the file pruning of the key lookup (no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from versioned.catalog.records import DataFile, PartitionInfo
from versioned.keys.bloom import KeyBloomFilter
from versioned.layouts.acid.bucket_codec import encode_bucket_property
from versioned.layouts.acid.file_pruning import (
    NO_PARTITION,
    batch_keys,
    deletes_for,
    key_blooms,
    partition_ids,
    prune_insert_files,
)
from versioned.layouts.acid.key_filters import (
    BLOOM_STAT,
    KEY_BLOOM_KIND,
    filter_key_columns,
    key_bloom_path,
    write_key_filter,
)
from versioned.layouts.acid.orc_files import open_bucket_writer
from versioned.layouts.acid.snapshot_dirs import BucketFileRef
from versioned.names import TableName
from versioned.schema import Column, TableSpec
from versioned.storage.filesystem import FileIO

COLUMNS = (Column("id", "BIGINT", nullable=False), Column("code", "STRING"), Column("v", "INT"))


def _spec(**extra: Any) -> TableSpec:
    return TableSpec(
        name=TableName.parse("s.t"),
        columns=extra.pop("columns", COLUMNS),
        primary_key=extra.pop("primary_key", ("id", "code")),
        layout="acid",
        **extra,
    )


def _bucket_file(fileio: FileIO, rel: str, spec: TableSpec, ids: list[int], bucket: int) -> None:
    rows = pa.table({"id": ids, "code": [f"c{i}" for i in ids], "v": [0] * len(ids)})
    with open_bucket_writer(
        fileio,
        f"t/{rel}",
        spec.data_columns,
        bucket_property=encode_bucket_property(bucket),
        stripe_rows=1024,  # several stripes: filters are built stripe by stripe
    ) as writer:
        writer.insert(1, rows)


def _data_file(rel: str, kind: str, stats: dict[str, Any], pid: int | None = 1) -> DataFile:
    return DataFile(0, pid, rel, kind, 1, 1, 1, stats, 1, None)


def test_filters_hold_every_key_of_the_file_and_its_key_range(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    spec = _spec()
    ids = list(range(100, 3100, 2))
    _bucket_file(fileio, "delta_0000001_0000001_0000/bucket_00002", spec, ids, 2)

    written = write_key_filter(fileio, "t", "delta_0000001_0000001_0000/bucket_00002", spec)

    assert written is not None
    assert written.bloom_path == "delta_0000001_0000001_0000/_key_bloom_00002"
    assert written.stats == {"keys": len(ids), BLOOM_STAT: True, "min_key": 100, "max_key": 3098}
    bloom = KeyBloomFilter.read(fileio, f"t/{written.bloom_path}")
    from versioned.keys.encoding import encode_keys

    stored = pa.table({"id": ids, "code": [f"c{i}" for i in ids]})
    assert all(bloom.might_contain_many(encode_keys(stored, ["id", "code"])))
    absent = pa.table({"id": [i + 1 for i in ids], "code": [f"c{i}" for i in ids]})
    misses = bloom.might_contain_many(encode_keys(absent, ["id", "code"]))
    assert sum(misses) < len(ids) * 0.05  # a Bloom filter: few false positives


@pytest.mark.parametrize(
    ("columns", "primary_key", "partition_by", "expected"),
    [
        (COLUMNS, ("id", "code"), (), ("id", "code")),
        (COLUMNS, ("code", "id"), ("code",), ("id",)),
        ((Column("id", "TIMESTAMP"), Column("v", "INT")), ("id",), (), None),
        ((Column("id", "DOUBLE"), Column("v", "INT")), ("id",), (), None),
        ((Column("id", "CHAR(4)"), Column("v", "INT")), ("id",), (), None),
        ((Column("id", "DECIMAL(10,2)"), Column("d", "DATE")), ("id", "d"), (), ("id", "d")),
    ],
)
def test_only_keys_that_read_back_exactly_from_orc_get_filters(
    columns: tuple[Column, ...],
    primary_key: tuple[str, ...],
    partition_by: tuple[str, ...],
    expected: tuple[str, ...] | None,
) -> None:
    spec = _spec(columns=columns, primary_key=primary_key, partition_by=partition_by)
    assert filter_key_columns(spec) == expected


def test_the_bloom_side_file_sits_next_to_its_bucket_file_hidden_from_hive() -> None:
    assert key_bloom_path("p=1/base_0000005/bucket_00012") == "p=1/base_0000005/_key_bloom_00012"
    with pytest.raises(ValueError, match="not a bucket file"):
        key_bloom_path("p=1/base_0000005/_orc_acid_version")


def test_partition_ids_map_values_with_default_partition_and_unknown_ones() -> None:
    partitions = [
        PartitionInfo(7, 1, ("x", "1"), "a=x/b=1", 1, 0.0),
        PartitionInfo(8, 1, (None, "1"), "a=__HIVE_DEFAULT_PARTITION__/b=1", 1, 0.0),
    ]
    keys = pa.table({"a": ["x", None, "", "y", "x"], "b": ["1", "1", "1", "1", "2"]})

    ids = partition_ids(keys, ["a", "b"], partitions)

    assert ids.tolist() == [7, 8, 8, NO_PARTITION, NO_PARTITION]
    unpartitioned = [PartitionInfo(3, 1, (), "", 1, 0.0)]
    assert partition_ids(keys, [], unpartitioned).tolist() == [3] * 5


def _refs(fileio: FileIO, spec: TableSpec) -> tuple[list[BucketFileRef], dict[str, DataFile]]:
    """Three delta files of bucket 0 with ids 0..1998 (even), 10000.., 20000.., filtered."""
    refs, files = [], []
    for n, start in enumerate((0, 10_000, 20_000), start=1):
        directory = f"delta_{n:07d}_{n:07d}_0000"
        rel = f"{directory}/bucket_00000"
        _bucket_file(fileio, rel, spec, list(range(start, start + 2000, 2)), 0)
        written = write_key_filter(fileio, "t", rel, spec)
        assert written is not None
        refs.append(BucketFileRef(_data_file(rel, "delta", written.stats), directory, 0))
        files.append(_data_file(written.bloom_path, KEY_BLOOM_KIND, {}))
    return refs, key_blooms(files)


def _probe(ids: list[int], buckets: list[int] | None = None) -> Any:
    keys = pa.table({"id": ids, "code": [f"c{i}" for i in ids], "#p": ["x"] * len(ids)})
    if buckets is not None:
        keys = keys.append_column("#b", pa.array(buckets, pa.int32()))
    return batch_keys(
        keys,
        partition_columns=["#p"],
        partitions=[PartitionInfo(1, 1, ("x",), "p=x", 1, 0.0)],
        bucket_column=None if buckets is None else "#b",
        filter_columns=["id", "code"],
    )


def test_new_keys_open_no_file_but_bloom_files_within_their_range(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    spec = _spec()
    refs, blooms = _refs(fileio, spec)
    fileio.opened.clear()

    above = prune_insert_files(fileio, "t", refs, _probe([50_000, 50_001]), blooms)
    inside = prune_insert_files(fileio, "t", refs, _probe([10_001, 10_003]), blooms)

    assert (above.kept, above.by_range, above.blooms_read) == ((), 3, 0)
    assert (inside.kept, inside.by_range, inside.by_bloom, inside.blooms_read) == ((), 2, 1, 1)
    assert fileio.opened == ["t/delta_0000002_0000002_0000/_key_bloom_00000"]


def test_a_stored_key_keeps_exactly_the_file_that_holds_it(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    refs, blooms = _refs(fileio, _spec())

    found = prune_insert_files(fileio, "t", refs, _probe([20_004, 50_000]), blooms)

    assert [r.directory for r in found.kept] == ["delta_0000003_0000003_0000"]


def test_files_of_other_partitions_and_buckets_and_unfiltered_files(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    refs, blooms = _refs(fileio, _spec())
    other_partition = BucketFileRef(_data_file("x/bucket_00000", "delta", {}, 2), "x", 0)
    unfiltered = BucketFileRef(_data_file("y/bucket_00000", "delta", {}), "y", 0)

    other_bucket = prune_insert_files(fileio, "t", refs, _probe([20_004], [1]), blooms)
    mixed = prune_insert_files(
        fileio, "t", [other_partition, unfiltered], _probe([20_004], [0]), blooms
    )

    assert (other_bucket.kept, other_bucket.by_scope, other_bucket.blooms_read) == ((), 3, 0)
    assert (mixed.kept, mixed.by_scope) == ((unfiltered,), 1)  # no filters: always read
    assert np.array_equal(_probe([1, 2], [3, 3]).buckets, [3, 3])


def _ref(directory: str, kind: str, bucket: int, pid: int = 1) -> BucketFileRef:
    rel = f"{directory}/bucket_{bucket:05d}"
    return BucketFileRef(_data_file(rel, kind, {}, pid), directory, bucket)


def test_delete_files_are_read_only_where_they_may_delete_a_kept_file_s_rows() -> None:
    deletes = [
        _ref("delete_delta_0000002_0000002_0000", "delete_delta", 0),  # before delta 3
        _ref("delete_delta_0000003_0000003_0000", "delete_delta", 0),
        _ref("delete_delta_0000004_0000005", "delete_delta", 0),  # compacted
        _ref("delete_delta_0000005_0000005_0000", "delete_delta", 1),  # other bucket
        _ref("delete_delta_0000005_0000005_0000", "delete_delta", 0, pid=2),  # other partition
    ]

    after_delta = deletes_for([_ref("delta_0000003_0000003_0000", "delta", 0)], deletes)
    after_base = deletes_for([_ref("base_0000001", "base", 0)], deletes)

    assert [d.directory for d in after_delta] == [
        "delete_delta_0000003_0000003_0000",
        "delete_delta_0000004_0000005",
    ]
    assert after_base == tuple(deletes[:3])
    assert deletes_for([], deletes) == ()
