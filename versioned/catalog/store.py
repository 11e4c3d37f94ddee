"""`MetaStore`: the catalog as one principal sees it.

Each method runs in one short SQL transaction of its own (a lock wait polls in several) and
checks the permission it needs first. Timestamps are float epoch seconds from the catalog
database's clock (`versioned.catalog.clock`), never this client's.

This module holds the table, commit, snapshot and permission calls; the others come from
`MetaStore`'s parts, each built on `versioned.catalog.store_base.StoreBase`: `TransactionStore`,
`ChangeLogReads`, `SummaryReads`, `PartitionStore`, `StreamProgressStore` and `GrantStore`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from versioned import names
from versioned.catalog import (
    access,
    clock,
    commit_outcomes,
    commits,
    multi_commits,
    schemas,
    snapshots,
    tables,
)
from versioned.catalog.change_log import ChangeLogReads
from versioned.catalog.change_watch import CatalogChange, ChangeWatch, watched
from versioned.catalog.connection import (
    CatalogConnection,
    ensure_schema_when_reachable,
)
from versioned.catalog.engine import create_engine
from versioned.catalog.grant_store import GrantStore
from versioned.catalog.partition_store import PartitionStore
from versioned.catalog.partition_summaries import PartitionSummariser
from versioned.catalog.records import (
    CommitInfo,
    DatabaseInfo,
    DataFile,
    PartitionCommit,
    Privilege,
    SinceCheck,
    Snapshot,
    StreamMark,
    TableAccess,
    TableCommit,
    TableInfo,
)
from versioned.catalog.stream_progress_store import StreamProgressStore
from versioned.catalog.summary_reads import SummaryReads
from versioned.catalog.transaction_store import TransactionStore
from versioned.errors import CatalogUnavailableError, InputError
from versioned.names import TableName
from versioned.schema import TableSpec
from versioned.schema_changes import SchemaChange


class MetaStore(
    TransactionStore,
    ChangeLogReads,
    SummaryReads,
    PartitionStore,
    StreamProgressStore,
    GrantStore,
):
    """Databases, tables, partitions, transactions, locks, commits and grants.

    Attributes:
        url: The catalog's SQLAlchemy URL.
        user: The principal whose permissions every call is checked against.
        watch: Told about each change users see as it is made (`change_watch`), if set.
        summarise: Makes the summary a commit stores for each partition it changes
            (`partition_summaries`); without one, those summaries are cleared.
    """

    def __init__(self, connection: CatalogConnection, url: str, user: str) -> None:
        self._db = connection
        self.url = url
        self.user = names.principal(user)
        self.watch: ChangeWatch | None = None
        self.summarise: PartitionSummariser | None = None

    @classmethod
    def connect(
        cls, url: str, user: str, *, create: bool = True, outage_s: float | None = None
    ) -> MetaStore:
        """Open the catalog at ``url`` as ``user``, creating its schema when missing.

        ``outage_s`` is how long to keep trying a catalog that cannot be reached, now and
        in every operation (default: `versioned.catalog.connection.outage_setting`).

        A SQLite catalog this process cannot write is opened read-only: reads work, writes
        raise `CatalogReadOnlyError`, and its schema is neither created nor upgraded.

        Raises:
            CatalogSchemaVersionError: The catalog was written by a newer versioned, or by an
                older one and is read-only here (so it cannot be upgraded).
            CatalogError: No catalog exists (and ``create`` is false) or it cannot be reached.
        """
        who = names.principal(user)
        engine = create_engine(url)
        try:
            ensure_schema_when_reachable(engine, create=create, outage_s=outage_s)
        except BaseException:
            engine.dispose()
            raise
        return cls(CatalogConnection(engine, outage_s=outage_s), url, who)

    def now(self) -> float:
        """The catalog's time (seconds since the epoch): what retention and deadlines are
        measured against, whatever this client's clock says."""
        return self._db.read(clock.now)

    def require_writable(self) -> None:
        """Raise `CatalogReadOnlyError` when this process cannot write the catalog (its
        SQLite file is read-only here); a writer calls it before doing any work."""
        self._db.require_writable()

    def close(self) -> None:
        """Release the catalog's connections."""
        self._db.close()

    def __enter__(self) -> MetaStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MetaStore({self._db.engine.url!r}, user={self.user!r})"

    # databases and tables ------------------------------------------------------------------

    def databases(self) -> list[DatabaseInfo]:
        """Every database, by name."""
        return self._db.read(tables.list_databases)

    def create_table(self, spec: TableSpec, *, location: str | None = None) -> TableInfo:
        """Create a table owned by this user; its database is created when missing.

        ``location`` is its directory relative to the warehouse (default ``db.db/table``).

        Raises:
            TableAlreadyExistsError: The name is taken.
            PermissionDeniedError: The database exists and this user may not write to it.
        """
        if not isinstance(spec, TableSpec):
            raise InputError(f"create_table takes a TableSpec, got {type(spec).__name__}")
        name = tables.table_name(spec.name)
        with watched(self.watch, "create", str(name)) as made:
            try:
                info = self._db.write(
                    lambda s: tables.create_table(s, spec, self.user, clock.now(s), location)
                )
            except IntegrityError as exc:  # a racing creator of the same table won
                raise tables.already_exists(name) from exc
            made.append(CatalogChange("create", str(name)))
        return info

    def table(self, name: TableName) -> TableInfo:
        """The table called ``name`` (needs read)."""
        return self._on_table(name, "read", lambda s, t: t.info())

    def tables(self, database: str | None = None) -> list[TableInfo]:
        """Tables this user may read, optionally of one database."""
        db = None if database is None else tables.database_name(database)
        return self._db.read(lambda s: tables.list_tables(s, self.user, db))

    def drop_table(self, name: TableName) -> TableInfo:
        """Remove the table and all its catalog rows (owner only); its files stay.

        Returns:
            The dropped table, so that the caller can delete its files.
        """
        target = str(tables.table_name(name))
        with watched(self.watch, "drop", target) as made:
            info = self._on_table(name, "owner", tables.drop_table, write=True, lock=True)
            made.append(CatalogChange("drop", target))
        return info

    def set_table_properties(self, name: TableName, props: Mapping[str, str]) -> TableInfo:
        """Merge ``props`` into the table's properties (needs write)."""
        target = str(tables.table_name(name))
        with watched(self.watch, "properties", target) as made:
            info = self._on_table(
                name,
                "write",
                lambda s, t: tables.set_properties(t, props),
                write=True,
                lock=True,
                idempotent=True,
            )
            made.append(CatalogChange("properties", target))
        return info

    def alter_table(
        self, name: TableName, change: SchemaChange, *, reason: str | None = None
    ) -> CommitInfo:
        """Add or widen columns as a commit of its own (operation ``alter``; needs write).

        Catalog only: no file is written. The new columns read null in rows written before.

        Raises:
            SchemaError: The change is not allowed; nothing changed.
        """
        table_name = tables.table_name(name)
        self._on_table(table_name, "write", lambda s, t: None)  # before opening a transaction
        txn = self.begin()
        alter = functools.partial(
            schemas.alter, user=self.user, name=table_name, txn_id=txn, change=change
        )
        with watched(self.watch, "commit", str(table_name)) as made:
            try:
                commit = self._expiring(lambda s: alter(s, reason=reason, now=clock.now(s)))
            except BaseException:
                self.abort(txn, "schema change refused or failed")
                raise
            made.append(CatalogChange("commit", str(table_name), commit.version))
        return commit

    # commits and snapshots --------------------------------------------------------------------

    def commit(
        self,
        txn_id: int,
        name: TableName,
        *,
        operation: str,
        partitions: Sequence[PartitionCommit],
        metrics: Mapping[str, Any] | None = None,
        version: int | None = None,
        expected_seq: int | None = None,
        stream_mark: StreamMark | None = None,
        unless_since: SinceCheck | None = None,
        in_commit_order: bool = False,
    ) -> CommitInfo:
        """Make a transaction's files visible, atomically, and commit the transaction.

        Args:
            operation: What the commit did (``upsert``, ``compact``, ``import``, ...).
            partitions: Per partition: head guard and move, files added and removed.
            metrics: JSON-able summary stored with the commit.
            version: The commit's version (default: ``txn_id``).
            expected_seq: Compare-and-swap guard on the whole table: the commit sequence of
                the snapshot the writer planned against (``None``: only the partition
                guards count).
            stream_mark: The micro-batch (writer id, batch id) the commit applies: recorded
                in the same SQL transaction (see `versioned.catalog.stream_progress`).
            unless_since: With ``expected_seq``: commits since it conflict only when this
                check of the files they added or retired gives a reason (it runs with the
                table row locked: keep it short, e.g. a probe of a few Bloom filters).
            in_commit_order: Keep the table's versions in commit order: when a commit of a
                higher version came first, this one takes a fresh version above it (for
                layouts whose files do not carry the version:
                `StorageLayout.versions_follow_commits`).

        Raises:
            CommitConflictError: Another writer changed what this commit planned against;
                nothing was written and the transaction is still open.
            StreamBatchCommittedError: ``stream_mark``'s writer recorded this batch or a
                later one already; nothing was written and the transaction is still open.
            TransactionExpiredError: The transaction expired; it is aborted.
        """
        table_name = tables.table_name(name)
        unit = functools.partial(
            commits.commit_as,
            user=self.user,
            name=table_name,
            txn_id=txn_id,
            operation=operation,
            changes=list(partitions),
            metrics=metrics,
            version=version,
            expected_seq=expected_seq,
            stream_mark=stream_mark,
            unless_since=unless_since,
            summarise=self.summarise,
            in_commit_order=in_commit_order,
        )
        with watched(self.watch, "commit", str(table_name)) as made:
            try:
                info = self._expiring(
                    unit, confirm=lambda s: commit_outcomes.committed_by(s, table_name, txn_id)
                )
            except IntegrityError as exc:  # a racing writer took a file path or a commit number
                raise commits.race_conflict(table_name, txn_id) from exc
            except CatalogUnavailableError as exc:  # the transaction id settles what happened
                vars(exc).update(txn_id=txn_id, table=str(table_name))
                raise
            made.append(CatalogChange("commit", str(table_name), info.version))
        return info

    def commit_tables(self, txn_id: int, tables_changes: Sequence[TableCommit]) -> list[CommitInfo]:
        """Commit a transaction's changes to several tables atomically: every table gets its
        commit (each as `commit` would make it) or none does.

        Raises:
            CommitConflictError: A guard failed in one of the tables; nothing of any table
                was written and the transaction is still open.
            TransactionExpiredError: The transaction expired; it is aborted.
        """
        changes = list(tables_changes)
        unit = functools.partial(
            multi_commits.commit_tables_as,
            user=self.user,
            txn_id=txn_id,
            commits=changes,
            summarise=self.summarise,
        )
        names_ = [str(tables.table_name(c.table)) for c in changes]
        with watched(self.watch, "commit", ", ".join(names_)) as made:
            try:
                infos = self._expiring(
                    unit, confirm=lambda s: commit_outcomes.all_committed(s, changes, txn_id)
                )
            except IntegrityError as exc:  # a racing writer took a file path or commit number
                raise commits.race_conflict(tables.table_name(changes[0].table), txn_id) from exc
            made.extend(
                CatalogChange("commit", n, i.version) for n, i in zip(names_, infos, strict=True)
            )
        return infos

    def history(self, name: TableName) -> list[CommitInfo]:
        """Every commit of the table, oldest first (needs read)."""
        return self._on_table(name, "read", lambda s, t: snapshots.history(s, t.id))

    def snapshot(
        self, name: TableName, *, as_of: int | None = None, as_of_time: object = None
    ) -> Snapshot:
        """Files and partitions of the table right after the commit of version ``as_of``
        (its latest version at or below it), or at time ``as_of_time`` (an aware datetime or
        seconds since the epoch: the last commit at or before it, to the microsecond),
        default latest; needs read.

        Raises:
            InputError: ``as_of`` or ``as_of_time`` is not a version or a time.
            NoSuchVersionError: The table has no version at or below ``as_of`` (no commit at
                or before ``as_of_time``), or it was vacuumed.
        """
        return self._on_table(
            name, "read", lambda s, t: snapshots.snapshot(s, t, as_of, as_of_time)
        )

    def resolve(
        self,
        name: TableName,
        privilege: Privilege,
        *,
        with_snapshot: bool = False,
        with_history: bool = False,
    ) -> TableAccess:
        """What one operation needs of the table, read once: its record, the privileges this
        user holds on it, and (when asked) its latest snapshot and its history, all from
        one catalog transaction (one consistent view).

        Raises:
            PermissionDeniedError: This user does not hold ``privilege`` on the table.
            CatalogReadOnlyError: ``privilege`` is more than ``read`` and this process
                cannot write the catalog.
        """
        need = self._need(privilege)
        table_name = tables.table_name(name)

        def unit(s: Session) -> TableAccess:
            table = tables.get_table(s, table_name)
            granted = access.granted_privileges(s, self.user, table)
            access.require_granted(self.user, table, need, granted)
            return TableAccess(
                table=table.info(),
                granted=granted,
                snapshot=snapshots.snapshot(s, table, None) if with_snapshot else None,
                history=tuple(snapshots.history(s, table.id)) if with_history else None,
            )

        return self._db.read(unit)

    def all_files(self, name: TableName) -> list[DataFile]:
        """Every file ever committed to the table and not yet forgotten (needs write)."""
        return self._on_table(name, "write", lambda s, t: snapshots.all_files(s, t.id))

    def forget_files(self, name: TableName, file_ids: Sequence[int]) -> None:
        """Delete the catalog rows of retired files once vacuum deleted them (needs write)."""
        self._on_table(
            name,
            "write",
            lambda s, t: snapshots.forget_files(s, t, file_ids),
            write=True,
            idempotent=True,
        )

    # permissions ------------------------------------------------------------------------------

    def check(self, name: TableName, privilege: Privilege) -> None:
        """Raise `PermissionDeniedError` unless this user holds ``privilege`` on the table,
        and `CatalogReadOnlyError` when it is more than ``read`` on a catalog this process
        cannot write."""
        self._on_table(name, self._need(privilege), lambda s, t: None)

    def _need(self, privilege: Privilege) -> Literal["read", "write", "grant"]:
        """The access need of ``privilege`` (validated); a need beyond ``read`` first
        requires a catalog this process can write."""
        checked = access.check_privilege(privilege)
        if checked != "read":
            self.require_writable()
        return "grant" if checked == "all" else checked
