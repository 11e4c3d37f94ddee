"""The changes a commit names (`PartitionCommit` records), made ready before any guard runs:
checked, their partitions given by values found or created, their partition ids checked
(`versioned.catalog.commits.apply` calls these in its SQL transaction)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import partitions
from versioned.catalog.models import PartitionRow, TableRow
from versioned.catalog.records import PartitionCommit
from versioned.errors import InputError, NoSuchPartitionError, SchemaError


def validate(changes: Sequence[PartitionCommit]) -> None:
    """Check that ``changes`` are `PartitionCommit` records that name each partition and file
    once, and that each file is committed with its own partition.

    Raises:
        InputError: A change is not a `PartitionCommit`, or a file path is not a non-empty string.
        SchemaError: A partition or file appears twice, or a change contradicts itself.
    """
    seen_partitions: set[object] = set()
    seen_paths: set[str] = set()
    for change in changes:
        if not isinstance(change, PartitionCommit):
            raise InputError(f"commit takes PartitionCommit records, got {type(change).__name__}")
        seen = change.partition_id if change.values is None else tuple(change.values)
        if seen in seen_partitions:
            raise SchemaError(
                f"partition {seen} appears twice in one commit: merge its "
                "changes into one PartitionCommit",
                partition_id=change.partition_id,
            )
        seen_partitions.add(seen)
        if change.partition_id is not None and change.values is not None:
            raise SchemaError(
                f"a PartitionCommit of partition {change.partition_id} must not give values: "
                "values are for a partition the commit creates (partition_id None)",
                partition_id=change.partition_id,
            )
        if (
            change.partition_id is None
            and change.values is None
            and (change.check_head or change.new_head is not None)
        ):
            raise SchemaError(
                "a PartitionCommit without a partition id has no head to check or move: "
                "set check_head=False, or add_partition(name, []) for an unpartitioned "
                "table and use its id"
            )
        for add in change.add:
            if add.partition_id != change.partition_id:
                raise SchemaError(
                    f"file {add.path!r} belongs to partition {add.partition_id} but is "
                    f"committed with partition {change.partition_id}",
                    path=add.path,
                )
        paths = [a.path for a in change.add] + list(change.remove) + [g.path for g in change.grow]
        for path in paths:
            if not isinstance(path, str) or not path:
                raise InputError(f"file paths must be non-empty strings, got {path!r}")
            if path in seen_paths:
                raise SchemaError(
                    f"file {path!r} is added or removed twice in one commit", path=path
                )
            seen_paths.add(path)


def create_partitions(
    session: Session, table: TableRow, changes: Sequence[PartitionCommit], now: float
) -> list[PartitionCommit]:
    """Resolve the changes that name a partition by its values: find or create it here, in
    the commit's SQL transaction (a failed commit rolls the new row back with the rest)."""
    resolved: list[PartitionCommit] = []
    for change in changes:
        if change.partition_id is None and change.values is not None:
            values = partitions.normalise(table, change.values)
            info = partitions.insert(session, table, values, now)
            adds = tuple(dataclasses.replace(a, partition_id=info.id) for a in change.add)
            change = dataclasses.replace(change, partition_id=info.id, values=None, add=adds)
        resolved.append(change)
    ids = [c.partition_id for c in resolved if c.partition_id is not None]
    if len(ids) != len(set(ids)):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise SchemaError(
            f"partition(s) {twice} appear twice in one commit (by id and by values, or by "
            "values that are the same partition): merge their changes into one "
            "PartitionCommit",
            partition_id=twice[0],
        )
    return resolved


def check_partitions(session: Session, table: TableRow, changes: Sequence[PartitionCommit]) -> None:
    """Raise `NoSuchPartitionError` unless every partition id in ``changes`` is a partition
    of ``table``."""
    wanted = {c.partition_id for c in changes if c.partition_id is not None}
    if not wanted:
        return
    found = set(
        session.scalars(
            sa.select(PartitionRow.id).where(
                PartitionRow.table_id == table.id, PartitionRow.id.in_(wanted)
            )
        )
    )
    missing = sorted(wanted - found)
    if missing:
        name = f"{table.database.name}.{table.name}"
        raise NoSuchPartitionError(
            f"partition id(s) {missing} are not partitions of {name}: create them with "
            "add_partition() and commit with the ids it returns",
            table=name,
            partition_ids=missing,
        )
