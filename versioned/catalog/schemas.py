"""The schema history of tables: which columns a table had at each commit, and ALTER.

A table's columns are recorded when it is created (``seq`` 0) and by every ``alter``
commit (at that commit's ``seq``). A snapshot at commit S carries the columns of the latest
record with ``seq <= S``, so ``read(as_of=V)`` returns the schema that was current at V.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import access, commits, tables, transactions
from versioned.catalog.models import SchemaRow
from versioned.catalog.records import CommitInfo
from versioned.names import TableName
from versioned.schema import Column, TableSpec
from versioned.schema_changes import SchemaChange, evolve

ALTER_OPERATION = "alter"


def record(
    session: Session, table_id: int, seq: int, columns: Sequence[Column], now: float
) -> None:
    """Record that the table has ``columns`` from commit ``seq`` on."""
    session.add(
        SchemaRow(
            table_id=table_id,
            seq=seq,
            columns=[c.to_dict() for c in columns],
            created_at=now,
        )
    )


def spec_at(session: Session, table_id: int, current: TableSpec, seq: int) -> TableSpec:
    """The table's definition ``current`` with the columns it had at commit ``seq``."""
    columns = session.scalar(
        sa.select(SchemaRow.columns)
        .where(SchemaRow.table_id == table_id, SchemaRow.seq <= seq)
        .order_by(SchemaRow.seq.desc())
        .limit(1)
    )
    if columns is None:  # not recorded: the columns never changed
        return current
    then = tuple(Column.from_dict(c) for c in columns)
    return current if then == current.columns else dataclasses.replace(current, columns=then)


def alter(
    session: Session,
    *,
    user: str,
    name: TableName,
    txn_id: int,
    change: SchemaChange,
    reason: str | None,
    now: float,
) -> CommitInfo:
    """Apply ``change`` to the table's columns as the ``alter`` commit of ``txn_id``.

    The table row is locked first, so concurrent changes apply one after the other and each
    is checked against the columns the previous one left. No file is written or retired.

    Raises:
        PermissionDeniedError: ``user`` may not write to the table.
        SchemaError: The change is not allowed (see `versioned.schema_changes`).
        TransactionExpiredError: The transaction expired (the caller aborts it).
    """
    table = tables.get_table(session, name, for_update=True)
    access.require_table(session, user, table, "write")
    txn = transactions.get(session, txn_id, for_update=True)
    transactions.require_open(txn, now)
    new_spec = evolve(table.info().spec, change)
    metrics: dict[str, object] = {**change.describe(), "columns": len(new_spec.columns)}
    if reason:
        metrics["reason"] = reason
    commit = commits.apply(
        session,
        table=table,
        txn=txn,
        user=user,
        operation=ALTER_OPERATION,
        changes=(),
        metrics=metrics,
        version=None,
        now=now,
    )
    data = dict(table.spec)
    data["columns"] = [c.to_dict() for c in new_spec.columns]
    data["properties"] = dict(new_spec.properties)
    table.spec = data  # a new dict, so the JSON column is seen as changed
    record(session, table.id, commit.seq, new_spec.columns, now)
    session.flush()
    return commit
