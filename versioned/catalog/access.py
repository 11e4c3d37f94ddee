"""Access checks: who may read, write or grant on a database or a table.

The owner of a table and the owner of its database have every privilege on it. A grant on a
database applies to all its tables. ``write`` implies ``read``; ``all`` is read, write and
the right to grant and revoke.
"""

from __future__ import annotations

from typing import Literal

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog.models import DatabaseRow, GrantRow, TableRow
from versioned.catalog.records import PRIVILEGES, Privilege
from versioned.errors import InputError, PermissionDeniedError

Need = Literal["read", "write", "grant"]

# Which granted privileges satisfy a need.
_SATISFIES: dict[str, frozenset[str]] = {
    "read": frozenset({"read", "write", "all"}),
    "write": frozenset({"write", "all"}),
    "grant": frozenset({"all"}),
}
_VERBS = {"read": "read", "write": "write to", "grant": "grant or revoke privileges on"}
_PRIVILEGE_FOR = {"read": "read", "write": "write", "grant": "all"}
_IMPLIED: dict[str, frozenset[Privilege]] = {
    "read": frozenset({"read"}),
    "write": frozenset({"read", "write"}),
    "all": frozenset({"read", "write", "all"}),
}


def check_privilege(privilege: str) -> Privilege:
    """Validate a privilege name."""
    if privilege not in PRIVILEGES:
        raise InputError(
            f"unknown privilege {privilege!r}; use one of {', '.join(PRIVILEGES)}",
            privilege=privilege,
        )
    return privilege  # type: ignore[return-value]  # checked just above


def user_privileges(session: Session, user: str) -> dict[tuple[int, int | None], set[str]]:
    """Every privilege granted to ``user``, by ``(database_id, table_id)``."""
    found: dict[tuple[int, int | None], set[str]] = {}
    rows = session.execute(
        sa.select(GrantRow.database_id, GrantRow.table_id, GrantRow.privilege).where(
            GrantRow.principal == user
        )
    )
    for database_id, table_id, privilege in rows:
        found.setdefault((database_id, table_id), set()).add(privilege)
    return found


def table_allows(
    table: TableRow, user: str, need: Need, granted: dict[tuple[int, int | None], set[str]]
) -> bool:
    """Whether ``user`` may do what ``need`` says on ``table``, given its grants."""
    if user in (table.owner, table.database.owner):
        return True
    held = granted.get((table.database_id, None), set()) | granted.get(
        (table.database_id, table.id), set()
    )
    return bool(held & _SATISFIES[need])


def granted_privileges(session: Session, user: str, table: TableRow) -> frozenset[Privilege]:
    """What ``user`` may do on ``table``, as privileges: ``write`` implies ``read``, ``all``
    implies both, and the owners of the table and of its database hold all three."""
    if user in (table.owner, table.database.owner):
        return _IMPLIED["all"]
    held = set(
        session.scalars(
            sa.select(GrantRow.privilege).where(
                GrantRow.principal == user,
                GrantRow.database_id == table.database_id,
                sa.or_(GrantRow.table_id.is_(None), GrantRow.table_id == table.id),
            )
        )
    )
    return frozenset().union(*(_IMPLIED[p] for p in held if p in _IMPLIED))


def require_granted(user: str, table: TableRow, need: Need, granted: frozenset[Privilege]) -> None:
    """Raise `PermissionDeniedError` unless ``granted`` (`granted_privileges`) covers ``need``."""
    if _PRIVILEGE_FOR[need] not in granted:
        name = f"{table.database.name}.{table.name}"
        _deny(user, need, name, name, table.owner)


def require_table(session: Session, user: str, table: TableRow, need: Need) -> None:
    """Raise `PermissionDeniedError` unless ``user`` may do ``need`` on ``table``."""
    require_granted(user, table, need, granted_privileges(session, user, table))


def require_database(session: Session, user: str, database: DatabaseRow, need: Need) -> None:
    """Raise `PermissionDeniedError` unless ``user`` may do ``need`` on the whole database."""
    if user == database.owner:
        return
    held = set(
        session.scalars(
            sa.select(GrantRow.privilege).where(
                GrantRow.principal == user,
                GrantRow.database_id == database.id,
                GrantRow.table_id.is_(None),
            )
        )
    )
    if not held & _SATISFIES[need]:
        _deny(user, need, f"database {database.name}", database.name, database.owner)


def require_owner(user: str, table: TableRow, action: str) -> None:
    """Raise `PermissionDeniedError` unless ``user`` owns ``table``."""
    if user != table.owner:
        name = f"{table.database.name}.{table.name}"
        raise PermissionDeniedError(
            f"{user} may not {action} {name}: only its owner ({table.owner}) may",
            user=user,
            target=name,
            owner=table.owner,
            needed="owner",
        )


def _deny(user: str, need: Need, what: str, target: str, owner: str) -> None:
    privilege = _PRIVILEGE_FOR[need]
    raise PermissionDeniedError(
        f"{user} may not {_VERBS[need]} {what}: ask its owner ({owner}) for "
        f"`versioned grant {privilege} {target} {user}`",
        user=user,
        target=target,
        owner=owner,
        needed=privilege,
    )
