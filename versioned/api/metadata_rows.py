"""The rows of each metadata table (`versioned.api.metadata_tables`), from catalog metadata
only: the table's history, snapshot, partitions, stream progress, transactions and locks,
and the dead-letter files its commits name. No Spark."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from versioned.layouts.base import layout_of

if TYPE_CHECKING:
    from versioned.api.table import Table
    from versioned.catalog.records import (
        CommitInfo,
        DataFile,
        PartitionInfo,
        StreamProgress,
        TableInfo,
        TableWriteIds,
    )


def history_rows(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    started = store.commit_started_at(table.name)
    rows = []
    for c in sorted(table.history(), key=lambda c: c.seq):
        m = c.metrics
        began = started.get(c.txn_id)
        rows.append(
            {
                "commit": c.seq,
                "version": c.version,
                "committed_at": utc_time(c.committed_at),
                "operation": c.operation,
                "user": c.user,
                "trigger": m.get("trigger"),
                "inserted": as_int(m.get("inserted")),
                "updated": as_int(m.get("updated")),
                "deleted": as_int(m.get("deleted")),
                "stale": as_int(m.get("stale")),
                "rejected": as_int(m.get("rejected")),
                "partitions": _count(m.get("partitions")),
                "files_written": as_int(m.get("files_written")),
                "bytes_written": as_int(m.get("bytes_written")),
                "seconds": None if began is None else max(c.committed_at - began, 0.0),
            }
        )
    return rows


def snapshots_rows(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    added, removed = store.commit_file_counts(table.name)
    rows = []
    live_files = live_bytes = 0
    previous: int | None = None
    for c in sorted(table.history(), key=lambda c: c.seq):
        n_add, b_add = added.get(c.seq, (0, 0))
        n_rm, b_rm = removed.get(c.seq, (0, 0))
        live_files += n_add - n_rm
        live_bytes += b_add - b_rm
        rows.append(
            {
                "commit": c.seq,
                "parent_commit": previous,
                "version": c.version,
                "committed_at": utc_time(c.committed_at),
                "operation": c.operation,
                "user": c.user,
                "files_added": n_add,
                "files_removed": n_rm,
                "live_files": live_files,
                "live_bytes": live_bytes,
            }
        )
        previous = c.seq
    return rows


def partitions_rows(table: Table, as_of: int | None = None) -> list[dict[str, Any]]:
    """The ``partitions`` metadata table's rows, of the latest snapshot or version ``as_of``."""
    from versioned.layouts.partition_facts import FIELDS, summarise_snapshot

    snapshot = table.snapshot(as_of)
    store = table.catalog.engine_context.store
    write_ids = lambda: store.write_ids(table.name, snapshot.seq)  # noqa: E731
    summaries = summarise_snapshot(table.layout, snapshot, write_ids)
    last = _last_compactions(table.history())
    rows = []
    for part in sorted(snapshot.partitions.values(), key=lambda p: p.path):
        summary = summaries[part.id]
        rows.append(
            {
                "partition": part.path,
                "values": _values(table, part),
                "head_version": part.head_version,
                **{k: summary[k] for k in FIELDS if k != "compaction_due"},
                "last_compaction": last.get(part.path),
                "compaction_due": summary["compaction_due"],
            }
        )
    return rows


def files_rows(table: Table) -> list[dict[str, Any]]:
    snapshot = table.snapshot()
    paths = {p.id: p.path for p in snapshot.partitions.values()}
    return [
        {
            "path": f.path,
            "partition": paths.get(f.partition_id) if f.partition_id is not None else "",
            "kind": f.kind,
            "version": f.version,
            "rows": f.row_count,
            "bytes": f.size_bytes,
            "added_commit": f.added_seq,
        }
        for f in sorted(snapshot.files, key=lambda f: f.path)
    ]


def stream_progress_rows(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    progress = sorted(store.stream_progress(table.name), key=lambda p: p.writer_id)
    return [stream_progress_row(p) for p in progress]


def stream_progress_row(p: StreamProgress) -> dict[str, Any]:
    """One streaming writer's row of the ``stream_progress`` metadata table."""
    return {
        "writer_id": p.writer_id,
        "batch_id": p.batch_id,
        "commit": p.commit_seq,
        "version": p.version,
        "recorded_at": utc_time(p.recorded_at),
    }


def dead_letters_rows(table: Table) -> list[dict[str, Any]]:
    fileio = table.catalog.engine_context.fileio
    rows = []
    for c in sorted(table.history(), key=lambda c: c.seq):
        where = c.metrics.get("dead_letter") or c.metrics.get("dead_letters")
        if not where:
            continue
        files = [where] if str(where).endswith(".json") else _json_files(fileio, str(where))
        for path in files:
            for line in fileio.read_bytes(path).decode("utf-8", errors="replace").splitlines():
                if line.strip():
                    rows.append(_dead_letter(line, c, path))
    return rows


def transactions_rows(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    now = time.time()
    locks: dict[int, int] = {}
    for lock in store.locks(table.name):
        locks[lock.txn_id] = locks.get(lock.txn_id, 0) + 1
    return [
        {
            "txn_id": t.id,
            "state": t.state,
            "user": t.user,
            "started_at": utc_time(t.started_at),
            "last_heartbeat": utc_time(t.last_heartbeat),
            "timeout_s": t.timeout_s,
            "expires_at": utc_time(t.last_heartbeat + t.timeout_s),
            "expired": t.last_heartbeat + t.timeout_s < now,
            "locks": locks.get(t.id, 0),
        }
        for t in store.table_transactions(table.name)
    ]


def locks_rows(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    paths = {p.id: p.path for p in store.partitions(table.name)}
    return [
        {
            "lock_id": lock.id,
            "txn_id": lock.txn_id,
            "partition": None if lock.partition_id is None else paths.get(lock.partition_id),
            "mode": lock.mode,
            "state": lock.state,
            "created_at": utc_time(lock.created_at),
        }
        for lock in store.locks(table.name)
    ]


# --- helpers -----------------------------------------------------------------------------


def utc_time(epoch: float | None) -> Any:
    """Seconds since the epoch as an aware UTC datetime (None stays None)."""
    from datetime import UTC, datetime

    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def as_int(value: Any) -> int | None:
    """A metric as an int (None, and booleans, as None)."""
    return None if value is None or isinstance(value, bool) else int(value)


def _count(value: Any) -> int | None:
    """A count, or the length of a list of things counted."""
    if isinstance(value, list | tuple):
        return len(value)
    return as_int(value)


def _values(table: Table, part: PartitionInfo) -> list[tuple[str, str | None]]:
    """The partition's values as map entries (column, value as in its path)."""
    return list(zip(table.spec.partition_by, part.values, strict=True))


def _last_compactions(history: Sequence[CommitInfo]) -> dict[str, Any]:
    """When each partition (by path) was last compacted."""
    last: dict[str, Any] = {}
    for c in sorted(history, key=lambda c: c.seq):
        if c.operation == "compact":
            path = c.metrics.get("partition")
            last["" if path in (None, "(table)") else str(path)] = utc_time(c.committed_at)
    return last


def _json_files(fileio: Any, folder: str) -> list[str]:
    return [s.path for s in fileio.list_files(folder) if s.path.endswith(".json")]


def _dead_letter(line: str, commit: CommitInfo, path: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError:
        record = {"_raw": line}
    if not isinstance(record, dict):
        record = {"_raw": line}
    raw = record.pop("_raw", None)
    reason = record.pop("_reason", None)
    source = record.pop("_source", None)
    if raw is None:
        raw = json.dumps(record, ensure_ascii=False, sort_keys=True)
    return {
        "raw": raw,
        "reason": reason,
        "source": source,
        "version": commit.version,
        "commit": commit.seq,
        "committed_at": utc_time(commit.committed_at),
        "file": path,
    }


def summarise_partition(
    table: TableInfo,
    partition: PartitionInfo,
    files: Sequence[DataFile],
    write_ids: Callable[[], TableWriteIds] | None,
) -> dict[str, Any]:
    """The catalog's commit-time summariser: `partition_facts.summarise` with the table's
    layout from the registry."""
    from versioned.layouts.partition_facts import summarise

    return summarise(layout_of(table.spec.layout), table, partition, files, write_ids)
