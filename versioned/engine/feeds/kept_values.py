"""Columns a change keeps from its key's stored row: partial updates and unchanged TOAST values.

A feed marks, per row, the columns whose stored value the row keeps (``#keep``, see
`versioned.engine.feeds.reader.Feed.keeps`): the columns a partial update lacks, and the columns
of a Debezium event that hold the unchanged-TOAST placeholder. Before the batch is written,
`kept_values_filled` replaces each kept value by the value the key had just before the change:

* the value of the key's previous change in the same batch (by ordering value, then input
  order) that carried the column; a delete in between leaves NULL;
* else the key's stored row in the table's latest view, read only for the keys with a kept
  value (a broadcast semi join of the latest view with those keys; when every partition
  column is in the primary key, only the partitions of those keys are scanned);
* else (a key the table does not have) NULL. A NOT NULL column left NULL this way sends the
  row to the dead letters with its reason.

The key is the primary key: a change that moves its row to another partition keeps the
values of the row it moves. A feed with no kept value costs one pass over the batch (an
aggregate, on the cached rows the writer then reads); a feed that cannot have one (no
``#keep``, not Debezium) costs nothing. Debezium feeds also pass here so that a truncate
event refuses the batch before anything is written.

Limitation: the stored values are those of the snapshot the write plans its first attempt on
(resolved when the operation started); a concurrent writer that commits a change of the same
key before this batch commits is not seen (the batch still commits after it, with the values
read here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from versioned.catalog.records import Snapshot
from versioned.engine.feeds.op_codes import DELETE
from versioned.engine.feeds.reader import Feed
from versioned.engine.feeds.rows import IN_KEEP, OP, RAW, REASON, SEQ, SOURCE
from versioned.engine.spark.types import VERSION_KEY, spark_type
from versioned.errors import InputError
from versioned.schema import TableSpec

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext, TableEngine
    from versioned.layouts.table_request import WriteRequest

LatestReader = Callable[[Snapshot], DataFrame]
"""A snapshot's live rows with the version that wrote each (column ``version_id``)."""
_PRIOR = "#prior_"
_STORED = "#stored_"


@contextmanager
def kept_values_filled(
    ctx: EngineContext, engine: TableEngine, request: WriteRequest
) -> Iterator[WriteRequest]:
    """The request with every kept value of its feed filled in, ready for the writer.

    Args:
        ctx: What the engine works with (the session, the catalog).
        engine: The table layout's engine, which reads the stored rows (the live rows of
            the request's snapshot with the version that wrote each).
        request: The write, with the normalised feed and the snapshot it plans on (read
            from the catalog only when it has none and some row keeps a value).

    Yields:
        The request to write; its feed's rows are cached until the block exits.

    Raises:
        InputError: The feed has a Debezium truncate event (nothing is written).
    """
    feed, spec = request.feed, request.table.spec
    if not feed.keeps and feed.events is None:
        yield request
        return
    rows = feed.rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        kept = _kept(feed)
        # One pass over every row: it also completes the feed's observed counts.
        kept_columns = F.col(IN_KEEP) if feed.keeps else F.array().cast("array<string>")
        summary = rows.agg(
            F.count(F.when(kept, F.lit(1))).alias("rows"),
            F.array_distinct(F.flatten(F.collect_set(F.when(kept, kept_columns)))).alias("cols"),
        ).first()
        truncates = feed.events.truncates() if feed.events is not None else 0
        if truncates:
            raise InputError(
                f"{feed.source or 'the feed'} has {truncates} truncate event(s) (op 't'); "
                "nothing was written. A truncate empties the whole table: apply the events "
                "before it, empty the table on purpose, then apply the events after it",
                truncates=truncates,
            )
        count = int(summary["rows"]) if summary is not None else 0
        if summary is None or count == 0:
            unkept = replace(feed, rows=rows.drop(IN_KEEP) if feed.keeps else rows, keeps=False)
            yield replace(request, feed=unkept)
            return
        columns = [c for c in spec.column_names if c in set(summary["cols"] or ())]
        request.say(f"reading the stored values of {len(columns)} column(s) for {count} changes")
        snapshot = request.planning_snapshot(ctx.store)

        def read_latest(snap: Snapshot) -> DataFrame:
            return engine.read(ctx, snap, with_version=True)

        filled = _filled(ctx.spark, read_latest, spec, feed, rows, columns, snapshot)
        yield replace(request, feed=filled)
    finally:
        rows.unpersist()


def _kept(feed: Feed) -> Column:
    if not feed.keeps:
        return F.lit(False)
    return (F.size(F.col(IN_KEEP)) > F.lit(0)) & (F.col(OP) != F.lit(DELETE))


def _filled(
    spark: SparkSession,
    read_latest: LatestReader,
    spec: TableSpec,
    feed: Feed,
    rows: DataFrame,
    columns: list[str],
    snapshot: Snapshot,
) -> Feed:
    """The feed with the kept values of ``columns`` filled in (see `_with_kept_values`)."""
    pk = list(spec.primary_key)
    keys = spark.createDataFrame(rows.where(_kept(feed)).select(*pk).distinct().toArrow())
    affected = rows.join(F.broadcast(keys), pk, "left_semi")
    others = rows.join(F.broadcast(keys), pk, "left_anti").drop(IN_KEEP)
    stored = _stored_rows(read_latest, spec, snapshot, keys, columns)
    filled = _with_kept_values(spec, affected, stored, columns)
    not_null = [c for c in columns if not spec.column(c).nullable]
    if not not_null:
        result = others.unionByName(filled.select(*spec.column_names, OP, SEQ))
        return replace(feed, rows=result, keeps=False)
    return _without_null_kept_values(feed, spec, others, filled, not_null)


def _with_kept_values(
    spec: TableSpec, affected: DataFrame, stored: DataFrame, columns: list[str]
) -> DataFrame:
    """The rows of keys that keep values, each kept value filled in: from the key's latest
    earlier row of the batch (null after a delete), else from the stored row. ``#kept_<c>``
    says whether column ``c`` was kept."""
    pk = list(spec.primary_key)
    order = [F.col(SEQ).asc()]
    if spec.ordering_column is not None:
        order.insert(0, F.col(spec.ordering_column).asc_nulls_first())
    earlier = Window.partitionBy(*pk).orderBy(*order).rowsBetween(Window.unboundedPreceding, -1)
    is_delete = F.col(OP) == F.lit(DELETE)
    keeps = {c: ~is_delete & F.array_contains(F.col(IN_KEEP), F.lit(c)) for c in columns}
    with_prior = affected.select(
        "*",
        *[
            F.last(
                F.when(is_delete, F.struct(_null(spec, c).alias("v"))).when(
                    ~keeps[c], F.struct(F.col(c).alias("v"))
                ),
                ignorenulls=True,
            )
            .over(earlier)
            .alias(_PRIOR + c)
            for c in columns
        ],
    )
    joined = with_prior.join(stored, pk, "left")
    values = {
        c: F.when(
            keeps[c],
            F.coalesce(F.col(_PRIOR + c), F.struct(F.col(_STORED + c).alias("v"))).getField("v"),
        ).otherwise(F.col(c))
        for c in columns
    }
    out = [values.get(c, F.col(c)).alias(c) for c in spec.column_names] + [F.col(OP), F.col(SEQ)]
    return joined.select(*out, *[keeps[c].alias(f"#kept_{c}") for c in columns])


def _without_null_kept_values(
    feed: Feed, spec: TableSpec, others: DataFrame, filled: DataFrame, not_null: list[str]
) -> Feed:
    """The feed with rows whose kept value is null in a NOT NULL column moved to the dead
    letters (the key is not stored, so there was nothing to keep)."""
    problems = [
        F.when(
            F.col(f"#kept_{c}") & F.col(c).isNull(),
            F.lit(
                f"column {c} is NOT NULL but null: the change keeps the stored value "
                "(a partial update or an unchanged TOAST value) of a key the table does "
                "not have"
            ),
        )
        for c in not_null
    ]
    reason = F.concat_ws("; ", *problems)
    checked = filled.withColumn("#why", reason)
    good = checked.where(F.col("#why") == F.lit("")).select(*spec.column_names, OP, SEQ)
    bad = checked.where(F.col("#why") != F.lit("")).select(
        F.to_json(F.struct(*spec.column_names, F.col(OP).alias("_op"))).alias(RAW),
        F.col("#why").alias(REASON),
        F.lit(feed.source).alias(SOURCE),
    )
    return replace(
        feed,
        rows=others.unionByName(good),
        reject=lambda: feed.rejected.unionByName(bad),
        rejections=None,  # the writer counts the rejected rows, these included
        keeps=False,
    )


def _stored_rows(
    read_latest: LatestReader,
    spec: TableSpec,
    snapshot: Snapshot,
    keys: DataFrame,
    columns: list[str],
) -> DataFrame:
    """The latest stored values of ``columns`` for each key in ``keys`` (primary key)."""
    pk = list(spec.primary_key)
    if spec.partition_by and set(spec.partition_by) <= set(pk):
        snapshot = _only_partitions_of(spec, snapshot, keys)
    latest = read_latest(snapshot).join(F.broadcast(keys), pk, "left_semi")
    newest = latest.groupBy(*pk).agg(
        F.max_by(F.struct(*[F.col(c) for c in columns]), F.col(VERSION_KEY)).alias("#s")
    )
    return newest.select(*pk, *[F.col("#s").getField(c).alias(_STORED + c) for c in columns])


def _only_partitions_of(spec: TableSpec, snapshot: Snapshot, keys: DataFrame) -> Snapshot:
    """The snapshot restricted to the partitions the keys name (partition columns in the key)."""
    parts = keys.select(
        *[
            F.when(F.col(p).cast("string") == F.lit(""), F.lit(None))
            .otherwise(F.col(p).cast("string"))
            .alias(p)
            for p in spec.partition_by
        ]
    ).distinct()
    wanted = {tuple(r) for r in parts.collect()}
    ids = {i for i, p in snapshot.partitions.items() if p.values in wanted}
    return replace(snapshot, files=tuple(f for f in snapshot.files if f.partition_id in ids))


def _null(spec: TableSpec, column: str) -> Column:
    return F.lit(None).cast(spark_type(spec.column(column).type))
