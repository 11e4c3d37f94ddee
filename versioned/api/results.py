"""Frozen result records returned by table operations."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class CommitResult:
    """What one upsert committed.

    Attributes:
        version: The version the batch became (its transaction id); ``None`` when the batch
            held no rows and nothing was committed (see `nothing_applied`).
        inserted: Rows whose key certainly did not exist before (Bloom filter negative).
        updated: Rows whose key may have existed (Bloom positive). Without an ordering
            column the write reads no old data, so a few inserts (about the filter's
            false-positive rate) can be counted here.
        deleted: Deletes of keys that may have existed.
        stale: Changes skipped because the stored state of their key is newer (ordering
            column only): they arrived out of order.
        rejected: Rows sent to the dead-letter area with their reason.
        coerced: Applied rows whose values were changed by a lenient conversion the table
            opted into (table properties ``round_decimals``, ``replace_invalid_utf8``).
        superseded: Changes replaced by a later change of the same key in the same batch
            (by the ordering column when the table has one, else by input order); only the
            last change per key is applied. Not an error: a batch of a busy key has many.
        ignored_deletes: Deletes of keys that certainly did not exist (no-ops).
        partitions: Partitions the batch touched.
        files_written: Data, index and Bloom files added.
        bytes_written: Their total size.
        seconds: Wall time of the whole operation.
        tombstones: Kafka tombstones (null Debezium events) skipped; they carry no change.
    """

    version: int | None
    inserted: int
    updated: int
    deleted: int
    stale: int
    rejected: int
    superseded: int = 0
    ignored_deletes: int = 0
    partitions: int = 0
    files_written: int = 0
    bytes_written: int = 0
    seconds: float = 0.0
    coerced: int = 0
    tombstones: int = 0

    @property
    def nothing_applied(self) -> bool:
        """The batch held no rows: no version was committed."""
        return self.version is None

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON output)."""
        return asdict(self)
