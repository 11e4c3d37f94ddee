"""Upgrades of the catalog's own schema, one step per schema version.

`versioned.catalog.engine.ensure_schema` runs the steps a catalog lacks when it is opened,
all in one write transaction under the database-wide schema lock, so several processes
opening an old catalog at once upgrade it exactly once, and a failed step leaves it as it
was. Each applied step adds a ``catalog_meta`` row (``id`` = its version) saying when.

A step describes its tables as they were at its version (not through the ORM classes, which
follow the newest schema), so that later steps can build on it.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from versioned.catalog import clock
from versioned.catalog.models import CatalogMetaRow

Step = Callable[[Connection], None]


def _table_schemas_v2(conn: Connection) -> None:
    """Version 2: ``table_schemas``, the columns of each table per commit (seq 0 for all)."""
    meta = sa.MetaData()
    sa.Table("tables", meta, sa.Column("id", sa.Integer, primary_key=True))
    schemas = sa.Table(
        "table_schemas",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("table_id", sa.Integer, sa.ForeignKey("tables.id"), nullable=False, index=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("columns", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.UniqueConstraint("table_id", "seq"),
        sqlite_autoincrement=True,
    )
    schemas.create(conn, checkfirst=True)
    existing = sa.table("tables", sa.column("id"), sa.column("spec", sa.JSON))
    now = clock.now(conn)
    rows = [
        {"table_id": tid, "seq": 0, "columns": (spec or {}).get("columns", []), "created_at": now}
        for tid, spec in conn.execute(sa.select(existing.c.id, existing.c.spec))
    ]
    if rows:
        conn.execute(sa.insert(schemas), rows)


def _table_write_ids_v3(conn: Connection) -> None:
    """Version 3: ``table_write_ids``, the per-table write ids of the acid layout (empty)."""
    meta = sa.MetaData()
    sa.Table("tables", meta, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("transactions", meta, sa.Column("id", sa.BigInteger, primary_key=True))
    write_ids = sa.Table(
        "table_write_ids",
        meta,
        sa.Column("table_id", sa.Integer, sa.ForeignKey("tables.id"), primary_key=True),
        sa.Column("write_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column(
            "txn_id", sa.BigInteger, sa.ForeignKey("transactions.id"), nullable=False, index=True
        ),
        sa.Column("allocated_at", sa.Double, nullable=False),
        sa.UniqueConstraint("table_id", "txn_id"),
    )
    write_ids.create(conn, checkfirst=True)


def _stream_progress_v4(conn: Connection) -> None:
    """Version 4: ``stream_progress``, the last micro-batch of each streaming writer (empty)."""
    meta = sa.MetaData()
    sa.Table("tables", meta, sa.Column("id", sa.Integer, primary_key=True))
    progress = sa.Table(
        "stream_progress",
        meta,
        sa.Column("table_id", sa.Integer, sa.ForeignKey("tables.id"), primary_key=True),
        sa.Column("writer_id", sa.String(200), primary_key=True),
        sa.Column("batch_id", sa.BigInteger, nullable=False),
        sa.Column("commit_seq", sa.BigInteger, nullable=True),
        sa.Column("version", sa.BigInteger, nullable=True),
        sa.Column("recorded_at", sa.Double, nullable=False),
    )
    progress.create(conn, checkfirst=True)


def _partition_summaries_v5(conn: Connection) -> None:
    """Version 5: ``partitions.summary`` and ``summary_seq`` (NULL: computed on read until a
    commit changes the partition)."""
    conn.execute(sa.text("ALTER TABLE partitions ADD COLUMN summary JSON"))
    conn.execute(sa.text("ALTER TABLE partitions ADD COLUMN summary_seq BIGINT"))


MIGRATIONS: dict[int, Step] = {
    2: _table_schemas_v2,
    3: _table_write_ids_v3,
    4: _stream_progress_v4,
    5: _partition_summaries_v5,
}
"""Step that brings a catalog from version ``v - 1`` to ``v``, by ``v``."""


def oldest_upgradable() -> int:
    """The oldest schema version these steps can upgrade."""
    return min(MIGRATIONS) - 1


def upgrade(conn: Connection, found: int, target: int) -> None:
    """Run the steps from ``found + 1`` to ``target`` on ``conn`` (inside its transaction)."""
    for version in range(found + 1, target + 1):
        MIGRATIONS[version](conn)
        conn.execute(
            sa.insert(CatalogMetaRow).values(
                id=version, schema_version=version, created_at=clock.now(conn)
            )
        )
