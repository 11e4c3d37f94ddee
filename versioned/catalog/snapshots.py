"""Reading what was committed: history, snapshots at a version, and the file ledger.

A file is live at commit ``seq`` when ``added_seq <= seq`` and it was not retired by then
(``removed_seq`` NULL or greater than ``seq``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import retention, schemas
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


def snapshot(session: Session, table: TableRow, as_of: int | None) -> Snapshot:
    """The table as of version ``as_of`` (its latest commit with that version), or latest.

    Raises:
        NoSuchVersionError: No commit of the table has that version.
    """
    if as_of is None:
        seq = table.current_seq
        version = session.scalar(
            sa.select(CommitRow.version).where(CommitRow.table_id == table.id, CommitRow.seq == seq)
        )
    else:
        if isinstance(as_of, bool) or not isinstance(as_of, int):
            raise InputError(f"as_of must be a version number, got {as_of!r}", as_of=as_of)
        found = session.scalar(
            sa.select(sa.func.max(CommitRow.seq)).where(
                CommitRow.table_id == table.id, CommitRow.version == as_of
            )
        )
        if found is None:
            name = f"{table.database.name}.{table.name}"
            raise NoSuchVersionError(
                f"{name} has no version {as_of}: `versioned history {name}` lists its versions",
                table=name,
                version=as_of,
            )
        seq, version = int(found), as_of
        properties = (table.spec or {}).get("properties") or {}
        retention.check_readable(f"{table.database.name}.{table.name}", properties, seq, as_of)
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
