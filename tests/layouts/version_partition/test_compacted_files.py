"""What compaction writes in the version-partition layout: the Bloom filter of the compacted
version (reused while it has room, rebuilt when not) and data files near the size target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.table.sales import batch, make_table
from versioned.api.catalog import Catalog
from versioned.options import CompactionOptions


def _bloom(cat: Catalog, t: Any) -> tuple[Any, Any]:
    """The table's only live Bloom file (one partition, compacted) and its filter."""
    from versioned.keys.bloom import KeyBloomFilter

    (f,) = [f for f in t.snapshot().files if f.kind == "bloom"]
    return f, KeyBloomFilter.read(cat.engine_context.fileio, f"{t.info.location}/{f.path}")


def test_bloom_filter_holds_every_key_and_is_reused_while_it_has_room(cat: Catalog) -> None:
    from versioned.keys.encoding import encode_key

    t = make_table(cat, layout="versioned")
    t.upsert(batch([(i, float(i), "I", "a") for i in range(1200)]))
    (load,) = [f for f in t.snapshot().files if f.kind == "bloom"]
    assert load.stats["capacity"] == 1500 and load.row_count == 1200  # 1.25x headroom
    t.upsert(batch([(i, -1.0, "U", "a") for i in range(0, 1200, 7)]))
    t.compact()
    # The first compaction extends the bulk load's filter: the update batch added no key.
    first, filt = _bloom(cat, t)
    assert first.stats["capacity"] == 1500 and first.row_count == 1200 == filt.count
    # Deltas: updates of known keys and 50 new keys; the filter has room, so it is reused.
    t.upsert(batch([(i, -2.0, "U", "a") for i in range(0, 1200, 5)]))
    t.upsert(batch([(i, 1.0, "I", "a") for i in range(2000, 2050)]))
    t.upsert(batch([(3, None, "D", "a")]))
    t.compact()
    second, filt = _bloom(cat, t)
    assert second.version > first.version and second.stats["capacity"] == 1500
    assert 1250 <= filt.count <= 1252  # 50 new keys (the odd false positive is not re-added)
    live = [r["id"] for r in t.read().collect()]
    assert len(live) == 1249
    assert all(filt.might_contain_many([encode_key((k,)) for k in live]))
    # When it would run out of room it is rebuilt from the keys of the data files, which
    # drops the deleted key 3.
    t.upsert(batch([(i, 1.0, "I", "a") for i in range(3000, 3400)]))
    t.compact()
    third, filt = _bloom(cat, t)
    assert third.stats["capacity"] == 2 * 1649 and filt.count == 1649
    live = [r["id"] for r in t.read().collect()]
    assert all(filt.might_contain_many([encode_key((k,)) for k in live]))


def test_bloom_filter_is_rebuilt_when_no_filter_holds_most_keys(cat: Catalog) -> None:
    """Three equal batches of new keys: extending one filter would hash most keys twice."""
    from versioned.keys.encoding import encode_key

    t = make_table(cat, layout="versioned")
    for b in range(3):
        t.upsert(batch([(i, float(i), "I", "a") for i in range(b * 1000, b * 1000 + 1000)]))
    t.compact()
    rebuilt, filt = _bloom(cat, t)
    assert rebuilt.stats["capacity"] == 2 * 3000 and filt.count == 3000
    assert all(filt.might_contain_many([encode_key((k,)) for k in range(3000)]))


def test_keys_that_moved_away_are_dropped_from_the_compacted_filter(cat: Catalog) -> None:
    """More of them than the filter's false positives: a later write of such a key would
    take the partition for its home (the live-row estimate, `retired_rows`)."""
    from versioned.keys.bloom import KeyBloomFilter
    from versioned.keys.encoding import encode_key

    t = make_table(cat, layout="versioned")
    t.upsert(batch([(i, float(i), "I", "ab"[i % 2]) for i in range(200)]))
    t.upsert(batch([(i, 1.0, "U", "b") for i in range(0, 200, 4)]))  # 50 keys of a move
    t.compact(partitions=[{"p": "a"}])
    (f,) = [f for f in t.snapshot().files if f.kind == "bloom" and "p=a" in f.path]
    filt = KeyBloomFilter.read(cat.engine_context.fileio, f"{t.info.location}/{f.path}")
    assert f.row_count == filt.count == 50
    moved = filt.might_contain_many([encode_key((k,)) for k in range(0, 200, 4)])
    assert sum(moved) <= 3  # false positives only
    assert all(filt.might_contain_many([encode_key((k,)) for k in range(2, 200, 4)]))


def test_rows_per_file_splits_a_partition_into_files_near_the_target(cat: Catalog) -> None:
    t = make_table(cat, layout="versioned")
    t.upsert(batch([(i, float(i), "I", "a") for i in range(100)]))
    t.upsert(batch([(i, -1.0, "U", "a") for i in range(10)]))
    result = t.compact(options=CompactionOptions(rows_per_file=30))
    data = [f for f in t.snapshot().files if f.kind == "data"]
    assert result.partitions[0].files_added == len(data) + 1  # plus the Bloom filter
    # 110 rows in files with 10 index entries: about 100 live rows, 4 files of ~25 rows,
    # written without a shuffle from the two scan splits (one per version file: 90 and 10
    # live rows), each rolling over after 27 rows: 27, 27, 27, 9 and 10.
    assert 4 <= len(data) <= 5
    assert sum(f.row_count for f in data) == 100
    assert max(f.row_count for f in data) <= 30
    root = Path(cat.settings.warehouse) / t.info.location
    for f in data:
        assert pq.ParquetFile(root / f.path).metadata.num_rows == f.row_count
        assert "p" not in pq.ParquetFile(root / f.path).schema_arrow.names  # from the path
