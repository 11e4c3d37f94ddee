"""The grant calls of the catalog facade (`MetaStore`): granting, revoking and listing
privileges on databases and tables (`versioned.catalog.grants`)."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from versioned.catalog import clock, grants
from versioned.catalog.change_watch import CatalogChange, ChangeWatch, watched
from versioned.catalog.records import GrantInfo, Privilege
from versioned.catalog.store_base import StoreBase


class GrantStore(StoreBase):
    """Grants on databases and tables; each grant and revoke is reported to ``watch``."""

    watch: ChangeWatch | None

    def grant(
        self, principal: str, privilege: Privilege, *, database: str, table: str | None = None
    ) -> GrantInfo:
        """Grant a privilege on a database or table (needs ownership or ``all``).

        Granting what is granted already is not an error.
        """

        def unit(s: Session) -> GrantInfo:
            return grants.grant(
                s,
                user=self.user,
                principal=principal,
                privilege=privilege,
                database=database,
                table=table,
                now=clock.now(s),
            )

        target = database if table is None else f"{database}.{table}"
        with watched(self.watch, "grant", target) as made:
            try:
                granted = self._db.write(unit, idempotent=True)
            except IntegrityError:  # the same grant raced in from elsewhere: it exists now
                granted = self._db.write(unit, idempotent=True)
            made.append(CatalogChange("grant", target))
        return granted

    def revoke(
        self, principal: str, privilege: Privilege, *, database: str, table: str | None = None
    ) -> None:
        """Take back a grant (needs ownership or ``all``); revoking a missing grant is a no-op."""
        target = database if table is None else f"{database}.{table}"
        with watched(self.watch, "revoke", target) as made:
            self._db.write(
                lambda s: grants.revoke(
                    s,
                    user=self.user,
                    principal=principal,
                    privilege=privilege,
                    database=database,
                    table=table,
                ),
                idempotent=True,
            )
            made.append(CatalogChange("revoke", target))

    def grants(self, *, database: str, table: str | None = None) -> list[GrantInfo]:
        """Grants on exactly this database or table (needs read on it)."""
        return self._db.read(
            lambda s: grants.grants_on(s, user=self.user, database=database, table=table)
        )
