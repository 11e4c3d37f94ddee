"""Which columns make a key's identity in files, Bloom filters and batches."""

from __future__ import annotations

from versioned.schema import TableSpec


def index_key_columns(spec: TableSpec) -> tuple[str, ...]:
    """Key columns stored in index files and Bloom filters: the primary key less partition
    columns (those come from the file's path, like a data row's)."""
    return tuple(c for c in spec.primary_key if c not in spec.partition_by)


PartitionValues = tuple[str | None, ...]
PART = "__p"
"""Prefix of a batch's partition-value columns (strings): ``__p0``, ``__p1``, ..."""


def part_column(i: int) -> str:
    """The batch column holding the value of partition column ``i`` as a string."""
    return f"{PART}{i}"


def keyed_partition_columns(spec: TableSpec) -> list[tuple[int, str]]:
    """``(i, batch column)`` of the partition columns that are part of the primary key."""
    return [(i, part_column(i)) for i, p in enumerate(spec.partition_by) if p in spec.primary_key]
