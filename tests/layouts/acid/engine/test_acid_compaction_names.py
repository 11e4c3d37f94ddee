"""Compacted folders under names Hive 2.3, 3 and 4 read (issue 28 item 3): ``base_W`` and
``delta_MIN_MAX`` written out of Hive's sight and renamed just before the commit, Hive 3's
``_metadata_acid`` in a base, the orphan of a compaction that died between its rename and
its commit, and tables an earlier release compacted into ``_vT`` folders."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.layouts.acid.engine.hive_walk import walk_table
from tests.layouts.acid.engine.tables import acid_table
from versioned.catalog.write_transaction import WriteTransaction, write_transaction
from versioned.errors import CommitConflictError, StorageError
from versioned.layouts.acid.compacted_dirs import compactor_mark, compactor_of
from versioned.layouts.acid.compaction_plan import AcidCompactionPlan
from versioned.layouts.acid.directories import BaseDir, DeltaDir, is_hidden
from versioned.layouts.acid.engine import compactor
from versioned.options import CompactionOptions

COLUMNS = "id BIGINT NOT NULL, name STRING, store STRING"
MINOR = CompactionOptions(kind="minor")
ONCE = CompactionOptions(max_attempts=1)
SUFFIX = re.compile(r"_v\d{7}$")


class Killed(Exception):
    """Stands for the process dying at the point where it is raised."""


def _changes(ids: list[int], names: list[str | None], stores: list[str], ops: list[str]) -> Any:
    return pa.table({"id": ids, "name": names, "store": stores, "op": ops})


def _table(cat: Any) -> Any:
    """Write ids 1..3: inserts, an update and a delete, an insert; store x has all three."""
    table = acid_table(cat, columns=COLUMNS)
    table.upsert(pa.table({"id": [1, 2, 3, 4], "name": list("abcd"), "store": list("xxyy")}))
    table.upsert(
        _changes([1, 2, 5], ["A", None, "e"], ["x", "x", "y"], ["U", "D", "I"]),
        op_code_column="op",
    )
    table.upsert(_changes([6], ["f"], ["x"], ["I"]), op_code_column="op")
    return table


def _rows(table: Any, as_of: int | None = None) -> set[tuple[Any, ...]]:
    return {(r["id"], r["name"], r["store"]) for r in table.read(as_of).collect()}


def _table_dir(cat: Any, table: Any) -> Path:
    return Path(cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://"))


def _walk(cat: Any, table: Any) -> set[tuple[Any, ...]]:
    """What Hive's reader finds by listing the folders."""
    return {(r["id"], r["name"], r["store"]) for r in walk_table(cat, table)}


def _live_dirs(table: Any, store: str) -> set[str]:
    files = table.snapshot().files
    return {f.path.split("/")[1] for f in files if f.path.startswith(f"store={store}/")}


def _disk_dirs(cat: Any, table: Any, store: str) -> set[str]:
    part = _table_dir(cat, table) / f"store={store}"
    return {d.name for d in part.iterdir() if d.is_dir() and not is_hidden(d.name)}


def _unlisted(cat: Any, table: Any) -> set[str]:
    root = _table_dir(cat, table)
    listed = {f.path for f in cat.engine_context.store.all_files(table.name)}
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - listed


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def _commit_hook(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[WriteTransaction], None]
) -> None:
    """Run ``before(tx)`` when a compaction commits (its folders have their names by then)."""
    real = WriteTransaction.commit

    def commit(self: WriteTransaction, **kwargs: Any) -> Any:
        if kwargs["operation"] == "compact":
            before(self)
        return real(self, **kwargs)

    monkeypatch.setattr(WriteTransaction, "commit", commit)


def _die_before_the_commit(cat: Any, table: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A major compaction of store x that dies between its rename and its commit; its
    folder, left under its Hive name."""

    def die(_tx: WriteTransaction) -> None:
        raise Killed("the compactor died between its rename and its commit")

    with monkeypatch.context() as patch:
        _commit_hook(patch, die)
        with pytest.raises(Killed):
            table.compact(["store=x"])
    return _table_dir(cat, table) / "store=x" / "base_0000003"


def test_compaction_writes_hive_3_names_with_hive_s_markers_listed_in_its_commit(
    cat: Any,
) -> None:
    table = _table(cat)
    expected = _rows(table)

    minor = table.compact(options=MINOR)
    assert {p.status for p in minor.partitions} == {"compacted"}
    assert _live_dirs(table, "x") == {"delta_0000001_0000003", "delete_delta_0000001_0000003"}
    major = table.compact()

    version = {p.partition: p.version for p in major.partitions}
    base = _table_dir(cat, table) / "store=x" / "base_0000003"
    assert _live_dirs(table, "x") == {"base_0000003"}
    markers = {n for n in _names(base) if is_hidden(n) and not n.startswith("_key_bloom_")}
    assert markers == {
        "_orc_acid_version",
        "_metadata_acid",
        compactor_mark(version["store=x"]),
    }
    assert (base / "_metadata_acid").read_bytes() == (
        b'{"thisFileVersion":"0","dataFormat":"compacted"}'
    )
    delta = _table_dir(cat, table) / "store=x" / "delete_delta_0000001_0000003"
    assert "_metadata_acid" not in _names(delta)  # Hive 3 writes it for bases only
    # the markers are in the manifest: retired and vacuumed with their folder, not orphans
    kinds = {f.path: f.kind for f in table.snapshot().files}
    for name in ("_metadata_acid", "_orc_acid_version", compactor_mark(version["store=x"])):
        assert kinds[f"store=x/base_0000003/{name}"] == "acid_marker"
    assert not any(SUFFIX.search(d) for s in "xy" for d in _disk_dirs(cat, table, s))
    assert not list(_table_dir(cat, table).glob("_staging/**/compacted"))
    assert _rows(table) == expected == _walk(cat, table)
    assert table.vacuum(0, grace_hours=0).orphan_files == 0
    assert _unlisted(cat, table) == set()
    assert _disk_dirs(cat, table, "x") == {"base_0000003"}


def test_a_major_compaction_that_keeps_no_row_still_leaves_a_base_for_hive(cat: Any) -> None:
    """As Hive's compactor does: without the empty base, Hive's listing would take the
    retired deltas (still on disk until vacuum) and bring the deleted rows back."""
    table = _table(cat)
    table.upsert(_changes([1, 6], [None, None], ["x", "x"], ["D", "D"]), op_code_column="op")

    done = table.compact(["store=x"]).partitions[0]

    base = _table_dir(cat, table) / "store=x" / "base_0000004"
    assert _names(base) == {"_orc_acid_version", "_metadata_acid", compactor_mark(done.version)}
    assert _live_dirs(table, "x") == {"base_0000004"}
    assert not any(store == "x" for _, _, store in _rows(table))
    assert _walk(cat, table) == _rows(table)


def test_compacted_folders_stay_hidden_until_complete_then_move_to_their_names(
    cat: Any,
) -> None:
    table = _table(cat)
    seen: dict[str, Any] = {}

    def look(message: str) -> None:
        if "committing" in message:  # written, not yet renamed
            seen["hive_names"] = _disk_dirs(cat, table, "x")
            staged = list(_table_dir(cat, table).glob("_staging/txn=*/compacted/store=x/*"))
            seen["staged"] = {p.name: _names(p) for p in staged}

    done = table.compact(["store=x"], progress=look).partitions[0]

    before = {f"delta_000000{w}_000000{w}_0000" for w in (1, 2, 3)} | {
        "delete_delta_0000002_0000002_0000"
    }
    assert seen["hive_names"] == before  # no base_0000003 while it was being written
    staged = seen["staged"]["base_0000003"]
    assert {"_metadata_acid", "_orc_acid_version", compactor_mark(done.version)} <= staged
    assert any(n.startswith("bucket_") for n in staged)
    assert _disk_dirs(cat, table, "x") == before | {"base_0000003"}
    listed = [f.path for f in table.snapshot().files if f.path.startswith("store=x/")]
    assert listed and all(p.startswith("store=x/base_0000003/") for p in listed)
    assert all((_table_dir(cat, table) / p).is_file() for p in listed)  # the final paths
    assert _names(_table_dir(cat, table) / "store=x" / "base_0000003") == {
        p.rpartition("/")[2] for p in listed
    }


def test_a_rerun_replaces_the_orphan_of_a_compaction_that_died_before_its_commit(
    cat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(cat)
    expected = _rows(table)
    orphan = _die_before_the_commit(cat, table, monkeypatch)

    dead = compactor_of(_names(orphan))
    assert dead is not None and any(n.startswith("bucket_") for n in _names(orphan))
    assert not any("base_" in f.path for f in table.snapshot().files)  # no commit lists it
    assert _rows(table) == expected  # versioned reads the catalog's manifest
    assert _walk(cat, table) == expected  # Hive's walk takes it: it holds what its name says

    done = table.compact(["store=x"]).partitions[0]

    assert done.status == "compacted" and done.attempts == 1
    assert compactor_of(_names(orphan)) == done.version != dead
    assert _live_dirs(table, "x") == {"base_0000003"}
    assert _rows(table) == expected == _walk(cat, table)
    table.vacuum(0, grace_hours=0)
    assert _unlisted(cat, table) == set()
    assert _disk_dirs(cat, table, "x") == {"base_0000003"}


def test_the_folder_of_a_compactor_still_open_is_left_alone_until_it_ends(
    cat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder under its name whose compactor may still commit it (its mark's transaction
    is open): neither a compaction of the same write ids nor vacuum touches it."""
    table = _table(cat)
    expected = _rows(table)
    folder = _die_before_the_commit(cat, table, monkeypatch)
    running = (
        cat.engine_context.store.begin()
    )  # the folder's compactor, still between rename and commit
    mark = compactor_mark(compactor_of(_names(folder)) or 0)
    (folder / mark).rename(folder / compactor_mark(running))
    files = _names(folder)

    blocked = table.compact(["store=x"], options=ONCE).partitions[0]
    vacuumed = table.vacuum(0, grace_hours=0)

    assert blocked.status == "conflict"
    assert "being committed by another compaction" in blocked.message
    assert _names(folder) == files
    assert vacuumed.kept_orphans >= len(files)
    assert not any(p.startswith("store=x/base_0000003/") for p in vacuumed.paths)

    cat.engine_context.store.abort(running)
    removed = table.vacuum(0, grace_hours=0)

    assert {f"store=x/base_0000003/{n}" for n in files} <= set(removed.paths)
    assert not folder.exists()
    assert _rows(table) == expected == _walk(cat, table)
    assert table.compact(["store=x"]).partitions[0].status == "compacted"
    assert _rows(table) == expected == _walk(cat, table)


def test_vacuum_between_the_rename_and_the_commit_keeps_the_compactor_s_folder(
    cat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(cat)
    expected = _rows(table)
    during: list[Any] = []
    _commit_hook(monkeypatch, lambda _tx: during.append(table.vacuum(0, grace_hours=0)))

    done = table.compact(["store=x"]).partitions[0]

    assert done.status == "compacted"
    (vacuumed,) = during
    listed = [f.path for f in table.snapshot().files if f.path.startswith("store=x/")]
    assert vacuumed.kept_orphans >= len(listed)  # unlisted then, and its compactor open
    assert not set(vacuumed.paths) & set(listed)
    assert all((_table_dir(cat, table) / p).is_file() for p in listed)
    assert _rows(table) == expected == _walk(cat, table)


def test_a_commit_that_loses_a_race_takes_its_folders_out_of_hive_s_sight(
    cat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(cat)
    expected = _rows(table)
    placed: list[set[str]] = []
    after_abort: list[set[str]] = []

    def lose_once(_tx: WriteTransaction) -> None:
        if not placed:
            placed.append(_disk_dirs(cat, table, "x"))
            raise CommitConflictError("another commit retired these files")

    def look(message: str) -> None:
        if "planning again" in message:  # the first attempt aborted
            after_abort.append(_disk_dirs(cat, table, "x"))

    _commit_hook(monkeypatch, lose_once)
    done = table.compact(["store=x"], progress=look).partitions[0]

    assert "base_0000003" in placed[0]
    assert after_abort and "base_0000003" not in after_abort[0]
    assert (done.status, done.attempts) == ("compacted", 2)
    base = _table_dir(cat, table) / "store=x" / "base_0000003"
    assert compactor_of(_names(base)) == done.version
    assert _rows(table) == expected == _walk(cat, table)


def test_files_no_compactor_wrote_under_the_name_stop_the_compaction(cat: Any) -> None:
    table = _table(cat)
    part = _table_dir(cat, table) / "store=x"
    stray = part / "base_0000003"
    stray.mkdir()
    (stray / "bucket_00000").write_bytes(b"not ours")

    with pytest.raises(StorageError, match="no versioned compactor wrote"):
        table.compact(["store=x"])

    assert _names(stray) == {"bucket_00000"}
    assert _live_dirs(table, "x") == {d for d in _disk_dirs(cat, table, "x") if d != stray.name}


def test_a_table_compacted_by_an_earlier_release_still_reads_compacts_and_vacuums(
    cat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before issue 28 compaction wrote ``delta_MIN_MAX_vT`` / ``base_W_vT`` (T: its
    transaction) and no ``_metadata_acid`` or mark; emulated here, then compacted today."""
    table = _table(cat)
    opened: list[WriteTransaction] = []

    @contextmanager
    def recording(*args: Any, **kwargs: Any) -> Iterator[WriteTransaction]:
        with write_transaction(*args, **kwargs) as tx:
            opened.append(tx)
            yield tx

    def suffixed(plan: AcidCompactionPlan) -> tuple[Any, Any]:
        txn = opened[-1].id
        if plan.kind == "major":
            return BaseDir(plan.max_write_id, txn), None
        low, high = plan.min_write_id, plan.max_write_id
        return DeltaDir(low, high, None, txn), DeltaDir(low, high, None, txn, delete=True)

    with monkeypatch.context() as old_release:
        old_release.setattr(compactor, "write_transaction", recording)
        old_release.setattr(AcidCompactionPlan, "outputs", suffixed)
        old_release.setattr(compactor, "write_compaction_markers", lambda *_args: {})
        minor = table.compact(["store=x"], options=MINOR).partitions[0]
        major = table.compact(["store=y"]).partitions[0]
    old_x = {
        f"delta_0000001_0000003_v{minor.version:07d}",
        f"delete_delta_0000001_0000003_v{minor.version:07d}",
    }
    old_y = {f"base_0000002_v{major.version:07d}"}
    assert (_live_dirs(table, "x"), _live_dirs(table, "y")) == (old_x, old_y)
    assert _rows(table) == _walk(cat, table)

    table.upsert(_changes([1, 7], ["A2", "g"], ["x", "x"], ["U", "I"]), op_code_column="op")
    old_version = table.snapshot().version
    expected = _rows(table)
    assert expected == _walk(cat, table)
    today = table.compact()

    assert {p.partition: p.status for p in today.partitions} == {"store=x": "compacted"}
    assert _live_dirs(table, "x") == {"base_0000004"}  # from delta_1_3_vT and delta_4_4
    assert _live_dirs(table, "y") == old_y
    assert _rows(table) == expected == _rows(table, old_version) == _walk(cat, table)
    table.vacuum(0, grace_hours=0)
    assert _unlisted(cat, table) == set()
    assert (_disk_dirs(cat, table, "x"), _disk_dirs(cat, table, "y")) == ({"base_0000004"}, old_y)
    assert _rows(table) == expected == _walk(cat, table)
