"""What a compaction's folder holds besides its bucket files
(`versioned.layouts.acid.compacted_dirs`), without Spark."""

from __future__ import annotations

import json
from pathlib import Path

from versioned.layouts.acid.compacted_dirs import (
    COMPACTED_METADATA,
    METADATA_FILE,
    compaction_markers,
    compactor_mark,
    compactor_of,
    marked_folders,
    write_compaction_markers,
)
from versioned.layouts.acid.directories import BaseDir, DeltaDir, is_hidden
from versioned.storage.filesystem import FileIO


def test_a_compacted_base_carries_hive_3_s_metadata_file() -> None:
    """Hive 3's ``AcidUtils.MetaDataFile``: without it Hive 3 takes ``base_W`` for an INSERT
    OVERWRITE base."""
    assert METADATA_FILE == "_metadata_acid"
    assert COMPACTED_METADATA == b'{"thisFileVersion":"0","dataFormat":"compacted"}'
    assert json.loads(COMPACTED_METADATA) == {"thisFileVersion": "0", "dataFormat": "compacted"}
    assert compaction_markers(BaseDir(5), 12) == {
        "_orc_acid_version": b"2",
        "_versioned_compactor_txn=12": b"",
        "_metadata_acid": COMPACTED_METADATA,
    }
    minor = compaction_markers(DeltaDir(1, 5, delete=True), 12)
    assert minor == {"_orc_acid_version": b"2", "_versioned_compactor_txn=12": b""}
    assert all(is_hidden(name) for name in compaction_markers(BaseDir(5), 12))


def test_markers_are_written_where_the_manifest_will_list_them(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    written = write_compaction_markers(fileio, "t/_staging/txn=12/compacted", "p=a", BaseDir(5), 12)
    assert written == {
        "p=a/base_0000005/_orc_acid_version": 1,
        "p=a/base_0000005/_versioned_compactor_txn=12": 0,
        "p=a/base_0000005/_metadata_acid": len(COMPACTED_METADATA),
    }
    folder = tmp_path / "t/_staging/txn=12/compacted/p=a/base_0000005"
    assert (folder / "_metadata_acid").read_bytes() == COMPACTED_METADATA
    assert (folder / "_orc_acid_version").read_bytes() == b"2"
    assert sorted(p.name for p in folder.iterdir()) == sorted(n.rpartition("/")[2] for n in written)


def test_the_mark_names_the_compactor() -> None:
    assert compactor_of(["bucket_00000", compactor_mark(7), "_orc_acid_version"]) == 7
    assert compactor_of(["bucket_00000", "_orc_acid_version"]) is None
    assert compactor_of(["_versioned_compactor_txn=x"]) is None


def test_unlisted_files_of_a_marked_compaction_folder_go_together() -> None:
    unlisted = [
        "p=a/base_0000005/_versioned_compactor_txn=9",
        "p=a/base_0000005/bucket_00000",
        "p=a/base_0000005/_metadata_acid",
        "p=a/delta_0000006_0000006_0000/bucket_00000",  # a crashed writer's: no mark
        "delta_0000001_0000004/_versioned_compactor_txn=9",  # unpartitioned minor output
        "delta_0000001_0000004/bucket_00001",
        # the compactor's own staging copy: hidden from Hive, vacuumed by its txn=N
        "_staging/txn=9/compacted/p=a/base_0000005/_versioned_compactor_txn=9",
        "_staging/txn=9/compacted/p=a/base_0000005/bucket_00000",
        "p=a/_tombstones/base_0000005_v0000009.orc",
    ]
    assert marked_folders(unlisted) == {
        "p=a/base_0000005/_versioned_compactor_txn=9": "p=a/base_0000005",
        "p=a/base_0000005/bucket_00000": "p=a/base_0000005",
        "p=a/base_0000005/_metadata_acid": "p=a/base_0000005",
        "delta_0000001_0000004/_versioned_compactor_txn=9": "delta_0000001_0000004",
        "delta_0000001_0000004/bucket_00001": "delta_0000001_0000004",
    }
    assert marked_folders(["p=a/notacid/_versioned_compactor_txn=9"]) == {}
