"""What every part of the catalog facade shares: the connection, the user, and running work
on a table once the user may do it (`MetaStore` is built on these)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

from sqlalchemy.orm import Session

from versioned.catalog import access, tables
from versioned.catalog.connection import CatalogConnection, Found
from versioned.catalog.models import TableRow
from versioned.errors import TransactionExpiredError
from versioned.names import TableName

T = TypeVar("T")
Need = Literal["read", "write", "grant", "owner"]


class StoreBase:
    """The connection and user of a catalog facade, and its table-access helpers."""

    _db: CatalogConnection
    user: str

    def reap_expired(self) -> list[int]:
        """Abort every transaction that missed its heartbeat deadline (`TransactionStore`
        does it; the helpers below call it when a write finds one expired)."""
        raise NotImplementedError("a catalog facade reaps through TransactionStore")

    # helpers ----------------------------------------------------------------------------------

    def _on_table(
        self,
        name: TableName,
        need: Need,
        work: Callable[[Session, TableRow], T],
        *,
        write: bool = False,
        lock: bool = False,
        idempotent: bool = False,
    ) -> T:
        """Run ``work`` on the table once this user may do ``need``; ``lock`` locks its row;
        ``idempotent``: a write that may run twice (`CatalogConnection.write`)."""
        table_name = tables.table_name(name)

        def unit(s: Session) -> T:
            table = tables.get_table(s, table_name, for_update=lock)
            if need == "owner":
                access.require_owner(self.user, table, "drop")
            else:
                access.require_table(s, self.user, table, need)
            return work(s, table)

        return self._db.write(unit, idempotent=idempotent) if write else self._db.read(unit)

    def _expiring_on_table(
        self,
        name: TableName,
        work: Callable[[Session, TableRow], T],
        *,
        idempotent: bool = False,
    ) -> T:
        """`_on_table` with write permission and the table row locked, reaping on expiry."""
        try:
            return self._on_table(name, "write", work, write=True, lock=True, idempotent=idempotent)
        except TransactionExpiredError:
            self.reap_expired()
            raise

    def _expiring(
        self,
        work: Callable[[Session], T],
        *,
        confirm: Callable[[Session], Found[T] | None] | None = None,
        idempotent: bool = False,
    ) -> T:
        """Run a write (``confirm`` and ``idempotent`` as `CatalogConnection.write` takes
        them); when it finds a transaction expired, abort that one, then re-raise."""
        try:
            return self._db.write(work, confirm=confirm, idempotent=idempotent)
        except TransactionExpiredError:
            self.reap_expired()
            raise
