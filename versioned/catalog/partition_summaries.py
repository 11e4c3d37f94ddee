"""Per-partition summaries, written by the commit that changes a partition, and the
per-table facts a catalog-wide overview needs, read for many tables in a few queries.

A commit that adds, retires or grows files of a partition hands the partition's live files
(as of the commit) to the store's `PartitionSummariser`, inside the commit's own SQL
transaction, and stores what it returns in ``partitions.summary`` (with the commit's
sequence in ``summary_seq``). A summariser that fails stores NULL: a summary never fails
a commit. The catalog does not know what a layout makes of its files:
the summariser, given by the layer above, does (`versioned.layouts.partition_facts`). A
commit made without a summariser sets the summary of each partition it changed to NULL, so
a stale summary is never read: a reader computes a NULL one from the files instead.

`overviews` reads, for every table a user may read, what the overview page shows: its
commit count, its latest commits (time and metrics), its partitions'
summaries and its streaming writers' progress, in a fixed number of queries however many
tables there are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from versioned.catalog import stream_progress, tables, write_ids
from versioned.catalog.models import CommitRow, FileRow, PartitionRow, TableRow
from versioned.catalog.records import (
    DataFile,
    PartitionInfo,
    StreamProgress,
    TableInfo,
    TableWriteIds,
)

_CHUNK = 500
_log = logging.getLogger(__name__)


class PartitionSummariser(Protocol):
    """Makes a partition's summary from its live files (a JSON object)."""

    def __call__(
        self,
        table: TableInfo,
        partition: PartitionInfo,
        files: Sequence[DataFile],
        write_ids: Callable[[], TableWriteIds],
    ) -> dict[str, Any]:
        """``write_ids`` gives the table's write ids as of the commit, when needed."""
        ...


@dataclass(frozen=True)
class TableOverview:
    """What the overview of a catalog needs of one table, read in one transaction.

    Attributes:
        table: The table.
        commits: Its number of commits.
        recent: ``(commit, committed_at, metrics)`` of its latest commits, oldest first (at most
            ``recent`` of `overviews`).
        partitions: Each partition with its summary (None: not summarised, compute it).
        writers: Its streaming writers' progress.
    """

    table: TableInfo
    commits: int
    recent: list[tuple[int, float, dict[str, Any]]]
    partitions: list[tuple[PartitionInfo, dict[str, Any] | None]]
    writers: list[StreamProgress]


def refresh(
    session: Session,
    table: TableRow,
    partition_ids: Iterable[int],
    seq: int,
    summarise: PartitionSummariser | None,
) -> None:
    """Store the summary of each of ``partition_ids`` as of commit ``seq`` (NULL without a
    ``summarise``); runs inside the commit's SQL transaction, after its file changes."""
    ids = sorted(set(partition_ids))
    if not ids:
        return
    if summarise is None:
        for chunk in _chunks(ids):
            session.execute(
                sa.update(PartitionRow)
                .where(PartitionRow.id.in_(chunk))
                .values(summary=None, summary_seq=None)
                .execution_options(synchronize_session=False)
            )
        return
    info = table.info()
    files: dict[int, list[DataFile]] = {i: [] for i in ids}
    parts: dict[int, PartitionInfo] = {}
    for chunk in _chunks(ids):
        rows = session.scalars(
            sa.select(FileRow)
            .where(FileRow.partition_id.in_(chunk), FileRow.removed_seq.is_(None))
            .order_by(FileRow.id)
        )
        for row in rows:
            files[row.partition_id or 0].append(row.info())
        found = session.scalars(
            sa.select(PartitionRow)
            .where(PartitionRow.id.in_(chunk))
            .execution_options(populate_existing=True)
        )
        parts.update((p.id, p.info()) for p in found)
    cached: list[TableWriteIds] = []

    def ids_now() -> TableWriteIds:
        if not cached:
            cached.append(write_ids.write_id_list(session, table, seq))
        return cached[0]

    for pid in ids:
        try:
            summary: dict[str, Any] | None = summarise(info, parts[pid], files[pid], ids_now)
        except SQLAlchemyError:
            raise  # the catalog's own trouble (a lost connection): the commit's, retried
        except Exception:  # a summary is a convenience: it never fails a commit
            _log.warning("no summary of partition %s of table %s", pid, info.id, exc_info=True)
            summary = None
        session.execute(
            sa.update(PartitionRow)
            .where(PartitionRow.id == pid)
            .values(summary=summary, summary_seq=None if summary is None else seq)
            .execution_options(synchronize_session=False)
        )


def partitions_of_files(session: Session, table_id: int, paths: Sequence[str]) -> set[int]:
    """The partitions of the table's files at ``paths`` (retired or live)."""
    found: set[int] = set()
    for chunk in _chunks(list(paths)):
        found.update(
            pid
            for pid in session.scalars(
                sa.select(FileRow.partition_id)
                .where(FileRow.table_id == table_id, FileRow.path.in_(chunk))
                .distinct()
            )
            if pid is not None
        )
    return found


def overviews(
    session: Session, user: str, database: str | None, *, recent: int
) -> list[TableOverview]:
    """The `TableOverview` of every table ``user`` may read (optionally of one database),
    by name, with the metrics of each one's latest ``recent`` commits."""
    infos = tables.list_tables(session, user, database)
    ids = [t.id for t in infos]
    if not ids:
        return []
    latest: dict[int, list[tuple[int, float, dict[str, Any]]]] = {i: [] for i in ids}
    parts: dict[int, list[tuple[PartitionInfo, dict[str, Any] | None]]] = {i: [] for i in ids}
    writers: dict[int, list[StreamProgress]] = {i: [] for i in ids}
    for chunk in _chunks(ids):
        # A table's commits are numbered 1, 2, ... current_seq: its latest are the top ones.
        rows = session.execute(
            sa.select(CommitRow.table_id, CommitRow.seq, CommitRow.committed_at, CommitRow.metrics)
            .join(TableRow, TableRow.id == CommitRow.table_id)
            .where(CommitRow.table_id.in_(chunk), CommitRow.seq > TableRow.current_seq - recent)
            .order_by(CommitRow.table_id, CommitRow.seq)
        )
        for tid, seq, at, metrics in rows:
            latest[tid].append((int(seq), float(at), dict(metrics or {})))
        for row in session.scalars(
            sa.select(PartitionRow)
            .where(PartitionRow.table_id.in_(chunk))
            .order_by(PartitionRow.table_id, PartitionRow.path)
        ):
            parts[row.table_id].append((row.info(), row.summary))
        for tid, progress in stream_progress.progress_of_tables(session, chunk):
            writers[tid].append(progress)
    return [
        TableOverview(
            table=t,
            commits=t.current_seq,
            recent=latest[t.id],
            partitions=parts[t.id],
            writers=writers[t.id],
        )
        for t in infos
    ]


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
