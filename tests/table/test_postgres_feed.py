"""A real PostgreSQL table's change stream, replayed through `versioned upsert`, gives exactly
PostgreSQL's table.

Seeded random OLTP transactions (`tests.table.oltp_workload`) run on a table of a fresh
database of the test cluster in rounds. After each round the changes of a ``test_decoding``
slot (`tests.support.pg_logical`) become a change feed: the table's columns, op codes
``I``/``U``/``D`` in ``op`` (a key change is a delete and an insert; a delete carries only
the key) and the change's WAL position in ``lsn``, the lake table's ordering column. Round
1 goes through the command line (`versioned upsert`, in-process) as a JSON Lines file
(numbers keep every digit, text keeps ``""`` apart from null); the others through
`Table.upsert` as an Arrow table. The lake table is partitioned by a column outside the
key, so updates move rows between partitions. It is compacted after rounds 2 and 4 (the
acid layout: minor, then major). After each compaction and at the end ``read()`` must equal
``SELECT * FROM source`` value for value and type for type, and ``read(as_of=V)`` the
source as it was when round V was applied. ``PG_FEED_SEED=n`` runs other transactions.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
from collections.abc import Iterator
from decimal import Decimal
from functools import reduce
from pathlib import Path
from typing import Any, Literal

import psycopg
import pyarrow as pa
import pytest
from click.testing import CliRunner
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tests.support.layout_profiles import table_args
from tests.support.pg_logical import (
    UNCHANGED_TOAST,
    change_rows,
    connect,
    create_slot,
    drop_slot,
    read_changes,
)
from tests.support.postgres import PgCluster
from tests.support.test_warehouse import warehouse_for
from tests.table.oltp_workload import COLUMNS, SOURCE_DDL, Workload
from versioned.api.catalog import Catalog
from versioned.api.catalog import connect as connect_catalog
from versioned.api.table import Table
from versioned.cli.main import cli
from versioned.options import CompactionOptions

SEED = int(os.environ.get("PG_FEED_SEED", "20240601"))  # in every failure message: replay it
ROUNDS = 6
TRANSACTIONS_PER_ROUND = 18
API_ROUNDS = {2, 3, 4, 5, 6}  # through Table.upsert; round 1 through the command line
COMPACT_AFTER: dict[int, Literal["minor", "major"]] = {2: "minor", 4: "major"}
TABLE = "feed.source"
LAKE_COLUMNS = (
    "id BIGINT, region STRING, name STRING, qty INT, price DECIMAL(12,2), born DATE, "
    "seen TIMESTAMP, active BOOLEAN, note STRING, lsn BIGINT"
)
ARROW_TYPES = {
    "id": pa.int64(), "region": pa.string(), "name": pa.string(), "qty": pa.int32(),
    "price": pa.decimal128(12, 2), "born": pa.date32(), "seen": pa.timestamp("us"),
    "active": pa.bool_(), "note": pa.string(), "op": pa.string(), "lsn": pa.int64(),
}  # fmt: skip
Rows = dict[int, dict[str, Any]]


@pytest.fixture
def source(pg_cluster: PgCluster) -> Iterator[tuple[psycopg.Connection[Any], str]]:
    """A connection to a fresh database holding ``source``, and a slot that sees it all."""
    dbname = pg_cluster.create_database().rsplit("/", 1)[1]
    slot = "feed_" + dbname
    with connect(pg_cluster.port, dbname) as conn:
        conn.execute(SOURCE_DDL)
        create_slot(conn, slot)
        try:
            yield conn, slot
        finally:
            drop_slot(conn, slot)


@pytest.fixture
def lake(spark: Any, tmp_path: Path) -> Iterator[tuple[Catalog, list[str]]]:
    """The catalog in process, and the console script's options for the same one."""
    catalog, warehouse = f"sqlite:///{tmp_path}/catalog.db", warehouse_for(tmp_path, "warehouse")
    with connect_catalog(catalog, warehouse, spark, user="alice") as cat:
        yield cat, ["--catalog", catalog, "--warehouse", warehouse, "--user", "alice"]


def test_a_replayed_postgres_change_stream_equals_the_postgres_table(
    source: tuple[psycopg.Connection[Any], str],
    lake: tuple[Catalog, list[str]],
    layout: str,
    tmp_path: Path,
) -> None:
    conn, slot = source
    cat, cli_options = lake
    buckets: dict[str, Any] = table_args(layout, buckets=4)
    table = cat.create_table(
        TABLE, columns=LAKE_COLUMNS, primary_key="id", partition_by="region",
        op_code_column="op", ordering_column="lsn", layout=layout, **buckets,
    )  # fmt: skip
    assert table.describe()["key_scope"] == "table"
    workload = Workload(conn, random.Random(SEED))
    images: dict[tuple[Any, ...], dict[str, Any]] = {}
    states: dict[int, Rows] = {}  # version -> the source's rows when it was applied
    toasted = 0
    for r in range(1, ROUNDS + 1):
        workload.round(TRANSACTIONS_PER_ROUND)
        changes = read_changes(conn, slot)
        toasted += sum(1 for c in changes for v in (c.new or {}).values() if v is UNCHANGED_TOAST)
        rows = change_rows(changes, ["id"], images=images)
        if r in API_ROUNDS:
            version, rejected = _upsert_arrow(cat.table(TABLE), rows)
        else:
            version, rejected = _upsert_cli(cli_options, tmp_path / f"round{r}.jsonl", rows)
        assert rejected == 0, f"seed {SEED}, round {r}: {rejected} changes dead-lettered"
        states[version] = _source_rows(conn)
        if r in COMPACT_AFTER:
            table = cat.table(TABLE)
            done = table.compact(options=CompactionOptions(kind=COMPACT_AFTER[r]))
            assert done.partitions, f"seed {SEED}: the compaction after round {r} did nothing"
            _assert_same(table.read(), states[version], f"after compacting after round {r}")

    table = cat.table(TABLE)
    _assert_same(table.read(), _source_rows(conn), "at the end")
    _assert_time_travel(table, states)
    coverage = workload.coverage
    cases = ["insert", "reinsert", "update", "move", "delete", "change key", "same key",
             "bulk update", "rolled back"]  # fmt: skip
    assert all(coverage[c] for c in cases), f"seed {SEED}: the workload missed cases: {coverage}"
    assert toasted, f"seed {SEED}: no update left a TOASTed value out"
    keys = len(workload.live | workload.gone)
    assert 200 <= keys <= 400, f"seed {SEED}: {keys} keys, the scenario wants 200 to 400"


def _upsert_arrow(table: Table, rows: list[dict[str, Any]]) -> tuple[int, int]:
    arrays = {c: pa.array([r.get(c) for r in rows], t) for c, t in ARROW_TYPES.items()}
    result = table.upsert(pa.table(arrays))
    assert result.version is not None, f"seed {SEED}: the upsert applied nothing: {result}"
    return result.version, result.rejected


def _upsert_cli(options: list[str], file: Path, rows: list[dict[str, Any]]) -> tuple[int, int]:
    """``versioned upsert`` of ``rows`` as JSON Lines (the command line in-process, on the
    shared session)."""
    # A delete carries only the key (the columns of a JSON Lines file are those its lines
    # use, so a file of deletes alone names them all).
    full = all(r["op"] == "D" for r in rows)
    lines = [
        _json_line({c: r.get(c) for c in (*COLUMNS, "op", "lsn") if full or c in r}) for r in rows
    ]
    file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    done = CliRunner().invoke(cli, [*options, "--output", "json", "upsert", TABLE, str(file)])
    assert done.exit_code == 0, f"seed {SEED}: upsert {file.name} failed:\n{done.output}"
    result = json.loads(done.stdout)
    return int(result["version"]), int(result["rejected"])


def _json_line(row: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {_json_value(v)}" for k, v in row.items()) + "}"


def _json_value(value: Any) -> str:
    """JSON text that keeps the exact value: decimals as numbers with every digit."""
    if value is None or isinstance(value, bool | int | str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):  # ISO text without an offset: the session's UTC
        return json.dumps(value.isoformat(sep=" "))
    if isinstance(value, dt.date):
        return json.dumps(value.isoformat())
    raise TypeError(f"no JSON form for {value!r}")


def _source_rows(conn: psycopg.Connection[Any]) -> Rows:
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        return {row["id"]: row for row in cur.execute(f"SELECT {', '.join(COLUMNS)} FROM source")}


def _lake_rows(frame: DataFrame, *extra: str) -> list[dict[str, Any]]:
    """The rows of ``frame`` through Arrow (exact decimals; timestamps as UTC wall clock)."""
    rows = frame.select(*extra, *COLUMNS).toArrow().to_pylist()
    for row in rows:
        if isinstance(row["seen"], dt.datetime) and row["seen"].tzinfo is not None:
            row["seen"] = row["seen"].astimezone(dt.UTC).replace(tzinfo=None)
    return rows


def _assert_same(frame: DataFrame | list[dict[str, Any]], expected: Rows, what: str) -> None:
    rows = _lake_rows(frame) if isinstance(frame, DataFrame) else frame
    got: Rows = {row["id"]: row for row in rows}
    problems = []
    if len(got) != len(rows):
        problems.append(f"{len(rows) - len(got)} duplicate keys")
    missing, extra = sorted(expected.keys() - got.keys()), sorted(got.keys() - expected.keys())
    if missing or extra:
        problems.append(f"keys missing {missing[:10]}, unexpected {extra[:10]}")
    both = sorted(expected.keys() & got.keys())
    differ = [k for k in both if _typed(got[k]) != _typed(expected[k])]
    if differ:
        problems.append(f"{len(differ)} rows differ in values or types")
    for key in differ[:5]:
        problems.append(f"id {key}: lake {_typed(got[key])} != source {_typed(expected[key])}")
    if problems:
        pytest.fail(
            f"seed {SEED}, {what}: the lake differs from the source\n  " + "\n  ".join(problems)
        )


def _typed(row: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A row's values with their types (and a decimal's digits: 1.10 is not 1.1)."""
    return tuple(
        (type(v).__name__, str(v) if isinstance(v, Decimal) else v)
        for v in (row[c] for c in COLUMNS)
    )


def _assert_time_travel(table: Table, states: dict[int, Rows]) -> None:
    """Every round's version, read with ``as_of`` (one Spark job for all of them)."""
    frames = [table.read(as_of=v).select(F.lit(v).alias("_as_of"), *COLUMNS) for v in states]
    rows = _lake_rows(reduce(DataFrame.unionByName, frames), "_as_of")
    for version, expected in states.items():
        mine = [r for r in rows if r["_as_of"] == version]
        _assert_same(mine, expected, f"read(as_of={version})")
