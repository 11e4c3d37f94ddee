"""The reads of the continuous benchmark: each table's latest view against a plain copy.

After every batch the live rows of another engine's table (delta-rs's data files read by
Spark, `delta_rs_live`; in `benchmarks.peers`, a Spark peer's table) are written by Spark as
plain copies partitioned like the table, one file per partition (``repartition`` by the
partition column): Parquet for the version layout's tables and the peers, ORC for the acid
ones (not timed). That engine is not versioned: when a table's answer agrees with its plain
copy's, versioned and the other engine hold the same rows.

Each query of the workload then runs on the table (a versioned table through
``Catalog.sql``, a peer's through its session) and through the caller's session on its plain
copy, alternately, ``repeat`` times each (medians). The plain side reads its folder inside the
timed call (file listing included), as ``Catalog.sql`` resolves the table's snapshot inside
its own. Each side's answer is collected to Python and must agree with the other's (sums of
doubles to a cent), or the benchmark fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from benchmarks.acid_reads import same_answer
from benchmarks.continuous_data import Workload
from benchmarks.harness import interleave, median

FORMATS = ("parquet", "orc")


def delta_rs_live(
    spark: SparkSession, workload: Workload, files: list[str], base: str
) -> DataFrame:
    """The live rows of delta-rs's table: its data ``files`` (under ``base``), read by Spark
    (delta-rs rewrites files on MERGE: no deletion vectors to apply)."""
    return spark.read.schema(workload.columns).option("basePath", base).parquet(*files)


def write_plain_copies(
    workload: Workload,
    live: DataFrame,
    root: Path,
    formats: tuple[str, ...] = FORMATS,
) -> dict[str, str]:
    """The rows of ``live`` as plain folders of each of ``formats`` (Parquet, ORC) under
    ``root``, partitioned like the table; their paths by format."""
    shutil.rmtree(root, ignore_errors=True)
    live = live.repartition(workload.partition)
    paths = {fmt: str(root / fmt) for fmt in formats}
    for fmt, path in paths.items():
        live.write.partitionBy(workload.partition).format(fmt).save(path)
    return paths


def rows(frame: Any) -> list[tuple[Any, ...]]:
    """A query's rows as sorted tuples (groups come in any order)."""
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def agree(ours: Iterable[tuple[Any, ...]], theirs: Iterable[tuple[Any, ...]]) -> bool:
    """The same rows, row by row (`benchmarks.acid_reads.same_answer`)."""
    a, b = list(ours), list(theirs)
    return len(a) == len(b) and all(same_answer(x, y) for x, y in zip(a, b, strict=True))


def compare(
    query: Callable[[str], DataFrame],
    caller: SparkSession,
    workload: Workload,
    table: str,
    plain: tuple[str, str],
    repeat: int,
) -> dict[str, Any]:
    """Every query of ``workload`` on the table ``table`` (``query`` runs a query's text, the
    table standing for ``{t}``) and on its plain copy ``(format, path)``.

    Returns, per query: median seconds of each side, their ratio (table / plain), every
    timing and the answer.

    Raises:
        AssertionError: The table's answer is not the plain copy's.
    """
    fmt, path = plain
    view = f"plain_{fmt}"

    def ours(sql: str) -> Callable[[], Any]:
        return lambda: rows(query(sql))

    def theirs(sql: str) -> Callable[[], Any]:
        def run() -> Any:
            caller.read.schema(workload.columns).format(fmt).load(path).createOrReplaceTempView(
                view
            )
            return rows(caller.sql(sql.replace("{t}", view)))

        return run

    out: dict[str, Any] = {}
    for name, sql in workload.queries.items():
        done = interleave({"table": ours(sql), "plain": theirs(sql)}, repeat, order="alternate")
        answers = done.answers
        if not agree(answers["table"], answers["plain"]):
            raise AssertionError(
                f"{table} {name}: the table answers {answers['table']}, its plain {fmt} copy "
                f"{answers['plain']}"
            )
        t = median(e["seconds"] for e in done.timings["table"])
        p = median(e["seconds"] for e in done.timings["plain"])
        out[name] = {
            "table_s": t,
            "plain_s": p,
            "ratio": t / p,
            "times": done.timings,
            "answer": [list(r) for r in answers["table"]],
        }
    return out
