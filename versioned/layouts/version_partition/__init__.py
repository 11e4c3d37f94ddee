"""Layout 1, version partitions: the on-storage format (paths, keys, Bloom filters, index).

Plain Python and pyarrow; the Spark writer and reader of this layout live in the engine.
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
