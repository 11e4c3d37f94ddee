"""The loop of `versioned stream`: lines in, transactions committed by count or by time.

Transactions are begun when a record arrives (an idle stream holds no open transaction) and
committed after ``commit_every`` records or ``commit_seconds`` after their first record,
whichever comes first; the time limit holds while the input is quiet, since the loop waits
for input with a timeout. Batches are fetched when needed and closed when used up or older
than ``batch_seconds`` (Hive's advice: a batch left open holds back compaction).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from versioned.cli.line_source import EndOfInput, LineChunk, LineReader
from versioned.streaming import SerializationError, StreamingConnection
from versioned.streaming.encoding import RecordWriter
from versioned.streaming.transaction_batch import TransactionBatch

POLL_S = 0.25
"""Longest wait for input before the loop looks at its clocks and at a stop request."""
PROGRESS_S = 1.0


@dataclass(frozen=True)
class StreamPolicy:
    """When to commit and how many transactions to fetch at once."""

    commit_every: int
    commit_seconds: float
    batch_size: int
    batch_seconds: float


@dataclass
class StreamCounts:
    """What a stream did so far."""

    read: int = 0
    """Records taken from the input (written, rejected or not committed yet)."""
    records: int = 0
    """Records committed."""
    rejected: int = 0
    """Records of committed transactions set aside as dead letters."""
    transactions: int = 0
    batches: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    @property
    def per_second(self) -> float:
        seconds = self.seconds
        return self.records / seconds if seconds > 0 else 0.0


@dataclass
class _Open:
    """The open transaction: its records so far and where its first record came from."""

    started: float
    first: tuple[str, int]
    records: int = 0
    written: int = 0
    rejected: int = 0


class StreamPump:
    """Writes lines from a `LineReader` into a connection's transactions."""

    def __init__(
        self,
        connection: StreamingConnection,
        writer: RecordWriter,
        policy: StreamPolicy,
        *,
        say: Callable[[str], None],
        stop: threading.Event,
    ) -> None:
        self._connection = connection
        self._writer = writer
        self._policy = policy
        self._say = say
        self._stop = stop
        self.counts = StreamCounts()
        self._batch: TransactionBatch | None = None
        self._batch_started = 0.0
        self._open: _Open | None = None
        self._shown = (0, 0)
        self._last_progress = self.counts.started

    def run(self, reader: LineReader) -> bool:
        """Stream until the input ends (``True``) or a stop is requested (``False``); what
        was read is committed either way.

        Raises:
            SerializationError: A record cannot be written (without dead letters); its
                transaction is aborted.
            InputError: Reading the input failed.
        """
        while not self._stop.is_set():
            item = reader.get(self._wait())
            if isinstance(item, EndOfInput):
                self.commit()
                if item.error is not None:
                    raise item.error
                return True
            if item is not None:
                self._write(item)
            self._on_clock()
        while isinstance(item := reader.get(0.0), LineChunk):  # what was read before the stop
            self._write(item)
        self.commit()
        return False

    def close(self) -> None:
        """Close the batch (aborting an open transaction and unused ones) and the
        connection."""
        try:
            if self._batch is not None:
                self._batch.close()
        finally:
            self._batch = None
            self._connection.close()

    def progress(self, final: bool = False) -> None:
        """Report the counts on stderr (at most once a second unless ``final``)."""
        now = time.monotonic()
        c = self.counts
        if not final and ((c.read, c.records) == self._shown or now - self._last_progress < 1):
            return
        self._shown, self._last_progress = (c.read, c.records), now
        rejected = f", {c.rejected:,} rejected" if c.rejected else ""
        self._say(
            f"{c.read:,} records read, {c.records:,} committed in {c.transactions:,} "
            f"transaction(s){rejected} ({c.per_second:,.0f} records/s)"
        )

    # transactions -----------------------------------------------------------------------------

    def commit(self) -> None:
        """Commit the open transaction, if any."""
        txn, batch = self._open, self._batch
        if txn is None or batch is None:
            return
        batch.commit()  # rejected records go to the dead-letter area with it
        self._open = None
        self.counts.records += txn.written
        self.counts.rejected += txn.rejected
        self.counts.transactions += 1
        if batch.remaining_transactions() == 0:
            self._close_batch()

    def _begin(self, first: tuple[str, int]) -> _Open:
        now = time.monotonic()
        batch = self._batch
        if batch is not None and (
            batch.remaining_transactions() == 0
            or now - self._batch_started >= self._policy.batch_seconds
        ):
            self._close_batch()
            batch = None
        if batch is None:
            batch = self._connection.fetch_transaction_batch(
                self._policy.batch_size, self._writer, auto_heartbeat=True
            )
            self._batch, self._batch_started = batch, now
            self.counts.batches += 1
        batch.begin_next_transaction()
        self._open = _Open(now, first)
        return self._open

    def _close_batch(self) -> None:
        batch, self._batch = self._batch, None
        if batch is not None:
            batch.close()

    def _write(self, chunk: LineChunk) -> None:
        while len(chunk):
            txn = self._open or self._begin((chunk.source, chunk.numbers[0]))
            piece, chunk = chunk.split(self._policy.commit_every - txn.records)
            assert self._batch is not None
            sources = [f"{piece.source}:{n}" for n in piece.numbers]
            try:
                rejected = self._batch.write_many(piece.records, sources=sources)
            except SerializationError as exc:
                self._batch.abort()
                self._open = None
                raise self._refusal(exc, piece, txn) from exc
            self.counts.read += len(piece)
            txn.records += len(piece)
            txn.written += len(piece) - rejected
            txn.rejected += rejected
            if txn.records >= self._policy.commit_every or self._due(txn):
                self.commit()

    def _refusal(self, exc: SerializationError, piece: LineChunk, txn: _Open) -> SerializationError:
        index = int(getattr(exc, "index", 0))
        line = piece.numbers[index]
        reason = getattr(exc, "reason", str(exc))
        source, first = txn.first
        return SerializationError(
            f"{piece.source} line {line}: {reason}. Nothing from {source} line {first} on "
            f"was committed ({self.counts.records:,} records before it were): fix the record "
            "and stream again from there, or pass --dead-letter to set bad records aside",
            source=piece.source,
            line=line,
            reason=reason,
        )

    # clocks -----------------------------------------------------------------------------------

    def _due(self, txn: _Open) -> bool:
        return time.monotonic() - txn.started >= self._policy.commit_seconds

    def _wait(self) -> float:
        if self._open is None:
            return POLL_S
        left = self._open.started + self._policy.commit_seconds - time.monotonic()
        return max(0.0, min(POLL_S, left))

    def _on_clock(self) -> None:
        if self._open is not None and self._due(self._open):
            self.commit()
        elif (
            self._open is None
            and self._batch is not None
            and time.monotonic() - self._batch_started >= self._policy.batch_seconds
        ):
            self._close_batch()
        self.progress()
