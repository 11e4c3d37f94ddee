"""A connection of one streaming client to one endpoint (Hive's ``StreamingConnection``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from versioned.catalog.records import PartitionInfo

if TYPE_CHECKING:
    from versioned.streaming.endpoint import EndPoint


class StreamingConnection:
    """An open connection to an endpoint's partition; `EndPoint.connect` makes it.

    Transaction batches are fetched from it (issue 13, in progress); closing it is final.
    """

    def __init__(
        self, endpoint: EndPoint, partition: PartitionInfo, *, agent: str | None, timeout_s: float
    ) -> None:
        self.endpoint = endpoint
        self.partition = partition
        self.agent = agent
        self.transaction_timeout_s = timeout_s
        self.closed = False

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"StreamingConnection({self.endpoint!r}, agent={self.agent!r}, {state})"

    def close(self) -> None:
        """Close the connection (closing twice is a no-op)."""
        self.closed = True

    def __enter__(self) -> StreamingConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
