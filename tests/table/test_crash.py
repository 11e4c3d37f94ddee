"""Upsert and compaction processes killed with SIGKILL at random points, on SQLite and PostgreSQL.

Each run takes the kill points from its seed and runs one layout (`layout_by_seed`: the other
one runs tests/table/test_concurrency.py in the same run) on one catalog
(`alternating_catalog_url`, tests/conftest.py); consecutive seeds take every layout on every
catalog.

The table maintains itself after every write (``auto_compact`` with thresholds every write
crosses), so an upsert can also die in the compaction it runs after its commit: it then reads
as after the upsert. After each kill the table must read exactly as before or exactly as
after the operation, and a new upsert must work. At the end, once the killed processes'
transactions have expired, vacuum (grace 0) must leave no file under the table that the
catalog does not list, except the dead-letter folder.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.jvm_processes import JvmProcesses
from tests.support.test_warehouse import warehouse_for
from tests.table.processes import Worker
from tests.table.sales import Row, apply, batch, latest, make_table, model_rows
from versioned.api.catalog import connect
from versioned.layouts.base import layout_of

TXN_TIMEOUT_S = 4.0
# Kill points: after the progress message containing the stage, plus a random delay.
# An upsert's "auto compaction" stages come after its commit: the table's own maintenance
# (EAGER below makes every write run it), killed while it writes or commits.
STAGES = {
    "upsert": [
        "reading the batch",
        "{lookup}",
        "writing ",
        "committed version",
        "auto compaction: ",
        "auto compaction: t.crash [1/",
    ],
    "compact": ["reading ", "writing ", "committing", "committed version"],
}
EAGER = {
    "auto_compact.min_rows": "0",
    "auto_compact.min_versions": "2",
    "compactor.delta.num.threshold": "1",
    "compactor.delta.pct.threshold": "0",
}
# How a write finds the stored keys of its batch, per layout.
LOOKUP = {"versioned": "probing Bloom filters", "acid": "looking up the stored rows"}
ROUNDS = ["upsert", "compact", "upsert", "compact"]


def _unlisted(cat: Any, t: Any) -> set[str]:
    root = Path(cat.settings.warehouse) / t.info.location
    listed = {f.path for f in cat.engine_context.store.all_files(t.name)}
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    return {p for p in on_disk - listed if not p.startswith("_dead_letter/")}


def _kill_during(worker: Worker, op: str, stage: str, delay: float, rows: list[Row]) -> str:
    """Start ``op`` in the worker and SIGKILL it ``delay`` s after the ``stage`` message.

    Returns what the worker got to: the last progress message, or ``finished``.
    """
    worker.send({"op": op, "rows": [list(r) for r in rows]} if op == "upsert" else {"op": op})
    reached = "started"
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            line = worker.read_line(max(0.1, deadline - time.monotonic()))
            assert line is not None, f"worker died on its own:\n{worker.stderr_tail()}"
            if line.startswith(("R ", "E ")):
                assert line.startswith("R "), line
                return "finished"
            reached = line[2:]
            if stage in reached:
                time.sleep(delay)
                return reached
        raise AssertionError(f"{op} did not reach {stage!r}")
    finally:
        worker.kill()


@pytest.mark.slow
@pytest.mark.soak  # a minute per parameter: `make soak`, run by CI after `make test`
@pytest.mark.layout_by_seed(0)
def test_killed_upserts_and_compactions_leave_the_table_before_or_after(
    spark: Any,
    tmp_path: Path,
    alternating_catalog_url: str,
    layout: str,
    jvm_processes: JvmProcesses,
    seed: int,
) -> None:
    # Half the rounds kill compactions, and vacuum cleans up: a layout without them refuses
    # here, before the processes start.
    for operation in ("compact", "vacuum"):
        layout_of(layout).require(operation)
    catalog_url = alternating_catalog_url
    warehouse = warehouse_for(tmp_path)
    cat = connect(catalog=catalog_url, warehouse=warehouse, spark=spark, user="alice")
    t = make_table(cat, "t.crash", layout=layout, properties=EAGER)
    model: dict[int, Any] = {}
    for v in range(3):  # several versions, so compaction has work in both partitions
        rows: list[Row] = [(i, float(v * 100 + i), "I", "ab"[i % 2]) for i in range(v, 40, 2)]
        t.upsert(batch(rows))
        apply(model, rows)
    rng = random.Random(seed)  # from the run's seed, printed in pytest's header
    # The first round of each kind dies while writing files, the second upsert in the
    # compaction its maintenance runs, the last compaction anywhere.
    fixed = {0: "writing ", 1: "writing ", 2: STAGES["upsert"][-1]}
    plan = [
        (
            op,
            fixed.get(i) or rng.choice(STAGES[op]).format(lookup=LOOKUP[layout]),
            rng.uniform(0.0, 0.6),
        )
        for i, op in enumerate(ROUNDS)
    ]
    context = f"seed {seed}, plan {plan}, catalog {catalog_url.split(':')[0]}"
    workers = jvm_processes.workers(
        len(plan), catalog_url, warehouse, "t.crash", layout, txn_timeout_s=TXN_TIMEOUT_S
    )
    outcomes = []
    try:
        for n, ((op, stage, delay), worker) in enumerate(zip(plan, workers, strict=True)):
            before = model_rows(model)
            before_files = {f.path for f in t.snapshot().files}
            commits = len(t.history())
            rows = []
            if op == "upsert":
                rows = [(1000 + n, 1.0, "I", "a"), (n, -1.0, "U", "ab"[n % 2])]
                rows.append((n + 2, None, "D", "ab"[n % 2]))
            after_model = dict(model)
            apply(after_model, rows)
            after = model_rows(after_model)

            reached = _kill_during(worker, op, stage, delay, rows)
            now = latest(t)
            assert now in (before, after), f"round {n} killed after {reached!r}; {context}"
            outcomes.append((op, reached, "after" if now == after != before else "before"))
            if stage == STAGES["upsert"][-1]:  # killed in its maintenance: the write stands
                assert "auto compaction" in reached and now == after, f"{outcomes}; {context}"
            if now == after:
                model = after_model
            history = t.history()
            if len(history) == commits:
                assert {f.path for f in t.snapshot().files} == before_files, context
            else:  # the operation, then the compactions its maintenance committed
                assert history[commits].operation == op, context
                assert {c.operation for c in history[commits + 1 :]} <= {"compact"}, context

            fresh: list[Row] = [(2000 + n, 2.0, "I", "b"), (n + 10, 3.0, "U", "ab"[n % 2])]
            t.upsert(batch(fresh))  # the table takes new writes at once
            apply(model, fresh)
            assert latest(t) == model_rows(model), f"round {n}; {context}"
    finally:
        for worker in workers:
            worker.close()

    deadline = time.monotonic() + 10 * TXN_TIMEOUT_S
    while cat.engine_context.store.txn_snapshot().open_ids and time.monotonic() < deadline:
        time.sleep(0.5)
        cat.engine_context.store.reap_expired()
    assert not cat.engine_context.store.txn_snapshot().open_ids, context
    orphans = _unlisted(cat, t)
    result = t.vacuum(grace_hours=0)
    assert result.orphan_files == len(orphans), f"{outcomes}; {context}"
    assert _unlisted(cat, t) == set(), f"{outcomes}; {context}"
    assert latest(t) == model_rows(model), context
    t.compact()
    assert latest(t) == model_rows(model), context
    cat.close()
