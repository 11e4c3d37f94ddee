"""A writer or compactor process driven over stdin, for the multi-process and crash tests.

``python -m tests.table.workers CATALOG_URL WAREHOUSE TABLE LAYOUT [TXN_TIMEOUT_S]`` starts
its own SparkSession (local[1]), opens the table (which must have the layout the test runs
for), prints ``ready`` and then runs one command per stdin line:

* ``{"op": "upsert", "rows": [[id, amt, op, p], ...]}``
* ``{"op": "compact"}``
* ``{"op": "stream", "source": DIR, "checkpoint": DIR, "pause_s": S[, "pause_batch": N]}``:
  a streaming query over the CSV files in ``source`` into
  ``foreachBatch(table.stream_writer(...))``, one file per micro-batch
  (`tests.table.stream_query`); after each batch it prints ``P batch N <outcome>`` and sleeps
  ``pause_s`` before Spark records the batch (only after batch ``pause_batch`` when given).
  The result is the sink's counters.
* ``{"op": "exit"}``

While a command runs every progress message is printed as ``P <message>``; the command ends
with ``R <json>`` (its result) or ``E <traceback>``. The crash tests kill the process with
SIGKILL between or after progress messages.
"""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
import traceback
from typing import Any

import pyarrow as pa

COLUMNS = "id BIGINT, amt DOUBLE, op STRING, p STRING"


def batch_table(rows: list[list[Any]]) -> pa.Table:
    """The Arrow table of a batch of ``[id, amt, op, p]`` rows."""
    ids, amts, ops, parts = zip(*rows, strict=True) if rows else ((), (), (), ())
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "amt": pa.array(amts, pa.float64()),
            "op": pa.array(ops, pa.string()),
            "p": pa.array(parts, pa.string()),
        }
    )


def _say(line: str) -> None:
    sys.stdout.write(line.replace("\n", " ") + "\n")
    sys.stdout.flush()


def serve(url: str, warehouse: str, table_name: str, layout: str, txn_timeout_s: float) -> None:
    """Run commands from stdin until ``exit`` or end of input."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks when stuck
    import versioned
    from tests.support.class_archive import archive_options
    from tests.support.spark_settings import LOCAL_INTERPRETED, SHORT_LIVED_JVM, hive_common_first
    from versioned.engine.spark.session import get_or_create_spark
    from versioned.options import CompactionOptions, WriteOptions

    spark = get_or_create_spark(
        "local[1]",
        "versioned-test-worker",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
            **LOCAL_INTERPRETED,
            **hive_common_first(),  # the classpath of the class archive (its test made it)
            "spark.driver.extraJavaOptions": f"{SHORT_LIVED_JVM} {archive_options()}",
        },
        archive=False,
    )
    catalog = versioned.connect(catalog=url, warehouse=warehouse, spark=spark, user="alice")
    table = catalog.table(table_name)
    if table.spec.layout != layout:
        raise SystemExit(f"{table_name} has the {table.spec.layout} layout, not {layout}")
    spark.range(4).count()  # start the executor before timing starts
    write_options = WriteOptions(txn_timeout_s=txn_timeout_s, max_attempts=10)
    compact_options = CompactionOptions(txn_timeout_s=txn_timeout_s)
    _say("ready")
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        try:
            if op == "exit":
                break
            if op == "upsert":
                result: Any = table.upsert(
                    batch_table(command["rows"]),
                    options=write_options,
                    progress=lambda m: _say(f"P {m}"),
                )
                _say("R " + json.dumps(result.to_dict()))
            elif op == "stream":
                _say("R " + json.dumps(_stream(spark, table, command, write_options)))
            elif op == "compact":
                done = table.compact(options=compact_options, progress=lambda m: _say(f"P {m}"))
                _say("R " + json.dumps(done.to_dict()))
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception:
            _say("E " + json.dumps(traceback.format_exc()))
    catalog.close()


def _stream(spark: Any, table: Any, command: dict[str, Any], options: Any) -> dict[str, Any]:
    """Run the ``stream`` command (see the module docstring)."""
    import time
    from pathlib import Path

    from tests.table.stream_query import run_stream

    sink: Any = None

    def after_batch(batch_id: int) -> None:
        _say(f"P batch {batch_id} {sink.last.outcome}")
        if command.get("pause_batch", batch_id) == batch_id:
            time.sleep(command.get("pause_s", 0))

    sink = table.stream_writer(options=options, progress=lambda m: _say(f"P {m}"))
    sink = run_stream(
        spark,
        table,
        Path(command["source"]),
        Path(command["checkpoint"]),
        sink=sink,
        after_batch=after_batch,
    )
    return {"applied": sink.applied, "empty": sink.empty, "skipped": sink.skipped}


if __name__ == "__main__":
    if len(sys.argv) < 5:
        raise SystemExit(
            "usage: python -m tests.table.workers URL WAREHOUSE TABLE LAYOUT [TIMEOUT]"
        )
    url, warehouse, table, layout = sys.argv[1:5]
    serve(url, warehouse, table, layout, float(sys.argv[5]) if len(sys.argv) > 5 else 60)
