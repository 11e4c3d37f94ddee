"""Streaming side files: 8-byte big-endian lengths, torn records, logical length."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from versioned.layouts.acid.bucket_codec import encode_bucket_property
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.errors import FlushLengthError
from versioned.layouts.acid.flush_length import (
    FlushLengthFile,
    encode_flush_lengths,
    last_flush_length,
    logical_length,
    parse_flush_lengths,
    side_file_path,
)
from versioned.layouts.acid.orc_files import AcidBucketWriter, read_bucket_file
from versioned.layouts.acid.paths import bucket_file_path
from versioned.schema import Column
from versioned.storage.filesystem import FileIO


def test_records_are_8_byte_big_endian_longs() -> None:
    assert encode_flush_lengths([0, 300]) == b"\x00" * 8 + b"\x00\x00\x00\x00\x00\x00\x01\x2c"
    assert encode_flush_lengths([1 << 40]) == struct.pack(">q", 1 << 40)
    assert parse_flush_lengths(encode_flush_lengths([5, 9, 1 << 33])) == (5, 9, 1 << 33)
    with pytest.raises(FlushLengthError):
        encode_flush_lengths([-1])


def test_a_torn_last_record_is_ignored() -> None:
    data = encode_flush_lengths([100, 250])
    for cut in range(1, 8):
        assert last_flush_length(data + encode_flush_lengths([999])[:cut]) == 250
    assert last_flush_length(data[:-3]) == 100
    assert last_flush_length(data[:5]) is None
    assert last_flush_length(b"") is None


def test_side_file_paths() -> None:
    assert side_file_path("p=1/delta_0000001_0000002/bucket_00003") == (
        "p=1/delta_0000001_0000002/bucket_00003_flush_length"
    )
    with pytest.raises(FlushLengthError):
        side_file_path("p=1/delta_0000001_0000002/_orc_acid_version")


def _streaming_file(fileio: FileIO, rel: str, commits: int) -> list[int]:
    cols = [Column("id", "INT")]
    side = FlushLengthFile(fileio, rel)
    lengths = []
    with fileio.open_output_atomic(rel) as out:
        writer = AcidBucketWriter(
            out, cols, bucket_property=encode_bucket_property(0), streaming=True
        )
        for w in range(1, commits + 1):
            writer.insert(w, pa.table({"id": pa.array([w], pa.int32())}))
            length = writer.flush()
            side.append(length)
            lengths.append(length)
        writer.insert(commits + 1, pa.table({"id": pa.array([0], pa.int32())}))  # not committed
        writer.close()
    return lengths


def test_logical_length_is_the_last_recorded_flush(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    delta = DeltaDir(1, 3)
    rel = bucket_file_path("p=1", delta, 0)
    lengths = _streaming_file(fileio, rel, 2)
    assert parse_flush_lengths(fileio.read_bytes(side_file_path(rel))) == tuple(lengths)
    assert logical_length(fileio, rel) == lengths[-1] < fileio.size(rel)
    with fileio.open_input(rel) as handle:
        events = read_bucket_file(handle, length=logical_length(fileio, rel)).events
    assert events.column("currentTransaction").to_pylist() == [1, 2]  # write id 3 unseen
    # A torn record appended by a writer that died mid-write does not move the length.
    torn = fileio.read_bytes(side_file_path(rel)) + b"\x00\x00\x01"
    fileio.write_bytes_atomic(side_file_path(rel), torn)
    assert logical_length(fileio, rel) == lengths[-1]


def test_logical_length_without_a_side_file_is_the_file_size(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    rel = bucket_file_path("", DeltaDir(1, 3), 0)
    _streaming_file(fileio, rel, 1)
    FlushLengthFile(fileio, rel).delete()  # the batch closed
    assert not fileio.exists(side_file_path(rel))
    assert logical_length(fileio, rel) == fileio.size(rel)


def test_side_files_are_ignored_where_hive_never_writes_them(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    for delta in (DeltaDir(2, 2), DeltaDir(1, 3, delete=True), DeltaDir(1, 3, None, 9)):
        rel = bucket_file_path("", delta, 0)
        fileio.write_bytes_atomic(rel, b"x" * 40)
        fileio.write_bytes_atomic(side_file_path(rel), encode_flush_lengths([8]))
        assert logical_length(fileio, rel) == 40


def test_unreadable_side_files_fail_clearly(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    rel = bucket_file_path("", DeltaDir(1, 3), 0)
    fileio.write_bytes_atomic(rel, b"x" * 40)
    fileio.write_bytes_atomic(side_file_path(rel), b"\x00\x00")
    with pytest.raises(FlushLengthError, match="not readable"):
        logical_length(fileio, rel)
    fileio.write_bytes_atomic(side_file_path(rel), encode_flush_lengths([41]))
    with pytest.raises(FlushLengthError, match="has only 40"):
        logical_length(fileio, rel)


def test_lengths_only_grow(tmp_path: Path) -> None:
    fileio = FileIO.for_root(str(tmp_path))
    side = FlushLengthFile(fileio, "delta_0000001_0000002/bucket_00000")
    side.append(10)
    side.append(10)
    with pytest.raises(FlushLengthError, match="below"):
        side.append(9)
    assert side.lengths == (10, 10)
    assert fileio.read_bytes(side.path) == encode_flush_lengths([10, 10])
    assert io.BytesIO(fileio.read_bytes(side.path)).read(8) == struct.pack(">q", 10)
