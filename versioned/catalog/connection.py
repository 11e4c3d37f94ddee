"""Short read and write sessions against the catalog, retried when the database says so.

A lost connection (the server restarted, its backend was killed, the network dropped) is
met by running the unit again on a new connection, for up to ``outage_s`` seconds
(``VERSIONED_CATALOG_OUTAGE_S``, default `DEFAULT_OUTAGE_S`), then `CatalogUnavailableError`.
That is safe while the unit had not reached its COMMIT: the server rolls back a transaction
whose connection is gone. A connection lost during COMMIT leaves the outcome unknown: a unit
given ``confirm`` (a read that finds what the unit did, e.g. the commit of its transaction
id) is confirmed once the catalog answers again, and run again only when it did not happen;
one without is run again only when it is idempotent (``idempotent=True``), else
`CommitOutcomeUnknownError`.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from versioned.catalog.engine import (
    catalog_read_only,
    ensure_schema,
    read_only,
    read_only_reason,
)
from versioned.catalog.read_only_sqlite import CatalogChangedDuringRead
from versioned.errors import (
    CatalogError,
    CatalogUnavailableError,
    CommitOutcomeUnknownError,
    ConfigError,
)

T = TypeVar("T")
log = logging.getLogger(__name__)

DEFAULT_OUTAGE_S = 30.0
"""How long a catalog operation keeps trying to reach a catalog that went away."""
OUTAGE_ENV = "VERSIONED_CATALOG_OUTAGE_S"
# PostgreSQL: admin_shutdown (pg_terminate_backend, a fast shutdown), crash_shutdown,
# cannot_connect_now (starting up); class 08 are connection exceptions.
_GONE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})


@dataclass(frozen=True)
class Found(Generic[T]):
    """What a ``confirm`` read found the unit to have done."""

    value: T


_ATTEMPTS = 6
# PostgreSQL: serialization_failure, deadlock_detected. Both roll the transaction back,
# so running it again cannot apply anything twice.
_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01"})


class CatalogConnection:
    """Runs units of work, each in one SQL transaction of its own.

    A unit of work is a function taking a `Session`; it must not keep ORM objects beyond
    its transaction (it returns records). A unit that raises leaves nothing written.
    """

    def __init__(self, engine: Engine, *, outage_s: float | None = None) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self.outage_s = outage_setting() if outage_s is None else outage_s
        self._writer = sessionmaker(engine, expire_on_commit=False)
        self._reader = sessionmaker(read_only(engine), expire_on_commit=False)

    def write(
        self,
        work: Callable[[Session], T],
        *,
        confirm: Callable[[Session], Found[T] | None] | None = None,
        idempotent: bool = False,
    ) -> T:
        """Run ``work`` in a write transaction and commit it.

        Deadlocks, serialization failures and SQLite busy errors roll back and are retried
        a few times; a lost connection as the module says; every other error propagates
        after the rollback.

        Args:
            confirm: Finds, in a read transaction, what ``work`` did when it committed
                (None: it did not), for a connection lost during COMMIT.
            idempotent: Running ``work`` twice does what running it once does.

        Raises:
            CatalogReadOnlyError: This process cannot write the catalog (nothing ran), or
                SQLite found so on writing (nothing was written).
            CatalogUnavailableError: The catalog could not be reached for ``outage_s``.
            CommitOutcomeUnknownError: The connection was lost during COMMIT and whether it
                happened is unknown (no ``confirm``, not ``idempotent``).
        """
        self.require_writable()
        try:
            return self._run(self._writer, work, confirm=confirm, idempotent=idempotent)
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
        """Run ``work`` in a read-only transaction (a consistent view of the catalog).

        Raises:
            CatalogUnavailableError: The catalog could not be reached for ``outage_s``.
        """
        return self._run(self._reader, work, idempotent=True)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def _run(
        self,
        factory: sessionmaker[Session],
        work: Callable[[Session], T],
        *,
        confirm: Callable[[Session], Found[T] | None] | None = None,
        idempotent: bool = False,
    ) -> T:
        attempt = 0
        gone_since: float | None = None
        while True:
            attempt += 1
            committing = False
            try:
                with factory() as session:
                    with session.begin():
                        result = work(session)
                        committing = True  # the block's end flushes and commits
                    return result
            except DBAPIError as exc:
                if not connection_lost(exc):
                    if attempt >= _ATTEMPTS or not _is_transient(exc):
                        raise
                else:
                    if gone_since is None:
                        gone_since = time.monotonic()
                        log.warning("lost the catalog connection (%s); trying again", _reason(exc))
                    if committing and not idempotent:
                        if confirm is None:
                            raise self._unknown(exc) from exc
                        found = self._confirm(confirm, gone_since, exc)
                        if found is not None:
                            log.warning("the commit whose connection was lost had happened")
                            return found.value
                    waited = time.monotonic() - gone_since
                    if waited >= self.outage_s:
                        raise unavailable(self.engine, exc, waited) from exc
                    time.sleep(min(1.0, 0.05 * attempt))
                    continue
            time.sleep(random.uniform(0.01, 0.05) * attempt)

    def _confirm(
        self,
        confirm: Callable[[Session], Found[T] | None],
        gone_since: float,
        cause: DBAPIError,
    ) -> Found[T] | None:
        """Ask the catalog, once it answers, what the unit whose COMMIT was cut did."""
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._reader() as session, session.begin():
                    return confirm(session)
            except DBAPIError as exc:
                if not connection_lost(exc):
                    raise
                if time.monotonic() - gone_since >= self.outage_s:
                    raise self._unknown(cause) from exc
            time.sleep(min(1.0, 0.05 * attempt))

    def _url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def _unknown(self, exc: DBAPIError) -> CommitOutcomeUnknownError:
        return CommitOutcomeUnknownError(
            f"the connection to the catalog {self._url()} was lost while it committed "
            f"({_reason(exc)}), and it could not be asked since whether the commit happened: "
            "the table's history says (a commit is never applied twice); retry when it is back",
            url=self._url(),
        )


def ensure_schema_when_reachable(
    engine: Engine, *, create: bool, outage_s: float | None = None
) -> None:
    """`ensure_schema`, tried again for up to ``outage_s`` seconds (default `outage_setting`)
    while the catalog's server cannot be reached (down, restarting, its connection killed),
    as a unit of work is.

    Raises:
        CatalogUnavailableError: It could not be reached for that long (what a command that
            loses the catalog midway raises too).
    """
    outage_s = outage_setting() if outage_s is None else outage_s
    started = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        try:
            ensure_schema(engine, create=create)
            return
        except CatalogError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, DBAPIError) and connection_lost(cause)):
                raise
            waited = time.monotonic() - started
            if waited >= outage_s:
                raise unavailable(engine, cause, waited) from cause
            if attempt == 1:  # a wait of seconds: say why (the command line shows it)
                log.warning(
                    "cannot reach the catalog (%s); trying again for up to %.0f s (%s)",
                    _reason(cause),
                    outage_s,
                    OUTAGE_ENV,
                )
        time.sleep(0.2)


def unavailable(engine: Engine, exc: DBAPIError, waited: float) -> CatalogUnavailableError:
    """The error of a catalog that could not be reached for ``waited`` seconds, in one line."""
    url = engine.url.render_as_string(hide_password=True)
    return CatalogUnavailableError(
        f"the catalog {url} could not be reached ({_reason(exc)}; tried for {waited:.0f} s); "
        f"nothing was changed: retry when it is back ({OUTAGE_ENV} sets how long to keep "
        "trying)",
        url=url,
        waited_s=waited,
    )


def outage_setting() -> float:
    """How long to keep trying a catalog that went away (``VERSIONED_CATALOG_OUTAGE_S``)."""
    raw = os.environ.get(OUTAGE_ENV)
    if raw is None:
        return DEFAULT_OUTAGE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ConfigError(f"{OUTAGE_ENV}={raw!r} must be a number of seconds >= 0")
    return value


def connection_lost(exc: DBAPIError) -> bool:
    """Whether the error says the catalog server or the connection to it went away."""
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    if type(orig).__module__.split(".")[0] != "psycopg":
        return False
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is None:  # no server answer at all: refused, reset, closed
        return type(orig).__name__ == "OperationalError"
    return sqlstate in _GONE_SQLSTATES or str(sqlstate).startswith("08")


def _reason(exc: DBAPIError) -> str:
    return (
        str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
    )


def _is_transient(exc: DBAPIError) -> bool:
    if isinstance(exc.orig, CatalogChangedDuringRead):
        return True  # an unlocked read of a read-only catalog met a writer: read again
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate in _TRANSIENT_SQLSTATES:
        return True
    message = str(exc.orig).lower()
    return "database is locked" in message or "database is busy" in message


def _is_read_only(exc: DBAPIError) -> bool:
    """Whether SQLite refused a write because it cannot write the database (the file, its
    directory or its -shm index), whatever this process's look at the files predicted."""
    return str(getattr(exc.orig, "sqlite_errorname", "")).startswith("SQLITE_READONLY")
