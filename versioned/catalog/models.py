"""The catalog's tables as SQLAlchemy 2.0 typed ORM classes, and their conversion to records.

Timestamps are float epoch seconds from the catalog database's clock
(`versioned.catalog.clock`), so clients whose clocks disagree still agree on them.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from versioned.catalog.records import (
    CommitInfo,
    DatabaseInfo,
    DataFile,
    GrantInfo,
    LockInfo,
    PartitionInfo,
    StreamProgress,
    TableInfo,
    TransactionInfo,
)
from versioned.schema import TableSpec

# SQLite reuses the highest rowid after a delete unless told otherwise; an id that once
# named a dropped table or partition must never name a new one.
_NEVER_REUSE_IDS: dict[str, Any] = {"sqlite_autoincrement": True}

# Names of rows in `counters`.
TXN_COUNTER = "txn"


class Base(DeclarativeBase):
    """Declarative base of every catalog table."""


class CatalogMetaRow(Base):
    """One row: the version of the catalog schema (see `versioned.catalog.engine`)."""

    __tablename__ = "catalog_meta"

    id: Mapped[int] = mapped_column(primary_key=True)
    schema_version: Mapped[int]
    created_at: Mapped[float]


class CounterRow(Base):
    """A named counter, updated inside SQL transactions (Hive's NEXT_TXN_ID)."""

    __tablename__ = "counters"

    name: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    value: Mapped[int] = mapped_column(sa.BigInteger)


class DatabaseRow(Base):
    """A database (namespace of tables)."""

    __tablename__ = "databases"
    __table_args__ = _NEVER_REUSE_IDS

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(128), unique=True)
    owner: Mapped[str] = mapped_column(sa.String(128))
    created_at: Mapped[float]

    def info(self) -> DatabaseInfo:
        """The row as a record."""
        return DatabaseInfo(self.id, self.name, self.owner, self.created_at)


class TableRow(Base):
    """A table; ``spec`` holds the full `TableSpec` as JSON, owner and properties included."""

    __tablename__ = "tables"
    __table_args__ = (sa.UniqueConstraint("database_id", "name"), _NEVER_REUSE_IDS)

    id: Mapped[int] = mapped_column(primary_key=True)
    database_id: Mapped[int] = mapped_column(sa.ForeignKey("databases.id"), index=True)
    name: Mapped[str] = mapped_column(sa.String(128))
    owner: Mapped[str] = mapped_column(sa.String(128))
    location: Mapped[str] = mapped_column(sa.String(300))
    layout: Mapped[str] = mapped_column(sa.String(32))
    file_format: Mapped[str] = mapped_column(sa.String(32))
    spec: Mapped[dict[str, Any]] = mapped_column(sa.JSON)
    current_seq: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    created_at: Mapped[float]

    database: Mapped[DatabaseRow] = relationship(lazy="joined", innerjoin=True)

    def info(self) -> TableInfo:
        """The row as a record."""
        return TableInfo(
            id=self.id,
            spec=TableSpec.from_dict(self.spec),
            owner=self.owner,
            location=self.location,
            created_at=self.created_at,
            current_seq=self.current_seq,
        )


class PartitionRow(Base):
    """A partition; ``path`` (the escaped ``k=v/...``) is unique per table and per values.

    ``summary`` is what the layout makes of the partition's live files (its row of the
    ``partitions`` metadata table), written by the commit that last changed them, in the same
    SQL transaction, at ``summary_seq``; NULL when that commit had no summariser
    (`versioned.catalog.partition_summaries`).
    """

    __tablename__ = "partitions"
    __table_args__ = (sa.UniqueConstraint("table_id", "path"), _NEVER_REUSE_IDS)

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"), index=True)
    values: Mapped[list[str | None]] = mapped_column(sa.JSON)
    path: Mapped[str] = mapped_column(sa.String(2000))
    head_version: Mapped[int | None] = mapped_column(sa.BigInteger)
    created_at: Mapped[float]
    summary: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, nullable=True, default=None)
    summary_seq: Mapped[int | None] = mapped_column(sa.BigInteger, nullable=True, default=None)

    def info(self) -> PartitionInfo:
        """The row as a record."""
        return PartitionInfo(
            id=self.id,
            table_id=self.table_id,
            values=tuple(self.values),
            path=self.path,
            head_version=self.head_version,
            created_at=self.created_at,
        )


class TransactionRow(Base):
    """A catalog transaction; ids come from the ``txn`` counter, never from autoincrement."""

    __tablename__ = "transactions"

    id: Mapped[int] = mapped_column(sa.BigInteger, primary_key=True, autoincrement=False)
    state: Mapped[str] = mapped_column(sa.String(16), index=True)
    user: Mapped[str] = mapped_column(sa.String(128))
    started_at: Mapped[float]
    last_heartbeat: Mapped[float]
    timeout_s: Mapped[float]
    expired: Mapped[bool] = mapped_column(default=False)
    finished_at: Mapped[float | None]
    abort_reason: Mapped[str | None] = mapped_column(sa.String(500))

    def info(self) -> TransactionInfo:
        """The row as a record."""
        return TransactionInfo(
            id=self.id,
            state=self.state,  # type: ignore[arg-type]  # only the three TxnState values
            user=self.user,
            started_at=self.started_at,
            last_heartbeat=self.last_heartbeat,
            timeout_s=self.timeout_s,
            abort_reason=self.abort_reason,
        )


class LockRow(Base):
    """A lock of a transaction on a table (``partition_id`` NULL) or one of its partitions.

    Ids are assigned while the table row is locked, so their order is the request order.
    """

    __tablename__ = "locks"
    __table_args__ = _NEVER_REUSE_IDS

    id: Mapped[int] = mapped_column(
        sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True
    )
    txn_id: Mapped[int] = mapped_column(sa.ForeignKey("transactions.id"), index=True)
    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"), index=True)
    partition_id: Mapped[int | None] = mapped_column(sa.ForeignKey("partitions.id"))
    mode: Mapped[str] = mapped_column(sa.String(16))
    state: Mapped[str] = mapped_column(sa.String(16))
    created_at: Mapped[float]

    def info(self) -> LockInfo:
        """The row as a record."""
        return LockInfo(
            id=self.id,
            txn_id=self.txn_id,
            table_id=self.table_id,
            partition_id=self.partition_id,
            mode=self.mode,  # type: ignore[arg-type]  # only the three LockMode values
            state=self.state,  # type: ignore[arg-type]
            created_at=self.created_at,
        )


class CommitRow(Base):
    """One entry of a table's history; ``seq`` counts the table's commits from 1."""

    __tablename__ = "commits"
    __table_args__ = (
        sa.UniqueConstraint("table_id", "seq"),
        sa.Index("ix_commits_table_version", "table_id", "version"),
        _NEVER_REUSE_IDS,
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"))
    seq: Mapped[int] = mapped_column(sa.BigInteger)
    txn_id: Mapped[int] = mapped_column(sa.ForeignKey("transactions.id"), index=True)
    version: Mapped[int] = mapped_column(sa.BigInteger)
    operation: Mapped[str] = mapped_column(sa.String(64))
    user: Mapped[str] = mapped_column(sa.String(128))
    committed_at: Mapped[float]
    metrics: Mapped[dict[str, Any]] = mapped_column(sa.JSON)

    def info(self) -> CommitInfo:
        """The row as a record."""
        return CommitInfo(
            seq=self.seq,
            table_id=self.table_id,
            txn_id=self.txn_id,
            version=self.version,
            operation=self.operation,
            user=self.user,
            committed_at=self.committed_at,
            metrics=dict(self.metrics or {}),
        )


class FileRow(Base):
    """A file committed at ``added_seq`` and retired at ``removed_seq`` (NULL while live)."""

    __tablename__ = "files"
    __table_args__ = (
        sa.UniqueConstraint("table_id", "path"),
        sa.Index("ix_files_table_added", "table_id", "added_seq"),
        _NEVER_REUSE_IDS,
    )

    id: Mapped[int] = mapped_column(
        sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True
    )
    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"))
    partition_id: Mapped[int | None] = mapped_column(sa.ForeignKey("partitions.id"), index=True)
    path: Mapped[str] = mapped_column(sa.String(2000))
    kind: Mapped[str] = mapped_column(sa.String(32))
    version: Mapped[int] = mapped_column(sa.BigInteger)
    size_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    row_count: Mapped[int] = mapped_column(sa.BigInteger)
    stats: Mapped[dict[str, Any]] = mapped_column(sa.JSON)
    added_seq: Mapped[int] = mapped_column(sa.BigInteger)
    removed_seq: Mapped[int | None] = mapped_column(sa.BigInteger)

    def info(self) -> DataFile:
        """The row as a record."""
        return DataFile(
            id=self.id,
            partition_id=self.partition_id,
            path=self.path,
            kind=self.kind,
            version=self.version,
            size_bytes=self.size_bytes,
            row_count=self.row_count,
            stats=dict(self.stats or {}),
            added_seq=self.added_seq,
            removed_seq=self.removed_seq,
        )


class GrantRow(Base):
    """A privilege on a database (``table_id`` NULL) or a table.

    ``target`` (``db`` or ``db.table``) makes the grant unique without relying on how each
    database treats NULLs in unique constraints.
    """

    __tablename__ = "grants"
    __table_args__ = (sa.UniqueConstraint("principal", "privilege", "target"), _NEVER_REUSE_IDS)

    id: Mapped[int] = mapped_column(primary_key=True)
    principal: Mapped[str] = mapped_column(sa.String(128), index=True)
    privilege: Mapped[str] = mapped_column(sa.String(16))
    target: Mapped[str] = mapped_column(sa.String(300))
    database_id: Mapped[int] = mapped_column(sa.ForeignKey("databases.id"), index=True)
    table_id: Mapped[int | None] = mapped_column(sa.ForeignKey("tables.id"), index=True)
    granted_by: Mapped[str] = mapped_column(sa.String(128))
    granted_at: Mapped[float]

    def info(self, database: str, table: str | None) -> GrantInfo:
        """The row as a record (names are passed in: the row holds ids)."""
        return GrantInfo(
            principal=self.principal,
            privilege=self.privilege,  # type: ignore[arg-type]  # only Privilege values
            database=database,
            table=table,
            granted_by=self.granted_by,
            granted_at=self.granted_at,
        )


class SchemaRow(Base):
    """The columns of a table from commit ``seq`` on (``seq`` 0: from its creation).

    The columns at commit S are those of the row with the highest ``seq <= S``. Only the
    columns evolve; every other part of the definition is the table's current spec.
    """

    __tablename__ = "table_schemas"
    __table_args__ = (sa.UniqueConstraint("table_id", "seq"), _NEVER_REUSE_IDS)

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"), index=True)
    seq: Mapped[int] = mapped_column(sa.BigInteger)
    columns: Mapped[list[dict[str, Any]]] = mapped_column(sa.JSON)
    created_at: Mapped[float]


class WriteIdRow(Base):
    """A write id of one table, allocated to a transaction (Hive's ``TXN_TO_WRITE_ID``).

    Write ids count from 1 per table; a transaction has at most one per table. The id's
    state is its transaction's: open, committed or aborted.
    """

    __tablename__ = "table_write_ids"
    __table_args__ = (sa.UniqueConstraint("table_id", "txn_id"),)

    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"), primary_key=True)
    write_id: Mapped[int] = mapped_column(sa.BigInteger, primary_key=True, autoincrement=False)
    txn_id: Mapped[int] = mapped_column(sa.ForeignKey("transactions.id"), index=True)
    allocated_at: Mapped[float]


class StreamProgressRow(Base):
    """The last micro-batch each streaming writer committed to a table (Delta's
    ``SetTransaction``): written in the SQL transaction of the commit that applied it."""

    __tablename__ = "stream_progress"

    table_id: Mapped[int] = mapped_column(sa.ForeignKey("tables.id"), primary_key=True)
    writer_id: Mapped[str] = mapped_column(sa.String(200), primary_key=True)
    batch_id: Mapped[int] = mapped_column(sa.BigInteger)
    commit_seq: Mapped[int | None] = mapped_column(sa.BigInteger)
    version: Mapped[int | None] = mapped_column(sa.BigInteger)
    recorded_at: Mapped[float]

    def info(self) -> StreamProgress:
        """The row as a record."""
        return StreamProgress(
            writer_id=self.writer_id,
            batch_id=self.batch_id,
            commit_seq=self.commit_seq,
            version=self.version,
            recorded_at=self.recorded_at,
        )
