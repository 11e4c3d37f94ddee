"""Reads of the acid benchmark: the latest view of a table against plain copies of its rows.

Three queries, each a Spark aggregate (no rows reach Python):

* ``full``: ``count(*), sum(total_amt), sum(hash(all 9 columns))`` (every column is read;
  `benchmarks.upsert_engines.full_aggregate`);
* ``column``: ``count(*), sum(total_amt)`` (one column);
* ``key_range``: the same over the keys ``[N/2, N/2 + N/100)`` (1 % of the key range).

Each runs over the tables' ``read()`` and over a plain ORC and a plain Parquet copy of the same
live rows written by Spark (``repartition(store_id)``, partitioned by ``store_id``: one file per
partition). Runs are interleaved (the order of the sources rotates per round) and every source
must give the same answer, or the benchmark fails.
"""

from __future__ import annotations

import math
import shutil
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.harness import Meter, contention, rotated
from benchmarks.upsert_data import KEY, PARTITION
from benchmarks.upsert_engines import full_aggregate, spark_summary

QUERIES = ("full", "column", "key_range")
PLAIN = ("orc", "parquet")
# (table source, plain source): the ratios reported; acid is ORC, versioned writes Parquet.
RATIOS = (("acid", "orc"), ("acid", "parquet"), ("versioned", "parquet"), ("versioned", "orc"))


def query(name: str, frame: DataFrame, rows: int) -> tuple[Any, ...]:
    """Run read query ``name`` over ``frame`` (a table of ``rows`` initial rows)."""
    if name == "full":
        return full_aggregate(frame)
    if name == "column":
        return spark_summary(frame)
    low = rows // 2
    return spark_summary(frame.where(F.col(KEY).between(low, low + max(1, rows // 100) - 1)))


def same_answer(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Equal, but sums of doubles only to a cent (Spark adds them in any order)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) or isinstance(y, float):
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=0.011):
                return False
        elif x != y:
            return False
    return True


def write_plain_copies(live: DataFrame, spark: SparkSession, root: Path) -> dict[str, str]:
    """The live rows as plain ORC and Parquet folders (not timed); returns their paths."""
    shutil.rmtree(root, ignore_errors=True)
    paths = {fmt: str(root / fmt) for fmt in PLAIN}
    live.repartition(PARTITION).write.partitionBy(PARTITION).orc(paths["orc"])
    copy = spark.read.orc(paths["orc"]).repartition(PARTITION)
    copy.write.partitionBy(PARTITION).parquet(paths["parquet"])
    return paths


def checkpoint(
    spark: SparkSession,
    tables: dict[str, Callable[[], DataFrame]],
    root: Path,
    *,
    rows: int,
    repeat: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Time every query over every table and over plain copies of the first table's rows.

    Args:
        tables: ``{"acid": table.read, "versioned": ...}``; the first one's rows are copied.
        root: Scratch folder for the plain copies (removed afterwards).
        rows: Initial rows N (the key range of ``key_range``).
        repeat: Timed runs per query and source (median).
    """
    first = next(iter(tables.values()))
    paths = write_plain_copies(first(), spark, root)
    sources: dict[str, Callable[[], DataFrame]] = dict(tables)
    sources["orc"] = lambda: spark.read.orc(paths["orc"])
    sources["parquet"] = lambda: spark.read.parquet(paths["parquet"])
    names = list(sources)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {q: {n: [] for n in names} for q in QUERIES}
    answers: dict[str, dict[str, tuple[Any, ...]]] = {q: {} for q in QUERIES}
    for r in range(repeat):
        for q in QUERIES:
            for name in rotated(names, r):
                with Meter() as meter:
                    answer = query(q, sources[name](), rows)
                runs[q][name].append(meter.result())
                previous = answers[q].setdefault(name, answer)
                if not same_answer(previous, answer):
                    raise AssertionError(f"{name} {q}: {answer} now, {previous} before")
    shutil.rmtree(root, ignore_errors=True)
    out: dict[str, Any] = {"rows": answers["column"][names[0]][0], "queries": {}}
    for q in QUERIES:
        reference = answers[q][names[0]]
        for name, answer in answers[q].items():
            if not same_answer(reference, answer):
                raise AssertionError(f"{q}: {name} gives {answer}, {names[0]} gives {reference}")
        out["queries"][q] = _summary(runs[q], reference)
    out["contention"] = contention([e for q in runs.values() for v in q.values() for e in v])
    for q in QUERIES:
        ratios = out["queries"][q]["ratio"]
        log(
            f"  {q:9s} "
            + ", ".join(f"{k} {x:.2f}" for k, x in ratios.items() if x is not None)
            + f" ({', '.join(f'{n} {s:.2f}s' for n, s in out['queries'][q]['s'].items())})"
        )
    return out


def _summary(runs: dict[str, list[dict[str, Any]]], answer: tuple[Any, ...]) -> dict[str, Any]:
    wall = {n: statistics.median(e["seconds"] for e in v) for n, v in runs.items()}
    cpu = {n: statistics.median(e["cpu_s"] for e in v) for n, v in runs.items()}
    ratio: dict[str, float | None] = {}
    cpu_ratio: dict[str, float | None] = {}
    for a, b in RATIOS:
        known = a in wall and b in wall
        ratio[f"{a}/{b}"] = wall[a] / wall[b] if known else None
        cpu_ratio[f"{a}/{b}"] = cpu[a] / cpu[b] if known and cpu[b] else None
    return {
        "answer": list(answer),
        "s": wall,
        "cpu_s": cpu,
        "ratio": ratio,
        "cpu_ratio": cpu_ratio,
        "runs": runs,
    }
