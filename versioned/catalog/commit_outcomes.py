"""What a commit whose connection was lost during COMMIT did: the catalog's answer, by
transaction id, for `CatalogConnection.write`'s ``confirm`` (a committed transaction never
commits again, so a commit found here happened exactly once)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import tables
from versioned.catalog.connection import Found
from versioned.catalog.models import CommitRow
from versioned.catalog.records import CommitInfo, TableCommit
from versioned.names import TableName


def committed_by(session: Session, name: TableName, txn_id: int) -> Found[CommitInfo] | None:
    """Found with the commit transaction ``txn_id`` made to table ``name``, if it made one
    (a commit whose connection was lost during COMMIT happened)."""
    table = tables.get_table(session, name)
    row = session.scalars(
        sa.select(CommitRow).where(CommitRow.table_id == table.id, CommitRow.txn_id == txn_id)
    ).one_or_none()
    return None if row is None else Found(row.info())


def all_committed(
    session: Session, changes: Sequence[TableCommit], txn_id: int
) -> Found[list[CommitInfo]] | None:
    """Found with every table's commit of transaction ``txn_id`` when it made them (a
    multi-table commit makes all or none)."""
    found = [committed_by(session, tables.table_name(c.table), txn_id) for c in changes]
    if any(f is None for f in found):
        return None
    return Found([f.value for f in found if f is not None])
