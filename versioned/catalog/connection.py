"""Short read and write sessions against the catalog, retried when the database says so."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from versioned.catalog.engine import catalog_read_only, read_only, read_only_reason
from versioned.catalog.read_only_sqlite import CatalogChangedDuringRead

T = TypeVar("T")

_ATTEMPTS = 6
# PostgreSQL: serialization_failure, deadlock_detected. Both roll the transaction back,
# so running it again cannot apply anything twice.
_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01"})


class CatalogConnection:
    """Runs units of work, each in one SQL transaction of its own.

    A unit of work is a function taking a `Session`; it must not keep ORM objects beyond
    its transaction (it returns records). A unit that raises leaves nothing written.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._writer = sessionmaker(engine, expire_on_commit=False)
        self._reader = sessionmaker(read_only(engine), expire_on_commit=False)

    def write(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in a write transaction and commit it.

        Deadlocks, serialization failures and SQLite busy errors roll back and are retried
        a few times; every other error propagates after the rollback.

        Raises:
            CatalogReadOnlyError: This process cannot write the catalog (nothing ran), or
                SQLite found so on writing (nothing was written).
        """
        self.require_writable()
        try:
            return self._run(self._writer, work)
        except DBAPIError as exc:
            if _is_read_only(exc):
                raise catalog_read_only(self.engine, f"SQLite says: {exc.orig}") from exc
            raise

    def require_writable(self) -> None:
        """Raise `CatalogReadOnlyError` when this process cannot write the catalog."""
        reason = read_only_reason(self.engine)
        if reason is not None:
            raise catalog_read_only(self.engine, reason)

    def read(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in a read-only transaction (a consistent view of the catalog)."""
        return self._run(self._reader, work)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def _run(self, factory: sessionmaker[Session], work: Callable[[Session], T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                with factory() as session, session.begin():
                    return work(session)
            except DBAPIError as exc:
                if attempt >= _ATTEMPTS or not _is_transient(exc):
                    raise
            time.sleep(random.uniform(0.01, 0.05) * attempt)


def _is_transient(exc: DBAPIError) -> bool:
    if isinstance(exc.orig, CatalogChangedDuringRead):
        return True  # an unlocked read of a read-only catalog met a writer: read again
    if exc.connection_invalidated:
        return False  # the server may or may not have committed: never guess
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate in _TRANSIENT_SQLSTATES:
        return True
    message = str(exc.orig).lower()
    return "database is locked" in message or "database is busy" in message


def _is_read_only(exc: DBAPIError) -> bool:
    """Whether SQLite refused a write because it cannot write the database (the file, its
    directory or its -shm index), whatever this process's look at the files predicted."""
    return str(getattr(exc.orig, "sqlite_errorname", "")).startswith("SQLITE_READONLY")
