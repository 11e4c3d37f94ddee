"""Which unlisted files of an acid table belong to a write still open
(`versioned.layouts.acid.engine.vacuum.open_write_id_paths`, `folders_marked_now`), without
Spark."""

from __future__ import annotations

from pathlib import Path

from versioned.layouts.acid.compacted_dirs import compactor_mark
from versioned.layouts.acid.engine.vacuum import folders_marked_now, open_write_id_paths
from versioned.storage.filesystem import FileIO


def test_files_named_by_an_open_write_id_are_in_progress() -> None:
    in_progress = open_write_id_paths(frozenset({5}))
    assert in_progress("p=a/delta_0000005_0000005_0000/bucket_00000")
    assert in_progress("p=a/delete_delta_0000005_0000005_0000/bucket_00000")
    assert not in_progress("p=a/delta_0000004_0000004_0000/bucket_00000")
    assert not in_progress("p=a/base_0000005_v0000009/bucket_00000")  # a compactor's: by T
    # since issue 28 a compactor's folder is named by write ids, all below every open one:
    # vacuum goes by its mark instead (`compacted_dirs.marked_folders`)
    assert not in_progress("p=a/base_0000004/bucket_00000")
    assert not in_progress("p=a/delta_0000001_0000004/bucket_00000")


def test_the_tombstone_file_of_an_open_write_id_is_in_progress() -> None:
    """A writer's tombstones are a file, not a directory, named like its delete delta."""
    in_progress = open_write_id_paths(frozenset({5}))
    assert in_progress("p=a/_tombstones/delete_delta_0000005_0000005_0000.orc")
    assert in_progress("_tombstones/delete_delta_0000005_0000005_0000.orc")  # unpartitioned
    assert not in_progress("p=a/_tombstones/delete_delta_0000004_0000004_0000.orc")
    assert not in_progress("p=a/_tombstones/base_0000005_v0000009.orc")
    assert not in_progress("p=a/delete_delta_0000005_0000005_0000.orc")  # not a tombstone


def test_a_file_of_a_folder_marked_by_now_is_left_to_the_next_vacuum(tmp_path: Path) -> None:
    """A compactor's folder moved into place file by file (object stores) has its mark first:
    a file the table's listing caught without the mark is checked again, and kept."""
    fio = FileIO.for_root(str(tmp_path))
    fio.write_bytes_atomic("t/p=a/base_0000004/_key_bloom_0.bin", b"k")
    fio.write_bytes_atomic("t/p=a/delta_0000003_0000003_0000/bucket_00000", b"o")
    fio.write_bytes_atomic("t/_staging/txn=9/compacted/p=a/base_0000004/bucket_00000", b"s")
    being_placed = folders_marked_now(fio, "t")
    assert not being_placed("p=a/base_0000004/_key_bloom_0.bin")  # no mark there (yet)
    fio.write_bytes_atomic(f"t/p=a/base_0000007/{compactor_mark(12)}", b"")
    fio.write_bytes_atomic("t/p=a/base_0000007/_key_bloom_0.bin", b"k")
    assert being_placed("p=a/base_0000007/_key_bloom_0.bin")
    assert not being_placed("p=a/delta_0000003_0000003_0000/bucket_00000")
    # a compactor's own staging folder is not Hive's to see: vacuum goes by its txn there
    assert not being_placed("_staging/txn=9/compacted/p=a/base_0000004/bucket_00000")
    assert not being_placed("_key_bloom_0.bin")
