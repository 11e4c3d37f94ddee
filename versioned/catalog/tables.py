"""Databases and tables: creation, lookup, listing, properties and drop."""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from versioned.catalog import access
from versioned.catalog.models import (
    CommitRow,
    DatabaseRow,
    FileRow,
    GrantRow,
    LockRow,
    PartitionRow,
    SchemaRow,
    StreamProgressRow,
    TableRow,
    WriteIdRow,
)
from versioned.catalog.records import DatabaseInfo, TableInfo
from versioned.errors import (
    InputError,
    InvalidNameError,
    NoSuchDatabaseError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from versioned.names import TableName, identifier
from versioned.schema import TableSpec


def table_name(name: TableName | str) -> TableName:
    """Validate ``name`` (a `TableName` built by hand is validated again)."""
    if isinstance(name, str):
        return TableName.parse(name)
    if not isinstance(name, TableName):
        raise InvalidNameError(
            f"a table name must be a TableName or 'db.table', got {type(name).__name__}",
            name=repr(name),
        )
    return TableName(
        identifier(name.database, "database name"), identifier(name.table, "table name")
    )


def database_name(name: str) -> str:
    """Validate a database name."""
    return identifier(name, "database name")


def location(name: TableName) -> str:
    """Table directory relative to the warehouse."""
    return f"{name.database}.db/{name.table}"


def find_database(session: Session, name: str) -> DatabaseRow | None:
    """The database called ``name``, or None."""
    return session.scalars(sa.select(DatabaseRow).where(DatabaseRow.name == name)).one_or_none()


def get_database(session: Session, name: str) -> DatabaseRow:
    """The database called ``name``; raises `NoSuchDatabaseError`."""
    row = find_database(session, name)
    if row is None:
        raise NoSuchDatabaseError(
            f"no database {name!r}: creating a table in it creates it", database=name
        )
    return row


def ensure_database(session: Session, name: str, owner: str, now: float) -> DatabaseRow:
    """The database called ``name``, created (owned by ``owner``) when missing.

    A racing creator in another process is tolerated: the insert runs in a savepoint and a
    unique-constraint violation means the other one won.
    """
    row = find_database(session, name)
    if row is not None:
        return row
    try:
        with session.begin_nested():
            row = DatabaseRow(name=name, owner=owner, created_at=now)
            session.add(row)
    except IntegrityError:
        return get_database(session, name)
    return row


def get_table(session: Session, name: TableName, *, for_update: bool = False) -> TableRow:
    """The table called ``name``; ``for_update`` locks its row (PostgreSQL) until commit.

    Raises:
        NoSuchTableError: There is no such table.
    """
    query = (
        sa.select(TableRow)
        .join(DatabaseRow, TableRow.database_id == DatabaseRow.id)
        .where(DatabaseRow.name == name.database, TableRow.name == name.table)
    )
    if for_update:
        query = query.with_for_update(of=TableRow)
    row = session.scalars(query).unique().one_or_none()
    if row is None:
        raise NoSuchTableError(
            f"no table {name}: use `versioned list-tables` to see the tables you may read",
            table=str(name),
        )
    return row


def create_table(
    session: Session, spec: TableSpec, user: str, now: float, where: str | None = None
) -> TableInfo:
    """Create a table owned by ``user`` (and its database when missing), in directory
    ``where`` (relative to the warehouse; default `location`).

    Raises:
        PermissionDeniedError: The database exists and ``user`` may not write to it.
        TableAlreadyExistsError: A table of that name exists.
    """
    name = table_name(spec.name)
    database = ensure_database(session, name.database, user, now)
    access.require_database(session, user, database, "write")
    exists = session.scalar(
        sa.select(TableRow.id).where(
            TableRow.database_id == database.id, TableRow.name == name.table
        )
    )
    if exists is not None:
        raise already_exists(name)
    data = spec.to_dict()
    data["owner"] = user
    row = TableRow(
        database_id=database.id,
        name=name.table,
        owner=user,
        location=where or location(name),
        layout=spec.layout,
        file_format=spec.file_format,
        spec=data,
        current_seq=0,
        created_at=now,
    )
    session.add(row)
    session.flush()
    # The columns from the start (seq 0): the first entry of the table's schema history.
    session.add(SchemaRow(table_id=row.id, seq=0, columns=data["columns"], created_at=now))
    return row.info()


def already_exists(name: TableName) -> TableAlreadyExistsError:
    """The error for creating ``name`` twice."""
    return TableAlreadyExistsError(
        f"table {name} exists already: drop it first or choose another name", table=str(name)
    )


def list_tables(session: Session, user: str, database: str | None) -> list[TableInfo]:
    """Tables ``user`` may read, ordered by name, optionally of one database."""
    query = sa.select(TableRow).join(DatabaseRow, TableRow.database_id == DatabaseRow.id)
    if database is not None:
        query = query.where(DatabaseRow.id == get_database(session, database).id)
    rows = session.scalars(query.order_by(DatabaseRow.name, TableRow.name)).unique().all()
    granted = access.user_privileges(session, user)
    return [r.info() for r in rows if access.table_allows(r, user, "read", granted)]


def list_databases(session: Session) -> list[DatabaseInfo]:
    """Every database, ordered by name."""
    rows = session.scalars(sa.select(DatabaseRow).order_by(DatabaseRow.name))
    return [r.info() for r in rows]


def set_properties(table: TableRow, props: Mapping[str, str]) -> TableInfo:
    """Merge ``props`` into the table's properties."""
    for key, value in props.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise InputError(
                f"table property {key!r}={value!r}: keys and values must be strings, "
                "keys non-empty",
                key=repr(key),
            )
    data = dict(table.spec)
    data["properties"] = {**(data.get("properties") or {}), **dict(props)}
    table.spec = data  # a new dict, so the JSON column is seen as changed
    return table.info()


def drop_table(session: Session, table: TableRow) -> TableInfo:
    """Delete the table and every catalog row that belongs to it."""
    info = table.info()
    tid = table.id
    session.execute(sa.delete(LockRow).where(LockRow.table_id == tid))
    session.execute(sa.delete(GrantRow).where(GrantRow.table_id == tid))
    session.execute(sa.delete(FileRow).where(FileRow.table_id == tid))
    session.execute(sa.delete(CommitRow).where(CommitRow.table_id == tid))
    session.execute(sa.delete(PartitionRow).where(PartitionRow.table_id == tid))
    session.execute(sa.delete(SchemaRow).where(SchemaRow.table_id == tid))
    session.execute(sa.delete(WriteIdRow).where(WriteIdRow.table_id == tid))
    session.execute(sa.delete(StreamProgressRow).where(StreamProgressRow.table_id == tid))
    session.execute(sa.delete(TableRow).where(TableRow.id == tid))
    session.expunge(table)
    return info
