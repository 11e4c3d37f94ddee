"""Coordinators in other processes: shipped pickled, they write, the parent commits; a worker
that dies leaves files that are never visible and that vacuum removes."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path
from typing import Any

from tests.mutation import workers
from tests.mutation.tables import ASIA_INDIA, EUROPE_UK, alerts, begun, hive_values, record, values
from versioned import mutation as vm


def _run(target: Any, *args: Any) -> int:
    process = multiprocessing.get_context("spawn").Process(target=target, args=args)
    process.start()
    process.join(timeout=300)
    return int(process.exitcode if process.exitcode is not None else -1)


def test_a_pickled_coordinator_writes_in_another_process_and_the_parent_commits(
    lake: Any,
) -> None:
    table = alerts(lake)
    resolver = vm.BucketIdResolver(table)
    txn = begun(lake, "m.alerts")
    client = txn.client
    shipped = pickle.dumps(client.coordinator(txn, "m.alerts"))
    mutations = [
        ("insert", ASIA_INDIA, record(resolver, 1, "from a worker")),
        ("insert", EUROPE_UK, record(resolver, 2, "from a worker")),
    ]
    assert _run(workers.apply, shipped, mutations) == 0
    assert values(table) == []
    txn.commit()
    assert values(table) == [
        ("Asia", "India", 1, "from a worker"),
        ("Europe", "UK", 2, "from a worker"),
    ]
    assert hive_values(lake, table) == values(table)


def test_the_files_of_a_worker_that_dies_are_never_visible_and_vacuum_removes_them(
    lake: Any,
) -> None:
    table = alerts(lake)
    resolver = vm.BucketIdResolver(table)
    txn = begun(lake, "m.alerts")
    client = txn.client
    dying = [
        ("insert", EUROPE_UK, record(resolver, 2, "lost")),  # written at the group change
        ("insert", ["Europe", "France"], record(resolver, 3, "lost")),
    ]
    coord = client.coordinator(txn, "m.alerts")
    assert _run(workers.apply_and_die, pickle.dumps(coord), dying) == 3
    folder = Path(lake.engine_context.fileio.full_path(table.info.location).removeprefix("file://"))
    orphans = sorted(folder.glob("continent=Europe/country=UK/delta_*/bucket_*"))
    assert orphans  # the dead worker's finished group is on storage
    with client.coordinator(txn, "m.alerts") as survivor:
        survivor.insert(ASIA_INDIA, record(resolver, 1, "kept"))
    txn.commit()
    assert values(table) == [("Asia", "India", 1, "kept")]
    result = table.vacuum(grace_hours=0)
    assert result is not None
    assert [p for p in orphans if p.exists()] == []
    assert hive_values(lake, table) == values(table) == [("Asia", "India", 1, "kept")]
