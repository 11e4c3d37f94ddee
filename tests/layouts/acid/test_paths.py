"""Paths of the acid layout: partition + directory + bucket file, and the version marker."""

from __future__ import annotations

from pathlib import Path

from versioned.layouts.acid.directories import BaseDir, DeltaDir
from versioned.layouts.acid.paths import (
    acid_dir_path,
    bucket_file_path,
    marker_path,
    partition_dir,
    read_acid_version,
    side_file_rel,
    write_acid_version_marker,
)
from versioned.storage.filesystem import FileIO


def test_paths_under_escaped_partitions_and_unpartitioned() -> None:
    part = partition_dir(["continent", "country"], ["Asia", "In/dia"])
    assert part == "continent=Asia/country=In%2Fdia"
    delta = DeltaDir(2, 3)
    assert acid_dir_path(part, delta) == "continent=Asia/country=In%2Fdia/delta_0000002_0000003"
    assert bucket_file_path("", delta, 0) == "delta_0000002_0000003/bucket_00000"
    assert bucket_file_path("p=1/", DeltaDir(1, 1, 0), 0, attempt=0) == (
        "p=1/delta_0000001_0000001_0000/bucket_00000_0"
    )
    assert bucket_file_path("", BaseDir(5), 0) == "base_0000005/bucket_00000"  # compaction's
    # an earlier release's compacted base (Hive 4's _vT suffix)
    assert bucket_file_path("", BaseDir(5, 25), 0) == "base_0000005_v0000025/bucket_00000"
    assert side_file_rel("", delta, 1) == "delta_0000002_0000003/bucket_00001_flush_length"
    assert marker_path("p=1", delta) == "p=1/delta_0000002_0000003/_orc_acid_version"
    assert partition_dir([], []) == ""
    assert partition_dir(["p"], [None]) == "p=__HIVE_DEFAULT_PARTITION__"


def test_version_marker_contains_2(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    delta = DeltaDir(1, 1, 0, delete=True)
    assert read_acid_version(fileio, "p=1", delta) is None
    rel = write_acid_version_marker(fileio, "p=1", delta)
    assert (tmp_path / rel).read_bytes() == b"2"
    assert read_acid_version(fileio, "p=1", delta) == 2
