"""The catalog's clock: every time the catalog records or compares (commit times, heartbeats,
transaction deadlines, lock requests) is read from its database, not from the client.

A client whose wall clock is minutes behind or ahead therefore neither orders its commits
out of time, nor expires other clients' transactions early (ahead), nor keeps its own alive
past their deadline (behind). PostgreSQL answers with its server's ``clock_timestamp()``;
SQLite, which runs inside the client, with the operating system's clock read by SQLite
itself (``julianday('now')``, millisecond resolution), not Python's ``time.time``.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

_QUERIES = {
    "postgresql": "SELECT extract(epoch FROM clock_timestamp())",
    "sqlite": "SELECT (julianday('now') - 2440587.5) * 86400.0",
}


def now(session: Session | Connection) -> float:
    """The catalog database's time, in seconds since the epoch."""
    bind = session.get_bind() if isinstance(session, Session) else session
    query = _QUERIES[bind.dialect.name]
    return float(session.execute(sa.text(query)).scalar_one())
