"""The catalog `benchmarks.ui_latency` times the page on: many tables of many commits.

Streaming 100 tables x 1,000 commits one by one would take about an hour on the 2-core
machine (each commit is a catalog transaction after reading the table's snapshot), so the
catalog is made in two steps, both with real data:

1. a few *template* tables are streamed with the streaming ingest client
   (`versioned.streaming`): real commits (a catalog transaction each) of real files, rows
   written again as updates, malformed lines as dead-letter files, an ``alter`` commit,
   recorded stream batches; half of them in each layout;
2. every other table is a copy of a template made in the catalog's database itself: its
   catalog rows (table, partitions, commits, files, schemas, write ids, stream progress)
   copied under a new table id and name. Its file records name the template's files, so
   reading its dead letters reads real files, as many as the template's.

The catalog (SQLite) and the warehouse live in ``work``; the page reads only the catalog
and the dead-letter files. The copying uses SQLAlchemy's reflection of the catalog's
tables, not versioned's internals: it relies only on every per-table row carrying a
``table_id`` column (and files and locks a ``partition_id``).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

import versioned
from versioned import StreamMark
from versioned import streaming as vs

DATABASE = "bench"
PARTITIONS = 10
ROWS_PER_COMMIT = 20
BATCH = 100
"""Streaming transactions per transaction batch."""


@dataclass(frozen=True)
class BuiltCatalog:
    """Where the catalog is and how long each step took."""

    catalog_url: str
    warehouse: str
    tables: list[str]
    templates: list[str]
    stream_seconds: float
    copy_seconds: float


def table_name(i: int) -> str:
    return f"{DATABASE}.t{i:03d}"


def build(work: Path, *, tables: int, commits: int, templates: int, seed: int = 31) -> BuiltCatalog:
    """A catalog of ``tables`` tables of about ``commits`` commits each in ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    warehouse = str(work / "warehouse")
    url = f"sqlite:///{work / 'catalog.db'}"
    cat = versioned.connect(catalog=url, warehouse=warehouse, user="bench")
    started = time.monotonic()
    rng = random.Random(seed)
    names = [table_name(i) for i in range(templates)]
    for i, name in enumerate(names):
        _stream_template(cat, name, "versioned" if i % 2 == 0 else "acid", commits, rng)
    streamed = time.monotonic() - started
    cat.close()
    started = time.monotonic()
    engine = sa.create_engine(url)
    copies = [table_name(i) for i in range(templates, tables)]
    with engine.begin() as connection:
        meta = sa.MetaData()
        meta.reflect(connection)
        for i, name in enumerate(copies):
            _copy_table(connection, meta, names[i % len(names)], name)
    engine.dispose()
    return BuiltCatalog(
        catalog_url=url,
        warehouse=warehouse,
        tables=names + copies,
        templates=names,
        stream_seconds=streamed,
        copy_seconds=time.monotonic() - started,
    )


def _stream_template(cat: Any, name: str, layout: str, commits: int, rng: random.Random) -> None:
    extra = {"bucket_by": "id", "buckets": 2} if layout == "acid" else {}
    cat.create_table(
        name,
        columns="id BIGINT, msg STRING, day STRING",
        primary_key="id,day",
        partition_by="day",
        layout=layout,
        **extra,
    )
    days = [f"2024-01-{d + 1:02d}" for d in range(PARTITIONS)]
    written = dict.fromkeys(days, 0)
    done = 0
    while done < commits - 1:
        day = days[(done // BATCH) % PARTITIONS]
        n = min(BATCH, commits - 1 - done)
        endpoint = vs.EndPoint(cat, name, partition_values=[day])
        with endpoint.connect(create_partition=True, agent=f"pump-{day}") as conn:
            writer = vs.DelimitedInputWriter(
                ["id", "msg"], ",", endpoint=endpoint, dead_letter=True
            )
            with conn.fetch_transaction_batch(n, writer) as batch:
                for k in range(n):
                    batch.begin_next_transaction()
                    batch.write_many(_lines(written[day], done + k, rng))
                    written[day] += ROWS_PER_COMMIT // 2
                    batch.commit()
        done += n
    cat.table(name, need="write").add_columns("note STRING")
    store, table = cat.engine_context.store, cat.table(name)
    for writer_id, batch_id in (("cdc-a", 17), ("cdc-b", 4)):
        store.record_stream_batch(table.name, StreamMark(writer_id, batch_id))


def commit_one(cat: Any, name: str, day: str, line: str) -> None:
    """One streamed transaction of one line into partition ``day`` of table ``name``."""
    endpoint = vs.EndPoint(cat, name, partition_values=[day])
    with endpoint.connect(agent="bench-late") as conn:
        writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
        with conn.fetch_transaction_batch(1, writer) as batch:
            batch.begin_next_transaction()
            batch.write(line)
            batch.commit()


def hold_lock(cat: Any, name: str) -> int:
    """An open transaction holding a shared-write lock on the table; its id."""
    store, table = cat.engine_context.store, cat.table(name)
    txn = int(store.begin(timeout_s=3600))
    store.lock(txn, table.name, "shared_write")
    return txn


def _lines(first_new: int, commit: int, rng: random.Random) -> list[str]:
    """Half new keys, half keys written before (updates), and every tenth commit a few
    lines whose id is not a number (dead letters)."""
    half = ROWS_PER_COMMIT // 2
    new = [f"{first_new + j},new {commit}" for j in range(half)]
    old = [f"{rng.randrange(max(first_new, 1))},upd {commit}" for _ in range(half)]
    bad = [f"x{commit}-{j},bad" for j in range(rng.randint(1, 3))] if commit % 10 == 9 else []
    return new + old + bad


def _copy_table(connection: Any, meta: sa.MetaData, source: str, target: str) -> None:
    """Copy ``source``'s catalog rows as table ``target`` (same database)."""
    tables_t = meta.tables["tables"]
    table = target.partition(".")[2]  # the same database as the source
    row = (
        connection.execute(sa.select(tables_t).where(tables_t.c.name == source.partition(".")[2]))
        .mappings()
        .one()
    )
    copy = {k: v for k, v in row.items() if k != "id"}
    copy["name"] = table
    new_id = connection.execute(sa.insert(tables_t).values(**copy)).inserted_primary_key[0]
    partitions = meta.tables["partitions"]
    mapping: dict[int, int] = {}
    for part in connection.execute(
        sa.select(partitions).where(partitions.c.table_id == row["id"])
    ).mappings():
        values = {k: v for k, v in part.items() if k != "id"} | {"table_id": new_id}
        mapping[part["id"]] = connection.execute(
            sa.insert(partitions).values(**values)
        ).inserted_primary_key[0]
    for name, t in meta.tables.items():
        if name in ("tables", "partitions", "locks", "grants") or "table_id" not in t.c:
            continue
        own_key = [c.name for c in t.primary_key.columns] == ["id"]
        rows = []
        for r in connection.execute(sa.select(t).where(t.c.table_id == row["id"])).mappings():
            values = {k: v for k, v in r.items() if not (own_key and k == "id")}
            values["table_id"] = new_id
            if values.get("partition_id") is not None:
                values["partition_id"] = mapping[values["partition_id"]]
            rows.append(values)
        if rows:
            connection.execute(sa.insert(t), rows)
