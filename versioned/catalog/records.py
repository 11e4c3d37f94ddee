"""Plain records the catalog hands out. Frozen, picklable, free of SQLAlchemy objects."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from versioned.schema import TableSpec

TxnState = Literal["open", "committed", "aborted"]
LockMode = Literal["shared_read", "shared_write", "exclusive"]
LockState = Literal["waiting", "acquired"]
Privilege = Literal["read", "write", "all"]
LOCK_MODES: tuple[str, ...] = ("shared_read", "shared_write", "exclusive")
PRIVILEGES: tuple[str, ...] = ("read", "write", "all")


@dataclass(frozen=True)
class DatabaseInfo:
    """A database (namespace of tables)."""

    id: int
    name: str
    owner: str
    created_at: float


@dataclass(frozen=True)
class TableInfo:
    """A table as the catalog knows it.

    Attributes:
        location: Path of the table directory relative to the warehouse (``db.db/table``).
        current_seq: Sequence number of the latest commit (0 when nothing was committed).
    """

    id: int
    spec: TableSpec
    owner: str
    location: str
    created_at: float
    current_seq: int


@dataclass(frozen=True)
class PartitionInfo:
    """A partition of a table.

    Attributes:
        values: Partition values in ``partition_by`` order; ``None`` is Hive's default
            partition (null or empty string).
        path: Escaped path relative to the table location (``""`` when unpartitioned).
        head_version: Highest version committed into the partition by a write, or ``None``.
    """

    id: int
    table_id: int
    values: tuple[str | None, ...]
    path: str
    head_version: int | None
    created_at: float


DEFAULT_TXN_TIMEOUT_S = 300.0
"""Timeout of a transaction unless its client asks for another: one whose heartbeat is
silent this long is expired (aborted, its locks released)."""


@dataclass(frozen=True)
class TransactionInfo:
    """A catalog transaction."""

    id: int
    state: TxnState
    user: str
    started_at: float
    last_heartbeat: float
    timeout_s: float
    abort_reason: str | None = None


@dataclass(frozen=True)
class TxnSnapshot:
    """What a reader of the ACID layout may see (Hive's ValidWriteIdList)."""

    high_water_mark: int
    open_ids: frozenset[int]
    aborted_ids: frozenset[int]

    @property
    def min_open(self) -> int | None:
        """Lowest open transaction id, or ``None``."""
        return min(self.open_ids) if self.open_ids else None

    def is_valid(self, txn_id: int) -> bool:
        """Whether data written by ``txn_id`` is visible."""
        return (
            txn_id <= self.high_water_mark
            and txn_id not in self.open_ids
            and txn_id not in self.aborted_ids
        )


@dataclass(frozen=True)
class LockInfo:
    """A lock held (or waited for) by a transaction on a table or one partition of it."""

    id: int
    txn_id: int
    table_id: int
    partition_id: int | None
    mode: LockMode
    state: LockState
    created_at: float


@dataclass(frozen=True)
class FileAdd:
    """A file a commit makes visible.

    Attributes:
        path: Relative to the table location, e.g. ``store_id=7/version_id=42/part-0.parquet``.
        kind: What the file is for the layout (``data``, ``index``, ``bloom``, ``delta``, ...).
        version: The version the rows belong to (the writer's transaction id, or a
            compaction's high-water mark).
        stats: Small JSON-able facts used for pruning (min/max key, ...).
    """

    partition_id: int | None
    path: str
    kind: str
    version: int
    size_bytes: int
    row_count: int
    stats: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FileGrowth:
    """A live file that grew: a streaming bucket file after one more committed flush.

    Files never change once committed, except the files of an open streaming batch: each
    commit appends to them and records here how many bytes (and rows) readers may read.

    Attributes:
        path: The live file's path, as committed.
        size_bytes: Its committed length now (never less than before).
        row_count: Its rows up to that length.
        stats: Its stats from now on (replacing the old ones).
    """

    path: str
    size_bytes: int
    row_count: int
    stats: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DataFile:
    """A file of a committed snapshot."""

    id: int
    partition_id: int | None
    path: str
    kind: str
    version: int
    size_bytes: int
    row_count: int
    stats: Mapping[str, Any]
    added_seq: int
    removed_seq: int | None


SinceCheck = Callable[[Sequence[DataFile]], str | None]
"""A writer's check of the files other commits added or retired since its plan: ``None``
when its commit still holds, else why it conflicts (`MetaStore.commit(unless_since=...)`)."""


@dataclass(frozen=True)
class PartitionCommit:
    """The change a commit makes to one partition.

    Attributes:
        expected_head: Compare-and-swap guard: the partition's ``head_version`` the writer
            planned against. ``None`` means the writer saw no committed version.
        new_head: New ``head_version`` (the writer's version), or ``None`` to leave it
            unchanged (compaction).
        check_head: When false, ``expected_head`` is not checked (compaction guards with
            ``remove`` instead).
        remove: Paths of live files this commit retires; each must still be live.
        grow: Live files of this partition that grew (`FileGrowth`: streaming batches).
        values: With ``partition_id`` None: the values of a partition the commit creates
            (or finds, if it exists by then) inside its own SQL transaction, so that a
            commit that fails leaves no partition behind; its files' ``partition_id`` is
            None and becomes the partition's id. ``()`` is an unpartitioned table's root.
    """

    partition_id: int | None
    expected_head: int | None = None
    new_head: int | None = None
    check_head: bool = True
    add: tuple[FileAdd, ...] = ()
    remove: tuple[str, ...] = ()
    values: tuple[str | None, ...] | None = None
    grow: tuple[FileGrowth, ...] = ()


@dataclass(frozen=True)
class TableCommit:
    """One table's part of a transaction that commits to several tables at once
    (`MetaStore.commit_tables`); the fields are `MetaStore.commit`'s arguments."""

    table: Any
    """The table's name (``TableName`` or ``db.table``)."""
    operation: str
    partitions: tuple[PartitionCommit, ...]
    metrics: Mapping[str, Any] = field(default_factory=dict)
    expected_seq: int | None = None
    unless_since: SinceCheck | None = None
    in_commit_order: bool = False


@dataclass(frozen=True)
class CommitInfo:
    """A committed change to a table (one entry of its history)."""

    seq: int
    table_id: int
    txn_id: int
    version: int
    operation: str
    user: str
    committed_at: float
    metrics: Mapping[str, Any]


@dataclass(frozen=True)
class Snapshot:
    """The committed state of a table at one commit: resolved once, read many times."""

    table: TableInfo
    seq: int
    version: int | None
    files: tuple[DataFile, ...]
    partitions: Mapping[int, PartitionInfo]

    def files_of(self, kind: str) -> tuple[DataFile, ...]:
        """The snapshot's files of one kind."""
        return tuple(f for f in self.files if f.kind == kind)


@dataclass(frozen=True)
class TableAccess:
    """One table as one user may use it for one operation, read in one catalog transaction.

    Attributes:
        table: The table's record.
        granted: The privileges the user holds on it (``write`` implies ``read``, ``all``
            both; its owners hold all three).
        snapshot: Its latest snapshot, when the operation asked for one.
        history: Its commits, oldest first, when the operation asked for them.
    """

    table: TableInfo
    granted: frozenset[Privilege]
    snapshot: Snapshot | None = None
    history: tuple[CommitInfo, ...] | None = None


@dataclass(frozen=True)
class GrantInfo:
    """A privilege of a principal on a database (``table`` is None) or a table."""

    principal: str
    privilege: Privilege
    database: str
    table: str | None
    granted_by: str
    granted_at: float


@dataclass(frozen=True)
class TableWriteIds:
    """The write ids of one table as a snapshot sees them (Hive's ``ValidWriteIdList``).

    A write id is valid if it is at most ``high_water_mark`` and neither open nor aborted.
    For a snapshot of an older commit, a write id committed after it counts as open.

    Attributes:
        table: ``db.table``.
        high_water_mark: The highest write id the snapshot knows (0: none).
        open_ids: Write ids at or below the mark whose transaction had not committed.
        aborted_ids: Write ids at or below the mark whose transaction aborted.
        versions: The version of every valid write id: the version its transaction's
            commit took (its id, or a fresh one when it committed after a higher version).
    """

    table: str
    high_water_mark: int
    open_ids: tuple[int, ...]
    aborted_ids: tuple[int, ...]
    versions: Mapping[int, int] = field(default_factory=dict)

    @property
    def min_open(self) -> int | None:
        """The lowest open write id, or ``None``."""
        return self.open_ids[0] if self.open_ids else None

    def is_valid(self, write_id: int) -> bool:
        """Whether rows written with ``write_id`` are visible in the snapshot."""
        return (
            write_id <= self.high_water_mark
            and write_id not in self.open_ids
            and write_id not in self.aborted_ids
        )


@dataclass(frozen=True)
class StreamMark:
    """The micro-batch a commit applies: batch ``batch_id`` of writer ``writer_id``.

    A commit carrying a mark records it in the same SQL transaction, and is refused
    (`StreamBatchCommittedError`) when the writer already recorded this batch id or a
    higher one: a replayed micro-batch commits at most once (`versioned.catalog.stream_progress`).
    """

    writer_id: str
    batch_id: int


@dataclass(frozen=True)
class StreamProgress:
    """The last micro-batch a writer recorded for a table.

    Attributes:
        commit_seq: The commit that applied it; ``None`` when the batch committed nothing
            (no row to apply).
        version: That commit's version, or ``None``.
        recorded_at: When it was recorded (epoch seconds).
    """

    writer_id: str
    batch_id: int
    commit_seq: int | None
    version: int | None
    recorded_at: float
