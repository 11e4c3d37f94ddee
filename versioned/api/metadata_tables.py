"""Metadata tables: a table's history, snapshots, partitions, files, streaming writers, dead
letters, open transactions and locks, as rows (Arrow tables) from catalog metadata.

In SQL they are ``db.t__history``, ``db.t__partitions``, ... (`metadata_name`): a table's
name, two underscores and the kind. That is a plain identifier, which Spark's parser takes
unquoted (``$`` or a third name part, as Paimon and Iceberg spell them, need quoting or a
catalog plugin in Spark). A real table of that name wins over the metadata table; new
tables cannot take such a name (`check_table_name`). Reading one needs read permission on
its table. Every kind is built from catalog metadata only (the dead letters from the files
their commits name), without Spark: the SQL views (`register_metadata_view`) and
``versioned ui`` share these rows. ``docs/metadata-tables.md`` describes every column.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from versioned.errors import InvalidNameError
from versioned.names import TableName

if TYPE_CHECKING:
    from versioned.api.table import Table
    from versioned.catalog.records import CommitInfo, PartitionInfo, Snapshot

SEPARATOR = "__"
"""Between a table's name and the kind of one of its metadata tables."""
METADATA_FOLDER = "_versioned_metadata"
"""The warehouse folder where metadata views keep their rows when Spark is not local."""

_TS = pa.timestamp("us", tz="UTC")
_I, _S, _F = pa.int64(), pa.string(), pa.float64()


@dataclass(frozen=True)
class MetadataKind:
    """One kind of metadata table: its columns and how its rows are made."""

    name: str
    description: str
    schema: pa.Schema
    rows: Callable[[Table], list[dict[str, Any]]]


def metadata_name(table: TableName, kind: str) -> TableName:
    """``db.t`` and ``history`` -> ``db.t__history``."""
    return TableName(table.database, f"{table.table}{SEPARATOR}{kind}")


def metadata_target(name: TableName) -> tuple[TableName, str] | None:
    """The table and kind a metadata table's name stands for (``None``: not such a name)."""
    base, sep, kind = name.table.rpartition(SEPARATOR)
    if not sep or not base or kind not in KINDS:
        return None
    return TableName(name.database, base), kind


def check_table_name(name: TableName) -> None:
    """Refuse a new table whose name is a metadata table's name.

    Raises:
        InvalidNameError: The name ends with ``__`` and a metadata kind.
    """
    target = metadata_target(name)
    if target is not None:
        raise InvalidNameError(
            f"table name {name.table!r} is reserved: {target[0]}{SEPARATOR}{target[1]} is "
            f"the {target[1]} metadata table of {target[0]}; choose another name",
            name=str(name),
        )


def metadata_table(table: Table, kind: str) -> pa.Table:
    """The rows of one metadata table of ``table`` (needs read permission on it).

    Raises:
        InvalidNameError: ``kind`` is not a metadata kind.
        PermissionDeniedError: The user may not read the table.
    """
    if kind not in KINDS:
        raise InvalidNameError(
            f"no metadata table {kind!r}; the kinds are {', '.join(KINDS)}", kind=kind
        )
    found = KINDS[kind]
    rows = found.rows(table)
    return pa.Table.from_pylist(rows, schema=found.schema)


# --- the kinds ---------------------------------------------------------------------------


def _history(table: Table) -> list[dict[str, Any]]:
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
                "committed_at": _time(c.committed_at),
                "operation": c.operation,
                "user": c.user,
                "trigger": m.get("trigger"),
                "inserted": _int(m.get("inserted")),
                "updated": _int(m.get("updated")),
                "deleted": _int(m.get("deleted")),
                "stale": _int(m.get("stale")),
                "rejected": _int(m.get("rejected")),
                "partitions": _count(m.get("partitions")),
                "files_written": _int(m.get("files_written")),
                "bytes_written": _int(m.get("bytes_written")),
                "seconds": None if began is None else max(c.committed_at - began, 0.0),
            }
        )
    return rows


def _snapshots(table: Table) -> list[dict[str, Any]]:
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
                "committed_at": _time(c.committed_at),
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


def _partitions(table: Table) -> list[dict[str, Any]]:
    snapshot = table.snapshot()
    layout = table.layout
    entry_kinds = layout.entry_kinds[1]
    due = _due(table, snapshot)
    last = _last_compactions(table.history())
    by_partition: dict[int | None, list[Any]] = {}
    for f in snapshot.files:
        by_partition.setdefault(f.partition_id, []).append(f)
    rows = []
    for part in sorted(snapshot.partitions.values(), key=lambda p: p.path):
        files = by_partition.get(part.id, [])
        data = [f for f in files if f.kind in layout.data_kinds]
        stored = sum(f.row_count for f in data)
        entries = sum(f.row_count for f in files if f.kind in entry_kinds)
        live = max(stored - entries, 0)
        rows.append(
            {
                "partition": part.path,
                "values": _values(table, part),
                "head_version": part.head_version,
                "versions": len({f.version for f in data}),
                "data_files": len(data),
                "files": len(files),
                "bytes": sum(f.size_bytes for f in files),
                "stored_rows": stored,
                "entries": entries,
                "entry_kind": layout.entry_kinds[0],
                "live_rows_estimate": live,
                "read_amplification": round((stored + entries) / live, 3) if live else None,
                "last_compaction": last.get(part.path),
                "compaction_due": due.get(part.id),
            }
        )
    return rows


def _files(table: Table) -> list[dict[str, Any]]:
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


def _stream_progress(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    return [
        {
            "writer_id": p.writer_id,
            "batch_id": p.batch_id,
            "commit": p.commit_seq,
            "version": p.version,
            "recorded_at": _time(p.recorded_at),
        }
        for p in sorted(store.stream_progress(table.name), key=lambda p: p.writer_id)
    ]


def _dead_letters(table: Table) -> list[dict[str, Any]]:
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


def _transactions(table: Table) -> list[dict[str, Any]]:
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
            "started_at": _time(t.started_at),
            "last_heartbeat": _time(t.last_heartbeat),
            "timeout_s": t.timeout_s,
            "expires_at": _time(t.last_heartbeat + t.timeout_s),
            "expired": t.last_heartbeat + t.timeout_s < now,
            "locks": locks.get(t.id, 0),
        }
        for t in store.table_transactions(table.name)
    ]


def _locks(table: Table) -> list[dict[str, Any]]:
    store = table.catalog.engine_context.store
    paths = {p.id: p.path for p in store.partitions(table.name)}
    return [
        {
            "lock_id": lock.id,
            "txn_id": lock.txn_id,
            "partition": None if lock.partition_id is None else paths.get(lock.partition_id),
            "mode": lock.mode,
            "state": lock.state,
            "created_at": _time(lock.created_at),
        }
        for lock in store.locks(table.name)
    ]


# --- helpers -----------------------------------------------------------------------------


def _time(epoch: float | None) -> Any:
    from datetime import UTC, datetime

    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def _int(value: Any) -> int | None:
    return None if value is None or isinstance(value, bool) else int(value)


def _count(value: Any) -> int | None:
    """A count, or the length of a list of things counted."""
    if isinstance(value, list | tuple):
        return len(value)
    return _int(value)


def _values(table: Table, part: PartitionInfo) -> list[tuple[str, str | None]]:
    """The partition's values as map entries (column, value as in its path)."""
    return list(zip(table.spec.partition_by, part.values, strict=True))


def _due(table: Table, snapshot: Snapshot) -> Mapping[int, str]:
    """What the table's maintenance policy would compact now, by partition id."""
    from versioned.api.auto_maintenance import policy_thresholds

    layout = table.layout
    if not layout.has("compaction_due"):
        return {}
    store = table.catalog.engine_context.store
    ids = store.write_ids(table.name, snapshot.seq) if layout.allocates_write_ids else None
    due: Mapping[int, str] = layout.hook("compaction_due", "compact", table.name)(
        ids, snapshot, policy_thresholds(table.spec)
    )
    return due


def _last_compactions(history: Sequence[CommitInfo]) -> dict[str, Any]:
    """When each partition (by path) was last compacted."""
    last: dict[str, Any] = {}
    for c in sorted(history, key=lambda c: c.seq):
        if c.operation == "compact":
            path = c.metrics.get("partition")
            last["" if path in (None, "(table)") else str(path)] = _time(c.committed_at)
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
        "committed_at": _time(commit.committed_at),
        "file": path,
    }


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in fields])


KINDS: Mapping[str, MetadataKind] = {
    k.name: k
    for k in (
        MetadataKind(
            "history",
            "one row per commit: what it did and how long its transaction was open",
            _schema(
                ("commit", _I),
                ("version", _I),
                ("committed_at", _TS),
                ("operation", _S),
                ("user", _S),
                ("trigger", _S),
                ("inserted", _I),
                ("updated", _I),
                ("deleted", _I),
                ("stale", _I),
                ("rejected", _I),
                ("partitions", _I),
                ("files_written", _I),
                ("bytes_written", _I),
                ("seconds", _F),
            ),
            _history,
        ),
        MetadataKind(
            "snapshots",
            "one row per commit: the files it added and retired, and the files live after it",
            _schema(
                ("commit", _I),
                ("parent_commit", _I),
                ("version", _I),
                ("committed_at", _TS),
                ("operation", _S),
                ("user", _S),
                ("files_added", _I),
                ("files_removed", _I),
                ("live_files", _I),
                ("live_bytes", _I),
            ),
            _snapshots,
        ),
        MetadataKind(
            "partitions",
            "one row per partition of the latest snapshot, with its read amplification",
            _schema(
                ("partition", _S),
                ("values", pa.map_(_S, _S)),
                ("head_version", _I),
                ("versions", _I),
                ("data_files", _I),
                ("files", _I),
                ("bytes", _I),
                ("stored_rows", _I),
                ("entries", _I),
                ("entry_kind", _S),
                ("live_rows_estimate", _I),
                ("read_amplification", _F),
                ("last_compaction", _TS),
                ("compaction_due", _S),
            ),
            _partitions,
        ),
        MetadataKind(
            "files",
            "one row per live file of the latest snapshot",
            _schema(
                ("path", _S),
                ("partition", _S),
                ("kind", _S),
                ("version", _I),
                ("rows", _I),
                ("bytes", _I),
                ("added_commit", _I),
            ),
            _files,
        ),
        MetadataKind(
            "stream_progress",
            "the last micro-batch of every streaming writer",
            _schema(
                ("writer_id", _S),
                ("batch_id", _I),
                ("commit", _I),
                ("version", _I),
                ("recorded_at", _TS),
            ),
            _stream_progress,
        ),
        MetadataKind(
            "dead_letters",
            "every rejected record with its reason and the commit that rejected it",
            _schema(
                ("raw", _S),
                ("reason", _S),
                ("source", _S),
                ("version", _I),
                ("commit", _I),
                ("committed_at", _TS),
                ("file", _S),
            ),
            _dead_letters,
        ),
        MetadataKind(
            "transactions",
            "open transactions that lock the table or hold a write id of it",
            _schema(
                ("txn_id", _I),
                ("state", _S),
                ("user", _S),
                ("started_at", _TS),
                ("last_heartbeat", _TS),
                ("timeout_s", _F),
                ("expires_at", _TS),
                ("expired", pa.bool_()),
                ("locks", _I),
            ),
            _transactions,
        ),
        MetadataKind(
            "locks",
            "locks held or awaited on the table or its partitions",
            _schema(
                ("lock_id", _I),
                ("txn_id", _I),
                ("partition", _S),
                ("mode", _S),
                ("state", _S),
                ("created_at", _TS),
            ),
            _locks,
        ),
    )
}
"""Every metadata kind, by name."""
