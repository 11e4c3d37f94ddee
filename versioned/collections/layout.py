"""Where a collection's files may be: rules every partition and file path must follow.

A partitioned collection keeps each partition's files directly in its Hive-escaped ``k=v/...``
directory (so ``spark.read.parquet(folder)`` restores the partition columns); an unpartitioned
one keeps them in the folder itself. File names must not be hidden (Spark would skip them), and
no path may be absolute, a URI, or climb with ``..``: a collection is untrusted input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from versioned.collections.errors import CollectionError
from versioned.errors import UnsafePathError
from versioned.storage.partition_paths import partition_path

if TYPE_CHECKING:
    from versioned.collections.metadata import CollectionFile, CollectionPartition

_MAX_SEGMENT_BYTES = 255


def safe_relative_path(path: str) -> str:
    """``path`` if it is a plain relative path that cannot leave its folder.

    Raises:
        UnsafePathError: ``path`` is absolute, a URI, empty, or has a ``..``, ``.`` or empty
            segment, a backslash or a NUL.
    """
    if (
        not isinstance(path, str)
        or not path
        or "\x00" in path
        or "\\" in path
        or "://" in path
        or path.startswith("/")
    ):
        raise UnsafePathError(
            f"file path {path!r} in the metadata is not a relative path inside the collection; "
            "nothing was read",
            path=path,
        )
    if any(s in ("", ".", "..") for s in path.split("/")):
        raise UnsafePathError(
            f"file path {path!r} in the metadata could leave the collection folder ('..', '.' "
            "or an empty segment); nothing was read",
            path=path,
        )
    return path


def check_partitions(
    partition_by: tuple[str, ...], partitions: tuple[CollectionPartition, ...]
) -> None:
    """Check every partition's values, directory and files.

    Raises:
        CollectionError: A directory is not the escaped form of its values, a file is not
            directly in its partition's directory or is hidden, a size or count is invalid,
            or something is listed twice.
        UnsafePathError: A file path could leave the folder.
    """
    if not partition_by and len(partitions) > 1:
        raise CollectionError("a collection without partition columns holds one partition")
    seen_paths: set[str] = set()
    seen_files: set[str] = set()
    for part in partitions:
        if len(part.values) != len(partition_by):
            raise CollectionError(
                f"partition {part.path!r} has {len(part.values)} values for "
                f"{len(partition_by)} partition columns"
            )
        for value in part.values:
            if value is not None and (not isinstance(value, str) or "\x00" in value):
                raise CollectionError(
                    f"partition value {value!r} must be a string without NUL, or null",
                    value=repr(value),
                )
        normalised = tuple(None if v == "" else v for v in part.values)
        expected = partition_path(partition_by, normalised)
        if part.path != expected:
            raise CollectionError(
                f"partition directory {part.path!r} is not the escaped form {expected!r} of its "
                f"values {list(part.values)!r}",
                path=part.path,
            )
        for segment in expected.split("/") if expected else ():
            if len(segment.encode("utf-8")) > _MAX_SEGMENT_BYTES:
                raise CollectionError(
                    f"partition directory {segment[:40]!r}... is longer than "
                    f"{_MAX_SEGMENT_BYTES} bytes"
                )
        if expected in seen_paths:
            raise CollectionError(f"partition {expected!r} is listed twice")
        seen_paths.add(expected)
        for f in part.files:
            _check_file(f, expected)
            if f.path in seen_files:
                raise CollectionError(f"file {f.path!r} is listed twice", path=f.path)
            seen_files.add(f.path)


def _check_file(f: CollectionFile, directory: str) -> None:
    safe_relative_path(f.path)
    parent, _, name = f.path.rpartition("/")
    if parent != directory:
        raise CollectionError(
            f"file {f.path!r} is not directly inside its partition's directory "
            f"{directory or '(the collection folder)'!r}",
            path=f.path,
        )
    if name.startswith(("_", ".")):
        raise CollectionError(
            f"file {f.path!r} is hidden (starts with '_' or '.'): Spark would not read it",
            path=f.path,
        )
    for number, what in ((f.size_bytes, "size"), (f.row_count, "row count")):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise CollectionError(f"file {f.path!r} has an invalid {what} {number!r}")
