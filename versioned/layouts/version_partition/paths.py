"""Where layout 1 puts its files, relative to the table location.

```
<partition path>/version_id=<V>/part-*.parquet                 data rows written by version V
_index/<partition path>/version_id=<V>/index-<u>.parquet       version-index entries of V
_index/<partition path>/version_id=<V>/_bloom-<u>.bin          Bloom filter over V's keys
```

A compaction rewrites a partition into the version of its head (the high-water mark ``hwm``),
into folders of its own transaction C inside that version's (`compacted_dir`):

```
<partition path>/version_id=<hwm>/compacted-<C>/part-*.parquet
_index/<partition path>/version_id=<hwm>/compacted-<C>/_bloom-<u>.bin (and index-<u>.parquet)
```

Spark's partition discovery skips the ``compacted-<C>`` segment (no ``=``), so the rows read
as version ``hwm``; every folder still holds only the files of the one transaction that wrote
it (the SQL views register folders), and vacuum tells its transaction from its name.

The index lives in its own tree under ``_index/`` that mirrors the partition tree, so Spark
derives the partition values and version of an index entry from its path exactly as it does
for data rows (no partition column is stored twice), and a scan of the data never meets an
index file (``_index`` is hidden). Bloom files start with ``_`` so a scan of an index
directory skips them. Names carry a fresh uuid so a retried or concurrent write never
overwrites a file that another (possibly committed) attempt wrote.
"""

from __future__ import annotations

import re
import uuid

VERSION_KEY = "version_id"
INDEX_DIR = "_index"
COMPACTED_PREFIX = "compacted-"
_VERSION_SEGMENT = re.compile(rf"^{VERSION_KEY}=(\d+)$")


def version_dir(partition_path: str, version: int) -> str:
    """``<partition_path>/version_id=<version>``; just the last part when unpartitioned.

    Args:
        partition_path: Escaped partition path (``""`` for an unpartitioned table).
        version: The version (a non-negative transaction id).

    Raises:
        ValueError: ``version`` is not a non-negative int.
    """
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"version must be a non-negative int, got {version!r}")
    segment = f"{VERSION_KEY}={version}"
    prefix = partition_path.strip("/")
    return f"{prefix}/{segment}" if prefix else segment


def index_dir(partition_path: str, version: int) -> str:
    """``_index/<partition_path>/version_id=<version>``: where a version's index files go."""
    return f"{INDEX_DIR}/{version_dir(partition_path, version)}"


def index_file_name() -> str:
    """A fresh name for a version-index file, relative to its index directory."""
    return f"index-{uuid.uuid4().hex}.parquet"


def bloom_file_name() -> str:
    """A fresh (hidden) name for a Bloom-filter file, relative to its index directory."""
    return f"_bloom-{uuid.uuid4().hex}.bin"


def compacted_dir(version_folder: str, txn_id: int) -> str:
    """``<version_folder>/compacted-<txn_id>``: where compaction ``txn_id`` writes the files of
    the version it compacted (``version_folder``: `version_dir` or `index_dir`)."""
    return f"{version_folder}/{COMPACTED_PREFIX}{txn_id}"


def version_folder(directory: str) -> str:
    """The ``version_id=N`` folder of a file's directory (a compaction's folder is inside)."""
    head, _, last = directory.rpartition("/")
    return head if last.startswith(COMPACTED_PREFIX) else directory


def version_of(path: str) -> int | None:
    """The version a file path belongs to (its ``version_id=N`` segment), or ``None``."""
    for segment in reversed(path.split("/")):
        match = _VERSION_SEGMENT.match(segment)
        if match:
            return int(match.group(1))
    return None
