"""The streaming sink of the version-partition layout: each committed transaction is a version.

A transaction's rows stay in memory until `VersionIngestSink.prepare_commit`, which writes
them as version ``V`` (the transaction id) of the endpoint's partition exactly as
``Table.upsert`` of the same rows as inserts/updates would: the last row per key in the
transaction wins, one Parquet data file in ``version_id=V/``, a version-index entry for each
key the partition's live Bloom filters say may exist (so a streamed key replaces its stored
row), and a Bloom filter over the version's keys. No old data file is read. The
`PartitionCommit` moves the partition's head from the head the version was planned against
to ``V``, so a commit into the partition meanwhile makes it conflict instead of missing a key.

Nothing is written before `prepare_commit`, so an aborted transaction's rows never reach
storage; the files of a prepared transaction that does not commit are listed by no commit
(invisible), deleted at abort once the catalog confirms it, and otherwise left for vacuum
(docs/write-transactions.md).

When the table's key is unique table-wide (a partition column outside the primary key), the
other partitions' Bloom filters are probed too and a streamed key's row elsewhere is retired
by an ``M`` entry there, in the same commit (`PreparedCommit.others`, guarded by the table's
commit sequence, `PreparedCommit.expected_seq`), as upsert does.

Not supported (`NotSupportedError` when the sink is made): tables with an ordering column
(skipping stale records needs the stored ordering values of Bloom-positive keys, which
upsert reads with Spark) and ORC data files.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from versioned.catalog.records import (
    DataFile,
    PartitionCommit,
    PartitionInfo,
    SinceCheck,
    Snapshot,
)
from versioned.errors import NotSupportedError, StorageError
from versioned.keys.bloom import DEFAULT_ERROR_RATE, KeyDigests
from versioned.keys.columns import (
    index_key_columns,
    keyed_partition_columns,
    part_column,
)
from versioned.keys.latest import last_per_key
from versioned.layouts.ingest import PreparedCommit, SinkContext
from versioned.layouts.ingest_errors import (
    SerializationError,
    StreamingIOFailure,
    StreamingTransactionError,
)
from versioned.layouts.version_partition.arrow_version import (
    PartitionVersion,
    write_index_entries,
    write_partition_version,
)
from versioned.layouts.version_partition.bloom_cache import LiveBlooms, PartitionBloomCache
from versioned.layouts.version_partition.elsewhere import (
    ElsewhereProbe,
    blooms_by_partition,
    probe_elsewhere,
)
from versioned.layouts.version_partition.index import (
    MOVED,
)
from versioned.layouts.version_partition.ingest_races import SincePlan, since_plan
from versioned.layouts.version_partition.probe import BLOOM_KIND, ProbeResult, probe_partition
from versioned.layouts.version_partition.retired_rows import KeyHomes, row_versions_of


@dataclass(frozen=True)
class _Plan:
    """What a version was planned against and what the probes found."""

    live: LiveBlooms
    probe: ProbeResult
    elsewhere: ElsewhereProbe
    expected_seq: int | None
    partitions: dict[int, PartitionInfo]
    version: int
    """The version to write: the transaction id, or a fresh id above a head that passed it."""
    snapshot_files: tuple[DataFile, ...] | None = None
    """The files of the snapshot probed (a key unique table-wide), else None."""


@dataclass(frozen=True)
class _Prepared:
    """A prepared transaction: the head it was planned against and its files."""

    expected_head: int | None
    version: PartitionVersion | None
    files: tuple[str, ...]
    """Every file written, relative to the table."""


@dataclass(frozen=True)
class _Keys:
    """A version's keys as the table-wide probe tests them."""

    table: pa.Table
    """Key columns, then each partition value as a string (`part_column`)."""
    digests: KeyDigests


class VersionIngestSink:
    """Writes a transaction batch into one partition of a version-partition table."""

    def __init__(
        self,
        context: SinkContext,
        *,
        blooms: PartitionBloomCache | None = None,
        bloom_error_rate: float = DEFAULT_ERROR_RATE,
    ) -> None:
        """A sink for one batch.

        Args:
            context: The batch's catalog, storage, table, partition and transactions.
            blooms: The partition's Bloom filters (default: the connection's, in
                ``context.kept``, so that its later batches read none again).
            bloom_error_rate: False-positive rate of each version's Bloom filter.

        Raises:
            NotSupportedError: The table cannot be streamed into by this sink (see the
                module docstring).
        """
        _check_table(context)
        self.context = context
        self.key_columns = index_key_columns(context.table.spec)
        self.bloom_error_rate = bloom_error_rate
        self.blooms = blooms or context.kept.setdefault(
            "version_blooms", PartitionBloomCache(context.fileio, context.table.location)
        )
        self._rows: dict[int, list[pa.Table]] = {}
        self._prepared: dict[int, _Prepared] = {}

    def write(self, txn_id: int, write_id: int, rows: pa.Table) -> None:
        """Keep ``rows`` (the table's data columns) for the open transaction.

        Raises:
            SerializationError: A row has a null key column.
            StreamingTransactionError: The transaction is not the batch's or is already prepared.
        """
        self._check_open(txn_id)
        for name in self.key_columns:
            if rows.column(name).null_count:
                raise SerializationError(
                    f"a record has no value for key column {name!r} of "
                    f"{self.context.table.spec.name}; every record needs its primary key"
                )
        if rows.num_rows:
            self._rows.setdefault(txn_id, []).append(rows)

    def prepare_commit(self, txn_id: int, write_id: int) -> PreparedCommit:
        """Write the transaction's rows as version ``txn_id``; return the partition change.

        May be called again after the catalog refused the change with a
        `CommitConflictError` (another version of the partition committed first): the
        version is planned again against the new head. With a key unique table-wide the
        commit carries a check (`PreparedCommit.unless_since`) so that commits to other
        partitions since the plan conflict only when they may hold one of its keys.

        Raises:
            StreamingTransactionError: A newer version of the partition committed since the batch
                opened its transactions; this one cannot be placed below it.
            StreamingIOFailure: Storage failed.
        """
        if txn_id not in self.context.txn_ids:
            raise StreamingTransactionError(f"transaction {txn_id} is not one of this batch's")
        parts = self._rows.get(txn_id, [])
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0] if parts else None
        partition = self.context.partition
        if rows is None:  # an empty commit: nothing to add, no head to move
            self._prepared[txn_id] = _Prepared(None, None, ())
            change = PartitionCommit(partition.id, check_head=False)
            return PreparedCommit(change, _metrics(None, 0))
        rows, superseded = last_per_key(rows, self.key_columns)
        try:
            plan, keys = self._plan(txn_id, rows)
            homes = self._homes(plan)
            version = write_partition_version(
                self.context.fileio,
                self.context.table.location,
                self.context.table.spec,
                partition,
                plan.version,
                rows,
                plan.probe,
                key_columns=self.key_columns,
                error_rate=self.bloom_error_rate,
                retiring=None
                if homes is None
                else homes.retiring_here(np.flatnonzero(plan.probe.may_exist)),
            )
            others = self._retire_elsewhere(rows, plan, homes)
        except (StorageError, OSError) as exc:
            raise StreamingIOFailure(
                f"writing transaction {txn_id} into {self.context.table.spec.name} failed: "
                f"{exc}; abort the batch and write its records again in a new one"
            ) from exc
        files = [a.path for a in version.adds] + [a.path for c in others for a in c.add]
        change = PartitionCommit(
            partition.id, expected_head=plan.live.head, new_head=plan.version, add=version.adds
        )
        # A key that may live in any partition counts as updated, as upsert counts it.
        may = plan.probe.may_exist | plan.elsewhere.may_exist(rows.num_rows)
        self._prepared[txn_id] = _Prepared(plan.live.head, version, tuple(files))
        return PreparedCommit(
            change,
            _metrics(version, superseded, int(may.sum()), others),
            others=others,
            expected_seq=plan.expected_seq,
            version=plan.version,
            unless_since=None if keys is None else self._unless_since(plan, keys),
        )

    def committed(self, txn_id: int) -> None:
        """The catalog committed ``txn_id``: its filter joins the partition's live ones."""
        self._rows.pop(txn_id, None)
        prepared = self._prepared.pop(txn_id, None)
        if prepared is not None and prepared.version is not None:
            version = prepared.version
            self.blooms.add_version(prepared.expected_head, version.bloom_add, version.bloom)

    def abort(self, txn_id: int) -> None:
        """Forget the transaction's rows; delete its files once the catalog has aborted it."""
        self._rows.pop(txn_id, None)
        prepared = self._prepared.pop(txn_id, None)
        if prepared is None or prepared.version is None:
            return  # nothing was written
        store = self.context.store
        location = self.context.table.location
        try:
            if store.transaction(txn_id).state != "aborted":
                return  # not (yet) aborted: the files stay for vacuum
            for rel in prepared.files:
                self.context.fileio.delete_file(f"{location}/{rel}", missing_ok=True)
            for folder in sorted({posixpath.dirname(rel) for rel in prepared.files}):
                self.context.fileio.delete_empty_dir(f"{location}/{folder}")
        except (StorageError, OSError):
            return  # best effort: vacuum removes orphans

    def close(self) -> PartitionCommit | None:
        """Nothing to finish: every committed version is complete on its own."""
        self._rows.clear()
        self._prepared.clear()
        return None

    def _check_open(self, txn_id: int) -> None:
        if txn_id not in self.context.txn_ids:
            raise StreamingTransactionError(f"transaction {txn_id} is not one of this batch's")
        if txn_id in self._prepared:
            raise StreamingTransactionError(
                f"transaction {txn_id} is being committed; write no more"
            )

    def _unless_since(self, plan: _Plan, keys: _Keys) -> SinceCheck:
        """The commit's check of what committed to the table since ``plan``
        (`version_races.since_plan`)."""
        ctx = self.context
        return since_plan(
            SincePlan(
                ctx.fileio,
                ctx.table.location,
                ctx.table.spec,
                ctx.partition,
                plan.partitions,
                keys.table,
                keys.digests,
                self.key_columns,
                self.blooms.load,
            )
        )

    def _plan(self, txn_id: int, rows: pa.Table) -> tuple[_Plan, _Keys | None]:
        """Probe the version's keys against the live Bloom filters (of every partition, when
        the table's key is unique table-wide)."""
        ctx = self.context
        spec = ctx.table.spec
        snapshot: Snapshot | None = None
        if spec.keys_move:
            snapshot = ctx.store.snapshot(spec.name)
            live = self._refresh(snapshot)
        else:
            head = ctx.store.partition(spec.name, ctx.partition.values).head_version
            live = self.blooms.current(head) or self._refresh(ctx.store.snapshot(spec.name))
        location = ctx.table.location
        probe = probe_partition(
            ctx.fileio, location, rows, self.key_columns, live.files, load=self.blooms.load
        )
        if snapshot is None:
            version = self._version(txn_id, [live.head])
            return _Plan(live, probe, ElsewhereProbe(), None, {}, version), None
        keys = rows.select(list(self.key_columns))
        for i, value in enumerate(ctx.partition.values):
            keys = keys.append_column(
                part_column(i), pa.array([value] * rows.num_rows, pa.string())
            )
        digests = KeyDigests(probe.encoded)
        elsewhere = probe_elsewhere(
            ctx.fileio,
            location,
            keys,
            digests,
            own_rows={ctx.partition.values: np.arange(rows.num_rows)},
            partitions=list(snapshot.partitions.values()),
            blooms=blooms_by_partition(snapshot.files),
            key_columns=self.key_columns,
            keyed_partition_columns=keyed_partition_columns(spec),
            load=self.blooms.load,
        )
        heads = [live.head, *[snapshot.partitions[pid].head_version for pid in elsewhere.hits]]
        version = self._version(txn_id, heads)
        plan = _Plan(
            live, probe, elsewhere, snapshot.seq, dict(snapshot.partitions), version, snapshot.files
        )
        return plan, _Keys(keys, digests)

    def _refresh(self, snapshot: Snapshot) -> LiveBlooms:
        """The partition's live Bloom files from ``snapshot`` (cached with its head)."""
        pid = self.context.partition.id
        info = snapshot.partitions.get(pid)
        blooms = [f for f in snapshot.files if f.kind == BLOOM_KIND]
        return self.blooms.refresh(
            None if info is None else info.head_version,
            [f for f in blooms if f.partition_id == pid],
            keep=[f.path for f in blooms] if self.context.table.spec.keys_move else (),
        )

    def _homes(self, plan: _Plan) -> KeyHomes | None:
        """Where the keys were written last (`retired_rows`); None without a snapshot (a
        key unique per partition: only its filters were read)."""
        if plan.snapshot_files is None:
            return None
        row_versions = row_versions_of(plan.snapshot_files)
        own = np.full(len(plan.probe.newest), self.context.partition.id, dtype=np.int64)
        return KeyHomes.of(plan.probe.newest, plan.elsewhere, row_versions, own)

    def _retire_elsewhere(
        self, rows: pa.Table, plan: _Plan, homes: KeyHomes | None
    ) -> tuple[PartitionCommit, ...]:
        """``M`` entries where a streamed key may live in another partition."""
        ctx = self.context
        changes = []
        for pid, positions in plan.elsewhere.hits.items():
            other = plan.partitions[pid]
            add = write_index_entries(
                ctx.fileio,
                ctx.table.location,
                ctx.table.spec,
                other,
                plan.version,
                rows.take(pa.array(positions)),
                MOVED,
                retiring=None if homes is None else homes.retiring_in(pid, positions),
            )
            changes.append(
                PartitionCommit(
                    pid, expected_head=other.head_version, new_head=plan.version, add=(add,)
                )
            )
        return tuple(changes)

    def _version(self, txn_id: int, heads: list[int | None]) -> int:
        """The version of ``txn_id``'s rows: its id, unless a partition it changes is at a
        version at or above it already (another batch, opened later, committed there first;
        or a compaction). Versions of a partition grow, so the rows then get a fresh
        version: the id of a transaction opened now (and committed at once, empty), above
        every version so far; the commit records it (`MetaStore.commit(version=...)`)."""
        if all(head is None or head < txn_id for head in heads):
            return txn_id
        store = self.context.store
        (fresh,) = store.open_transactions(1)
        store.commit_transaction(fresh)
        return fresh


def _check_table(context: SinkContext) -> None:
    spec = context.table.spec
    reasons = []
    if spec.ordering_column is not None:
        reasons.append(
            f"it has an ordering column ({spec.ordering_column}): skipping stale records "
            "needs the stored ordering values, which only upsert reads"
        )
    if spec.file_format != "parquet":
        reasons.append(f"its data files are {spec.file_format}; streaming writes Parquet")
    if reasons:
        raise NotSupportedError(
            f"cannot stream into {spec.name} on the {spec.layout} layout: "
            + "; ".join(reasons)
            + ". Load it with `versioned upsert` instead",
            layout=spec.layout,
            operation="stream",
            table=str(spec.name),
        )


def _metrics(
    version: PartitionVersion | None,
    superseded: int,
    updated: int = 0,
    others: tuple[PartitionCommit, ...] = (),
) -> dict[str, Any]:
    """The commit's counts, named as upsert's (``history`` shows them alike)."""
    adds = [] if version is None else list(version.adds)
    adds += [a for change in others for a in change.add]
    written = 0 if version is None else version.bloom_add.row_count
    return {
        "inserted": written - updated,
        "updated": updated,
        "deleted": 0,
        "superseded": superseded,
        "partitions": (0 if version is None else 1) + len(others),
        "files_written": len(adds),
        "bytes_written": sum(a.size_bytes for a in adds),
    }
