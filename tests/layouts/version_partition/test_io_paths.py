"""What the version-partition engine opens: a write probes Bloom files and never an old data
file (without an ordering column), and a read past the broadcast limit falls back to a
shuffle join with a warning."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from tests.table.sales import batch, latest, make_table
from versioned.api.catalog import Catalog
from versioned.layouts.version_partition.engine.reader import CompactionNeededWarning
from versioned.storage.filesystem import FileIO


def _hide(root: Path, paths: list[str], hidden: Path) -> None:
    for rel in paths:
        (hidden / rel).parent.mkdir(parents=True, exist_ok=True)
        os.replace(root / rel, hidden / rel)


def _restore(root: Path, paths: list[str], hidden: Path) -> None:
    for rel in paths:
        os.replace(hidden / rel, root / rel)


def test_write_path_reads_no_old_data_file(cat: Catalog, tmp_path: Path) -> None:
    """Without an ordering column, only Bloom files of older versions are opened: the old
    data files are even moved away during the write and the write still succeeds."""
    t = make_table(cat, layout="versioned")
    t.upsert(batch([(i, float(i), "I", f"s{i % 3}") for i in range(100)]))
    root = Path(cat.settings.warehouse) / t.info.location
    old_data = [f.path for f in t.snapshot().files if f.kind == "data"]
    assert old_data
    _hide(root, old_data, tmp_path / "hidden")
    FileIO.reset_opened_files()
    result = t.upsert(batch([(5, 50.0, "U", "s2"), (7, None, "D", "s1"), (500, 1.0, "I", "s0")]))
    opened = list(FileIO.opened_files)
    _restore(root, old_data, tmp_path / "hidden")
    assert (result.inserted, result.updated, result.deleted) == (1, 1, 1)
    assert not any(p.endswith(tuple(old_data)) for p in opened)
    assert any("_bloom-" in p for p in opened)  # the probe did read the filters
    rows = {r[0]: r[1] for r in latest(t)}
    assert rows[5] == 50.0 and 7 not in rows and rows[500] == 1.0 and len(rows) == 100


def test_a_batch_outside_a_versions_key_range_skips_its_bloom_filter(cat: Catalog) -> None:
    """The writer prunes by key range: a batch whose ids all lie above an older version's
    ids never opens that version's Bloom file, and still finds the keys it updates."""
    t = make_table(cat, layout="versioned")
    old = t.upsert(batch([(i, 0.0, "I", "s0") for i in range(100)])).version
    recent = t.upsert(batch([(i, 1.0, "I", "s0") for i in range(1000, 1100)])).version
    blooms = {f.version: f.path for f in t.snapshot().files if f.kind == "bloom"}
    assert set(blooms) == {old, recent}
    FileIO.reset_opened_files()
    result = t.upsert(
        batch([(1005, 2.0, "U", "s0"), (1050, None, "D", "s0"), (1200, 3.0, "I", "s0")])
    )
    opened = list(FileIO.opened_files)
    assert any(p.endswith(blooms[recent]) for p in opened)
    assert not any(p.endswith(blooms[old]) for p in opened)
    assert (result.inserted, result.updated, result.deleted) == (1, 1, 1)
    rows = {r[0]: r[1] for r in latest(t)}
    assert rows[1005] == 2.0 and 1050 not in rows and rows[1200] == 3.0 and len(rows) == 200


def test_moving_a_key_reads_no_old_data_file(cat: Catalog, tmp_path: Path) -> None:
    """A key moving partition (the key is id, the partition p) is found by Bloom files only:
    the old data files are moved away during the write."""
    t = make_table(cat, layout="versioned")
    t.upsert(batch([(i, 0.0, "I", f"p{i % 5}") for i in range(50)]))
    root = Path(cat.settings.warehouse) / t.info.location
    old_data = [f.path for f in t.snapshot().files if f.kind == "data"]
    _hide(root, old_data, tmp_path / "hidden")
    FileIO.reset_opened_files()
    result = t.upsert(batch([(3, 9.0, "U", "p9"), (4, None, "D", None)]))
    opened = list(FileIO.opened_files)
    _restore(root, old_data, tmp_path / "hidden")
    assert not any(p.endswith(tuple(old_data)) for p in opened)
    assert (result.updated, result.deleted, result.ignored_deletes) == (1, 1, 0)
    rows = latest(t)
    assert (3, 9.0, "p9") in rows and all(r[0] != 4 for r in rows) and len(rows) == 49


def test_shuffle_join_fallback_warns_and_agrees(cat: Catalog) -> None:
    t = make_table(cat, layout="versioned")
    t.upsert(batch([(i, float(i), "I", "a") for i in range(20)]))
    t.upsert(batch([(i, -1.0, "U", "a") for i in range(10)]))
    expected = latest(t)
    cat.broadcast_limit = 5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = latest(t)
    assert any(issubclass(w.category, CompactionNeededWarning) for w in caught)
    assert got == expected
    assert sum(1 for r in got if r[1] == -1.0) == 10
