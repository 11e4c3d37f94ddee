"""The streaming-writer calls of the catalog facade (`MetaStore`): each writer's last
micro-batch on a table (`versioned.catalog.stream_progress`)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from versioned.catalog import clock, stream_progress
from versioned.catalog.models import TableRow
from versioned.catalog.records import StreamMark, StreamProgress
from versioned.catalog.store_base import StoreBase
from versioned.names import TableName


class StreamProgressStore(StoreBase):
    """The progress of a table's streaming writers: read, record and forget it."""

    def stream_progress(self, name: TableName) -> list[StreamProgress]:
        """The last micro-batch of every streaming writer of the table (needs read)."""
        return self._on_table(name, "read", lambda s, t: stream_progress.progress_of(s, t.id))

    def record_stream_batch(self, name: TableName, mark: StreamMark) -> None:
        """Record a micro-batch that committed nothing (no row to apply) as the writer's
        progress, so that a replay skips it (needs write).

        Raises:
            StreamBatchCommittedError: The writer recorded this batch or a later one.
        """
        stream_progress.check_mark(mark)

        def work(s: Session, t: TableRow) -> None:
            stream_progress.refuse_done(s, t, mark)
            stream_progress.record(s, t, mark, None, clock.now(s))

        # Run again after a lost COMMIT, it says StreamBatchCommittedError when it had happened.
        self._on_table(name, "write", work, write=True, lock=True, idempotent=True)

    def forget_stream_progress(self, name: TableName, writer_id: str | None = None) -> int:
        """Forget one writer's progress (every writer's when ``writer_id`` is None), so
        that its batch ids count from anew (needs write); returns the writers forgotten."""
        return self._on_table(
            name,
            "write",
            lambda s, t: stream_progress.forget(s, t.id, writer_id),
            write=True,
            lock=True,
            idempotent=True,
        )
