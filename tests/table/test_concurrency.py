"""Writer processes and a compactor process on one table, on SQLite and on PostgreSQL.

Each run runs one layout (`layout_by_seed`: the other one runs tests/table/test_crash.py in
the same run) on one catalog (`alternating_catalog_url`, tests/conftest.py); consecutive seeds
take every layout on every catalog.

Three writers (two on disjoint partitions, one across all of them, with overlapping keys;
the table's key is unique table-wide and the third writer moves keys between partitions)
and a compactor run at once, each a process with its own SparkSession. Afterwards the table
must equal the committed batches replayed in version order, with no key lost or duplicated.
The writers hold their last batch until a compaction has committed, so at least one
compaction always lands between writes (the rest of the interleaving is left to chance).
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.jvm_processes import JvmProcesses
from tests.support.test_warehouse import warehouse_for
from tests.table.processes import Worker
from tests.table.sales import Row, apply, batch, make_table, model_rows
from versioned.api.catalog import connect
from versioned.layouts.base import layout_of

PARTITIONS = "abc"
KEYS_PER_PARTITION = 30
WRITERS = {0: "a", 1: "b", 2: "abc"}
BATCHES = 3


def _key(partition: str, k: int) -> int:
    return PARTITIONS.index(partition) + len(PARTITIONS) * k  # a key starts in one partition


def _batches(rng: random.Random, writer: int, partitions: str) -> list[list[Row]]:
    batches = []
    for b in range(BATCHES):
        keys = rng.sample(
            [(p, _key(p, k)) for p in partitions for k in range(KEYS_PER_PARTITION)], 12
        )
        rows: list[Row] = []
        for j, (p, key) in enumerate(keys):
            op = rng.choice("IUUD")
            amt = None if op == "D" else float(writer * 1000 + b * 100 + j)
            if len(partitions) > 1 and op != "D" and rng.random() < 0.4:
                p = rng.choice([q for q in partitions if q != p])  # the key moves partition
            rows.append((key, amt, op, p))
        batches.append(rows)
    return batches


@pytest.mark.slow
@pytest.mark.soak  # a minute per parameter: `make soak`, run by CI after `make test`
@pytest.mark.layout_by_seed(1)
def test_writers_and_a_compactor_agree_with_replaying_the_committed_versions(
    spark: Any,
    tmp_path: Path,
    alternating_catalog_url: str,
    layout: str,
    jvm_processes: JvmProcesses,
    seed: int,
) -> None:
    # The compactor process needs compaction: a layout without it refuses here, before the
    # processes start (else the writers would wait for a compaction that never comes).
    layout_of(layout).require("compact")
    catalog_url = alternating_catalog_url
    warehouse = warehouse_for(tmp_path)
    cat = connect(catalog=catalog_url, warehouse=warehouse, spark=spark, user="alice")
    t = make_table(cat, "t.shared", layout=layout)
    initial: list[Row] = [
        (_key(p, k), float(k), "I", p) for p in PARTITIONS for k in range(KEYS_PER_PARTITION)
    ]
    batches_by_version: dict[int, list[Row]] = {t.upsert(batch(initial)).version: initial}
    rng = random.Random(seed)
    plans = {w: _batches(rng, w, parts) for w, parts in WRITERS.items()}
    context = f"seed {seed}, catalog {catalog_url.split(':')[0]}"

    workers = jvm_processes.workers(len(WRITERS) + 1, catalog_url, warehouse, "t.shared", layout)
    writers, compactor = workers[:-1], workers[-1]
    reported: dict[int, list[int]] = {w: [] for w in WRITERS}
    pauses = random.Random(seed)
    compactions: list[dict[str, Any]] = []
    errors: list[BaseException] = []
    writing = threading.Event()
    compacted_once = threading.Event()
    writing.set()

    def write(w: int, worker: Worker) -> None:
        try:
            for b, rows in enumerate(plans[w]):
                time.sleep(pauses.uniform(0.5, 2.0))  # change feeds arrive, not back to back
                if b == BATCHES - 1:  # make sure a compaction lands between the writes
                    assert compacted_once.wait(timeout=600), "no compaction committed"
                result = worker.run({"op": "upsert", "rows": [list(r) for r in rows]})
                reported[w].append(result["version"])
        except BaseException as exc:
            errors.append(exc)

    def compact() -> None:
        try:
            while writing.is_set():
                done = compactor.run({"op": "compact"})
                compactions.append(done)
                if any(p["status"] == "compacted" for p in done["partitions"]):
                    compacted_once.set()
                elif not done["partitions"]:
                    time.sleep(0.5)
            compactions.append(compactor.run({"op": "compact"}))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w, writers[w])) for w in WRITERS]
    threads.append(threading.Thread(target=compact))
    try:
        for thread in threads:
            thread.start()
        for thread in threads[:-1]:
            thread.join(timeout=600)
        writing.clear()
        threads[-1].join(timeout=600)
    finally:
        for worker in workers:
            worker.close()
    assert not errors, f"{errors[0]}; {context}"

    for w, versions in reported.items():
        assert len(versions) == BATCHES, context
        for rows, version in zip(plans[w], versions, strict=True):
            batches_by_version[version] = rows
    history = t.history()
    upserts = [c.version for c in history if c.operation == "upsert"]
    assert sorted(upserts) == sorted(batches_by_version), f"each batch commits once; {context}"
    compacted = [c for c in history if c.operation == "compact"]
    statuses = [p["status"] for c in compactions for p in c["partitions"]]
    context += f", compaction outcomes {statuses}"
    assert compacted, f"no compaction committed; {context}"
    last_upsert = max(c.seq for c in history if c.operation == "upsert")
    assert any(c.seq < last_upsert for c in compacted), f"no compaction between writes; {context}"

    model: dict[int, Any] = {}
    for commit in history:  # commit order; within a partition it is version order
        if commit.operation == "upsert":
            apply(model, batches_by_version[commit.version])
    rows = t.read().select("id", "amt", "p").collect()
    assert len(rows) == len({r["id"] for r in rows}), f"duplicate keys; {context}"
    assert sorted(tuple(r) for r in rows) == model_rows(model), context
    # A commit's version is above the head of every partition it touches, and a write of a
    # key touches the partition holding it, so replaying by version agrees.
    by_version: dict[int, Any] = {}
    for version in sorted(batches_by_version):
        apply(by_version, batches_by_version[version])
    assert model_rows(by_version) == model_rows(model), context
    cat.close()
