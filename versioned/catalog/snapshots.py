"""Reading what was committed: history, snapshots at a version, and the file ledger.

A file is live at commit ``seq`` when ``added_seq <= seq`` and it was not retired by then
(``removed_seq`` NULL or greater than ``seq``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import commit_times, retention, schemas
from versioned.catalog.models import CommitRow, FileRow, PartitionRow, TableRow
from versioned.catalog.records import CommitInfo, DataFile, Snapshot
from versioned.errors import CatalogError, InputError, NoSuchVersionError

_CHUNK = 500


def history(session: Session, table_id: int) -> list[CommitInfo]:
    """Every commit of a table, oldest first."""
    rows = session.scalars(
        sa.select(CommitRow).where(CommitRow.table_id == table_id).order_by(CommitRow.seq)
    )
    return [r.info() for r in rows]


def snapshot(
    session: Session, table: TableRow, as_of: int | None, as_of_time: object = None
) -> Snapshot:
    """The table right after the commit of version ``as_of``, or as of the time
    ``as_of_time`` (an aware `datetime` or seconds since the epoch: its last commit made at
    or before it, to the microsecond: `commit_times`), or latest.

    A version the table has no commit of stands for the table's latest version below it:
    versions are catalog-wide transaction ids, so a table's own are not consecutive.

    Raises:
        InputError: ``as_of`` is not a version number, or ``as_of_time`` not a time.
        NoSuchVersionError: The table has no version at or below ``as_of``, or no commit at
            or before ``as_of_time``, or that version was vacuumed.
    """
    name = f"{table.database.name}.{table.name}"
    if as_of is not None and as_of_time is not None:
        raise InputError("give as_of or as_of_time, not both")
    if as_of is None and as_of_time is None:
        seq = table.current_seq
        version = session.scalar(
            sa.select(CommitRow.version).where(CommitRow.table_id == table.id, CommitRow.seq == seq)
        )
    else:
        seq, version = _resolve(session, table, name, as_of, as_of_time)
        properties = (table.spec or {}).get("properties") or {}
        retention.check_readable(name, properties, seq, version)
    files = session.scalars(
        sa.select(FileRow)
        .where(
            FileRow.table_id == table.id,
            FileRow.added_seq <= seq,
            sa.or_(FileRow.removed_seq.is_(None), FileRow.removed_seq > seq),
        )
        .order_by(FileRow.id)
    )
    parts = session.scalars(sa.select(PartitionRow).where(PartitionRow.table_id == table.id))
    # The columns the table had at that commit: time travel reads the schema of its version.
    info = table.info()
    info = dataclasses.replace(info, spec=schemas.spec_at(session, table.id, info.spec, seq))
    return Snapshot(
        table=info,
        seq=seq,
        version=version,
        files=tuple(f.info() for f in files),
        partitions={p.id: p.info() for p in parts},
    )


def _resolve(
    session: Session,
    table: TableRow,
    name: str,
    as_of: int | None,
    as_of_time: object,
) -> tuple[int, int]:
    """``(seq, version)`` of the commit a time-travel read names."""
    commits = sa.select(CommitRow.seq, CommitRow.version).where(CommitRow.table_id == table.id)
    if as_of_time is not None:
        # To the microsecond, as `history` shows commit times: a time copied from there
        # reads exactly its commit, and the first of two commits in one second is reachable.
        at = commit_times.as_of_micros(as_of_time)
        row = session.execute(
            commits.where(CommitRow.committed_at <= commit_times.latest_at(at))
            .order_by(CommitRow.seq.desc())
            .limit(1)
        ).first()
        if row is None:
            raise NoSuchVersionError(
                f"{name} has no commit at or before {commit_times.time_text(at)}: "
                f"`versioned history {name}` lists its commits with their times",
                table=name,
                as_of_time=commit_times.time_text(at),
            )
        return int(row.seq), int(row.version)
    if isinstance(as_of, bool) or not isinstance(as_of, int):
        raise InputError(f"as_of must be a version number, got {as_of!r}", as_of=as_of)
    version = session.scalar(
        sa.select(sa.func.max(CommitRow.version)).where(
            CommitRow.table_id == table.id, CommitRow.version <= as_of
        )
    )
    if version is None:
        raise NoSuchVersionError(
            f"{name} has no version {as_of} or below: `versioned history {name}` lists its "
            "versions",
            table=name,
            version=as_of,
        )
    seq = session.scalar(
        sa.select(sa.func.max(CommitRow.seq)).where(
            CommitRow.table_id == table.id, CommitRow.version == version
        )
    )
    if seq is None:  # the version was found in the same transaction
        raise CatalogError(f"{name}: version {version} vanished while it was read")
    return int(seq), int(version)


def all_files(session: Session, table_id: int) -> list[DataFile]:
    """Every file row of the table, live or retired, in commit order."""
    rows = session.scalars(
        sa.select(FileRow).where(FileRow.table_id == table_id).order_by(FileRow.id)
    )
    return [r.info() for r in rows]


def forget_files(session: Session, table: TableRow, file_ids: Sequence[int]) -> None:
    """Delete the rows of retired files (after vacuum deleted the files themselves).

    Raises:
        CatalogError: An id is not a retired file of the table; nothing is deleted.
    """
    ids = sorted({int(i) for i in file_ids})
    retired: set[int] = set()
    for start in range(0, len(ids), _CHUNK):
        retired.update(
            session.scalars(
                sa.select(FileRow.id).where(
                    FileRow.table_id == table.id,
                    FileRow.id.in_(ids[start : start + _CHUNK]),
                    FileRow.removed_seq.is_not(None),
                )
            )
        )
    wrong = [i for i in ids if i not in retired]
    if wrong:
        name = f"{table.database.name}.{table.name}"
        raise CatalogError(
            f"file id(s) {wrong[:10]} are not retired files of {name}; only files a commit "
            "removed can be forgotten",
            table=name,
            file_ids=wrong,
        )
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        session.execute(
            sa.delete(FileRow)
            .where(FileRow.id.in_(chunk))
            .execution_options(synchronize_session=False)
        )
