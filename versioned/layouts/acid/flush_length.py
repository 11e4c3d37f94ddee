"""Streaming side files, ``bucket_N_flush_length`` (ORC's ``OrcAcidUtils``).

While a streaming batch (``delta_x_y``, x != y) is open, each commit flushes its bucket files
and records the flushed length as one more 8-byte big-endian long in the bucket's side file.
Readers read a bucket file only up to the last recorded length, so uncommitted (or torn)
bytes after it are never seen. A torn trailing record (fewer than 8 bytes, from a writer that
died mid-append) is ignored, as ``OrcAcidUtils.getLastFlushLength`` does; a side file without
a single complete record is unreadable (Hive: "found but is not readable").

`FileIO` offers no append, so `FlushLengthFile` rewrites the whole side file atomically on each
append: the same bytes as Hive's appends, and never a torn record of ours.
"""

from __future__ import annotations

import posixpath
import struct

from versioned.layouts.acid.directories import (
    DeltaDir,
    parse_bucket_file,
    parse_directory,
    side_file_name,
)
from versioned.layouts.acid.errors import FlushLengthError
from versioned.storage.filesystem import FileIO

RECORD = struct.Struct(">q")


def encode_flush_lengths(lengths: list[int] | tuple[int, ...]) -> bytes:
    """The side file's bytes for ``lengths`` (each an 8-byte big-endian long)."""
    for length in lengths:
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise FlushLengthError(f"a flush length must be an int >= 0, got {length!r}")
    return b"".join(RECORD.pack(length) for length in lengths)


def parse_flush_lengths(data: bytes) -> tuple[int, ...]:
    """Every complete record of a side file, in order; a torn trailing record is dropped."""
    complete = len(data) - len(data) % RECORD.size
    return tuple(RECORD.unpack_from(data, i)[0] for i in range(0, complete, RECORD.size))


def last_flush_length(data: bytes) -> int | None:
    """The last complete length of a side file's bytes, or ``None`` if there is none."""
    lengths = parse_flush_lengths(data)
    return lengths[-1] if lengths else None


def side_file_path(bucket_rel: str) -> str:
    """The side file of a bucket file path (``.../bucket_00001`` -> ``..._flush_length``).

    Raises:
        FlushLengthError: The path does not end in a bucket file name.
    """
    folder, name = posixpath.split(bucket_rel)
    bucket = parse_bucket_file(name)
    if bucket is None or bucket.attempt is not None:
        raise FlushLengthError(f"{bucket_rel!r} is not a streaming bucket file", path=bucket_rel)
    return posixpath.join(folder, side_file_name(bucket.bucket_id))


def logical_length(fileio: FileIO, bucket_rel: str) -> int:
    """How many bytes of a bucket file readers may read (``AcidUtils.getLogicalLength``).

    The file's size, unless it is in a delta that may hold side files (see
    `DeltaDir.may_contain_side_file`) and its side file exists: then the last recorded
    length.

    Raises:
        FlushLengthError: The side file exists but holds no complete length, or records a
            length beyond the file's end.
    """
    folder = posixpath.basename(posixpath.dirname(bucket_rel))
    parsed = parse_directory(folder)
    if not isinstance(parsed, DeltaDir) or not parsed.may_contain_side_file:
        return fileio.size(bucket_rel)
    side = side_file_path(bucket_rel)
    if not fileio.exists(side):
        return fileio.size(bucket_rel)
    length = last_flush_length(fileio.read_bytes(side))
    if length is None:
        raise FlushLengthError(
            f"{side} found but is not readable; wait for its writer to flush, or recover the "
            "file (Hive: orcfiledump --recover)",
            path=side,
        )
    size = fileio.size(bucket_rel)
    if length > size:
        raise FlushLengthError(
            f"{side} records {length} bytes but {bucket_rel} has only {size}", path=side
        )
    return length


class FlushLengthFile:
    """The side file of one bucket file of an open streaming delta."""

    def __init__(self, fileio: FileIO, bucket_rel: str) -> None:
        self._fileio = fileio
        self.path = side_file_path(bucket_rel)
        self._lengths: list[int] = []

    @property
    def lengths(self) -> tuple[int, ...]:
        """The lengths recorded so far by this writer."""
        return tuple(self._lengths)

    def append(self, length: int) -> None:
        """Record one more flushed length (after a commit's flush of the bucket file).

        Raises:
            FlushLengthError: ``length`` is smaller than the last one recorded.
        """
        if self._lengths and length < self._lengths[-1]:
            raise FlushLengthError(
                f"flush length {length} is below the last recorded {self._lengths[-1]}",
                path=self.path,
            )
        data = encode_flush_lengths([*self._lengths, length])
        self._fileio.write_bytes_atomic(self.path, data)
        self._lengths.append(length)

    def delete(self) -> None:
        """Remove the side file (the batch closed: the bucket file is complete)."""
        self._fileio.delete_file(self.path, missing_ok=True)
