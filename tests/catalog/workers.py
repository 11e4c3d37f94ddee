"""Code that runs in child processes of the multi-process catalog tests.

Spawned children import this module by name, so it holds only top-level functions. Run as
``python -m tests.catalog.workers commit-loop URL`` it commits forever (the crash test kills
it).
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from versioned.catalog import FileAdd, MetaStore, PartitionCommit
from versioned.catalog.write_transaction import write_transaction
from versioned.errors import VersionedError
from versioned.names import TableName
from versioned.storage.filesystem import FileIO

FILES_PER_COMMIT = 200
CRASH_TABLE = TableName("crash", "events")


def _report(queue: Any, work: Any) -> None:
    try:
        queue.put(("ok", work()))
    except BaseException:
        queue.put(("error", traceback.format_exc()))


def allocate_ids(url: str, barrier: Any, queue: Any, rounds: int, batch: int) -> None:
    """Connect (maybe creating the schema) at the same moment as the others, then open
    ``rounds`` batches of ``batch`` transactions; reports the list of batches."""

    def work() -> list[list[int]]:
        barrier.wait(timeout=60)
        store = MetaStore.connect(url, "alice")
        try:
            return [store.open_transactions(batch, timeout_s=60) for _ in range(rounds)]
        finally:
            store.close()

    _report(queue, work)


def create_partition(url: str, barrier: Any, queue: Any, values: list[str | None]) -> None:
    """Create the same partition as the other processes, released together by a barrier."""

    def work() -> int:
        store = MetaStore.connect(url, "alice")
        try:
            barrier.wait(timeout=60)
            return store.add_partition(TableName("sales", "orders"), values).id
        finally:
            store.close()

    _report(queue, work)


def commit_loop(url: str) -> None:
    """Commit batches of files forever, each retiring the previous batch; prints ``ready``
    after the first commit. Most of its time is spent inside `MetaStore.commit`."""
    store = MetaStore.connect(url, "alice")
    partition = store.add_partition(CRASH_TABLE, ["p"])
    snap = store.snapshot(CRASH_TABLE)
    head = snap.partitions[partition.id].head_version
    live = tuple(f.path for f in snap.files)
    first = True
    while True:
        txn = store.begin(timeout_s=60)
        adds = tuple(
            FileAdd(partition.id, f"p=p/version_id={txn}/part-{i}.parquet", "data", txn, 10, 1)
            for i in range(FILES_PER_COMMIT)
        )
        change = PartitionCommit(
            partition.id, expected_head=head, new_head=txn, add=adds, remove=live
        )
        store.commit(
            txn,
            CRASH_TABLE,
            operation="upsert",
            partitions=[change],
            metrics={"files": FILES_PER_COMMIT},
        )
        head, live = txn, tuple(a.path for a in adds)
        if first:
            print("ready", flush=True)
            first = False


def stalled_commit(url: str, warehouse: str, timeout_s: float) -> None:
    """Open a write transaction, write a file, print ``txn <id>``, wait for a line on stdin
    (the test stops this process meanwhile, so no heartbeat goes out), then try to commit;
    prints the outcome: ``committed`` or the error's class name."""
    store = MetaStore.connect(url, "alice")
    fileio = FileIO.for_root(warehouse)
    table = TableName("sales", "orders")
    partition = store.add_partition(table, ["s1", "2024-01-01"])
    outcome = "committed"
    try:
        with write_transaction(store, table, timeout_s=timeout_s, fileio=fileio) as tx:
            rel = tx.own_file(f"stalled/version_id={tx.id}/part-0.parquet")
            fileio.write_bytes_atomic(rel, b"rows")
            print(f"txn {tx.id}", flush=True)
            sys.stdin.readline()
            add = FileAdd(partition.id, rel, "data", tx.id, 4, 1)
            tx.commit(
                operation="upsert",
                partitions=[PartitionCommit(partition.id, None, tx.id, add=(add,))],
            )
    except VersionedError as err:
        outcome = type(err).__name__
    print(outcome, flush=True)
    store.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["commit-loop"]:
        commit_loop(sys.argv[2])
    elif sys.argv[1:2] == ["stalled-commit"]:
        stalled_commit(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        raise SystemExit(
            "usage: python -m tests.catalog.workers commit-loop URL | "
            "stalled-commit URL WAREHOUSE TIMEOUT_S"
        )
