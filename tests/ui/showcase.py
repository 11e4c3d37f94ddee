"""A small shop's catalog for the browser tests and the README's screenshots, made without
Spark in a few seconds: orders streamed by one point-of-sale writer per region (keys
written again are updates, malformed lines dead letters), a column added on the way, a
change-data job's recorded batches, a sensor table in the acid layout, a table whose
maintenance policy wants a compaction, and an open transaction holding a lock."""

from __future__ import annotations

import random
from typing import Any

from tests.ui.catalogs import stream
from versioned.catalog.records import StreamMark
from versioned.names import TableName

REGIONS = ("north", "south", "east", "west")
SHOWN = "shop.orders"
"""The table whose page the screenshots show."""


def build_showcase(cat: Any, *, seed: int = 7) -> None:
    """Fill ``cat`` (empty) with the shop's tables."""
    rng = random.Random(seed)
    cat.create_table(
        SHOWN,
        columns="order_id BIGINT, customer STRING, amount DOUBLE, region STRING",
        primary_key="order_id,region",
        partition_by="region",
    )
    for r, region in enumerate(REGIONS):
        batches = []
        for b in range(6 + 2 * r):
            start = r * 10_000 + b * 30
            lines = [
                f"{start + j},{rng.choice(['ann', 'bob', 'cy', 'dee'])},{rng.uniform(5, 500):.2f}"
                for j in range(rng.randint(20, 60))
            ]
            if b > 3:  # later batches correct earlier orders: updates
                lines += [f"{start - 30 + j},ann,{rng.uniform(5, 50):.2f}" for j in range(12)]
            if region == "east" and b >= 5:  # a till that started sending garbage
                lines += [f"#{b}-{j},???,n/a" for j in range(rng.randint(2, 6))]
            batches.append(lines)
        _stream_orders(cat, region, batches)
        if r == 1:
            cat.table(SHOWN, need="write").add_columns("channel STRING")
    cat.table(SHOWN, need="write").set_properties({"auto_compact.min_small_files": "8"})
    store = cat.engine_context.store
    store.record_stream_batch(TableName.parse(SHOWN), StreamMark("cdc-orders", 41))

    cat.create_table(
        "iot.readings",
        columns="id BIGINT, msg STRING, day STRING",
        primary_key="id",
        partition_by="day",
        layout="acid",
        bucket_by="id",
        buckets=2,
    )
    for d, day in enumerate(("2024-03-01", "2024-03-02", "2024-03-03")):
        batches = [[f"{d * 1000 + b * 10 + j},t={20 + j}" for j in range(15)] for b in range(4)]
        stream(cat, "iot.readings", day, batches, agent=f"sensor-{d}")

    cat.create_table("crm.customers", columns="id BIGINT, name STRING", primary_key="id")
    txn = store.begin(timeout_s=3600)
    store.lock(txn, TableName.parse(SHOWN), "shared_write", partition=["east"])


def _stream_orders(cat: Any, region: str, batches: list[list[str]]) -> None:
    from versioned import streaming as vs

    endpoint = vs.EndPoint(cat, SHOWN, partition_values=[region])
    with endpoint.connect(create_partition=True, agent=f"pos-{region}") as conn:
        writer = vs.DelimitedInputWriter(
            ["order_id", "customer", "amount"], ",", endpoint=endpoint, dead_letter=True
        )
        with conn.fetch_transaction_batch(len(batches), writer) as batch:
            for lines in batches:
                batch.begin_next_transaction()
                batch.write_many(lines)
                batch.commit()
