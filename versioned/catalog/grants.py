"""Granting and revoking privileges, and listing the grants on a database or table."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned import names
from versioned.catalog import access, tables
from versioned.catalog.models import DatabaseRow, GrantRow, TableRow
from versioned.catalog.records import GrantInfo, Privilege
from versioned.names import TableName


def resolve_target(
    session: Session, user: str, database: str, table: str | None, need: access.Need
) -> tuple[DatabaseRow, TableRow | None]:
    """The database (and table) a grant is about, once ``user`` may do ``need`` on it."""
    db = tables.get_database(session, tables.database_name(database))
    if table is None:
        access.require_database(session, user, db, need)
        return db, None
    row = tables.get_table(session, TableName(db.name, names.identifier(table, "table name")))
    access.require_table(session, user, row, need)
    return db, row


def grant(
    session: Session,
    *,
    user: str,
    principal: str,
    privilege: str,
    database: str,
    table: str | None,
    now: float,
) -> GrantInfo:
    """``user`` grants ``privilege`` to ``principal``; see `MetaStore.grant`."""
    who, priv = names.principal(principal), access.check_privilege(privilege)
    db, row = resolve_target(session, user, database, table, "grant")
    return add_grant(
        session, principal=who, privilege=priv, database=db, table=row, granted_by=user, now=now
    )


def revoke(
    session: Session, *, user: str, principal: str, privilege: str, database: str, table: str | None
) -> None:
    """``user`` revokes a grant; see `MetaStore.revoke`."""
    who, priv = names.principal(principal), access.check_privilege(privilege)
    db, row = resolve_target(session, user, database, table, "grant")
    remove_grant(session, principal=who, privilege=priv, database=db, table=row)


def grants_on(session: Session, *, user: str, database: str, table: str | None) -> list[GrantInfo]:
    """Grants on exactly this database or table, if ``user`` may read it."""
    db, row = resolve_target(session, user, database, table, "read")
    return list_grants(session, db, row)


def add_grant(
    session: Session,
    *,
    principal: str,
    privilege: Privilege,
    database: DatabaseRow,
    table: TableRow | None,
    granted_by: str,
    now: float,
) -> GrantInfo:
    """Insert a grant unless it exists; return it (granting twice is not an error)."""
    target = _target(database, table)
    existing = session.scalars(
        sa.select(GrantRow).where(
            GrantRow.principal == principal,
            GrantRow.privilege == privilege,
            GrantRow.target == target,
        )
    ).one_or_none()
    row = existing or GrantRow(
        principal=principal,
        privilege=privilege,
        target=target,
        database_id=database.id,
        table_id=table.id if table else None,
        granted_by=granted_by,
        granted_at=now,
    )
    if existing is None:
        session.add(row)
        session.flush()
    return row.info(database.name, table.name if table else None)


def remove_grant(
    session: Session,
    *,
    principal: str,
    privilege: Privilege,
    database: DatabaseRow,
    table: TableRow | None,
) -> int:
    """Delete a grant; returns how many rows went (0 when it did not exist)."""
    result = session.execute(
        sa.delete(GrantRow).where(
            GrantRow.principal == principal,
            GrantRow.privilege == privilege,
            GrantRow.target == _target(database, table),
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def list_grants(session: Session, database: DatabaseRow, table: TableRow | None) -> list[GrantInfo]:
    """Grants on exactly this database (``table`` None) or this table."""
    rows = session.scalars(
        sa.select(GrantRow)
        .where(GrantRow.target == _target(database, table))
        .order_by(GrantRow.principal, GrantRow.privilege)
    )
    return [r.info(database.name, table.name if table else None) for r in rows]


def _target(database: DatabaseRow, table: TableRow | None) -> str:
    return database.name if table is None else f"{database.name}.{table.name}"
