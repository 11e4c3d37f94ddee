"""Engines for the catalog database, schema creation and the schema-version check.

SQLite (``sqlite:///path``) runs in WAL mode with a busy timeout. pysqlite's own transaction
handling is switched off and every write transaction starts with ``BEGIN IMMEDIATE``: it takes
the write lock up front, so a transaction that reads and then writes never fails to upgrade
its lock, and writers are serialized. Read-only work goes through `read_only` engines, which
start with a plain ``BEGIN`` and never block writers.

A SQLite catalog this process cannot write (its file or directory is not writable, or it is
on a read-only file system) is opened read-only instead (`versioned.catalog.read_only_sqlite`
says how it is detected and read): every read works, a write transaction raises
`CatalogReadOnlyError` before it starts, and opening it never creates or upgrades a schema.

PostgreSQL (``postgresql+psycopg://...``) runs writes in READ COMMITTED and relies on
compare-and-swap updates and row locks; reads run in REPEATABLE READ so that one read sees
one consistent state.
"""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.pool import NullPool

from versioned.catalog import clock, migrations, read_only_sqlite
from versioned.catalog.models import TXN_COUNTER, Base, CatalogMetaRow, CounterRow
from versioned.errors import (
    CatalogError,
    CatalogReadOnlyError,
    CatalogSchemaVersionError,
    ConfigError,
)

SCHEMA_VERSION = 5
"""Version 2 added the schema history of tables (``table_schemas``), version 3 the per-table
write ids of the acid layout (``table_write_ids``), version 4 the progress of streaming
writers (``stream_progress``)."""
READ_ONLY_OPTION = "versioned_read_only"
# Set on the engine of a catalog this process cannot write: why not (an error message phrase).
READ_ONLY_CATALOG_OPTION = "versioned_read_only_catalog"
_READ_ATTEMPTS = 6
_BUSY_TIMEOUT_MS = 30_000
# Key of the PostgreSQL advisory lock that serializes schema creation across processes.
_SCHEMA_LOCK_KEY = 0x76657273


def create_engine(url: str) -> Engine:
    """An engine for the catalog at ``url`` (SQLite or PostgreSQL), configured for writes.

    Raises:
        ConfigError: The URL is malformed or names an unsupported database.
    """
    try:
        parsed = sa.make_url(url)
    except ArgumentError as exc:
        raise ConfigError(
            f"catalog URL {url!r} is malformed: use sqlite:////path/catalog.db or "
            "postgresql+psycopg://user@host/db",
            url=url,
        ) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed)
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        return sa.create_engine(
            parsed,
            isolation_level="READ COMMITTED",
            pool_size=4,
            max_overflow=8,
            pool_pre_ping=True,
            connect_args={"connect_timeout": 10},
        )
    raise ConfigError(
        f"catalog URL {url!r}: versioned supports SQLite (sqlite:////path/catalog.db) and "
        "PostgreSQL (postgresql+psycopg://user@host/db) catalogs only",
        url=url,
    )


def read_only(engine: Engine) -> Engine:
    """A view of ``engine`` for read-only transactions (plain BEGIN / REPEATABLE READ)."""
    options: dict[str, Any] = {READ_ONLY_OPTION: True}
    if engine.dialect.name == "postgresql":
        options["isolation_level"] = "REPEATABLE READ"
    return engine.execution_options(**options)


def read_only_reason(engine: Engine) -> str | None:
    """Why this process cannot write ``engine``'s catalog, as a phrase for a message
    (``None``: it can)."""
    reason = engine.get_execution_options().get(READ_ONLY_CATALOG_OPTION)
    return None if reason is None else str(reason)


def catalog_read_only(engine: Engine, reason: str) -> CatalogReadOnlyError:
    """The error saying that the catalog of ``engine`` cannot be written, and why."""
    where = engine.url.database if engine.dialect.name == "sqlite" else None
    url = engine.url.render_as_string(hide_password=True)
    return CatalogReadOnlyError(
        f"the catalog {where or url} is read-only: {reason}; commands that only read work, "
        "writing needs a user who can write it",
        url=url,
        reason=reason,
    )


def _sqlite_engine(url: sa.URL) -> Engine:
    if url.database in (None, "", ":memory:"):
        raise ConfigError(
            "an in-memory SQLite catalog cannot be shared between connections; "
            "use sqlite:////path/catalog.db",
            url=str(url),
        )
    path = Path(url.database)
    refusal = read_only_sqlite.write_refusal(path)
    if refusal is not None:
        return _read_only_sqlite_engine(url, path, refusal)
    engine = sa.create_engine(url, connect_args={"timeout": _BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from pysqlite: it would otherwise BEGIN lazily
        # (deferred) before the first write, which is what leads to SQLITE_BUSY on upgrade.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            _use_wal(cursor)
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        read_only_txn = conn.get_execution_options().get(READ_ONLY_OPTION, False)
        conn.exec_driver_sql("BEGIN" if read_only_txn else "BEGIN IMMEDIATE")

    return engine


def _read_only_sqlite_engine(url: sa.URL, path: Path, refusal: str) -> Engine:
    """An engine reading the SQLite catalog at ``path``, which this process cannot write.

    Each transaction gets a connection of its own (no pool), so that an ``immutable``
    connection never outlives the one read its commit checks.
    """
    engine = sa.create_engine(
        url,
        creator=lambda: read_only_sqlite.connect(path, _BUSY_TIMEOUT_MS / 1000),
        poolclass=NullPool,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if not conn.get_execution_options().get(READ_ONLY_OPTION, False):
            raise catalog_read_only(conn.engine, refusal)
        conn.exec_driver_sql("BEGIN")

    @event.listens_for(engine, "commit")
    def _on_commit(conn: Connection) -> None:
        try:
            read_only_sqlite.check_unchanged(conn.connection.dbapi_connection)
        except read_only_sqlite.CatalogChangedDuringRead as exc:
            raise OperationalError("COMMIT", None, exc) from exc  # retried as transient

    return engine.execution_options(**{READ_ONLY_CATALOG_OPTION: refusal})


def _use_wal(cursor: Any) -> None:
    """Put the database in WAL mode (a setting kept in the file, so set once).

    When several processes open a new database at once, switching the journal mode can fail
    with "database is locked" at once, without SQLite's busy handler waiting: retry until
    the busy timeout, and skip the switch when the file is in WAL mode already.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    pause = 0.01
    while True:
        try:
            (mode,) = cursor.execute("PRAGMA journal_mode").fetchone()
            if str(mode).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(pause * (1 + random.random()))
            pause = min(pause * 2, 0.5)


def ensure_schema(engine: Engine, *, create: bool) -> int:
    """Create the catalog tables if missing, upgrade an older catalog, check the version.

    Safe when several processes call it at once: creation and upgrades run in one write
    transaction under a database-wide lock (BEGIN IMMEDIATE on SQLite, an advisory lock on
    PostgreSQL); see `versioned.catalog.migrations`.

    Returns:
        The schema version of the catalog.

    Raises:
        CatalogError: No catalog exists and ``create`` is false.
        CatalogSchemaVersionError: The catalog was written by a newer release.
    """
    url = engine.url.render_as_string(hide_password=True)
    refusal = read_only_reason(engine)
    try:
        version = _schema_version(engine)
        if version is None:
            if refusal is not None:
                raise CatalogError(
                    f"no versioned catalog at {url}, and none can be created there: {refusal}",
                    url=url,
                )
            if not create:
                raise CatalogError(
                    f"no versioned catalog at {url}: connect with create=True to create one",
                    url=url,
                )
            version = _create_schema(engine)
        elif migrations.oldest_upgradable() <= version < SCHEMA_VERSION:
            if refusal is not None:
                raise _upgrade_needs_a_writer(url, version, refusal)
            version = _upgrade_schema(engine)
    except OperationalError as exc:
        raise _unopenable(engine, url, exc) from exc
    return _check_version(version, url)


def _upgrade_needs_a_writer(url: str, version: int, refusal: str) -> CatalogSchemaVersionError:
    return CatalogSchemaVersionError(
        f"the catalog at {url} has schema version {version}, older than the {SCHEMA_VERSION} "
        f"this release reads, and is read-only: {refusal}; someone who can write it "
        "must upgrade it, by opening it once with this release (e.g. versioned list-tables)",
        url=url,
        found=version,
        supported=SCHEMA_VERSION,
    )


def _unopenable(engine: Engine, url: str, exc: OperationalError) -> CatalogError:
    refusal = read_only_reason(engine)
    if refusal is not None and engine.url.database:
        path = Path(engine.url.database)
        advice = f"it is read-only, {refusal}; {read_only_sqlite.unreadable_advice(path)}"
    elif engine.dialect.name == "sqlite":
        advice = "check the path, and that the file and its directory may be written"
    else:
        advice = "check the URL and that the database server is running"
    reason = "; ".join(line.strip() for line in str(exc.orig).splitlines() if line.strip())
    return CatalogError(f"cannot open the catalog at {url}: {reason}; {advice}", url=url)


def _schema_version(engine: Engine) -> int | None:
    attempt = 0
    while True:
        attempt += 1
        try:
            with read_only(engine).begin() as conn:
                if not sa.inspect(conn).has_table(CatalogMetaRow.__tablename__):
                    return None
                query = sa.select(sa.func.max(CatalogMetaRow.schema_version))
                return conn.execute(query).scalar()
        except OperationalError as exc:
            changed = isinstance(exc.orig, read_only_sqlite.CatalogChangedDuringRead)
            if not changed or attempt >= _READ_ATTEMPTS:
                raise


def _create_schema(engine: Engine) -> int:
    with engine.begin() as conn:
        _lock_schema(conn)
        if sa.inspect(conn).has_table(CatalogMetaRow.__tablename__):
            existing = conn.execute(sa.select(sa.func.max(CatalogMetaRow.schema_version))).scalar()
            if existing is not None:
                return int(existing)  # another process created it first
        Base.metadata.create_all(conn, checkfirst=True)
        conn.execute(
            sa.insert(CatalogMetaRow).values(
                id=1, schema_version=SCHEMA_VERSION, created_at=clock.now(conn)
            )
        )
        conn.execute(sa.insert(CounterRow).values(name=TXN_COUNTER, value=0))
    return SCHEMA_VERSION


def _upgrade_schema(engine: Engine) -> int | None:
    with engine.begin() as conn:
        _lock_schema(conn)
        found = conn.execute(sa.select(sa.func.max(CatalogMetaRow.schema_version))).scalar()
        if found is None or found >= SCHEMA_VERSION:
            return found  # upgraded by another process meanwhile (or not a catalog)
        migrations.upgrade(conn, int(found), SCHEMA_VERSION)
    return SCHEMA_VERSION


def _lock_schema(conn: Connection) -> None:
    """Serialize schema work across processes (SQLite: BEGIN IMMEDIATE did already)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_SCHEMA_LOCK_KEY)))


def _check_version(version: int | None, url: str) -> int:
    if version is None:
        raise CatalogSchemaVersionError(
            f"the catalog at {url} has no schema version; it was not created by versioned",
            url=url,
            found=None,
            supported=SCHEMA_VERSION,
        )
    if version > SCHEMA_VERSION:
        raise CatalogSchemaVersionError(
            f"the catalog at {url} has schema version {version}, newer than the {SCHEMA_VERSION} "
            "this release understands: upgrade versioned (pip install -U versioned)",
            url=url,
            found=version,
            supported=SCHEMA_VERSION,
        )
    if version < SCHEMA_VERSION:
        raise CatalogSchemaVersionError(
            f"the catalog at {url} has schema version {version}, older than {SCHEMA_VERSION}; "
            "no upgrade exists for it: export its tables and import them into a new catalog",
            url=url,
            found=version,
            supported=SCHEMA_VERSION,
        )
    return version
