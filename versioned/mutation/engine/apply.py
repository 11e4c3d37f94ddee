"""The Spark form of the mutation API: what ``vm.apply(txn, "m.alerts", mutations_df)``
(`versioned.mutation.spark_form`) runs once it checked the transaction and the table. The
table's layout assigns each mutation its bucket and group (`MutationFormat.spark_buckets`:
the acid layout's Hive hash and bucket properties); everything else is the client's.

A DataFrame of mutations has an op column (``op_column``, by default ``_op``:
``'insert'``, ``'update'`` or ``'delete'``), the table's columns (partition columns
included) and, for updates and deletes, ``ROW__ID``: the ``struct<writeid, bucketid,
rowid>`` ``Table.read(with_row_id=True)`` gives. `apply`:

1. checks the frame's columns on the driver (`MutationSchemaError`);
2. resolves buckets through the layout (`MutationFormat.spark_buckets`; for acid: the
   bucket of an insert is Hive's hash of its bucket columns, numpy over Arrow batches, and
   its ROW__ID becomes ``(-1, property, -1)``; the bucket of an update or delete is the
   one its ROW__ID names);
3. repartitions by (partition, bucket), so a group lives in exactly one Spark partition,
   and sorts each Spark partition by (partition, bucket, ROW__ID);
4. runs one `MutatorCoordinator` per Spark task (``mapInArrow``): its `MutationTarget`
   (plain values, like Hive's ``AcidTableSerializer``) is pickled to the executors, which
   write the files and, when the task's coordinator closes, its manifest into the
   transaction's staging folder. Driver and executors share nothing but the warehouse and
   the catalog URL. Each task returns its counts; `apply` returns their sum.

Nothing is visible until the caller's ``txn.commit()``; several ``apply`` calls (on one or
several tables of the transaction) commit together. A failed task fails `apply` with the
mutation error that stopped it (`UnknownOperationError`, `MissingRowIdError`,
`BucketIdError`, `MissingPartitionError`, ...; any other failure as `MutationTaskError`),
after aborting the transaction: tasks that succeeded wrote their groups already, and a
transaction never commits half a frame. Apply the mutations again in a new transaction.
"""

from __future__ import annotations

import base64
import pickle
import re
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.spark.errors import first_line
from versioned.engine.spark.python_workers import require_python_workers
from versioned.errors import VersionedError
from versioned.mutation.coordinator import MutatorCoordinator
from versioned.mutation.errors import (
    MissingRowIdError,
    MutationSchemaError,
    MutationTaskError,
    UnknownOperationError,
)
from versioned.mutation.formats import format_for
from versioned.mutation.records import ROW_ID, ApplySummary
from versioned.mutation.target import MutationTarget
from versioned.mutation.transaction import Transaction

INSERT, UPDATE, DELETE = "insert", "update", "delete"
OPERATIONS = (INSERT, UPDATE, DELETE)
"""The op values: lower case, exactly these."""

ROW_ID_TYPE = T.StructType(
    [
        T.StructField("writeid", T.LongType()),
        T.StructField("bucketid", T.IntegerType()),
        T.StructField("rowid", T.LongType()),
    ]
)
"""Hive's ROW__ID, as ``Table.read(with_row_id=True)`` gives it."""

_GROUP = "#group_bucket"
_BUCKET = "#hashed_bucket"
_MARK = "@@versioned-mutation-error@@"
_SUMMARY = T.StructType(
    [T.StructField(f, T.LongType()) for f in ("inserted", "updated", "deleted", "groups", "files")]
)


def apply(
    txn: Transaction,
    target: MutationTarget,
    mutations: DataFrame,
    *,
    op_column: str,
    partitions: int | None,
) -> ApplySummary:
    """Apply a DataFrame of mutations to ``target``'s table in ``txn`` (see the module
    docstring; ``versioned.mutation.apply`` documents the arguments and errors).

    Raises:
        MutationSchemaError: The frame lacks a column, or its ROW__ID is no ROW__ID struct.
        MutationError: A task failed (the transaction is aborted).
    """
    planned = _planned(target, mutations, op_column, partitions)
    try:
        rows = planned.collect()
    except Exception as error:  # a failed task: Spark's exception of the job
        raise _task_failure(txn, target, error) from None
    return ApplySummary(
        inserted=sum(r["inserted"] for r in rows),
        updated=sum(r["updated"] for r in rows),
        deleted=sum(r["deleted"] for r in rows),
        groups=sum(r["groups"] for r in rows),
        files=sum(r["files"] for r in rows),
        tasks=len(rows),
    )


# the plan (driver) ----------------------------------------------------------------------------


def _planned(
    target: MutationTarget, mutations: DataFrame, op_column: str, partitions: int | None
) -> DataFrame:
    spec = target.table.spec
    names = set(mutations.columns)
    needed = [op_column, *(c.name for c in spec.columns)]
    missing = [c for c in needed if c not in names]
    if missing:
        raise MutationSchemaError(
            f"the mutations of {target.name} lack column(s) {', '.join(missing)}: give the op "
            f"column {op_column!r} ({', '.join(OPERATIONS)}) and every column of the table",
            columns=missing,
        )
    if not isinstance(mutations.schema[op_column].dataType, T.StringType):
        raise MutationSchemaError(
            f"the op column {op_column!r} must be a string column ({', '.join(OPERATIONS)}), "
            f"not {mutations.schema[op_column].dataType.simpleString()}",
            columns=[op_column],
        )
    frame = mutations.select(
        *(_col(c) for c in needed), _row_id(mutations, target.name).alias(ROW_ID)
    )
    buckets = format_for(spec).spark_buckets()
    frame = buckets(frame, spec, op_column=op_column, bucket_column=_BUCKET, group_column=_GROUP)
    keys = [*(_col(c) for c in spec.partition_by), _col(_GROUP)]
    frame = frame.repartition(partitions, *keys) if partitions else frame.repartition(*keys)
    frame = frame.sortWithinPartitions(
        *keys, _col(ROW_ID).getField("writeid"), _col(ROW_ID).getField("rowid")
    )
    require_python_workers(frame.sparkSession)
    return frame.mapInArrow(_task(target, op_column), _SUMMARY)


def _row_id(mutations: DataFrame, table: str) -> Column:
    """The frame's ROW__ID as `ROW_ID_TYPE` (null when absent or incomplete)."""
    if ROW_ID not in mutations.columns:
        return F.lit(None).cast(ROW_ID_TYPE)
    given = mutations.schema[ROW_ID].dataType
    fields = {f.name for f in given.fields} if isinstance(given, T.StructType) else set()
    if not {"writeid", "bucketid", "rowid"} <= fields:
        raise MutationSchemaError(
            f"the mutations' ROW__ID of {table} must be the struct<writeid, bucketid, rowid> "
            f"Table.read(with_row_id=True) gives, not {given.simpleString()}",
            columns=[ROW_ID],
        )
    parts = [_col(ROW_ID).getField(f.name).cast(f.dataType) for f in ROW_ID_TYPE.fields]
    incomplete = _col(ROW_ID).isNull() | parts[0].isNull() | parts[1].isNull() | parts[2].isNull()
    whole = F.struct(*(p.alias(f.name) for p, f in zip(parts, ROW_ID_TYPE.fields, strict=True)))
    return F.when(incomplete, F.lit(None).cast(ROW_ID_TYPE)).otherwise(whole)


def _col(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


# the tasks (executors) ------------------------------------------------------------------------


def _task(
    target: MutationTarget, op_column: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each Spark task runs: one coordinator over the task's sorted rows."""
    partition_by = tuple(target.table.spec.partition_by)
    side_kinds = format_for(target.table.spec).side_kinds  # markers, key filters: no rows

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        groups = 0
        try:
            with MutatorCoordinator(target) as coordinator:
                last: tuple[Any, ...] | None = None
                for batch in batches:
                    _check_batch(batch, op_column, target.name)
                    ops = batch.column(op_column).to_pylist()
                    hashed = batch.column(_BUCKET).to_pylist()
                    group_buckets = batch.column(_GROUP).to_pylist()
                    for op, bucket, group, row in zip(
                        ops, hashed, group_buckets, batch.to_pylist(), strict=True
                    ):
                        partition = [row[c] for c in partition_by]
                        if (key := (*partition, group)) != last:
                            groups, last = groups + 1, key
                        if op == INSERT:
                            coordinator.insert(partition, row, hashed_bucket=bucket)
                        elif op == UPDATE:
                            coordinator.update(partition, row, hashed_bucket=bucket)
                        else:
                            coordinator.delete(partition, row)
        except Exception as exc:  # carried to the driver whole (see _task_failure)
            raise _carry(exc) from None
        counts = coordinator.counts
        files = sum(1 for f in coordinator.files if f.add.kind not in side_kinds)
        summary = {
            "inserted": counts["inserted"],
            "updated": counts["updated"],
            "deleted": counts["deleted"],
            "groups": groups,
            "files": files,
        }
        yield pa.RecordBatch.from_pylist([summary], schema=_SUMMARY_ARROW)

    return run


_SUMMARY_ARROW = pa.schema([(f.name, pa.int64()) for f in _SUMMARY.fields])


def _check_batch(batch: pa.RecordBatch, op_column: str, table: str) -> None:
    """Refuse unknown op values and updates or deletes without ROW__ID (vectorised)."""
    ops = batch.column(op_column)
    known = pc.fill_null(pc.is_in(ops, value_set=pa.array(OPERATIONS)), False)
    if not pc.all(known).as_py():
        bad = ops.filter(pc.invert(known))[0].as_py()
        raise UnknownOperationError(
            f"a mutation of {table} has op {bad!r}: the op column holds "
            f"{', '.join(repr(o) for o in OPERATIONS)}",
            op=bad,
        )
    by_row_id = pc.is_in(ops, value_set=pa.array([UPDATE, DELETE]))
    lacking = pc.and_(by_row_id, pc.is_null(batch.column(ROW_ID)))
    if pc.any(lacking).as_py():
        first = batch.filter(lacking).slice(0, 1).to_pylist()[0]
        shown = {k: v for k, v in first.items() if not k.startswith("#")}
        raise MissingRowIdError(
            f"a {first[op_column]} of {table} has no ROW__ID (record {shown!r}): updates "
            "and deletes name their row by the ROW__ID read with Table.read(with_row_id=True)",
        )


def _carry(exc: Exception) -> RuntimeError:
    """An exception whose message carries ``exc`` (pickled) across Spark's task failure."""
    error = (
        exc
        if isinstance(exc, VersionedError)
        else MutationTaskError(f"a task failed: {type(exc).__name__}: {exc}")
    )
    blob = base64.b64encode(pickle.dumps(error)).decode("ascii")
    return RuntimeError(f"{type(error).__name__}: {error} {_MARK}{blob}{_MARK}")


def _task_failure(txn: Transaction, target: MutationTarget, error: Exception) -> VersionedError:
    """The error a failed job surfaces as, after aborting the transaction."""
    txn.abort()
    aborted = f" (transaction {target.txn_id} is aborted: apply the mutations again in a new one)"
    found = re.search(re.escape(_MARK) + r"([A-Za-z0-9+/=]+)" + re.escape(_MARK), str(error))
    if found is None:
        return MutationTaskError(
            f"applying mutations to {target.name} failed in Spark: {first_line(error)}{aborted}",
            txn_id=target.txn_id,
        )
    carried: VersionedError = pickle.loads(base64.b64decode(found.group(1)))
    carried.message += aborted
    carried.args = (carried.message,)
    return carried
