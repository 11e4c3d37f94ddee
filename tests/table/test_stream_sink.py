"""The exactly-once Structured Streaming sink (``foreachBatch(table.stream_writer())``).

Spark replays a micro-batch with the same id when the query died after the sink committed it
but before Spark wrote the batch's commit-log entry; deleting that entry and restarting is the
clean reproduction (apache/paimon#9666). Re-applying the last batch of upserts reads the same,
so what proves exactly-once is the history: one commit per micro-batch that carried rows.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from tests.engine.test_debezium_upsert import EXPECTED, ORDERS, snapshot_then_changes
from tests.support.test_warehouse import files_under
from tests.table.sales import Row, apply, latest, make_table, model_rows
from tests.table.stream_query import forget_last_commit, run_stream, write_batches
from tests.table.workers import COLUMNS
from versioned.api.catalog import Catalog
from versioned.api.stream_sink import StreamSink
from versioned.catalog.records import StreamMark
from versioned.errors import InputError, StreamBatchCommittedError
from versioned.options import WriteOptions

BATCHES: list[list[Row]] = [
    [(1, 1.0, "I", "a"), (2, 2.0, "I", "a"), (3, 3.0, "I", "b")],
    [(1, 10.0, "U", "a"), (2, None, "D", "a"), (4, 4.0, "I", "b")],
    [(3, 30.0, "U", "b"), (5, 5.0, "I", "a"), (4, None, "D", "b")],
]


def _expected(batches: list[list[Row]]) -> list[tuple[Any, ...]]:
    model: dict[int, tuple[float | None, str | None]] = {}
    for rows in batches:
        apply(model, rows)
    return model_rows(model)


def _files(cat: Catalog, location: str) -> set[str]:
    return files_under(cat, location)


@pytest.mark.cluster
def test_a_replayed_micro_batch_is_skipped_and_applied_once(
    cat: Catalog, spark: Any, layout: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    t = make_table(cat, layout=layout)
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    write_batches(source, BATCHES)
    first = run_stream(spark, t, source, checkpoint)
    assert (first.applied, first.skipped) == (3, 0)
    assert len(t.history()) == 3
    query_id = json.loads((checkpoint / "metadata").read_text())["id"]  # kept by Spark
    assert t.stream_progress() == {query_id: 2}
    writer = query_id

    assert forget_last_commit(checkpoint) == 2
    with caplog.at_level(logging.INFO, logger="versioned.api.stream_sink"):
        again = run_stream(spark, t, source, checkpoint)
    assert (again.applied, again.skipped) == (0, 1)
    assert again.last is not None and (again.last.writer_id, again.last.batch_id) == (writer, 2)
    assert [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()] == [
        f"{t.name}: skipped micro-batch 2 of writer {writer}: already applied (a replay)"
    ]
    assert len(t.history()) == 3
    assert latest(t) == _expected(BATCHES)
    assert t.describe()["stream_progress"] == {writer: 2}


def test_the_commit_refuses_a_batch_the_early_check_let_through(
    cat: Catalog, spark: Any, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of one query racing: both pass the early check, one commit wins."""
    t = make_table(cat, layout=layout)
    sink = t.stream_writer(writer_id="etl", op_code_column="op")
    frame = spark.createDataFrame([tuple(r) for r in BATCHES[0]], COLUMNS)
    sink(frame, 0)
    files = _files(cat, t.info.location)
    monkeypatch.setattr(StreamSink, "_done", lambda self, mark: False)
    sink(spark.createDataFrame([tuple(r) for r in BATCHES[1]], COLUMNS), 0)
    assert (sink.applied, sink.skipped) == (1, 1)
    assert len(t.history()) == 1
    assert _files(cat, t.info.location) == files  # the refused write's files are gone
    assert latest(t) == _expected(BATCHES[:1])


def test_a_replay_is_skipped_before_spark_reads_the_batch(
    cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    sink = t.stream_writer(writer_id="etl")
    frame = spark.createDataFrame([tuple(r) for r in BATCHES[0]], COLUMNS)
    sink(frame, 0)
    unreadable = frame.withColumn("amt", F.expr("raise_error('the replay was read')"))
    sink(unreadable.withColumn("amt", F.col("amt").cast("double")), 0)
    assert (sink.applied, sink.skipped) == (1, 1)


def test_an_upsert_with_a_recorded_mark_is_refused_and_writes_nothing(
    cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    frame = spark.createDataFrame([tuple(r) for r in BATCHES[0]], COLUMNS)
    t.upsert(frame, options=WriteOptions(stream_mark=StreamMark("etl", 4)))
    files = _files(cat, t.info.location)
    for batch_id in (4, 3):
        with pytest.raises(StreamBatchCommittedError, match=f"batch {batch_id} of writer 'etl'"):
            t.upsert(frame, options=WriteOptions(stream_mark=StreamMark("etl", batch_id)))
    assert _files(cat, t.info.location) == files
    t.upsert(frame, options=WriteOptions(stream_mark=StreamMark("other", 0)))
    assert len(t.history()) == 2
    assert t.stream_progress() == {"etl": 4, "other": 0}


def test_an_empty_micro_batch_commits_nothing_and_is_recorded(
    cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    sink = t.stream_writer(writer_id="etl")
    sink(spark.createDataFrame([], COLUMNS), 0)
    assert (sink.applied, sink.empty, sink.skipped) == (0, 1, 0)
    assert sink.last is not None and sink.last.outcome == "empty"
    assert t.history() == []
    assert t.stream_progress() == {"etl": 0}
    sink(spark.createDataFrame([], COLUMNS), 0)  # its replay
    assert (sink.empty, sink.skipped) == (1, 1)


def test_a_micro_batch_whose_every_row_is_rejected_commits_its_dead_letters_with_its_mark(
    cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    sink = t.stream_writer(writer_id="etl")
    rejected = spark.createDataFrame([(1, 1.0, "X", "a"), (2, 2.0, "?", "b")], COLUMNS)
    sink(rejected, 0)
    assert (sink.applied, sink.empty, sink.skipped) == (1, 0, 0)
    assert sink.last is not None and sink.last.result.all_rejected
    (commit,) = t.history()
    assert (commit.version, commit.metrics["rejected"]) == (sink.last.result.version, 2)
    assert t.metadata("dead_letters").num_rows == 2
    assert t.stream_progress() == {"etl": 0}
    sink(rejected, 0)  # its replay
    assert (sink.applied, sink.skipped) == (1, 1) and len(t.history()) == 1


def test_an_explicit_writer_id_must_be_reset_before_its_batch_ids_restart(
    cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    frame = spark.createDataFrame([tuple(r) for r in BATCHES[0]], COLUMNS)
    t.stream_writer(writer_id="etl")(frame, 0)
    new_checkpoint = t.stream_writer(writer_id="etl")  # batch ids start at 0 again
    new_checkpoint(spark.createDataFrame([tuple(r) for r in BATCHES[1]], COLUMNS), 0)
    assert new_checkpoint.skipped == 1
    assert t.reset_stream_progress("etl") is True
    assert t.reset_stream_progress("etl") is False
    new_checkpoint(spark.createDataFrame([tuple(r) for r in BATCHES[1]], COLUMNS), 0)
    assert new_checkpoint.applied == 1
    assert latest(t) == _expected(BATCHES[:2])


def test_the_sink_needs_a_writer_id_outside_a_streaming_query(
    cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    sink = t.stream_writer()
    with pytest.raises(InputError, match=r"outside a streaming query.*writer_id="):
        sink(spark.createDataFrame([tuple(r) for r in BATCHES[0]], COLUMNS), 0)
    assert t.history() == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"fromat": "debezium"}, "does not take fromat"),
        ({"options": WriteOptions(stream_mark=StreamMark("x", 1))}, "sets options.stream_mark"),
        ({"writer_id": ""}, "writer id ''"),
    ],
    ids=["unknown-argument", "own-mark", "empty-writer-id"],
)
def test_bad_sink_arguments_fail_when_the_sink_is_made(
    cat: Catalog, layout: str, arguments: dict[str, Any], message: str
) -> None:
    t = make_table(cat, layout=layout)
    with pytest.raises(InputError, match=message):
        t.stream_writer(**arguments)


def test_debezium_events_from_a_kafka_like_stream_land_once(
    cat: Catalog, spark: Any, layout: str, tmp_path: Path
) -> None:
    """The Kafka recipe with files standing in for the topic: ``readStream.text`` gives the
    same one ``value`` column of event texts as ``CAST(value AS STRING) AS value``."""
    t = cat.create_table(
        "shop.orders", columns=ORDERS, primary_key="id", ordering_column="lsn", layout=layout
    )
    source, checkpoint = tmp_path / "topic", tmp_path / "checkpoint"
    snapshot, changes = snapshot_then_changes(tmp_path)
    source.mkdir()
    for number, path in enumerate((snapshot, changes)):
        moved = Path(path).rename(source / f"part-{number}.json")
        os.utime(moved, (1_700_000_000 + number, 1_700_000_000 + number))  # the batch order

    def run() -> StreamSink:
        sink = t.stream_writer(format="debezium", ordering_from="lsn")
        query = (
            spark.readStream.option("maxFilesPerTrigger", 1)
            .text(str(source))
            .selectExpr("CAST(value AS STRING) AS value")
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        return sink

    first = run()
    assert (first.applied, first.skipped) == (2, 0)
    assert first.last is not None and first.last.result is not None
    assert (first.last.result.deleted, first.last.result.tombstones) == (1, 1)
    forget_last_commit(checkpoint)
    assert (run().skipped, len(t.history())) == (1, 2)
    rows = {r["id"]: tuple(r)[1:] for r in t.read().collect()}
    assert rows == EXPECTED


def test_stopping_the_query_during_a_micro_batch_stops_it_cleanly_and_commits_nothing(
    spark: Any, cat: Catalog, layout: str, tmp_path: Path
) -> None:
    # Issue 27 item 13: the batch's Spark job is cancelled by `stop()`; the sink's error must
    # be one Spark recognises as a stop (before, its py4j text, with the Java stack trace,
    # overflowed the stack of the pattern Spark matches it against).
    t = make_table(cat, layout=layout)
    write_batches(tmp_path / "in", BATCHES[:2])
    started = tmp_path / "started"

    @F.udf("boolean")
    def slow(_):  # type: ignore[no-untyped-def]  # hints would make PySpark guess a UDF kind
        # runs in a Python worker: it can only leave a file
        started.touch()
        time.sleep(10)
        return True

    sink = t.stream_writer()
    raised: list[str] = []  # what the sink raised, as PySpark hands it to Spark

    def each(batch: Any, batch_id: int) -> None:
        try:
            sink(batch, batch_id)
        except Exception:
            raised.append(traceback.format_exc())
            raise

    query = (
        spark.readStream.schema(COLUMNS)
        .option("header", "true")
        .option("maxFilesPerTrigger", 1)
        .csv(str(tmp_path / "in"))
        .where(slow(F.col("id")))
        .writeStream.foreachBatch(each)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert started.exists(), "the micro-batch never ran"
        time.sleep(0.5)
    finally:
        query.stop()
    assert query.exception() is None
    # One short error in the form Spark takes for a stop (it was 21 KB: the cancelled job's
    # Java stack trace and every Python frame between).
    (text,) = raised
    assert len(text) < 2_000, text
    assert "InterruptedException: micro-batch 0 stopped with its query" in text, text
    assert [c.operation for c in t.history() if c.operation == "upsert"] == []
    assert sink.applied == 0
    # A restart on the checkpoint applies both batches.
    run_stream(spark, t, tmp_path / "in", tmp_path / "checkpoint")
    assert latest(t) == _expected(BATCHES[:2])
