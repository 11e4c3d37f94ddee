"""The progress of streaming writers: the last micro-batch each one applied to a table.

Spark replays a micro-batch with the same batch id when the query dies after the sink
committed it but before Spark recorded that in its checkpoint. A commit that carries a
`StreamMark` (writer id, batch id) therefore checks and records the mark in the SQL
transaction of the commit itself, with the table row locked (as every commit locks it):
when the writer's recorded batch id is at or above the mark's, the commit is refused with
`StreamBatchCommittedError` and nothing is written; otherwise the commit goes through and the
mark becomes the writer's progress. Two commits of one batch can never both go through,
whatever the timing (Delta's ``SetTransaction``, kept in its own catalog table so that no
expiry of history loses it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog.models import StreamProgressRow, TableRow
from versioned.catalog.records import CommitInfo, StreamMark, StreamProgress
from versioned.errors import InputError, StreamBatchCommittedError

MAX_WRITER_ID = 200
"""Longest writer id the catalog stores (a Spark query id has 36 characters)."""


def check_mark(mark: Any) -> StreamMark:
    """``mark`` validated: a `StreamMark` with a non-empty writer id and a batch id >= 0.

    Raises:
        InputError: It is not one.
    """
    if not isinstance(mark, StreamMark):
        raise InputError(f"a stream mark is a StreamMark, got {type(mark).__name__}")
    writer, batch = mark.writer_id, mark.batch_id
    if not isinstance(writer, str) or not writer.strip() or len(writer) > MAX_WRITER_ID:
        raise InputError(
            f"writer id {writer!r}: use a non-empty string of at most {MAX_WRITER_ID} "
            "characters (e.g. the streaming query's id)",
            writer_id=writer,
        )
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 0:
        raise InputError(
            f"batch id {batch!r}: use Spark's micro-batch id, an integer >= 0", batch_id=batch
        )
    return mark


def refuse_done(session: Session, table: TableRow, mark: StreamMark) -> None:
    """Raise when ``mark``'s writer recorded this batch or a later one for ``table``.

    Call it with the table row locked, in the transaction that then records the mark.

    Raises:
        StreamBatchCommittedError: The batch was applied (or passed) already.
    """
    last = _last_batch(session, table.id, mark.writer_id)
    if last is not None and last >= mark.batch_id:
        name = f"{table.database.name}.{table.name}"
        raise StreamBatchCommittedError(
            f"micro-batch {mark.batch_id} of writer {mark.writer_id!r} is not applied to "
            f"{name}: the writer recorded batch {last} already (a replay). Nothing was written",
            table=name,
            writer_id=mark.writer_id,
            batch_id=mark.batch_id,
            last_batch_id=last,
        )


def record(
    session: Session, table: TableRow, mark: StreamMark, commit: CommitInfo | None, now: float
) -> None:
    """Make ``mark`` the writer's progress on ``table`` (after `refuse_done` let it pass).

    ``commit`` is the commit that applied the batch, or None for a batch without rows.
    """
    values = {
        "batch_id": mark.batch_id,
        "commit_seq": None if commit is None else commit.seq,
        "version": None if commit is None else commit.version,
        "recorded_at": now,
    }
    row = session.get(StreamProgressRow, (table.id, mark.writer_id))
    if row is None:
        session.add(StreamProgressRow(table_id=table.id, writer_id=mark.writer_id, **values))
    else:
        for key, value in values.items():
            setattr(row, key, value)
    session.flush()


def progress_of(session: Session, table_id: int) -> list[StreamProgress]:
    """Every writer's progress on a table, by writer id."""
    rows = session.scalars(
        sa.select(StreamProgressRow)
        .where(StreamProgressRow.table_id == table_id)
        .order_by(StreamProgressRow.writer_id)
    )
    return [row.info() for row in rows]


def progress_of_tables(
    session: Session, table_ids: Sequence[int]
) -> list[tuple[int, StreamProgress]]:
    """Every writer's progress on each of the tables, as (table id, progress)."""
    rows = session.scalars(
        sa.select(StreamProgressRow)
        .where(StreamProgressRow.table_id.in_(list(table_ids)))
        .order_by(StreamProgressRow.table_id, StreamProgressRow.writer_id)
    )
    return [(row.table_id, row.info()) for row in rows]


def forget(session: Session, table_id: int, writer_id: str | None) -> int:
    """Delete the progress of one writer (all writers when ``writer_id`` is None); returns
    how many rows went."""
    query = sa.delete(StreamProgressRow).where(StreamProgressRow.table_id == table_id)
    if writer_id is not None:
        query = query.where(StreamProgressRow.writer_id == writer_id)
    result = session.execute(query.execution_options(synchronize_session=False))
    return int(getattr(result, "rowcount", 0) or 0)


def _last_batch(session: Session, table_id: int, writer_id: str) -> int | None:
    return session.scalar(
        sa.select(StreamProgressRow.batch_id).where(
            StreamProgressRow.table_id == table_id, StreamProgressRow.writer_id == writer_id
        )
    )
