"""Differential test: seeded random change feeds applied to versioned and to a Python model.

Three variants have a table-wide key (the partition column is not part of it, so a change
naming another partition moves the row: the feeds move keys between batches and within one,
and delete keys that moved); one is keyed per partition. After every batch the latest view
must equal the model; at the end every version read with
``as_of`` must equal the model's state at that version, ``changes(since, until)`` the model's
net diff, and each CommitResult the model's counts where those are exact (Bloom false
positives may move a few inserts to ``updated``). The feeds visit duplicates within a batch,
delete and re-insert, updates and deletes of missing keys, partitions that appear late
(null, empty and hostile values), and, with an ordering column, late and tied events. The
table is compacted between batches (`COMPACT_AFTER`: a minor, then a major compaction for the
acid layout; the version layout's one kind both times), so later batches find, update, delete
and (with an ordering column) judge staleness against compacted rows and tombstones, and
time travel and changes reach back across the compactions.

The version-partition layout also proves its own claim here (a version's files hold every
upserted row and an index entry per existing key); other layouts skip that check. Batches
that keep to a narrow band of ids let the writer prune older versions by key range when the
feed happens to allow it (after a compaction a partition's one version spans every id, so a
seed may prune nothing); that the writer prunes at all is proven deterministically in
tests/layouts/version_partition/test_io_paths.py.

Spark jobs dominate the run time, so reads that can wait are collected once, as a union.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tests.support.test_warehouse import warehouse_for
from tests.table.change_model import Change, Expected, FeedGenerator, Shape, TableModel, net_diff
from versioned.api.catalog import Catalog, connect
from versioned.api.table import Table
from versioned.options import CompactionOptions
from versioned.results import CommitResult

# Partitions that first appear in a batch (batch index -> values).
NEW_PARTITIONS: dict[int, list[Any]] = {
    0: ["east", "west"],
    2: ["a/b"],
    4: ["../x"],
    5: ["%"],
    6: ["ünï"],
    7: [None],  # written as null and as "" (both are Hive's default partition)
    9: ["007", "k=v", " padded "],
    10: ["new\nline"],
}
# How each batch reaches `Table.upsert`; "bare" is an Arrow table without an op-code column.
# Files come late, so they carry the hostile partition values too.
INPUTS = ["arrow", "frame", "arrow", "frame", "arrow", "bare", "frame", "arrow", "arrow", "csv",
          "json", "arrow"]  # fmt: skip
ROWS_PER_BATCH = 150
# Compactions after these batches (batch index -> the acid layout's kind; others ignore it).
COMPACT_AFTER: dict[int, Literal["minor", "major"]] = {3: "minor", 7: "major"}
# Batches that also carry records the table must reject (dead letters), amid the changes.
BAD_RECORDS_IN = {4, 10}
BAD_RECORDS: list[dict[str, Any]] = [
    {"region": "east", "id": None, "sku": "a", "name": "null key", "change_seq": 1, "op": "I"},
    {"region": "west", "id": 7, "sku": "a", "name": "bad op", "change_seq": 1, "op": "merge"},
]
ARROW_TYPES = {"region": pa.string(), "id": pa.int64(), "sku": pa.string(), "name": pa.string(),
               "amount": pa.float64(), "change_seq": pa.int64(), "op": pa.string()}  # fmt: skip
SPARK_TYPES = {"region": "string", "id": "bigint", "sku": "string", "name": "string",
               "amount": "double", "change_seq": "bigint", "op": "string"}  # fmt: skip


@dataclass(frozen=True)
class Variant:
    name: str
    columns: str
    primary_key: tuple[str, ...]
    ordering: str | None
    seed: int
    key_space: tuple[str, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.split()[0] for c in self.columns.split(","))


VARIANTS = [
    Variant(
        "no_ordering",
        "region STRING, id BIGINT, name STRING, amount DOUBLE",
        primary_key=("id",),
        ordering=None,
        seed=1,
    ),
    Variant(
        "ordering_column",
        "region STRING, id BIGINT, name STRING, amount DOUBLE, change_seq BIGINT",
        primary_key=("id",),
        ordering="change_seq",
        seed=2,
    ),
    Variant(
        "partition_scoped_key",
        "region STRING, id BIGINT, name STRING, amount DOUBLE, change_seq BIGINT",
        primary_key=("region", "id"),
        ordering="change_seq",
        seed=4,
    ),
    Variant(
        "composite_key",
        "region STRING, id BIGINT, sku STRING, name STRING, amount DOUBLE, change_seq BIGINT",
        primary_key=("id", "sku"),
        ordering="change_seq",
        seed=3,
        key_space=("a", "B", "x,y", "s1:a", "ünï", ""),
    ),
]


@pytest.fixture
def catalog(spark: Any, tmp_path: Path) -> Iterator[Catalog]:
    warehouse = warehouse_for(tmp_path, "warehouse")
    with connect(f"sqlite:///{tmp_path}/catalog.db", warehouse, spark) as cat:
        yield cat


# `make test` runs the richest variant (an ordering column: stale changes, tombstones) for
# every layout; the others take about 40 s each and run in `make soak` (CI runs both), each for
# one layout a run by the run's seed, the layouts alternating between variants and between
# runs of consecutive seeds.
@pytest.mark.parametrize(
    "variant",
    [
        v
        if v.name == "ordering_column"
        else pytest.param(v, marks=[pytest.mark.soak, pytest.mark.layout_by_seed(i)])
        for i, v in enumerate(VARIANTS)
    ],
    ids=lambda v: v.name,
)
def test_random_change_feeds_match_the_model(
    catalog: Catalog,
    tmp_path: Path,
    variant: Variant,
    layout: str,
) -> None:
    table = catalog.create_table(
        "db.t",
        columns=variant.columns,
        primary_key=variant.primary_key,
        partition_by="region",
        # Without an ordering column the op-code column is named per batch, so one batch
        # can come without op codes (every row an upsert).
        op_code_column="op" if variant.ordering else None,
        ordering_column=variant.ordering,
        layout=layout,
    )
    shape = Shape(variant.column_names, variant.primary_key, "region", variant.ordering)
    model = TableModel(shape)
    feeds = FeedGenerator(model, variant.seed, key_space=variant.key_space)
    versions: list[int] = []
    results: list[CommitResult] = []
    for b, kind in enumerate(INPUTS):
        if kind == "bare" and variant.ordering:
            kind = "arrow"  # the table names its op-code column, so every batch has one
        # A key column cannot be null: a partition-scoped key has no null partition.
        new = [p for p in NEW_PARTITIONS.get(b, []) if p is not None or shape.table_wide]
        changes = feeds.batch(new, ROWS_PER_BATCH)
        if kind == "bare":
            changes = [Change("U", "", c.values) for c in changes if c.op != "D"]
        if kind == "csv":  # CSV cannot tell "" from null (both read as null): no "" keys
            changes = [c for c in changes if c.get("sku") != ""]
        bad = BAD_RECORDS if b in BAD_RECORDS_IN else []
        result, rejects = upsert(table, changes, kind, shape, tmp_path / f"batch{b}", bad)
        expected = model.apply(result.version, changes)
        expected.rejected = rejects
        check_counts(result, expected, what=f"batch {b} ({kind})")
        if layout == "versioned":
            check_version_files(table, result, expected, what=f"batch {b} ({kind})")
        assert_rows(collect(table.read()), Counter(model.live.values()), f"latest after batch {b}")
        versions.append(result.version)
        results.append(result)
        if b in COMPACT_AFTER:
            done = table.compact(options=CompactionOptions(kind=COMPACT_AFTER[b]))
            assert done.partitions, f"compaction after batch {b} compacted nothing"
            what = f"latest after compacting after batch {b}"
            assert_rows(collect(table.read()), Counter(model.live.values()), what)

    counts = ("inserted", "updated", "deleted", "ignored_deletes", "stale", "superseded")
    counts += ("rejected",)
    upserts = [c for c in table.history() if c.operation == "upsert"]
    assert [(c.version, *[c.metrics[n] for n in counts]) for c in upserts] == [
        (r.version, *[getattr(r, n) for n in counts]) for r in results
    ]
    check_time_travel(table, model, versions)
    check_net_changes(table, model, versions)
    check_coverage(model, variant)


def upsert(
    table: Table,
    changes: Sequence[Change],
    kind: str,
    shape: Shape,
    path: Path,
    bad: Sequence[dict[str, Any]],
) -> tuple[CommitResult, int]:
    """Send ``changes`` (with the ``bad`` records in the middle) to the table the way ``kind``
    says; returns the result and how many records the table should reject."""
    columns = [*shape.columns, "op"]
    records = [{**c.values, "op": c.spelled} for c in changes]
    records[len(records) // 2 : len(records) // 2] = bad
    op_column = None if shape.ordering else "op"
    if kind == "bare":
        columns = list(shape.columns)
        op_column = None
    if kind in ("arrow", "bare"):
        arrays = {c: pa.array([r.get(c) for r in records], ARROW_TYPES[c]) for c in columns}
        return table.upsert(pa.table(arrays), op_code_column=op_column), len(bad)
    if kind == "frame":
        schema = ", ".join(f"{c} {SPARK_TYPES[c]}" for c in columns)
        rows = [tuple(r.get(c) for c in columns) for r in records]
        frame = table.catalog.spark.createDataFrame(rows, schema)
        return table.upsert(frame, op_code_column=op_column), len(bad)
    if kind == "csv":
        file = path.with_suffix(".csv")
        with file.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            writer.writerows([r.get(c) for c in columns] for r in records)
        return table.upsert(str(file), op_code_column=op_column), len(bad)
    assert kind == "json"
    file = path.with_suffix(".jsonl")
    lines = [json.dumps({c: r.get(c) for c in columns}, ensure_ascii=False) for r in records]
    if bad:
        lines.insert(len(lines) // 3, '{"region": "east", "id": 3,')  # not a JSON object
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return table.upsert(str(file), op_code_column=op_column), len(bad) + (1 if bad else 0)


def check_version_files(
    table: Table, result: CommitResult, expected: Expected, *, what: str
) -> None:
    """The version partition's files hold every upserted row and an index entry per key
    that existed (and with an ordering column a tombstone per delete)."""
    files = [f for f in table.snapshot().files if f.version == result.version]
    entries_needed = expected.true_updates + (
        expected.deletes if table.spec.ordering_column else expected.true_deletes
    )
    assert sum(f.row_count for f in files if f.kind == "data") == expected.upserts, what
    assert sum(f.row_count for f in files if f.kind == "index") >= entries_needed, what


def check_counts(result: CommitResult, expected: Expected, *, what: str) -> None:
    """Counts that are exact, and bounds where a Bloom false positive may blur them."""
    counted = {
        "inserted + updated": result.inserted + result.updated,
        "deleted + ignored_deletes": result.deleted + result.ignored_deletes,
        "stale": result.stale,
        "superseded": result.superseded,
        "rejected": result.rejected,
    }
    wanted = {
        "inserted + updated": expected.upserts,
        "deleted + ignored_deletes": expected.deletes,
        "stale": expected.stale,
        "superseded": expected.superseded,
        "rejected": expected.rejected,
    }
    assert counted == wanted, f"{what}: {result}"
    assert expected.partitions <= result.partitions <= expected.partitions_max, f"{what}: {result}"
    assert result.updated >= expected.true_updates, f"{what}: {result}"
    assert result.deleted >= expected.true_deletes, f"{what}: {result}"


def check_time_travel(table: Table, model: TableModel, versions: list[int]) -> None:
    """Every version, read back with ``as_of`` (one Spark job for all of them)."""
    frames = [table.read(as_of=v).select(F.lit(v).alias("_as_of"), "*") for v in versions]
    got: dict[int, Counter[tuple[Any, ...]]] = {v: Counter() for v in versions}
    for row in collect(union(frames)):
        got[row[0]][row[1:]] += 1
    for v in versions:
        assert_rows(got[v], Counter(model.versions[v].values()), f"read(as_of={v})")


def check_net_changes(table: Table, model: TableModel, versions: list[int]) -> None:
    """``changes`` from the start, over one version and over all (one Spark job)."""
    v = versions
    ranges: list[tuple[int | None, int]] = [(None, v[2]), (v[5], v[6]), (v[0], v[-1])]
    frames = [
        table.changes(since=a, until=b).select(F.lit(i).alias("_range"), "*")
        for i, (a, b) in enumerate(ranges)
    ]
    got: dict[int, Counter[tuple[Any, ...]]] = {i: Counter() for i in range(len(ranges))}
    for row in collect(union(frames)):
        got[row[0]][row[1:]] += 1
    for i, (a, b) in enumerate(ranges):
        before = model.versions[a] if a is not None else {}
        assert_rows(got[i], net_diff(before, model.versions[b]), f"changes({a}, {b})")


def check_coverage(model: TableModel, variant: Variant) -> None:
    """The feeds really visited every case (so a generator change cannot hollow the test)."""
    cases = [
        "duplicate key in a batch",
        "delete then re-insert in a batch",
        "re-insert of a key deleted by an earlier version",
        "update of a missing key",
        "delete of a missing key",
    ]
    if model.shape.table_wide:
        cases.append("null partition")
    if variant.ordering:
        cases += [
            "stale change",
            "late delete leaves the newer row",
            "late insert does not resurrect a deleted key",
            "insert older than an earlier delete stays deleted",
            "ordering value beats input order",
            "tie broken by input order",
            "equal ordering value applies",
        ]
    if model.shape.table_wide:
        cases += [
            "key moved to another partition",
            "key in two partitions in one batch",
            "delete of a key that moved",
            "delete naming another partition than the row's",
            "delete then re-insert in another partition",
        ]
    missing = [case for case in cases if model.coverage[case] == 0]
    assert not missing, f"the feeds never produced: {missing}"
    partitions = {model.partition_of(row) for v in model.versions.values() for row in v.values()}
    hostile = {"a/b", "../x", "%", "ünï", "007", "k=v", " padded ", "new\nline"}
    assert hostile | ({None} if model.shape.table_wide else set()) <= partitions


def union(frames: list[DataFrame]) -> DataFrame:
    return reduce(DataFrame.unionByName, frames)


def collect(frame: DataFrame) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in frame.collect()]


def assert_rows(
    actual: list[tuple[Any, ...]] | Counter[tuple[Any, ...]],
    expected: Counter[tuple[Any, ...]],
    what: str,
) -> None:
    got = actual if isinstance(actual, Counter) else Counter(actual)
    if got == expected:
        return
    missing, extra = expected - got, got - expected
    pytest.fail(
        f"{what}: {sum(missing.values())} rows missing, {sum(extra.values())} unexpected\n"
        f"  missing:    {sorted(missing, key=repr)[:8]}\n"
        f"  unexpected: {sorted(extra, key=repr)[:8]}"
    )
