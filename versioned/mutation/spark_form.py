"""The Spark form of the mutation API: ``vm.apply(txn, "m.alerts", mutations_df)``.

A DataFrame of mutations has an op column (`OP_COLUMN`, ``_op``: ``'insert'``,
``'update'`` or ``'delete'``), the table's columns (partition columns included) and, for
updates and deletes, ``ROW__ID``: the ``struct<writeid, bucketid, rowid>``
``Table.read(with_row_id=True)`` gives. `apply` checks the transaction and the table, then
hands the frame to ``mutation/engine/apply.py``, which asks the table's layout for each
row's bucket (`MutationFormat.spark_buckets`), groups and sorts the rows and runs one
`MutatorCoordinator` per Spark task. This module imports no Spark:
the Spark form is imported on the first `apply`.

Nothing is visible until the caller's ``txn.commit()``; several ``apply`` calls (on one or
several tables of the transaction) commit together. A failed task fails `apply` with the
mutation error that stopped it, after aborting the transaction. See docs/mutation.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from versioned.mutation.records import ApplySummary
from versioned.names import TableName

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from versioned.mutation.transaction import Transaction

OP_COLUMN = "_op"
"""The default op column of a mutations DataFrame."""


def apply(
    txn: Transaction,
    table: str | TableName,
    mutations: DataFrame,
    *,
    op_column: str = OP_COLUMN,
    partitions: int | None = None,
) -> ApplySummary:
    """Apply a DataFrame of mutations to ``table`` in ``txn`` (see the module docstring).

    Args:
        txn: An open transaction of a `MutatorClient` whose sink tables include ``table``.
        table: ``db.table``.
        mutations: The op column, every column of the table, and ``ROW__ID`` (needed by
            updates and deletes; may be absent when every row is an insert). Other columns
            are ignored.
        op_column: The name of the op column.
        partitions: Spark partitions (tasks) to spread the groups over (default: Spark's
            ``spark.sql.shuffle.partitions``).

    Raises:
        MutationTransactionError: ``txn`` is not open.
        InputError: ``table`` is not a sink table of the transaction's client.
        MutationSchemaError: The frame lacks the op column or a column of the table, or its
            ``ROW__ID`` is not a ``(writeid, bucketid, rowid)`` struct; nothing ran.
        MutationError: A task failed (the transaction is aborted): `UnknownOperationError`,
            `MissingRowIdError`, `BucketIdError`, `MissingPartitionError`,
            `PartitionColumnUpdateError`, `RecordSequenceError`, or `MutationTaskError`.
    """
    target = txn.client.coordinator(txn, table).target  # checks the state and the name
    from versioned.mutation.engine.apply import apply as spark_apply

    summary: ApplySummary = spark_apply(
        txn, target, mutations, op_column=op_column, partitions=partitions
    )
    return summary
