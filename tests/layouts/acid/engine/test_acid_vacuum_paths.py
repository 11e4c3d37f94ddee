"""Which unlisted files of an acid table belong to a write still open
(`versioned.layouts.acid.engine.vacuum.open_write_id_paths`), without Spark."""

from __future__ import annotations

from versioned.layouts.acid.engine.vacuum import open_write_id_paths


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
