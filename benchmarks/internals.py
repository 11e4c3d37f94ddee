"""The versioned internals the benchmarks reach into, named in this one module.

Benchmarks use the public API (`versioned.connect`, `Catalog`, `Table`, `versioned.mutation`,
`versioned.streaming`). Profiles and probes also time steps of the engine it does not expose,
or count calls by wrapping an engine function; those modules and functions are imported here
and nowhere else, so that when the engine's modules move only this file changes (and
``tests/benchmarks`` fails until it does). Who uses what:

* ``file_scans`` (its ``DRIVER_LISTING_MAX_PATHS`` switched off): `benchmarks.upsert`;
* ``version_reader``, ``read_feed``, ``latest_per_key``: `benchmarks.upsert_profile`,
  `benchmarks.read_profile`;
* ``file_shaping``: `benchmarks.compaction`;
* ``acid_events``, ``acid_files_of``: `benchmarks.acid_read_profile`, `benchmarks.acid_lookup`
  (which wraps ``acid_events.read_events``);
* ``acid_event_writer``, ``FileIO`` (wrapped): `benchmarks.acid_footer`;
* the key, Bloom-filter and probe functions of the version-partition layout:
  `benchmarks.bloom_keys`, `benchmarks.key_scope_probe`.
"""

from __future__ import annotations

from versioned.catalog.records import DataFile, PartitionInfo
from versioned.engine.feeds.batch_dedup import latest_per_key
from versioned.engine.feeds.reader import read_feed
from versioned.engine.spark import file_scans
from versioned.keys.bloom import WRITE_HEADROOM, KeyBloomFilter, KeyDigests
from versioned.keys.columns import part_column
from versioned.keys.encoding import encode_key, encode_keys
from versioned.keys.stats import key_stats
from versioned.layouts.acid.engine import event_writer as acid_event_writer
from versioned.layouts.acid.engine import events as acid_events
from versioned.layouts.acid.engine.reader import files_of as acid_files_of
from versioned.layouts.version_partition.elsewhere import probe_elsewhere
from versioned.layouts.version_partition.engine import reader as version_reader
from versioned.layouts.version_partition.engine.compacted_version import file_shaping
from versioned.layouts.version_partition.probe import probe_partition
from versioned.storage.filesystem import FileIO

__all__ = [
    "WRITE_HEADROOM",
    "DataFile",
    "FileIO",
    "KeyBloomFilter",
    "KeyDigests",
    "PartitionInfo",
    "acid_event_writer",
    "acid_events",
    "acid_files_of",
    "encode_key",
    "encode_keys",
    "file_scans",
    "file_shaping",
    "key_stats",
    "latest_per_key",
    "part_column",
    "probe_elsewhere",
    "probe_partition",
    "read_feed",
    "version_reader",
]
