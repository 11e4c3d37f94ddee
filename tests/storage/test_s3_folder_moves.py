"""An acid compaction folder moved on a real S3 server (moto's, on loopback), where a move is
a copy and a delete per object (`versioned.layouts.acid.engine.placement.move_folder`): the
compactor's mark reaches the new place before any other file and leaves the old one after
all of them, so whatever a fault leaves half-moved is marked at both ends, an orphan of its
compactor and never "files no versioned compactor wrote" (issue 46)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.support.s3_server import S3Server, serving_bucket
from versioned.errors import StorageError
from versioned.layouts.acid.compacted_dirs import compactor_mark
from versioned.layouts.acid.engine.placement import move_folder
from versioned.storage.filesystem import FileIO

MARK = compactor_mark(41)
STORES = ("PutObject", "CompleteMultipartUpload", "CopyObject", "DeleteObject")
"""What changes a key: a file stored (one PUT, or pyarrow's multipart upload's end), copied or
deleted."""
FOLDER = [
    "_key_bloom_00000.bin",
    "_metadata_acid",
    "_orc_acid_version",
    MARK,
    "bucket_00000",
    "bucket_00001",
]


@pytest.fixture()
def s3(tmp_path: Path) -> Iterator[S3Server]:
    with serving_bucket(tmp_path / "s3") as server:
        yield server


def test_the_mark_is_copied_first_and_deleted_last(s3: S3Server) -> None:
    fio = FileIO.for_root("s3://lake/wh")
    src, dst = "t/_staging/txn=41/compacted/p=a/base_0000007", "t/p=a/base_0000007"
    for name in FOLDER:
        fio.write_bytes_atomic(f"{src}/{name}", name.encode())
    s3.reset_log()
    move_folder(fio, src, dst)
    assert fio.list_files(src) == []
    assert [s.path.rpartition("/")[2] for s in fio.list_files(dst)] == FOLDER
    assert all(fio.read_bytes(f"{dst}/{n}") == n.encode() for n in FOLDER)
    writes = [
        ("stored" if r.kind in STORES[:2] else r.kind, unquote(r.path.rpartition("/")[2]))
        for r in s3.requests()
        if r.kind in STORES and not r.path.endswith("/")
    ]  # pyarrow re-creates the parent "folder" (an empty ``prefix/`` object) after a delete
    assert writes[0] == ("stored", MARK), writes  # at the new place before anything
    assert writes[-1] == ("DeleteObject", MARK), writes  # from the old place after all
    assert s3.counts()["CreateMultipartUpload"] == 0  # small files: one PUT each
    copies = [name for kind, name in writes if kind == "CopyObject"]
    assert sorted(copies) == sorted(n for n in FOLDER if n != MARK)


def test_moving_a_folder_that_is_gone_says_not_found(s3: S3Server) -> None:
    fio = FileIO.for_root("s3://lake/wh")
    with pytest.raises(StorageError) as raised:
        move_folder(fio, "t/p=a/base_0000009", "t/_staging/aside/p=a/base_0000009")
    assert getattr(raised.value, "not_found", False)
    with pytest.raises(StorageError) as single:
        fio.move("t/p=a/base_0000009/bucket_00000", "t/elsewhere")  # a key: CopyObject 404
    assert getattr(single.value, "not_found", False), single.value
