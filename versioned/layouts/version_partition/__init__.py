"""Layout 1, version partitions (the value users type: ``versioned``): everything this layout is.

Its on-storage format here in plain Python and pyarrow (paths, index, probes, compaction
planning), its Spark writer, reader and compactor in `engine/`, its ingest sink, change images
and import by copy beside them; the registry knows it by `layout.LAYOUT`.
"""

from __future__ import annotations

from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.encoding import (
    encode_key,
    encode_key_array,
    encode_keys,
    key_range,
)
from versioned.keys.stats import key_stats, may_contain_range
from versioned.layouts.version_partition.index import (
    DELETE,
    OP_COLUMN,
    UPSERT,
    VERSION_COLUMN,
    build_index,
    index_schema,
    read_index,
    write_index,
)
from versioned.layouts.version_partition.paths import (
    bloom_file_name,
    index_dir,
    index_file_name,
    version_dir,
)

__all__ = [
    "DELETE",
    "OP_COLUMN",
    "UPSERT",
    "VERSION_COLUMN",
    "KeyBloomFilter",
    "KeyDigests",
    "bloom_file_name",
    "build_index",
    "encode_key",
    "encode_key_array",
    "encode_keys",
    "index_dir",
    "index_file_name",
    "index_schema",
    "key_range",
    "key_stats",
    "may_contain_range",
    "read_index",
    "version_dir",
    "write_index",
]
