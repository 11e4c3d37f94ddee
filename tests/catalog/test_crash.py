"""A writer killed (SIGKILL) in the middle of catalog writes leaves the catalog consistent."""

from __future__ import annotations

import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.catalog.workers import CRASH_TABLE, FILES_PER_COMMIT
from versioned.catalog import FileAdd, MetaStore, PartitionCommit
from versioned.schema import TableSpec

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 5


def _run_and_kill(url: str, delay: float) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.catalog.workers", "commit-loop", url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    try:
        ready, _, _ = select.select([child.stdout], [], [], 120)
        line = child.stdout.readline() if ready else ""
        assert line.strip() == "ready", f"writer did not start: {child.stderr.read()}"
        time.sleep(delay)
        assert child.poll() is None, f"writer died on its own: {child.stderr.read()}"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()


@pytest.mark.slow
def test_killed_writers_leave_a_consistent_catalog(catalog_url: str, store: MetaStore) -> None:
    store.create_table(
        TableSpec.build(
            CRASH_TABLE, columns="id BIGINT, p STRING", primary_key="id", partition_by="p"
        )
    )
    rng = random.Random()
    delays = [rng.uniform(0.05, 0.8) for _ in range(ROUNDS)]
    for delay in delays:
        _run_and_kill(catalog_url, delay)
    context = f"kill delays {delays}"

    if catalog_url.startswith("sqlite:///"):
        with sqlite3.connect(catalog_url.removeprefix("sqlite:///")) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert raw.execute("PRAGMA foreign_key_check").fetchall() == []

    history = store.history(CRASH_TABLE)
    seqs = [c.seq for c in history]
    assert len(history) >= ROUNDS, context
    assert seqs == list(range(1, len(history) + 1)), context
    assert store.table(CRASH_TABLE).current_seq == seqs[-1], context
    files = store.all_files(CRASH_TABLE)
    per_commit = Counter(f.added_seq for f in files)
    for commit in history:
        assert per_commit[commit.seq] == commit.metrics["files"] == FILES_PER_COMMIT, context
    assert set(per_commit) == set(seqs), f"files without a commit row; {context}"
    for f in files:
        assert f.removed_seq is None or f.added_seq < f.removed_seq <= seqs[-1], context
    live = store.snapshot(CRASH_TABLE).files
    assert {f.added_seq for f in live} == {seqs[-1]} and len(live) == FILES_PER_COMMIT
    partition = store.partition(CRASH_TABLE, ["p"])
    assert partition.head_version == history[-1].version, context

    committed_txns = {c.txn_id for c in history}
    high = store.txn_snapshot().high_water_mark
    for txn_id in range(1, high + 1):
        state = store.transaction(txn_id).state
        assert (state == "committed") == (txn_id in committed_txns), f"txn {txn_id}; {context}"

    with MetaStore.connect(catalog_url, "alice") as after:
        txn = after.begin()
        add = FileAdd(partition.id, "p=p/after.parquet", "data", txn, 1, 1)
        change = PartitionCommit(
            partition.id,
            partition.head_version,
            txn,
            add=(add,),
            remove=tuple(f.path for f in live),
        )
        commit = after.commit(txn, CRASH_TABLE, operation="upsert", partitions=[change])
        assert commit.seq == seqs[-1] + 1
        assert [f.path for f in after.snapshot(CRASH_TABLE).files] == [add.path]
