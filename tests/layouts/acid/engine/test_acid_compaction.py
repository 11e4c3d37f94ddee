"""Minor and major compaction and the cleaner of the acid layout, through the Table interface
and as Hive's reader walks the folders."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.layouts.acid.engine.hive_walk import walk_table
from tests.layouts.acid.engine.tables import acid_table
from versioned.layouts.acid.acid_metadata import AcidStats
from versioned.layouts.acid.bucket_codec import RecordIdentifier
from versioned.layouts.acid.orc_files import read_bucket
from versioned.options import CompactionOptions

COLUMNS = "id BIGINT NOT NULL, name STRING, store STRING"
MINOR = CompactionOptions(kind="minor")


def _acid(cat: Any) -> Any:
    return acid_table(cat, columns=COLUMNS)


def _changes(ids: list[int], names: list[str | None], stores: list[str], ops: list[str]) -> Any:
    return pa.table({"id": ids, "name": names, "store": stores, "op": ops})


def _rows(table: Any, as_of: int | None = None) -> set[tuple[Any, ...]]:
    return {(r["id"], r["name"], r["store"]) for r in table.read(as_of).collect()}


def _row_ids(table: Any) -> dict[int, tuple[int, int, int]]:
    return {r["id"]: tuple(r["ROW__ID"]) for r in table.read(with_row_id=True).collect()}


def _table_dir(cat: Any, table: Any) -> Path:
    return Path(cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://"))


def _walk(cat: Any, table: Any) -> set[tuple[Any, ...]]:
    """What Hive's reader finds by listing the folders."""
    return {(r["id"], r["name"], r["store"]) for r in walk_table(cat, table)}


def _live_dirs(table: Any, store: str) -> set[str]:
    return {
        f.path.split("/")[1] for f in table.snapshot().files if f.path.startswith(f"store={store}/")
    }


def _disk_dirs(cat: Any, table: Any, store: str) -> set[str]:
    return {d.name for d in (_table_dir(cat, table) / f"store={store}").iterdir() if d.is_dir()}


def _history(cat: Any) -> Any:
    """Inserts, an update, a delete, an aborted write id and a re-insert: write ids 1..4."""
    table = _acid(cat)
    table.upsert(pa.table({"id": [1, 2, 3, 4], "name": list("abcd"), "store": list("xxyy")}))
    table.upsert(
        _changes([1, 2, 5], ["A", None, "e"], ["x", "x", "y"], ["U", "D", "I"]),
        op_code_column="op",
    )
    txn = cat.engine_context.store.begin()
    cat.engine_context.store.allocate_write_ids(table.name, [txn])
    cat.engine_context.store.abort(txn)  # write id 3 is aborted
    table.upsert(_changes([2], ["b2"], ["x"], ["I"]), op_code_column="op")
    return table


def test_minor_then_major_compaction_keep_rows_row_ids_and_hive_s_names(cat: Any) -> None:
    table = _history(cat)
    before, ids_before = _rows(table), _row_ids(table)
    old_version = table.snapshot().version

    minor = table.compact(options=MINOR)

    assert {p.status for p in minor.partitions} == {"compacted"}
    x = next(p for p in minor.partitions if p.partition == "store=x")
    assert x.version == 5 and x.high_water_mark == 4
    assert _live_dirs(table, "x") == {"delta_0000001_0000004", "delete_delta_0000001_0000004"}
    assert _rows(table) == before == _walk(cat, table)
    assert _row_ids(table) == ids_before
    assert _rows(table, old_version) == before  # the retired files serve older snapshots

    table.upsert(_changes([6], ["f"], ["x"], ["I"]), op_code_column="op")  # write id 5
    after_write = _rows(table)
    ids_after_write = _row_ids(table)
    major = table.compact()

    assert {p.status for p in major.partitions} == {"compacted"}
    assert _live_dirs(table, "x") == {"base_0000005"}
    assert _live_dirs(table, "y") == {"base_0000002"}  # y holds write ids 1..2
    assert _rows(table) == after_write == _walk(cat, table)
    assert _row_ids(table) == ids_after_write
    assert _rows(table, old_version) == before


def test_a_compactor_s_output_is_ignored_until_its_transaction_commits(cat: Any) -> None:
    table = _history(cat)
    table.compact()
    expected = _rows(table)
    # The first write's delta, dressed as a newer compactor's base of the same write id: a
    # reader taking it would lose the later update, delete and re-insert.
    first = _table_dir(cat, table) / "store=x" / "delta_0000001_0000001_0000"
    running = cat.engine_context.store.begin()
    fake = first.with_name(f"base_0000004_v{running:07d}")
    shutil.copytree(first, fake)
    files = len(list(fake.iterdir()))
    assert _walk(cat, table) == expected == _rows(table)
    assert table.vacuum(0, grace_hours=0).orphan_files == 0  # its transaction is still open
    cat.engine_context.store.abort(running)
    assert table.vacuum(0, grace_hours=0).orphan_files == files
    assert not fake.exists()


def test_a_write_committed_during_compaction_is_not_lost(cat: Any) -> None:
    table = _history(cat)
    fired: list[int] = []

    def meanwhile(message: str) -> None:
        if "compaction of" in message and not fired:
            fired.append(1)
            table.upsert(
                _changes([1, 7, 3], ["A2", "g", None], ["x", "x", "y"], ["U", "I", "D"]),
                op_code_column="op",
            )

    result = table.compact(progress=meanwhile)

    assert fired and {p.status for p in result.partitions} == {"compacted"}
    assert _rows(table) == {
        (1, "A2", "x"),
        (2, "b2", "x"),
        (7, "g", "x"),
        (4, "d", "y"),
        (5, "e", "y"),
    }
    assert _walk(cat, table) == _rows(table)


def test_a_write_planned_before_a_compaction_commits_after_it_without_replanning(
    cat: Any,
) -> None:
    """The table's key is unique table-wide, so a write is guarded by the table's commit
    sequence; compactions committed since it planned do not count: its delete events name
    ROW__IDs the compaction kept."""
    table = _history(cat)
    messages: list[str] = []
    compactions: list[Any] = []

    def meanwhile(message: str) -> None:
        messages.append(message)
        if message.startswith("writing") and not compactions:
            compactions.append(table.compact())

    result = table.upsert(
        _changes([1, 4, 8], ["A3", None, "h"], ["x", "y", "y"], ["U", "D", "I"]),
        op_code_column="op",
        progress=meanwhile,
    )

    (compaction,) = compactions
    assert {p.status for p in compaction.partitions} == {"compacted"}
    write = [c for c in table.history() if c.operation == "upsert"][-1]
    assert write.txn_id < min(c.txn_id for c in table.history() if c.operation == "compact")
    # planned first, committed last: its version follows the commit order
    assert result.version == write.version > max(p.version for p in compaction.partitions)
    assert (result.updated, result.deleted, result.inserted) == (1, 1, 1)
    assert not any("conflict" in m for m in messages)  # committed on its first attempt
    expected = {(1, "A3", "x"), (2, "b2", "x"), (3, "c", "y"), (5, "e", "y"), (8, "h", "y")}
    assert _rows(table) == expected
    assert _walk(cat, table) == _rows(table)


def test_vacuum_removes_obsolete_directories_once_no_retained_snapshot_needs_them(
    cat: Any,
) -> None:
    table = _history(cat)
    old_version = table.snapshot().version
    table.compact(options=MINOR)
    table.compact()
    expected = _rows(table)
    before_dirs = _disk_dirs(cat, table, "x")

    kept = table.vacuum(168, grace_hours=0)
    assert kept.retired_files == 0 and _disk_dirs(cat, table, "x") == before_dirs
    assert _rows(table, old_version) == _rows(table, old_version)  # still readable

    done = table.vacuum(0, grace_hours=0)

    assert done.retired_files > 0
    for store in ("x", "y"):
        assert _disk_dirs(cat, table, store) == _live_dirs(table, store)
    assert _rows(table) == expected == _walk(cat, table)


def _event_ids(cat: Any, table: Any, path: str) -> list[tuple[int, int, int]]:
    events = read_bucket(cat.engine_context.fileio, f"{table.info.location}/{path}").events
    fields = ("originalTransaction", "bucket", "rowId")
    return list(zip(*(events.column(f).to_pylist() for f in fields), strict=True))


def test_spark_written_event_files_are_in_row_id_order_with_hive_s_metadata(
    cat: Any,
) -> None:
    """Issue 28 items 1 and 2: Spark's planned write sorted each task again by
    ``empty2null(store)`` and the optimizer dropped our ROW__ID sort below it: the compacted
    bucket file held write id 2's events before write id 1's (Hive's merging readers then
    return deleted rows and updated keys twice), and the files lacked the hive.acid.* footer
    metadata Hive's readers need. Spark reads and writes every file here
    (``driver_max_events`` 0): one bucket and one partition put every event in one file,
    and the larger delta is scanned first."""
    t = acid_table(
        cat,
        columns=COLUMNS,
        buckets=1,
        properties={"read.driver_max_events": "0", "write.driver_max_events": "0"},
    )
    t.upsert(_changes([1, 2, 3], ["a"] * 3, ["s1"] * 3, ["I"] * 3), op_code_column="op")
    many = list(range(10, 60))
    t.upsert(_changes(many, ["b"] * 50, ["s1"] * 50, ["I"] * 50), op_code_column="op")
    t.upsert(_changes([2, 11], [None, None], ["s1", "s1"], ["D", "D"]), op_code_column="op")
    for options in (None, MINOR, CompactionOptions(kind="major")):
        if options is not None:
            assert t.compact(options=options).partitions[0].status == "compacted"
        files = [f.path for f in t.snapshot().files if "/bucket_" in f.path]
        assert files, "no event file"
        for path in files:  # the upserts' deltas and delete delta, then the compacted files
            ids = _event_ids(cat, t, path)
            assert ids == sorted(ids), f"{path} is not in ROW__ID order"
            # issue 28 item 2: Hive's hive.acid.* metadata, which Spark's writer cannot set
            read = read_bucket(cat.engine_context.fileio, f"{t.info.location}/{path}")
            ops = read.events.column("operation").to_pylist()
            assert read.key_index == (RecordIdentifier(*ids[-1]),), path
            assert read.stats == AcidStats(ops.count(0), 0, ops.count(2)), path
            assert read.acid_version == "2", path
    assert _rows(t) == {(1, "a", "s1"), (3, "a", "s1")} | {(i, "b", "s1") for i in many if i != 11}
