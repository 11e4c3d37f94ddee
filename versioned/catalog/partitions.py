"""Partitions of a table: values, escaped paths, creation and lookup.

Partition values are strings or None. ``""`` is the same partition as None (Hive's default
partition); the literal ``__HIVE_DEFAULT_PARTITION__`` is refused (its directory is the null
partition's, and Hive reads it back as null); every other value is stored and returned
exactly. A partition is created by `insert` (``MetaStore.add_partition``) or, for a write,
inside the commit that first writes into it (`versioned.catalog.commits`). The row's ``path`` is the
escaped ``k1=v1/k2=v2`` from `versioned.storage.partition_paths`, unique per table: escaping
is reversible, so distinct values always give distinct paths.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog.models import PartitionRow, TableRow
from versioned.catalog.records import PartitionInfo
from versioned.errors import InputError, NoSuchPartitionError, SchemaError
from versioned.storage.partition_paths import (
    DEFAULT_PARTITION_NAME,
    MAX_SEGMENT_BYTES,
    partition_path,
)


def partition_by(table: TableRow) -> tuple[str, ...]:
    """The table's partition columns."""
    return tuple(table.spec.get("partition_by") or ())


def normalise(table: TableRow, values: Sequence[str | None]) -> tuple[str | None, ...]:
    """Validate ``values`` against the table's partition columns; ``""`` becomes None."""
    keys = partition_by(table)
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InputError(
            f"partition values must be a list of strings, got {type(values).__name__}",
            values=repr(values),
        )
    if len(values) != len(keys):
        raise SchemaError(
            f"{table.database.name}.{table.name} is partitioned by ({', '.join(keys)}): "
            f"give {len(keys)} partition value(s), not {len(values)}",
            values=repr(tuple(values)),
        )
    out: list[str | None] = []
    for key, value in zip(keys, values, strict=True):
        if value is not None and not isinstance(value, str):
            raise InputError(
                f"partition value of {key} must be a string or None, got "
                f"{type(value).__name__}: convert it with str() first",
                values=repr(tuple(values)),
            )
        if value == DEFAULT_PARTITION_NAME:
            raise InputError(
                f"partition value {value!r} of {key} is Hive's name of the null partition "
                "(it reads back as null): pass None for the default partition",
                values=repr(tuple(values)),
            )
        out.append(None if value == "" else value)
    return tuple(out)


def path_of(table: TableRow, values: tuple[str | None, ...]) -> str:
    """Escaped directory of the partition, relative to the table location."""
    path = partition_path(partition_by(table), values)
    for segment in path.split("/") if path else ():
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise InputError(
                f"partition directory {segment[:40]!r}... would be longer than "
                f"{MAX_SEGMENT_BYTES} bytes, which file systems reject: use shorter values",
                values=repr(values),
            )
    return path


def find(session: Session, table: TableRow, path: str) -> PartitionRow | None:
    """The partition of ``table`` at ``path``, or None."""
    return session.scalars(
        sa.select(PartitionRow).where(PartitionRow.table_id == table.id, PartitionRow.path == path)
    ).one_or_none()


def get(session: Session, table: TableRow, values: tuple[str | None, ...]) -> PartitionRow:
    """The partition with these (normalised) values; raises `NoSuchPartitionError`."""
    row = find(session, table, path_of(table, values))
    if row is None:
        name = f"{table.database.name}.{table.name}"
        raise NoSuchPartitionError(
            f"{name} has no partition {list(values)!r}: `versioned partitions {name}` lists them",
            table=name,
            values=repr(values),
        )
    return row


def insert(
    session: Session, table: TableRow, values: tuple[str | None, ...], now: float
) -> PartitionInfo:
    """Return the partition, inserting it when missing.

    A racing insert in another process makes this raise `sqlalchemy.exc.IntegrityError`
    (unique table_id, path); the caller then reads the winner's row.
    """
    path = path_of(table, values)
    row = find(session, table, path)
    if row is None:
        row = PartitionRow(
            table_id=table.id, values=list(values), path=path, head_version=None, created_at=now
        )
        session.add(row)
        session.flush()
    return row.info()


def list_for(session: Session, table_id: int) -> list[PartitionInfo]:
    """Every partition of a table, ordered by path."""
    rows = session.scalars(
        sa.select(PartitionRow).where(PartitionRow.table_id == table_id).order_by(PartitionRow.path)
    )
    return [r.info() for r in rows]
