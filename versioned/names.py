"""Validated names of databases, tables, columns and principals.

Names are case-insensitive like Hive's and are stored lower-case. Only ASCII letters, digits
and underscores are allowed, so a validated name is always safe in a path and in SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from versioned.errors import InvalidNameError

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,127}$")
_PRINCIPAL = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@\-]{0,127}$")
DEFAULT_DATABASE = "default"

# Names the version-partition layout uses for its own columns and directories
# (`__key_hash`: engine/spark/sql/latest_view.sql).
RESERVED_COLUMNS = frozenset({"version_id", "_version", "_op", "_seq", "_reason", "__key_hash"})

# Databases Spark resolves specially in SQL (global temporary views, the session catalog's own
# name, system and session namespaces, the SQL standard's schema of metadata); a table of
# ours there could not be queried by its name. Names starting with "__" are ours (the SQL
# views' private tables live in "__versioned").
RESERVED_DATABASES = frozenset(
    {"global_temp", "spark_catalog", "system", "session", "builtin", "information_schema"}
)


def check_queryable_name(name: TableName) -> None:
    """Refuse a table name that SQL could not reach, or that is reserved for versioned.

    Raises:
        InvalidNameError: The database is reserved (see `RESERVED_DATABASES`) or starts
            with ``__``.
    """
    db = name.database
    if db in RESERVED_DATABASES or db.startswith("__"):
        raise InvalidNameError(
            f"database name {db!r} is reserved (Spark SQL resolves it specially, or versioned "
            "uses it); choose another database name",
            name=str(name),
        )


def identifier(name: str, kind: str = "name") -> str:
    """Return ``name`` lower-cased, or raise `InvalidNameError` if it is not an identifier."""
    if not isinstance(name, str):
        raise InvalidNameError(f"{kind} must be a string, got {type(name).__name__}", name=name)
    lowered = name.strip().lower()
    if not _IDENTIFIER.match(lowered):
        raise InvalidNameError(
            f"invalid {kind} {name!r}: use 1-128 letters, digits or underscores, "
            "not starting with a digit",
            name=name,
        )
    return lowered


def principal(name: str) -> str:
    """Validate a user or group name as used in grants."""
    if not isinstance(name, str) or not _PRINCIPAL.match(name):
        raise InvalidNameError(
            f"invalid principal {name!r}: use letters, digits and . _ @ - (at most 128)",
            name=name,
        )
    return name


@dataclass(frozen=True, order=True)
class TableName:
    """A fully qualified table name ``database.table``."""

    database: str
    table: str

    @classmethod
    def parse(cls, text: str) -> TableName:
        """Parse ``db.table`` (or ``table``, meaning ``default.table``)."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidNameError("a table name is required, as DB.TABLE", name=text)
        parts = text.strip().split(".")
        if len(parts) == 1:
            return cls(DEFAULT_DATABASE, identifier(parts[0], "table name"))
        if len(parts) == 2:
            return cls(identifier(parts[0], "database name"), identifier(parts[1], "table name"))
        raise InvalidNameError(f"invalid table name {text!r}: expected DB.TABLE", name=text)

    @classmethod
    def of(cls, name: str | TableName) -> TableName:
        """``name`` as a `TableName` (parsed when it is text)."""
        return name if isinstance(name, TableName) else cls.parse(str(name))

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"


def grant_target(on: str) -> tuple[str, str | None]:
    """What ``on`` of a grant names: ``(database, None)`` for ``db``, ``(database, table)``
    for ``db.table``."""
    if "." in on:
        parsed = TableName.parse(on)
        return parsed.database, parsed.table
    return identifier(on, "database name"), None
