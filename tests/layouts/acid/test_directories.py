"""The ACID directory grammar: names, parsing, padding, Hive's delta order."""

from __future__ import annotations

import pytest

from versioned.layouts.acid.directories import (
    ACID_VERSION_CONTENT,
    ACID_VERSION_MARKER,
    AcidDir,
    BaseDir,
    BucketFile,
    DeltaDir,
    is_hidden,
    parse_bucket_file,
    parse_directory,
    parse_side_file,
    side_file_name,
    sort_deltas,
)
from versioned.layouts.acid.errors import AcidNameError

# Names from Hive's tests (research doc section 1.1).
NAMES = [
    ("delta_0000001_0000001_0000", DeltaDir(1, 1, 0)),
    ("delta_0000002_0000003", DeltaDir(2, 3)),
    ("base_0000005_v0000025", BaseDir(5, 25)),
    ("delta_0000005_0000005_0009", DeltaDir(5, 5, 9)),
    ("base_0000005", BaseDir(5)),
    ("delete_delta_0000004_0000004_0000", DeltaDir(4, 4, 0, delete=True)),
    ("delete_delta_0000001_0000010_v0000030", DeltaDir(1, 10, None, 30, delete=True)),
    ("delta_0000001_0000010_v0000030", DeltaDir(1, 10, None, 30)),
    ("delta_0000007_0000007_0002_v0000040", DeltaDir(7, 7, 2, 40)),
    ("base_12345678", BaseDir(12345678)),
]


@pytest.mark.parametrize(("name", "parsed"), NAMES)
def test_names_format_and_parse_as_hive_writes_them(name: str, parsed: AcidDir) -> None:
    assert parse_directory(name) == parsed
    assert parsed.name == name


def test_visibility_zero_means_no_suffix_and_every_base_is_compacted() -> None:
    """Compaction writes ``base_W`` (issue 28 item 3); a ``_vT`` name of an earlier release
    still parses, and both are a compactor's base."""
    assert BaseDir(5, 0).name == "base_0000005"
    assert BaseDir(5, 0).compacted
    assert BaseDir(5, 1).compacted
    parsed = parse_directory("base_0000005")
    assert isinstance(parsed, BaseDir) and parsed.compacted


def test_an_insert_overwrite_base_has_the_same_name_but_keeps_its_history() -> None:
    overwrite = BaseDir(5, insert_overwrite=True)
    assert overwrite.name == "base_0000005" and not overwrite.compacted
    with pytest.raises(AcidNameError, match="INSERT OVERWRITE"):
        BaseDir(5, 9, insert_overwrite=True)


@pytest.mark.parametrize(
    "name", ["delta_1_1", "base_5", "delta_0000001_0000001_1", "base_0000005_v25", "delta_x_y"]
)
def test_unpadded_or_malformed_acid_names_are_refused(name: str) -> None:
    with pytest.raises(AcidNameError, match=name):
        parse_directory(name)


@pytest.mark.parametrize("name", ["000000_0", "p=1", "_tmp.abc", "deltas", "basement"])
def test_other_names_are_not_acid_directories(name: str) -> None:
    assert parse_directory(name) is None


def test_invalid_directories_cannot_be_built() -> None:
    with pytest.raises(AcidNameError, match="empty"):
        DeltaDir(5, 4)
    with pytest.raises(AcidNameError, match="non-negative"):
        BaseDir(-1)
    with pytest.raises(AcidNameError, match="%04d"):
        DeltaDir(1, 1, 10000)


def test_bucket_files_and_side_files() -> None:
    assert BucketFile(0).name == "bucket_00000"
    assert BucketFile(3, 0).name == "bucket_00003_0"
    assert parse_bucket_file("bucket_00000_0") == BucketFile(0, 0)
    assert parse_bucket_file("bucket_00042") == BucketFile(42)
    assert parse_bucket_file("bucket_00000_flush_length") is None
    assert parse_bucket_file(ACID_VERSION_MARKER) is None
    assert side_file_name(1) == "bucket_00001_flush_length"
    assert BucketFile(7).side_file_name == "bucket_00007_flush_length"
    assert parse_side_file("bucket_00007_flush_length") == 7
    assert parse_side_file("bucket_00007") is None
    with pytest.raises(AcidNameError, match="padded"):
        parse_bucket_file("bucket_1")


def test_marker_and_hidden_names() -> None:
    assert ACID_VERSION_MARKER == "_orc_acid_version"
    assert ACID_VERSION_CONTENT == b"2"
    assert is_hidden(ACID_VERSION_MARKER)
    assert is_hidden(".bucket_00000.crc")
    assert not is_hidden("bucket_00000")
    assert not is_hidden("delta_0000001_0000001")


def test_deltas_sort_as_acid_utils_sorts_them() -> None:
    names = [
        "delta_0000011_0000020",
        "delta_0000005_0000010",
        "delta_0000051_0000060",
        "delta_0000005_0000020",
        "delta_0000005_0000020_0001",
        "delete_delta_0000005_0000020",
        "delta_0000005_0000020_0000",
    ]
    deltas = [parse_directory(n) for n in names]
    ordered = [d.name for d in sort_deltas(deltas)]  # type: ignore[arg-type]
    assert ordered == [
        "delete_delta_0000005_0000020",  # same range and statement: by name
        "delta_0000005_0000020",  # no statement (-1) before statement 0
        "delta_0000005_0000020_0000",
        "delta_0000005_0000020_0001",
        "delta_0000005_0000010",  # same min: wider first
        "delta_0000011_0000020",
        "delta_0000051_0000060",
    ]


def test_side_files_only_in_open_streaming_deltas() -> None:
    assert DeltaDir(2, 3).may_contain_side_file
    assert not DeltaDir(2, 2).may_contain_side_file
    assert not DeltaDir(2, 3, delete=True).may_contain_side_file
    assert not DeltaDir(2, 3, visibility_txn_id=9).may_contain_side_file
    # A minor compaction's unsuffixed delta_2_3 may be a streaming batch's by its name alone
    # (as in Hive 3): its readers look for a side file and find none.
    assert DeltaDir(2, 3, None, 0).may_contain_side_file
