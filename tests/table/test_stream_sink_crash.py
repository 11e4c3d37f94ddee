"""A streaming query into the sink, SIGKILLed mid-stream and restarted on its checkpoint.

The query runs in a worker process (`tests.table.workers`, command ``stream``). Whatever the
kill point, the table must end with exactly the rows of all batches applied in order, and one
commit per micro-batch: a batch committed by the sink just before the kill, which Spark
replays on restart, must be skipped, and a batch killed before its commit must be applied by
the restart.

A micro-batch is Spark's, not a file's: a kill after the file source logged its next file
but before Spark wrote the batch's offsets makes the restart take two files in one
micro-batch (`test_a_micro_batch_spark_merges_after_a_crash_is_applied_once` shows it
without a kill). The files here are sized so that a merged batch reads its files in file
order (Spark reads the larger file of a partition first), so the final rows do not depend on
where a kill landed.
"""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.jvm_processes import JvmProcesses
from tests.table.processes import Worker
from tests.table.sales import Row, apply, latest, make_table, model_rows
from tests.table.stream_query import micro_batches, run_stream, write_batches
from versioned.api.catalog import Catalog

pytestmark = pytest.mark.slow

BATCHES: list[list[Row]] = [
    [(1, 1.0, "I", "a"), (2, 2.0, "I", "a"), (3, 3.0, "I", "b")],
    [(1, 10.0, "U", "a"), (2, None, "D", "a"), (4, 4.0, "I", "b")],
    [(3, 30.0, "U", "b"), (5, 5.0, "I", "a"), (4, None, "D", "b")],
    [(1, 100.0, "U", "a"), (6, 6.0, "I", "b"), (2, 2.5, "I", "b")],
]


def _expected() -> list[tuple[Any, ...]]:
    model: dict[int, tuple[float | None, str | None]] = {}
    for rows in BATCHES:
        apply(model, rows)
    return model_rows(model)


def _stream(tmp_path: Path, pause_s: float, pause_batch: int | None = None) -> dict[str, Any]:
    """The worker's ``stream`` command: a pause of ``pause_s`` after each batch, or only
    after batch ``pause_batch``."""
    command = {
        "op": "stream",
        "source": str(tmp_path / "in"),
        "checkpoint": str(tmp_path / "checkpoint"),
        "pause_s": pause_s,
    }
    return command if pause_batch is None else {**command, "pause_batch": pause_batch}


def _kill_after(worker: Worker, marker: str, delay: float = 0.0) -> str:
    """SIGKILL the worker ``delay`` s after its progress message containing ``marker``;
    returns the message, or ``finished`` when the command ended first."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = worker.read_line(max(0.1, deadline - time.monotonic()))
        assert line is not None, f"worker died on its own:\n{worker.stderr_tail()}"
        if line.startswith(("R ", "E ")):
            assert line.startswith("R "), line
            return "finished"
        if marker in line:
            time.sleep(delay)
            worker.kill()
            return line[2:]
    raise AssertionError(f"the stream did not reach {marker!r}")


def _workers(jvm: JvmProcesses, cat: Catalog, name: str, layout: str, count: int) -> list[Worker]:
    settings = cat.settings
    return jvm.workers(count, settings.catalog_url, str(settings.warehouse), name, layout)


# Two query processes (two JVMs starting at once) and a SIGKILL: `make soak`, one layout a run
# (the next test takes the other).
@pytest.mark.soak
@pytest.mark.layout_by_seed(0)
def test_a_batch_committed_just_before_a_kill_is_skipped_on_restart(
    cat: Catalog, layout: str, tmp_path: Path, jvm_processes: JvmProcesses
) -> None:
    t = make_table(cat, layout=layout)
    write_batches(tmp_path / "in", BATCHES)
    first, second = _workers(jvm_processes, cat, str(t.name), layout, 2)  # both JVMs start at once
    try:
        # The sink committed batch 1; Spark has not written commits/1 when the kill lands
        # (the query pauses there; a pause after every batch cost a minute of waiting).
        first.send(_stream(tmp_path, pause_s=60, pause_batch=1))
        assert _kill_after(first, "batch 1 applied") == "batch 1 applied"
        assert len(t.history()) == 2
        result = second.run(_stream(tmp_path, pause_s=0))
    finally:
        for worker in (first, second):
            worker.kill()
            worker.close()
    assert result == {"applied": 2, "empty": 0, "skipped": 1}
    assert len(t.history()) == len(BATCHES)
    assert latest(t) == _expected()
    assert list(t.stream_progress().values()) == [len(BATCHES) - 1]


# Up to four JVM starts, one after the other: `make soak`, one layout a run (the other of the
# test above).
@pytest.mark.soak
@pytest.mark.layout_by_seed(1)
def test_kills_at_random_points_apply_every_batch_exactly_once(
    cat: Catalog, layout: str, tmp_path: Path, seed: int, jvm_processes: JvmProcesses
) -> None:
    # The kill points come from the run's seed (printed in pytest's header): each commit of
    # the project tries others, and a failure replays with $VERSIONED_TEST_SEED.
    rng = random.Random(seed)
    t = make_table(cat, layout=layout)
    write_batches(tmp_path / "in", BATCHES)
    marks = ["reading the batch", "writing ", "committed version", "applied"]
    kills: list[str] = []
    for _ in range(3):
        (worker,) = _workers(jvm_processes, cat, str(t.name), layout, 1)
        try:
            worker.send(_stream(tmp_path, pause_s=rng.choice([0.0, 0.5])))
            reached = _kill_after(worker, rng.choice(marks), delay=rng.random())
        finally:
            worker.kill()
            worker.close()
        kills.append(reached)
        if reached == "finished":
            break
    (worker,) = _workers(jvm_processes, cat, str(t.name), layout, 1)
    try:
        worker.run(_stream(tmp_path, pause_s=0))
    finally:
        worker.close()
    # One version per micro-batch Spark ran, and the micro-batches took every file.
    ran = micro_batches(tmp_path / "checkpoint")
    assert len(t.history()) == len(ran), f"seed {seed}, kills {kills}, micro-batches {ran}"
    assert ran[-1][1] == len(BATCHES) - 1, f"seed {seed}, kills {kills}, micro-batches {ran}"
    assert latest(t) == _expected(), f"seed {seed}, kills {kills}, micro-batches {ran}"


@pytest.mark.soak  # two streaming queries in the shared session (~20 s): `make soak`
def test_a_micro_batch_spark_merges_after_a_crash_is_applied_once(
    spark: Any, cat: Catalog, layout: str, tmp_path: Path
) -> None:
    # A first query runs every batch. Its checkpoint, cut back to the moment after the file
    # source logged file 1 but before Spark wrote offsets/1, is where a kill can leave a
    # query: the restart's micro-batch 1 then takes files 1 and 2 together.
    write_batches(tmp_path / "in", BATCHES)
    run_stream(spark, make_table(cat, "t.first", layout=layout), tmp_path / "in", tmp_path / "a")
    cut = tmp_path / "cut"
    shutil.copytree(tmp_path / "a", cut)
    for log, batch_ids in (("offsets", (1, 2, 3)), ("commits", (1, 2, 3)), ("sources/0", (2, 3))):
        for batch_id in batch_ids:
            (cut / log / str(batch_id)).unlink()
            (cut / log / f".{batch_id}.crc").unlink(missing_ok=True)
    t = make_table(cat, layout=layout)
    sink = run_stream(spark, t, tmp_path / "in", cut)
    assert micro_batches(cut) == [(0, 0), (1, 2), (2, 3)]  # batch 1 took files 1 and 2
    assert (sink.applied, sink.skipped) == (2, 0)  # batch 0 is the first query's, not t's
    assert len(t.history()) == 2
    model: dict[int, tuple[float | None, str | None]] = {}
    for rows in BATCHES[1:]:
        apply(model, rows)
    assert latest(t) == model_rows(model)
