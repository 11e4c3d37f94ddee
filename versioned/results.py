"""Frozen result records returned by table operations (upsert, compact, vacuum).

Plain data below the engine and the API: the engine builds them, the API returns them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast


class PlainData:
    """A result dataclass's plain-data form, for JSON output (`to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON output)."""
        return asdict(cast(Any, self))


@dataclass(frozen=True)
class CommitResult:
    """What one upsert committed.

    Attributes:
        version: The version the batch became (its transaction id); ``None`` when the batch
            held no rows and nothing was committed (see `nothing_applied`). A batch whose
            every row was rejected commits a version that records only its dead letters
            (see `all_rejected`).
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
        dead_letter: Where the rejected rows were written with their reasons (a folder
            relative to the warehouse), or None when no row was rejected.
        maintenance: What the table's own maintenance did after the commit (table property
            ``auto_compact``; ``seconds`` above excludes it), or None when it did not run.
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
    dead_letter: str | None = None
    maintenance: CompactionResult | None = None

    @property
    def nothing_applied(self) -> bool:
        """The batch held no rows: no version was committed."""
        return self.version is None

    @property
    def all_rejected(self) -> bool:
        """Every row of the batch was rejected: its version holds no row, only the record
        of the dead letters."""
        kept = (self.inserted, self.updated, self.deleted, self.stale, self.ignored_deletes)
        return self.rejected > 0 and not any(kept) and not self.superseded

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON output); the maintenance as one line."""
        data = asdict(self)
        data["maintenance"] = _maintenance_line(self.maintenance)
        return data


def _maintenance_line(done: CompactionResult | None) -> str | None:
    """``auto compaction: 2 of 3 partition(s) compacted in 1.20 s`` (None: it did not run)."""
    if done is None:
        return None
    if not done.partitions:
        return "auto compaction: nothing due"
    return (
        f"auto compaction: {done.compacted} of {len(done.partitions)} partition(s) compacted "
        f"in {done.seconds:.2f} s"
    )


PartitionStatus = Literal["planned", "compacted", "conflict", "skipped"]


@dataclass(frozen=True)
class PartitionCompaction(PlainData):
    """What compaction did to one partition.

    Attributes:
        partition: The partition's directory (``""`` when the table is unpartitioned).
        status: ``compacted``; ``planned`` (dry run); ``conflict`` (writers kept committing
            to the partition first: nothing changed, compact it again later); ``skipped``
            (another compaction got there first: nothing left to do).
        version: The compaction's version, when it committed: its transaction id, or a
            version above it when a transaction opened later committed first.
        high_water_mark: Every version up to this one was compacted.
        versions_compacted: How many versions the partition held before.
        rows: Rows written (the partition's live records).
        tombstones: Delete tombstones carried into the new version (ordering column only).
        files_removed: Data, index and Bloom files retired (they stay for readers of older
            snapshots until vacuum's retention runs out).
        files_added: Files written (a dry run: the files it expects to write).
        bytes_before: Size of the retired data files.
        bytes_after: Size of the data files written.
        attempts: Planning and writing attempts (a lost commit race costs one).
        seconds: Wall time for this partition.
        message: A short explanation for ``conflict`` and ``skipped``.
    """

    partition: str
    status: PartitionStatus
    version: int | None = None
    high_water_mark: int | None = None
    versions_compacted: int = 0
    rows: int = 0
    tombstones: int = 0
    files_removed: int = 0
    files_added: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    attempts: int = 0
    seconds: float = 0.0
    message: str = ""


@dataclass(frozen=True)
class CompactionResult:
    """What `Table.compact` did, partition by partition (one commit per partition).

    Attributes:
        table: ``db.table``.
        dry_run: Only planned; nothing was written.
        partitions: One entry per partition that was chosen.
        seconds: Wall time of the whole operation.
    """

    table: str
    dry_run: bool
    partitions: tuple[PartitionCompaction, ...] = ()
    seconds: float = 0.0

    @property
    def compacted(self) -> int:
        """Partitions that committed a compaction."""
        return sum(1 for p in self.partitions if p.status == "compacted")

    @property
    def conflicts(self) -> int:
        """Partitions left as they were because writers kept committing first."""
        return sum(1 for p in self.partitions if p.status == "conflict")

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON output)."""
        return {
            "table": self.table,
            "dry_run": self.dry_run,
            "compacted": self.compacted,
            "conflicts": self.conflicts,
            "seconds": self.seconds,
            "partitions": [p.to_dict() for p in self.partitions],
        }


@dataclass(frozen=True)
class VacuumResult:
    """What `Table.vacuum` removed (or, in a dry run, would remove).

    Attributes:
        table: ``db.table``.
        dry_run: Nothing was deleted.
        oldest_version: The oldest version still readable with ``as_of`` (None: no commit).
        retired_files: Files retired by commits older than the retention, deleted and
            forgotten by the catalog.
        retired_bytes: Their size.
        orphan_files: Files under the table that no commit lists (failed or killed writes),
            older than the grace period, deleted.
        orphan_bytes: Their size.
        kept_orphans: Unlisted files kept: younger than the grace period or belonging to a
            transaction still open.
        paths: The deleted (or, dry run, deletable) paths, relative to the table directory.
        seconds: Wall time.
    """

    table: str
    dry_run: bool
    oldest_version: int | None
    retired_files: int = 0
    retired_bytes: int = 0
    orphan_files: int = 0
    orphan_bytes: int = 0
    kept_orphans: int = 0
    paths: tuple[str, ...] = field(default=(), repr=False)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form without the path list (for output)."""
        data = asdict(self)
        data.pop("paths")
        return data
