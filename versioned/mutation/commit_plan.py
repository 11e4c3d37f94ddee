"""From the coordinators' manifests to the catalog change of each table.

Per table: every manifest of the transaction's staging folder (`manifest`); the files by
partition; a file every group writing into a directory writes alike (the acid layout's
``_orc_acid_version`` marker: the layout's `MutationFormat.shared_kinds`) listed once; any
other file listed twice means two coordinators wrote the same (partition, bucket) group,
and one overwrote the other's file: refused. Partitions
that do not exist are created by the commit itself when the client creates partitions (or
for an unpartitioned table's root); otherwise the commit is refused before anything is
written, naming them.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from versioned.catalog.records import (
    DataFile,
    FileAdd,
    PartitionCommit,
    SinceCheck,
    Snapshot,
    TableCommit,
)
from versioned.layouts.base import layout_of
from versioned.layouts.mutation_format import MutationFormat
from versioned.mutation.errors import (
    MutationConflictError,
    MutationTransactionError,
    PartitionCreationError,
)
from versioned.mutation.formats import format_for
from versioned.mutation.manifest import Manifest, read_manifests
from versioned.mutation.target import MutationTarget
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from versioned.mutation.client import MutatorClient
    from versioned.mutation.transaction import Transaction

OPERATION = "mutate"
_COUNTS = ("inserted", "updated", "deleted")


def plan_commits(client: MutatorClient, txn: Transaction) -> list[TableCommit]:
    """The change of every table some coordinator reported files for.

    Raises:
        MutationTransactionError: Two coordinators wrote the same group.
        PartitionCreationError: Partitions are missing and may not be created.
        MutationConflictError: An update or delete names a row that is not live.
    """
    plans = []
    for _, target in sorted(txn.targets.items()):
        manifests = read_manifests(client.fileio, target.staging_dir)
        if manifests:
            plans.append(_table_commit(client, target, manifests))
    return plans


def _table_commit(
    client: MutatorClient, target: MutationTarget, manifests: list[Manifest]
) -> TableCommit:
    fmt = format_for(target.table.spec)
    by_values: dict[tuple[str | None, ...], list[FileAdd]] = defaultdict(list)
    seen: set[str] = set()
    for manifest in manifests:
        for file in manifest.files:
            if file.add.path in seen:
                if file.add.kind in fmt.shared_kinds:
                    continue
                raise MutationTransactionError(
                    f"two coordinators of transaction {target.txn_id} wrote {file.add.path} "
                    f"of {target.name}: each (partition, bucket) group must go to one "
                    "coordinator. The transaction is aborted",
                    path=file.add.path,
                )
            seen.add(file.add.path)
            by_values[file.values].append(file.add)
    existing = {p.values: p for p in client.store.partitions(target.table_name)}
    missing = [v for v in by_values if v not in existing and v != ()]
    if missing and not client.creates_partitions:
        raise PartitionCreationError(
            f"transaction {target.txn_id} wrote into partition(s) of {target.name} that do "
            f"not exist: {[list(v) for v in sorted(missing, key=str)]}. The client does not "
            "create partitions (create_partitions=False): create them with "
            "client.create_partitions(table, partitions), then commit again",
            table=target.name,
            partitions=[list(v) for v in missing],
        )
    snapshot = None
    if any(a.kind in fmt.delete_kinds for adds in by_values.values() for a in adds):
        snapshot = client.store.snapshot(target.table_name)
    changes = []
    deleting: set[int] = set()
    for values, adds in by_values.items():
        info = existing.get(values)
        pid = None if info is None else info.id
        change = PartitionCommit(
            pid,
            check_head=False,
            new_head=target.txn_id,
            add=tuple(dataclasses.replace(a, partition_id=pid) for a in adds),
            values=values if info is None else None,
        )
        if snapshot is not None and any(a.kind in fmt.delete_kinds for a in adds):
            change = _checked_live(client, fmt, target, snapshot, values, change)
            if change.partition_id is not None:
                deleting.add(change.partition_id)
        changes.append(change)
    return TableCommit(
        target.name,
        OPERATION,
        tuple(changes),
        _metrics(fmt, target, manifests),
        expected_seq=None if snapshot is None else snapshot.seq,
        unless_since=None if snapshot is None else _deleted_since(fmt, target, deleting, snapshot),
        in_commit_order=layout_of(target.table.spec.layout).versions_follow_commits,
    )


def _deleted_since(
    fmt: MutationFormat, target: MutationTarget, partitions: set[int], snapshot: Snapshot
) -> SinceCheck:
    """What makes commits since the liveness check (``snapshot``) a conflict: delete events
    added in a partition this transaction deletes from (another writer may have deleted or
    updated a row it names; inserts cannot). Writes whose delete events name rows checked
    live here and deleted by another commit meanwhile would otherwise commit a second live
    row of an updated key; checked with the table row locked, so nothing commits meanwhile."""

    def check(files: Sequence[DataFile]) -> str | None:
        hits = [
            f
            for f in files
            if f.added_seq > snapshot.seq
            and f.kind in fmt.delete_kinds
            and f.partition_id in partitions
        ]
        if not hits:
            return None
        return (
            f"{len(hits)} delete event file(s) were committed since transaction "
            f"{target.txn_id} checked that the rows it updates or deletes are live"
        )

    return check


def _checked_live(
    client: MutatorClient,
    fmt: MutationFormat,
    target: MutationTarget,
    snapshot: Snapshot,
    values: tuple[str | None, ...],
    change: PartitionCommit,
) -> PartitionCommit:
    """``change`` guarded by the partition's head as of ``snapshot``, once every ROW__ID its
    delete events name is live there (`MutationFormat.stale_row_ids`).

    Raises:
        MutationConflictError: Some ROW__ID is not live: a write since the caller's read
            updated or deleted the row (or it never existed in this partition).
    """
    pid = change.partition_id
    stale: list[object] = ["(a partition with no rows yet)"]  # nothing to update or delete
    if pid is not None:
        stale = list(fmt.stale_row_ids(client.fileio, snapshot, pid, change.add))
    if stale:
        where = "/".join("" if v is None else v for v in values) or "(root)"
        shown = ", ".join(str(r) for r in stale[:3]) + (" ..." if len(stale) > 3 else "")
        raise MutationConflictError(
            f"transaction {target.txn_id} updates or deletes {len(stale)} row(s) of "
            f"{target.name} partition {where} that are not live any more: ROW__ID {shown}. "
            "A write since the read they came from changed them. The transaction is "
            "aborted; read the table again and apply the mutations in a new transaction",
            txn_id=target.txn_id,
        )
    info = snapshot.partitions.get(pid) if pid is not None else None
    head = None if info is None else info.head_version
    return dataclasses.replace(change, check_head=True, expected_head=head)


def _metrics(
    fmt: MutationFormat, target: MutationTarget, manifests: list[Manifest]
) -> dict[str, Any]:
    data = [f.add for m in manifests for f in m.files if f.add.kind not in fmt.side_kinds]
    counts = {c: sum(int(m.counts.get(c, 0)) for m in manifests) for c in _COUNTS}
    return {
        **counts,
        "write_id": target.write_id,
        "coordinators": len(manifests),
        "files_written": len(data),
        "bytes_written": sum(a.size_bytes for a in data),
    }


def remove_files(fileio: FileIO, target: MutationTarget) -> None:
    """Delete the files the coordinators reported (an aborted transaction), and their
    directories once empty."""
    location = target.table.location
    folders = set()
    for manifest in read_manifests(fileio, target.staging_dir):
        for file in manifest.files:
            fileio.delete_file(f"{location}/{file.add.path}", missing_ok=True)
            folders.add(posixpath.dirname(f"{location}/{file.add.path}"))
    for folder in sorted(folders, reverse=True):
        fileio.delete_empty_dir(folder)
