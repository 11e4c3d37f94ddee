"""Where layout 1 puts its files, relative to the table location.

```
<partition path>/version_id=<V>/part-*.parquet                 data rows written by version V
_index/<partition path>/version_id=<V>/index-<u>.parquet       version-index entries of V
_index/<partition path>/version_id=<V>/_bloom-<u>.bin          Bloom filter over V's keys
```

A compaction rewrites a partition into the version of its head (the high-water mark ``hwm``),
so the files it writes go into ``version_id=<hwm>`` folders beside the files they replace, each
named for the compaction's transaction C (`compacted_name`: ``txn=C-part-*.parquet``,
``_txn=C-bloom-<u>.bin``): vacuum tells from the name which transaction wrote it.

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


def compacted_name(txn_id: int, name: str) -> str:
    """``name`` of a file written by compaction ``txn_id``: ``txn=<id>-<name>`` (hidden names
    stay hidden: ``_txn=<id>-<rest>``)."""
    if name.startswith("_"):
        return f"_txn={txn_id}-{name[1:]}"
    return f"txn={txn_id}-{name}"


def version_of(path: str) -> int | None:
    """The version a file path belongs to (its ``version_id=N`` segment), or ``None``."""
    for segment in reversed(path.split("/")):
        match = _VERSION_SEGMENT.match(segment)
        if match:
            return int(match.group(1))
    return None
