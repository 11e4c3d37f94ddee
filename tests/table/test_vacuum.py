"""Vacuum: retained snapshots stay whole, older ones fail clearly, orphans go after a grace."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.catalog_clock import backdate_table
from tests.support.test_warehouse import files_under
from tests.table.sales import apply, batch, latest, make_table, model_rows
from versioned.api.catalog import Catalog
from versioned.errors import NoSuchVersionError

VERSION_ORPHANS = "writes orphans at version-partition paths (version_id=, _index)"


AGED_BY_HAND = "ages files with os.utime: an object store sets a file's time itself"


def _on_disk(cat: Catalog, t: Any) -> set[str]:
    return files_under(cat, t.info.location)


def _age(path: Path, hours: float) -> None:
    past = time.time() - hours * 3600
    os.utime(path, (past, past))


def test_vacuum_never_deletes_a_file_a_retained_snapshot_lists(cat: Catalog, layout: str) -> None:
    """Commits (upserts and compactions) with the retention boundary between two of them:
    every snapshot from the boundary on reads exactly as before, older ones fail clearly,
    and the files only older snapshots listed are gone."""
    t = make_table(cat, layout=layout)
    model: dict[int, Any] = {}
    states: dict[int, list[tuple[Any, ...]]] = {}
    steps: list[Any] = [
        [(i, float(i), "I", "ab"[i % 2]) for i in range(30)],
        [(i, -1.0, "U", "ab"[i % 2]) for i in range(0, 30, 4)],
        "compact",
        [(i, None, "D", "ab"[i % 2]) for i in range(0, 30, 5)],
        "compact",
        [(i, -2.0, "U", "ab"[i % 2]) for i in range(1, 30, 6)],
    ]
    boundary_after = 2  # the snapshot of step 2 (the first compaction) was current at cutoff
    cutoff = 0.0
    for i, step in enumerate(steps):
        if step == "compact":
            t.compact()
        else:
            t.upsert(batch(step))
            apply(model, step)
        for commit in t.history():
            states.setdefault(commit.version, model_rows(model))
        if i == boundary_after:
            time.sleep(0.05)
            cutoff = time.time()
            time.sleep(0.05)
    history = t.history()
    retained = [c for c in history if c.committed_at > cutoff]
    boundary = [c for c in history if c.committed_at <= cutoff][-1]
    retained.insert(0, boundary)
    ledger_before = cat.engine_context.store.all_files(t.name)
    listed_by_retained = {f.path for c in retained for f in t.snapshot(as_of=c.version).files}

    result = t.vacuum(retain_hours=(time.time() - cutoff) / 3600)

    assert result.oldest_version == boundary.version
    assert result.retired_files > 0 and result.orphan_files == 0
    on_disk = _on_disk(cat, t)
    assert listed_by_retained <= on_disk
    deleted = {f.path for f in ledger_before} - on_disk
    assert deleted == set(result.paths)
    assert not deleted & listed_by_retained
    for c in retained:
        assert latest(t, as_of=c.version) == states[c.version], f"version {c.version}"
    for c in history:
        if c.seq < boundary.seq:
            with pytest.raises(
                NoSuchVersionError,
                match=(
                    f"version {c.version} was vacuumed; the oldest version still readable is "
                    f"{boundary.version}"
                ),
            ):
                t.read(as_of=c.version)
    assert {f.path for f in cat.engine_context.store.all_files(t.name)} == on_disk  # forgotten too
    # Vacuum again with the same retention: nothing more to do.
    again = t.vacuum(retain_hours=(time.time() - cutoff) / 3600)
    assert (again.retired_files, again.orphan_files) == (0, 0)


@pytest.mark.never(["acid"], reason=VERSION_ORPHANS)
@pytest.mark.local_files(reason=AGED_BY_HAND)
def test_vacuum_removes_orphans_after_the_grace_period_only(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout)
    backdate_table(t, 3.0)  # the orphans below are 2 hours old: younger than their table
    t.upsert(batch([(1, 1.0, "I", "a"), (2, 2.0, "I", "b")]))
    root = Path(cat.settings.warehouse) / t.info.location
    open_txn = cat.engine_context.store.begin()
    orphans = {
        "p=a/version_id=999999/part-0.parquet": 2.0,  # a write that never committed
        "_index/p=a/version_id=999999/_tmp.abc": 2.0,
        "_staging/txn=999998/_temporary/0/part-1.parquet": 2.0,
        f"p=a/version_id={open_txn}/part-2.parquet": 2.0,  # a write still in progress
        "p=b/version_id=999997/part-3.parquet": 0.0,  # too young
        "_dead_letter/batch=1/part-0.json": 2.0,  # rejected rows: kept for the user
    }
    for rel, hours in orphans.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
        _age(root / rel, hours)
    rows_before = latest(t)
    listed = {f.path for f in cat.engine_context.store.all_files(t.name)}

    dry = t.vacuum(dry_run=True)
    assert dry.orphan_files == 3 and dry.kept_orphans == 2
    assert all((root / rel).exists() for rel in orphans)

    result = t.vacuum()
    assert sorted(result.paths) == sorted(list(orphans)[:3])
    assert (result.orphan_files, result.kept_orphans, result.retired_files) == (3, 2, 0)
    assert _on_disk(cat, t) == listed | set(list(orphans)[3:])
    assert not (root / "p=a/version_id=999999").exists()  # emptied directories go too
    assert not (root / "_staging/txn=999998").exists()

    cat.engine_context.store.abort(open_txn)
    result = t.vacuum(grace_hours=0)
    assert result.orphan_files == 2
    assert _on_disk(cat, t) == listed | {"_dead_letter/batch=1/part-0.json"}
    assert latest(t) == rows_before


def test_time_travel_within_retention_keeps_working(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout)
    t.upsert(batch([(1, 1.0, "I", "a")]))
    first = t.history()[-1].version
    t.upsert(batch([(1, 2.0, "U", "a")]))
    t.compact()
    result = t.vacuum()  # default retention: a week
    assert result.retired_files == 0 and result.oldest_version == first
    assert latest(t, as_of=first) == [(1, 1.0, "a")]
    assert "vacuumed_before_seq" not in t.refresh().spec.properties


def test_files_a_dropped_table_kept_stay_kept_by_a_new_table_of_its_name(
    cat: Catalog, layout: str
) -> None:
    old = make_table(cat, layout=layout)
    old.upsert(batch([(1, 1.0, "I", "a"), (2, 2.0, "I", "b")]))
    kept = _on_disk(cat, old)
    cat.drop_table(old.name, purge=False)

    new = make_table(cat, layout=layout)  # same name: it gets a directory of its own
    assert new.info.location != old.info.location
    assert new.info.location.startswith(old.info.location + "-")
    new.upsert(batch([(1, 5.0, "I", "a")]))
    result = new.vacuum(retain_hours=0, grace_hours=0)
    assert result.orphan_files == 0
    assert files_under(cat, old.info.location) == kept
    assert latest(new) == [(1, 5.0, "a")]


@pytest.mark.local_files(reason=AGED_BY_HAND)
def test_vacuum_leaves_files_older_than_the_table_alone(cat: Catalog, layout: str) -> None:
    # Files put into a table's directory by hand, older than the table: no write of the
    # table made them, so they are not its orphans, whatever their path says.
    t = make_table(cat, layout=layout)
    t.upsert(batch([(1, 1.0, "I", "a")]))
    root = Path(cat.settings.warehouse) / t.info.location
    foreign = root / "p=a" / "from-elsewhere.parquet"
    foreign.write_text("x")
    _age(foreign, 5.0)
    result = t.vacuum(retain_hours=0, grace_hours=0)
    assert (result.orphan_files, result.kept_orphans) == (0, 1)
    assert foreign.exists()
