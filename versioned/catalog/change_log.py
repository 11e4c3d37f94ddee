"""What a reader of a table's changes needs from the catalog: its commits in order and the
files live around each of them.

A change stream reads the commits after the last one it emitted (by ``seq``, the table's
commit counter) up to a commit it chose, and for each commit the files it added and the files
live just before it (the pre-images of the keys it touched are there). One read answers that
for a whole range of commits: the files live at any commit in it (DESIGN.md invariant 1: the
catalog lists the files, nobody lists directories).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import retention
from versioned.catalog.models import (
    CommitRow,
    FileRow,
    PartitionRow,
    SchemaRow,
    TableRow,
    WriteIdRow,
)
from versioned.catalog.records import CommitInfo, DataFile, PartitionInfo, TableInfo
from versioned.catalog.store_base import StoreBase
from versioned.errors import NoSuchVersionError
from versioned.names import TableName
from versioned.schema import Column, TableSpec


@dataclass(frozen=True)
class TableHead:
    """The latest commit of a table: its sequence number (0: none yet) and version."""

    table_id: int
    seq: int
    version: int | None


@dataclass(frozen=True)
class LoggedCommit:
    """One commit of a change log.

    Attributes:
        info: The commit as ``history()`` shows it.
        spec: The table's definition with the columns it had at this commit.
        write_ids: The table's write ids its transaction made valid (acid layout; a
            committed transaction has at most one per table).
    """

    info: CommitInfo
    spec: TableSpec
    write_ids: tuple[int, ...]


@dataclass(frozen=True)
class ChangeLog:
    """The commits of a table after ``after_seq`` up to ``until_seq``, and their files.

    Attributes:
        table: The table as the catalog knows it now.
        commits: The commits, oldest first.
        files: Every file live at some commit from ``after_seq`` to ``until_seq``.
        partitions: Every partition of the table, by id.
        oldest_readable_seq: The oldest commit whose files vacuum keeps (0: all).
    """

    table: TableInfo
    after_seq: int
    until_seq: int
    commits: tuple[LoggedCommit, ...]
    files: tuple[DataFile, ...]
    partitions: Mapping[int, PartitionInfo]
    oldest_readable_seq: int

    def live_at(self, seq: int) -> list[DataFile]:
        """The files of the snapshot at commit ``seq`` (``after_seq <= seq <= until_seq``)."""
        return [
            f
            for f in self.files
            if f.added_seq <= seq and (f.removed_seq is None or f.removed_seq > seq)
        ]

    def added_at(self, seq: int) -> list[DataFile]:
        """The files commit ``seq`` made visible."""
        return [f for f in self.files if f.added_seq == seq]


def head(session: Session, table: TableRow) -> TableHead:
    """The table's latest commit."""
    version = session.scalar(
        sa.select(CommitRow.version).where(
            CommitRow.table_id == table.id, CommitRow.seq == table.current_seq
        )
    )
    return TableHead(table.id, table.current_seq, None if version is None else int(version))


def first_seq_of(session: Session, table: TableRow, version: int) -> int:
    """The sequence number of the first commit with ``version``.

    Raises:
        NoSuchVersionError: No commit of the table has that version.
    """
    found = session.scalar(
        sa.select(sa.func.min(CommitRow.seq)).where(
            CommitRow.table_id == table.id, CommitRow.version == version
        )
    )
    if found is None:
        name = f"{table.database.name}.{table.name}"
        raise NoSuchVersionError(
            f"{name} has no version {version}: `versioned history {name}` lists its versions",
            table=name,
            version=version,
        )
    return int(found)


def change_log(session: Session, table: TableRow, after_seq: int, until_seq: int) -> ChangeLog:
    """The commits ``after_seq < seq <= until_seq`` of ``table`` and the files around them."""
    commits = list(
        session.scalars(
            sa.select(CommitRow)
            .where(
                CommitRow.table_id == table.id,
                CommitRow.seq > after_seq,
                CommitRow.seq <= until_seq,
            )
            .order_by(CommitRow.seq)
        )
    )
    files = session.scalars(
        sa.select(FileRow)
        .where(
            FileRow.table_id == table.id,
            FileRow.added_seq <= until_seq,
            sa.or_(FileRow.removed_seq.is_(None), FileRow.removed_seq > after_seq),
        )
        .order_by(FileRow.id)
    )
    parts = session.scalars(sa.select(PartitionRow).where(PartitionRow.table_id == table.id))
    info = table.info()
    properties = (table.spec or {}).get("properties") or {}
    return ChangeLog(
        table=info,
        after_seq=after_seq,
        until_seq=until_seq,
        commits=_logged(session, table.id, info.spec, commits),
        files=tuple(f.info() for f in files),
        partitions={p.id: p.info() for p in parts},
        oldest_readable_seq=retention.oldest_readable_seq(properties),
    )


def _logged(
    session: Session, table_id: int, current: TableSpec, commits: list[CommitRow]
) -> tuple[LoggedCommit, ...]:
    """The commits with the columns the table had at each and their write ids."""
    if not commits:
        return ()
    schemas = [
        (int(seq), tuple(Column.from_dict(c) for c in columns))
        for seq, columns in session.execute(
            sa.select(SchemaRow.seq, SchemaRow.columns)
            .where(SchemaRow.table_id == table_id)
            .order_by(SchemaRow.seq)
        )
    ]
    txns = sorted({c.txn_id for c in commits})
    write_ids: dict[int, list[int]] = {}
    for write_id, txn_id in session.execute(
        sa.select(WriteIdRow.write_id, WriteIdRow.txn_id).where(
            WriteIdRow.table_id == table_id, WriteIdRow.txn_id.in_(txns)
        )
    ):
        write_ids.setdefault(int(txn_id), []).append(int(write_id))
    logged = []
    for row in commits:
        columns = current.columns
        for seq, then in schemas:  # the last recorded at or before the commit
            if seq <= row.seq:
                columns = then
        spec = (
            current if columns == current.columns else dataclasses.replace(current, columns=columns)
        )
        ids = tuple(sorted(write_ids.get(row.txn_id, ())))
        logged.append(LoggedCommit(row.info(), spec, ids))
    return tuple(logged)


class ChangeLogReads(StoreBase):
    """The catalog reads of a change stream (part of `MetaStore`; each needs read)."""

    def head(self, name: TableName) -> TableHead:
        """The table's latest commit (one cheap read: a stream polls it)."""
        return self._on_table(name, "read", head)

    def first_seq_of(self, name: TableName, version: int) -> int:
        """The sequence number of the table's first commit with ``version``.

        Raises:
            NoSuchVersionError: No commit has that version.
        """
        return self._on_table(name, "read", lambda s, t: first_seq_of(s, t, version))

    def change_log(self, name: TableName, after_seq: int, until_seq: int) -> ChangeLog:
        """The commits after ``after_seq`` up to ``until_seq`` and the files around them."""
        return self._on_table(name, "read", lambda s, t: change_log(s, t, after_seq, until_seq))
