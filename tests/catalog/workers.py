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
from versioned.names import TableName

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


if __name__ == "__main__":
    if sys.argv[1:2] == ["commit-loop"]:
        commit_loop(sys.argv[2])
    else:
        raise SystemExit("usage: python -m tests.catalog.workers commit-loop URL")
