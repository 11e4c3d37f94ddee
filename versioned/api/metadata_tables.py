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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from versioned.api import metadata_rows as rows
from versioned.errors import InvalidNameError
from versioned.names import TableName
from versioned.storage.partition_paths import DEFAULT_PARTITION_NAME

if TYPE_CHECKING:
    from versioned.api.table import Table

SEPARATOR = "__"
"""Between a table's name and the kind of one of its metadata tables."""
METADATA_FOLDER = "_versioned_metadata"
"""The warehouse folder where metadata views keep their rows when Spark is not local."""
NULL_PARTITION_NAME = DEFAULT_PARTITION_NAME
"""How a null partition value is named: Hive's name, as in the ``partition`` column of
``__partitions`` and the ``path`` of ``versioned partitions`` (the ``values`` map holds
null)."""

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
    return pa.Table.from_pylist(found.rows(table), schema=found.schema)


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
            rows.history_rows,
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
            rows.snapshots_rows,
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
            rows.partitions_rows,
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
            rows.files_rows,
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
            rows.stream_progress_rows,
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
            rows.dead_letters_rows,
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
            rows.transactions_rows,
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
            rows.locks_rows,
        ),
    )
}
"""Every metadata kind, by name."""
