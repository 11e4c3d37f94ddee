"""Options of table operations: plain frozen dataclasses and the defaults they share.

Below the engine and the API (both import from here, never the other way), so a caller can
build options without importing Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from versioned.catalog.records import DEFAULT_TXN_TIMEOUT_S, StreamMark
from versioned.errors import InputError
from versioned.keys.bloom import DEFAULT_ERROR_RATE

Progress = Callable[[str], None]
"""Called with a short message at each stage of a long operation (the CLI prints it)."""

TXN_TIMEOUT_S = DEFAULT_TXN_TIMEOUT_S
"""Timeout of a write's transaction: a writer heartbeats it; one silent this long is aborted."""

BROADCAST_LIMIT = 20_000_000
"""Version-index entries up to which reads use a broadcast join (then a shuffle join)."""


@dataclass(frozen=True)
class WriteOptions:
    """Tuning of a write; the defaults suit most tables.

    Attributes:
        stream_mark: The micro-batch (writer id, batch id) the write applies, recorded with
            its commit; a write of a batch the writer recorded already (or a later one) is
            refused with `StreamBatchCommittedError` and leaves nothing behind. The
            Structured Streaming sink (`Table.stream_writer`) sets it; see
            ``docs/streaming-sink.md``.
    """

    max_attempts: int = 3
    txn_timeout_s: float = TXN_TIMEOUT_S
    bloom_error_rate: float = DEFAULT_ERROR_RATE
    rows_per_file: int = 2_000_000
    stream_mark: StreamMark | None = None


@dataclass(frozen=True)
class CompactionOptions:
    """Tuning of a compaction; the defaults suit most tables.

    Attributes:
        rows_per_file: Target rows per data file written.
        target_file_bytes: Target size of a data file (estimated from the files read).
        bloom_error_rate: False-positive rate of the new Bloom filter.
        txn_timeout_s: Timeout of the compaction's transaction (it is heartbeated).
        max_attempts: Attempts per partition; a partition whose commit loses the race to a
            writer is planned and written again once by default.
        parallelism: Partitions compacted at the same time (each is its own Spark jobs and
            its own commit).
        kind: Acid layout only: ``major`` or ``minor`` compaction, or ``auto``: Hive's
            initiator rules decide per partition (the table's ``compactor.*`` properties).
            ``None``: major on demand, the initiator rules when thresholds are given (the
            scheduled form). Other layouts ignore it.
    """

    rows_per_file: int = 1_000_000
    target_file_bytes: int = 128 << 20
    bloom_error_rate: float = DEFAULT_ERROR_RATE
    txn_timeout_s: float = TXN_TIMEOUT_S
    max_attempts: int = 2
    parallelism: int = 2
    kind: Literal["major", "minor", "auto"] | None = None

    def __post_init__(self) -> None:
        if min(self.rows_per_file, self.target_file_bytes, self.max_attempts, self.parallelism) < 1:
            raise InputError(
                "rows_per_file, target_file_bytes, max_attempts and parallelism must be positive",
                rows_per_file=self.rows_per_file,
            )
        if self.kind not in (None, "major", "minor", "auto"):
            raise InputError(
                f"compaction kind {self.kind!r}: use major, minor or auto", kind=self.kind
            )


@dataclass(frozen=True)
class CompactionThresholds:
    """When the scheduled compaction picks a partition: any one threshold reached.

    Attributes:
        min_versions: Versions (committed writes) in the partition.
        max_index_entries: Version-index entries (readers join them on every read).
        min_small_files: Data files under half the target size (rows and bytes).
        index_ratio: Version-index entries over the partition's stored rows (what share of
            its rows a reader must drop by key).
        min_rows: Partitions with fewer stored rows are compacted only for small files
            (their reads cost little either way); the acid layout leaves them alone.
    """

    min_versions: int | None = 10
    max_index_entries: int | None = 100_000
    min_small_files: int | None = 10
    index_ratio: float | None = None
    min_rows: int = 0
