"""A Structured Streaming query into a table's sink, as the sink tests and workers run it.

The source is a folder of CSV files of ``(id, amt, op, p)`` rows, one micro-batch per file
(``maxFilesPerTrigger=1``), taken oldest first: `write_batches` gives the files increasing
modification times so that the batch order is the file order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.table.sales import Row
from tests.table.workers import COLUMNS
from versioned.api.stream_sink import StreamSink
from versioned.api.table import Table

_EPOCH = 1_700_000_000


def write_batches(folder: Path, batches: list[list[Row]]) -> None:
    """One CSV file (with header) per batch, in batch order."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, rows in enumerate(batches):
        path = folder / f"batch-{number:03d}.csv"
        lines = ["id,amt,op,p"] + [",".join("" if v is None else str(v) for v in r) for r in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.utime(path, (_EPOCH + number, _EPOCH + number))


def run_stream(
    spark: Any,
    table: Table,
    source: Path,
    checkpoint: Path,
    *,
    sink: StreamSink | None = None,
    after_batch: Callable[[int], None] | None = None,
    **sink_options: Any,
) -> StreamSink:
    """Run the query over every file not yet processed (``availableNow``) and return its sink
    (``sink``, or ``table.stream_writer(**sink_options)``).

    ``after_batch`` runs after the sink handled a batch, inside ``foreachBatch``: before
    Spark records the batch in the checkpoint's commit log.
    """
    sink = sink or table.stream_writer(**sink_options)

    def each(batch: Any, batch_id: int) -> None:
        sink(batch, batch_id)
        if after_batch is not None:
            after_batch(batch_id)

    query = (
        spark.readStream.schema(COLUMNS)
        .option("header", "true")
        .option("maxFilesPerTrigger", 1)
        .csv(str(source))
        .writeStream.foreachBatch(each)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return sink


def micro_batches(checkpoint: Path) -> list[tuple[int, int]]:
    """The micro-batches a query on ``checkpoint`` committed, as ``(batch id, last file)``
    pairs: the file source's log offset is the number of the batch's last file (0-based) as
    `write_batches` wrote them, one file per log entry."""
    batches = []
    for entry in sorted((checkpoint / "commits").iterdir(), key=lambda p: p.name):
        if entry.name.isdigit():
            offsets = (checkpoint / "offsets" / entry.name).read_text().splitlines()
            batches.append((int(entry.name), json.loads(offsets[-1])["logOffset"]))
    return sorted(batches)


def forget_last_commit(checkpoint: Path) -> int:
    """Delete the commit-log entry of the last batch, as a query that died right after the
    sink committed leaves it; returns that batch id (Spark replays it on restart)."""
    commits = checkpoint / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    return last
