"""Catalogs for the page's tests, made without Spark: the streaming ingest client writes
real files and commits them; the catalog's store records stream progress and holds open
transactions and locks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.support.layout_profiles import table_args
from versioned import streaming as vs
from versioned.catalog.records import StreamMark
from versioned.names import TableName

DAYS = ("2024-01-01", "2024-01-02")


def make_table(cat: Any, name: str, layout: str, **kwargs: Any) -> Any:
    """A table of (id, msg, day) partitioned by day, in ``layout``."""
    extra = table_args(layout, buckets=2)
    return cat.create_table(
        name,
        columns="id BIGINT, msg STRING, day STRING",
        primary_key="id",
        partition_by="day",
        layout=layout,
        **extra,
        **kwargs,
    )


def stream(
    cat: Any, name: str, day: str | None, batches: Sequence[Sequence[str]], agent: str
) -> None:
    """Each batch of ``id,msg`` lines as one streaming transaction into partition ``day``
    (lines that do not parse become dead letters)."""
    endpoint = vs.EndPoint(cat, name, partition_values=[day])
    with endpoint.connect(create_partition=True, agent=agent) as conn:
        writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint, dead_letter=True)
        with conn.fetch_transaction_batch(len(batches), writer) as batch:
            for lines in batches:
                batch.begin_next_transaction()
                batch.write_many(list(lines))
                batch.commit()


def fill(cat: Any, name: str, *, commits: int = 6, rows: int = 5) -> None:
    """``commits`` streaming transactions per day partition: new keys, keys written again
    (updates), and every third one a line whose id is not a number (a dead letter); then
    an ``alter`` commit adding a column and a recorded stream batch."""
    for d, day in enumerate(DAYS):
        batches = []
        for i in range(commits):
            base = d * 1000 + i * (rows - 2)  # overlapping keys: each batch updates two
            lines = [f"{base + j},msg {i}-{j}" for j in range(rows)]
            if i % 3 == 2:
                lines.append(f"x{i},not a number")
            batches.append(lines)
        stream(cat, name, day, batches, agent=f"pump-{d}")
    cat.table(name, need="write").add_columns("note STRING")
    store = cat.engine_context.store
    store.record_stream_batch(TableName.parse(name), StreamMark("cdc-job", 7))


def hold_lock(cat: Any, name: str, day: str) -> int:
    """Open a transaction holding a shared-write lock on one partition; returns its id."""
    store = cat.engine_context.store
    txn = store.begin(timeout_s=600)
    store.lock(txn, TableName.parse(name), "shared_write", partition=[day])
    return int(txn)
