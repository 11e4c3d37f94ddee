"""The exactly-once Structured Streaming sink: ``foreachBatch(table.stream_writer())``.

Each micro-batch is one `Table.upsert`. Its commit records (writer id, batch id) in the same
catalog SQL transaction (`versioned.catalog.stream_progress`), so a micro-batch that Spark
replays after a crash (the sink committed it, the query died before Spark wrote its
checkpoint commit) is refused by the catalog and skipped, never applied twice. The sink asks
the catalog first, before Spark reads the batch; the check inside the commit is what holds
when two runs race. See ``docs/streaming-sink.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from versioned.catalog.records import StreamMark
from versioned.catalog.stream_progress import check_mark
from versioned.errors import InputError, StreamBatchCommittedError, StreamBatchInterruptedError
from versioned.layouts.base import layout_of
from versioned.options import WriteOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from versioned.api.table import Table
    from versioned.results import CommitResult

log = logging.getLogger(__name__)
QUERY_ID_PROPERTY = "sql.streaming.queryId"
"""The Spark local property that holds the running streaming query's id in foreachBatch;
the id is kept in the checkpoint, so it is the same after a restart on that checkpoint."""
UPSERT_OPTIONS = frozenset(
    {"format", "op_code_column", "partial", "ordering_from", "options", "progress", "evolve"}
)
"""The keyword arguments of `Table.upsert` a sink passes on to every micro-batch."""

Outcome = Literal["applied", "empty", "skipped"]
INTERRUPTED_PREFIX = "py4j.protocol.Py4JJavaError: An error occurred while calling"
"""How Spark's `StreamExecution.isInterruptionException` knows a foreachBatch function failed
because the query was stopped: the error text starts like this and names an
InterruptedException. The query then stops cleanly instead of failing."""
_INTERRUPTIONS = (
    "java.lang.InterruptedException",
    "java.io.InterruptedIOException",
    "java.nio.channels.ClosedByInterruptException",
)


@dataclass(frozen=True)
class BatchOutcome:
    """What the sink did with one micro-batch.

    Attributes:
        outcome: ``applied`` (committed as one version, also one that records only the
            dead letters of a batch whose every row was rejected), ``empty`` (no row:
            nothing committed, the batch recorded as done) or ``skipped`` (the writer had recorded
            this batch id or a later one: a replay, nothing written).
        result: The upsert's result; None when skipped.
    """

    writer_id: str
    batch_id: int
    outcome: Outcome
    result: CommitResult | None = None


class StreamSink:
    """A ``foreachBatch`` function that upserts each micro-batch into a table exactly once.

    Attributes:
        table: The table written.
        writer_id: The writer id given, or None: the streaming query's id (per batch).
        applied: Micro-batches committed, one version each.
        empty: Micro-batches without a row to apply (recorded, nothing committed).
        skipped: Micro-batches refused as already applied (replays).
        last: What happened to the last micro-batch handled.
    """

    def __init__(self, table: Table, writer_id: str | None, upsert_options: dict[str, Any]) -> None:
        unknown = sorted(set(upsert_options) - UPSERT_OPTIONS)
        if unknown:
            raise InputError(
                f"stream_writer does not take {', '.join(unknown)}: it takes writer_id and "
                f"the keyword arguments of upsert ({', '.join(sorted(UPSERT_OPTIONS))})"
            )
        options = upsert_options.get("options")
        if options is not None and not isinstance(options, WriteOptions):
            raise InputError(f"options must be WriteOptions, got {type(options).__name__}")
        if options is not None and options.stream_mark is not None:
            raise InputError("the sink sets options.stream_mark for each micro-batch; leave it out")
        if writer_id is not None:
            check_mark(StreamMark(writer_id, 0))
        layout_of(table.spec.layout).require("upsert", table.name)  # now, not at batch 0
        self.table = table
        self.writer_id = writer_id
        self._options = options or WriteOptions()
        self._upsert = {k: v for k, v in upsert_options.items() if k != "options"}
        self.applied = 0
        self.empty = 0
        self.skipped = 0
        self.last: BatchOutcome | None = None

    def __repr__(self) -> str:
        writer = self.writer_id or "<query id>"
        return f"StreamSink({self.table.name}, writer={writer!r})"

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        """Upsert micro-batch ``batch_id`` unless its writer applied it already.

        Raises:
            InputError: No writer id: called outside a streaming query without one.
            VersionedError: The upsert failed (the query fails; nothing was committed, and
                a restart on the same checkpoint retries the batch).
        """
        mark = check_mark(StreamMark(self._writer_of(batch), int(batch_id)))
        if self._done(mark):
            self._skip(mark)
            return
        options = replace(self._options, stream_mark=mark)
        # One read of the source for the several Spark jobs of an upsert; it also keeps
        # them on the same rows should the source change under the query.
        batch.persist()
        try:
            result = self.table.upsert(batch, options=options, **self._upsert)
        except StreamBatchCommittedError:  # a concurrent run of the query committed it
            self._skip(mark)
            return
        except Exception as err:
            if not _stopped_by_query(err, batch):
                raise
            # Spark recognises a stop by matching the error text against a backtracking
            # pattern (a long text, the py4j error with the Java stack trace, was reported to
            # overflow its stack): the text stays one short line, in the form it expects.
            raise StreamBatchInterruptedError(
                f"{INTERRUPTED_PREFIX} the sink of {self.table.name}: "
                f"java.lang.InterruptedException: micro-batch {mark.batch_id} stopped with its "
                "query; nothing of it was committed (a restart on the checkpoint applies it)",
                table=str(self.table.name),
                batch_id=mark.batch_id,
            ) from None
        finally:
            _quietly(batch.unpersist)
        if result.version is None:
            try:
                self.table.catalog.engine_context.store.record_stream_batch(self.table.name, mark)
            except StreamBatchCommittedError:
                self._skip(mark)
                return
            self.empty += 1
            self.last = BatchOutcome(mark.writer_id, mark.batch_id, "empty", result)
            return
        self.applied += 1
        self.last = BatchOutcome(mark.writer_id, mark.batch_id, "applied", result)

    def _writer_of(self, batch: DataFrame) -> str:
        if self.writer_id is not None:
            return self.writer_id
        try:
            query_id = batch.sparkSession.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
        except Exception as err:  # e.g. Spark Connect: no SparkContext on this side
            raise InputError(
                f"cannot read the streaming query's id ({err}); pass writer_id= to stream_writer",
            ) from err
        if not query_id:
            raise InputError(
                f"no writer id for the sink of {self.table.name}: it runs outside a streaming "
                "query; use it as writeStream.foreachBatch(table.stream_writer()), or pass "
                "writer_id= to stream_writer"
            )
        return str(query_id)

    def _done(self, mark: StreamMark) -> bool:
        """Whether the writer recorded this batch or a later one (one catalog read)."""
        last = self.table.stream_progress().get(mark.writer_id)
        return last is not None and last >= mark.batch_id

    def _skip(self, mark: StreamMark) -> None:
        self.skipped += 1
        self.last = BatchOutcome(mark.writer_id, mark.batch_id, "skipped")
        log.info(
            "%s: skipped micro-batch %s of writer %s: already applied (a replay)",
            self.table.name,
            mark.batch_id,
            mark.writer_id,
        )


def _stopped_by_query(err: BaseException, batch: DataFrame) -> bool:
    """Whether ``err`` (or an error it came from) is Spark interrupting or cancelling the
    micro-batch's jobs because its query is stopping."""
    try:
        group = batch.sparkSession.sparkContext.getLocalProperty("spark.jobGroup.id")
    except Exception:  # the session is gone with the query: a stop, if the error says so
        group = None
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current)
        if any(name in text for name in _INTERRUPTIONS):
            return True
        if group and "cancelled" in text and group in text:
            return True
        current = current.__cause__ or current.__context__
    return False


def _quietly(step: Callable[[], object]) -> None:
    """Run a clean-up ``step``; a failure is logged (the micro-batch's own outcome wins)."""
    try:
        step()
    except Exception as err:
        log.debug("clean-up after a micro-batch failed: %s", err)
