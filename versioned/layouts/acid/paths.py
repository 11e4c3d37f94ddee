"""Where the acid layout puts its files, relative to the table location::

    <partition path>/<base_ or delta_ or delete_delta_ dir>/bucket_NNNNN
    <partition path>/<dir>/_orc_acid_version                     contents "2"

Partition paths are escaped exactly as layout 1 escapes them
(`versioned.storage.partition_paths.partition_path`).
"""

from __future__ import annotations

from collections.abc import Sequence

from versioned.layouts.acid.directories import (
    ACID_VERSION_CONTENT,
    ACID_VERSION_MARKER,
    AcidDir,
    BucketFile,
    side_file_name,
)
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path


def acid_dir_path(partition: str, directory: AcidDir) -> str:
    """``<partition>/<directory name>``; just the name when unpartitioned (``partition=""``)."""
    prefix = partition.strip("/")
    return f"{prefix}/{directory.name}" if prefix else directory.name


def bucket_file_path(
    partition: str, directory: AcidDir, bucket_id: int, attempt: int | None = None
) -> str:
    """``<partition>/<directory>/bucket_%05d[_attempt]``."""
    return f"{acid_dir_path(partition, directory)}/{BucketFile(bucket_id, attempt).name}"


def side_file_rel(partition: str, directory: AcidDir, bucket_id: int) -> str:
    """``<partition>/<directory>/bucket_%05d_flush_length``."""
    return f"{acid_dir_path(partition, directory)}/{side_file_name(bucket_id)}"


def marker_path(partition: str, directory: AcidDir) -> str:
    """``<partition>/<directory>/_orc_acid_version``."""
    return f"{acid_dir_path(partition, directory)}/{ACID_VERSION_MARKER}"


def partition_dir(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """The escaped partition path of partition ``values`` (``""`` when unpartitioned)."""
    return partition_path(keys, values)


def write_acid_version_marker(fileio: FileIO, partition: str, directory: AcidDir) -> str:
    """Write the ``_orc_acid_version`` marker (``2``) into a directory; returns its path."""
    rel = marker_path(partition, directory)
    fileio.write_bytes_atomic(rel, ACID_VERSION_CONTENT)
    return rel


def read_acid_version(fileio: FileIO, partition: str, directory: AcidDir) -> int | None:
    """The ACID format version a directory's marker declares, or ``None`` without a marker.

    Hive reads the marker's first byte as the version number.
    """
    rel = marker_path(partition, directory)
    if not fileio.exists(rel):
        return None
    data = fileio.read_bytes(rel)[:1]
    return int(data) if data.isdigit() else None
