"""Committing one transaction to several tables at once: all tables or none.

Each table's changes go through `commits.apply`, with its guards, inside one SQL
transaction; the transaction is finished once at the end. A guard that fails in any table
rolls back the whole SQL transaction, so readers see every table's commit or none.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from versioned.catalog import access, clock, tables, transactions
from versioned.catalog.commits import apply
from versioned.catalog.partition_summaries import PartitionSummariser
from versioned.catalog.records import CommitInfo, TableCommit
from versioned.errors import InputError


def commit_tables_as(
    session: Session,
    *,
    user: str,
    txn_id: int,
    commits: Sequence[TableCommit],
    summarise: PartitionSummariser | None = None,
) -> list[CommitInfo]:
    """``user`` commits each table's changes as transaction ``txn_id``: all in this one SQL
    transaction, so either every table gets its commit or none does.

    Locks the table rows in name order (one order for every multi-table commit, so two never
    deadlock), then the transaction row, as `commit_as` does for one table.

    Raises:
        InputError: No table, or a table given twice.
        PermissionDeniedError / TransactionExpiredError / CommitConflictError: As
            `commit_as`, for any of the tables; nothing of any table is written.
    """
    names = [tables.table_name(c.table) for c in commits]
    if not names or len(set(names)) != len(names):
        raise InputError(
            f"commit each table once, and at least one table: got {[str(n) for n in names]}"
        )
    for commit in commits:
        if not isinstance(commit.operation, str) or not commit.operation:
            raise InputError("commit needs an operation name, e.g. 'mutate'")
    now = clock.now(session)
    ordered = sorted(zip(names, commits, strict=True), key=lambda pair: str(pair[0]))
    rows = []
    for name, _ in ordered:
        table = tables.get_table(session, name, for_update=True)
        access.require_table(session, user, table, "write")
        rows.append(table)
    txn = transactions.get(session, txn_id, for_update=True)
    transactions.require_open(txn, now)
    transactions.reap(session, now)
    infos = {
        str(name): apply(
            session,
            table=table,
            txn=txn,
            user=user,
            operation=commit.operation,
            changes=commit.partitions,
            metrics=commit.metrics,
            version=None,
            now=now,
            expected_seq=commit.expected_seq,
            unless_since=commit.unless_since,
            finish=False,
            summarise=summarise,
            in_commit_order=commit.in_commit_order,
        )
        for (name, commit), table in zip(ordered, rows, strict=True)
    }
    transactions.finish(session, txn, transactions.COMMITTED, now, None)
    session.flush()
    return [infos[str(name)] for name in names]
