"""A connection of one streaming client to one endpoint (Hive's ``StreamingConnection``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.catalog.records import PartitionInfo
from versioned.layouts.ingest_errors import StreamingTransactionError
from versioned.streaming.encoding import RecordWriter

if TYPE_CHECKING:
    from versioned.streaming.endpoint import EndPoint
    from versioned.streaming.transaction_batch import TransactionBatch


class StreamingConnection:
    """An open connection to an endpoint's partition; `EndPoint.connect` makes it.

    Transaction batches are fetched from it; closing it is final.
    """

    def __init__(
        self, endpoint: EndPoint, partition: PartitionInfo, *, agent: str | None, timeout_s: float
    ) -> None:
        self.endpoint = endpoint
        self.partition = partition
        self.agent = agent
        self.transaction_timeout_s = timeout_s
        self.closed = False
        self.kept: dict[str, Any] = {}
        """What the connection's sinks keep between batches (`SinkContext.kept`)."""

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"StreamingConnection({self.endpoint!r}, agent={self.agent!r}, {state})"

    def fetch_transaction_batch(
        self, size: int, writer: RecordWriter, *, auto_heartbeat: bool = False
    ) -> TransactionBatch:
        """Open ``size`` transactions to write records with ``writer``.

        Args:
            size: Transactions in the batch (Hive's guideline: enough for a few minutes of
                commits; each batch writes one delta directory on acid tables).
            writer: Turns records into the table's rows (`DelimitedInputWriter`, ...).
            auto_heartbeat: Heartbeat the batch's transactions from a thread of its own
                (with its own catalog connection) every ``transaction_timeout_s / 2``.

        Raises:
            StreamingTransactionError: The connection is closed, or ``size`` is not positive.
        """
        from versioned.streaming.transaction_batch import TransactionBatch

        if self.closed:
            raise StreamingTransactionError(
                "cannot fetch a transaction batch: the connection has been closed"
            )
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise StreamingTransactionError(
                f"a transaction batch needs at least 1 transaction, got {size!r}"
            )
        return TransactionBatch(self, size, writer, auto_heartbeat=auto_heartbeat)

    def close(self) -> None:
        """Close the connection (closing twice is a no-op); its batches refuse further
        work, and closing them aborts what they did not commit."""
        self.closed = True

    def __enter__(self) -> StreamingConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
