"""Deciding what an import does: the target table, its definition, and which collection
partition becomes which table partition; or refusing, naming every mismatch.

Plain Python, no catalog access: the caller passes the existing table's definition (or
``None``) and the partitions that hold data.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from versioned.collections.errors import (
    CollectionError,
    ImportMismatchError,
    PartitionExistsError,
    mismatch,
)
from versioned.collections.metadata import CollectionMetadata, CollectionPartition
from versioned.errors import InputError, SchemaError
from versioned.names import TableName, identifier
from versioned.schema import Column, TableSpec
from versioned.storage.partition_spec import LIST_SPEC
from versioned.storage.partition_spec import parse_partition_spec as parse_partitions

if TYPE_CHECKING:
    from versioned.layouts.layout import StorageLayout

PartitionSpec = Mapping[str, str | None]
_INT_RANGES = {
    "TINYINT": 1 << 7,
    "SMALLINT": 1 << 15,
    "INT": 1 << 31,
    "BIGINT": 1 << 63,
}


@dataclass(frozen=True)
class PlannedPartition:
    """A collection partition and the table partition it becomes."""

    values: tuple[str | None, ...]
    source: CollectionPartition


@dataclass(frozen=True)
class ImportPlan:
    """What an import will do once every check passed.

    Attributes:
        spec: The target table's definition (the existing one, or the one to create).
        create: Whether the table must be created.
        partitions: The partitions to add, in collection order.
    """

    spec: TableSpec
    create: bool
    partitions: tuple[PlannedPartition, ...]

    @property
    def name(self) -> TableName:
        """The target table."""
        return self.spec.name


def parse_partition_spec(text: str) -> dict[str, str | None]:
    """Parse ``k1=v1,k2=v2`` as typed on a command line.

    Values are written as in partition directory names: ``%XX`` escapes are decoded (``%2C``
    is a comma, ``%25`` a percent sign) and ``__HIVE_DEFAULT_PARTITION__`` is null.

    Raises:
        InputError: An item is not ``key=value``, a key is not a name, or repeats.
    """
    spec: dict[str, str | None] = {}
    for key, value in parse_partitions(text, LIST_SPEC):
        name = identifier(key.strip(), "partition key")
        if name in spec:
            raise InputError(f"partition key {name} is given twice in {text!r}", value=text)
        spec[name] = value
    if not spec:
        raise InputError("an empty partition spec: give key=value[,key=value...]", value=text)
    return spec


def label(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """``store='a/b', day=null``: a partition as messages show it."""
    return ", ".join(
        f"{k}={'null' if v is None else repr(v)}" for k, v in zip(keys, values, strict=True)
    )


def target_name(metadata: CollectionMetadata, table: str | TableName | None) -> TableName:
    """The table to import into: ``table`` if given, else the one the collection names.

    Raises:
        ImportMismatchError: Neither names a table.
    """
    if table is not None:
        return table if isinstance(table, TableName) else TableName.parse(table)
    if metadata.table is None:
        raise ImportMismatchError(
            "the collection names no table and none was given: name the table to import "
            "into with --table DB.TABLE (table= in the API); nothing was imported",
            differences=("no table name",),
        )
    return metadata.table


def plan_import(
    metadata: CollectionMetadata,
    name: TableName,
    existing: TableSpec | None,
    partition: PartitionSpec | None = None,
    *,
    layouts: Mapping[str, StorageLayout],
) -> ImportPlan:
    """Check the collection against the target and decide which partitions it adds.

    Args:
        metadata: The collection.
        name: The target table.
        existing: The target's definition, or ``None`` when it does not exist (it will be
            created from the metadata).
        partition: Partition values the user gave: the values of a collection without
            partition columns (which then holds one partition), or a filter selecting some
            partitions of a partitioned collection.
        layouts: The registered layouts by name (`versioned.layouts.base`): whether the
            target's can import, and whether it copies files (then formats must match).

    Raises:
        NotSupportedError: The target's layout cannot import collections.
        ImportMismatchError: The collection does not fit; ``differences`` lists why.
        CollectionError: ``partition`` selects no partition of the collection.
    """
    spec = existing or _new_spec(metadata, name, partition)
    layout = layouts.get(spec.layout)
    if layout is None:
        raise SchemaError(
            f"unknown layout {spec.layout!r}; use one of {', '.join(sorted(layouts))}",
            table=str(name),
        )
    layout.require("import", name)
    if partition is not None and not metadata.partition_by:
        planned, differences = _assign_values(metadata, spec, dict(partition))
    else:
        planned, differences = _select(metadata, spec, partition)
    effective = metadata.columns
    if not metadata.partition_by:  # its partition values come from the user
        effective = _with_partition_columns(metadata.columns, spec)
    if existing is not None:
        differences += _definition_differences(metadata, effective, existing, layout)
    for p in planned:
        differences += _value_problems(spec, p.values)
    if differences:
        raise mismatch(str(name), differences)
    planned = [PlannedPartition(_canonical(spec, p.values), p.source) for p in planned]
    return ImportPlan(spec, existing is None, tuple(planned))


def refuse_existing_partitions(
    plan: ImportPlan, with_data: Mapping[tuple[str | None, ...], int | None]
) -> None:
    """Refuse when a partition to add already holds data in the target table.

    Args:
        with_data: Values of the table's partitions that hold data, with their head version.

    Raises:
        PartitionExistsError: Naming every partition that exists.
    """
    clashes = [p.values for p in plan.partitions if p.values in with_data]
    if not clashes:
        return
    keys = plan.spec.partition_by
    listed = "; ".join(
        f"({label(keys, v)})" if keys else "(the table's only partition)" for v in clashes
    )
    raise PartitionExistsError(
        f"{plan.name} already has data in partition(s) {listed}: import never adds to or "
        "replaces an existing partition, nothing was imported. Import into another table, "
        "or choose other partitions with --partition",
        table=str(plan.name),
        partitions=[list(v) for v in clashes],
    )


def _new_spec(
    metadata: CollectionMetadata, name: TableName, partition: PartitionSpec | None
) -> TableSpec:
    if partition is not None and not metadata.partition_by:
        raise mismatch(
            str(name),
            [
                f"{name} does not exist and the collection has no partition columns, so the "
                "types of the partition columns given with --partition are unknown: create "
                "the table first (versioned create-table), or import without --partition"
            ],
        )
    return metadata.spec_for(name)


def _assign_values(
    metadata: CollectionMetadata, spec: TableSpec, given: dict[str, str | None]
) -> tuple[list[PlannedPartition], list[str]]:
    """A collection without partition columns imported as one partition of ``spec``."""
    if not spec.partition_by:
        keys = ", ".join(given)
        return [], [f"{spec.name} is not partitioned, but partition values ({keys}) were given"]
    differences = _key_differences(list(given), spec.partition_by, "the given partition")
    if differences:
        return [], differences
    values = tuple(given[k] for k in spec.partition_by)
    return [PlannedPartition(values, p) for p in metadata.partitions], []


def _select(
    metadata: CollectionMetadata, spec: TableSpec, partition: PartitionSpec | None
) -> tuple[list[PlannedPartition], list[str]]:
    """The collection's own partitions, all or those ``partition`` selects."""
    if not metadata.partition_by and spec.partition_by:
        keys = ",".join(f"{k}=..." for k in spec.partition_by)
        return [], [
            f"{spec.name} is partitioned by ({', '.join(spec.partition_by)}) and the collection "
            f"has no partition values: give them with --partition {keys} (partition= in the "
            "API); such a collection is imported as exactly one partition"
        ]
    differences = _key_differences(metadata.partition_by, spec.partition_by, "the collection")
    if differences:
        return [], differences
    parts = list(metadata.partitions)
    if partition is not None:
        unknown = [k for k in partition if k not in metadata.partition_by]
        if unknown:
            return [], [
                f"--partition names {', '.join(unknown)}, which are not partition columns of "
                f"the collection ({', '.join(metadata.partition_by)})"
            ]
        wanted = {k: (None if v == "" else v) for k, v in partition.items()}
        index = {k: i for i, k in enumerate(metadata.partition_by)}
        parts = [p for p in parts if all(p.values[index[k]] == v for k, v in wanted.items())]
        if not parts:
            held = "; ".join(
                f"({label(metadata.partition_by, p.values)})" for p in metadata.partitions
            )
            asked = label(list(wanted), list(wanted.values()))
            raise CollectionError(
                f"the collection holds no partition with {asked}; it holds "
                f"{held or 'no partitions'}; nothing was imported",
            )
    return [PlannedPartition(tuple(None if v == "" else v for v in p.values), p) for p in parts], []


def _key_differences(have: Sequence[str], want: Sequence[str], who: str) -> list[str]:
    missing = [k for k in want if k not in have]
    extra = [k for k in have if k not in want]
    out: list[str] = []
    if missing:
        out.append(f"partition key(s) {', '.join(missing)} missing from {who}")
    if extra:
        out.append(
            f"partition key(s) {', '.join(extra)} of {who} are not partition keys of the table"
        )
    if not out and list(have) != list(want):
        out.append(
            f"partition keys are in another order: ({', '.join(have)}) in {who}, "
            f"({', '.join(want)}) in the table"
        )
    if out:
        out[-1] += f" (the table is partitioned by ({', '.join(want) or 'nothing'}))"
    return out


def _with_partition_columns(columns: tuple[Column, ...], spec: TableSpec) -> tuple[Column, ...]:
    have = {c.name for c in columns}
    return columns + tuple(spec.column(p) for p in spec.partition_by if p not in have)


def _definition_differences(
    metadata: CollectionMetadata,
    columns: tuple[Column, ...],
    table: TableSpec,
    layout: StorageLayout,
) -> list[str]:
    out = _schema_differences(columns, table)
    parts = set(table.partition_by)
    own_key = tuple(k for k in metadata.primary_key if k not in parts)
    table_key = tuple(k for k in table.primary_key if k not in parts)
    if own_key != table_key:
        out.append(
            f"primary key differs: ({', '.join(own_key)}) in the collection, "
            f"({', '.join(table_key)}) in the table"
        )
    # Sorting by a partition column means nothing inside one partition.
    own_sort = tuple(c for c in metadata.sort_by if c not in parts)
    table_sort = tuple(c for c in table.sort_by if c not in parts)
    if own_sort != table_sort:
        out.append(
            f"sort order differs: {_sorted_by(own_sort)} in the collection, "
            f"{_sorted_by(table_sort)} in the table"
        )
    # A layout that writes the rows through its engine reads any format; a copy does not.
    copies = layout.copies_imported_files
    if copies and metadata.file_format != table.file_format:
        out.append(
            f"storage format differs: {metadata.file_format} in the collection, "
            f"{table.file_format} in the table (import does not convert formats)"
        )
    return out


def _sorted_by(columns: tuple[str, ...]) -> str:
    return f"sorted by ({', '.join(columns)})" if columns else "unsorted"


def _schema_differences(columns: tuple[Column, ...], table: TableSpec) -> list[str]:
    mine = {c.name: c for c in columns}
    theirs = {c.name: c for c in table.columns}
    out: list[str] = []
    for col in table.columns:
        other = mine.get(col.name)
        if other is None:
            out.append(
                f"column {col.name} ({col.type}) of the table is missing from the collection"
            )
        elif other.type != col.type:
            out.append(
                f"column {col.name} is {other.type} in the collection but {col.type} in the table"
            )
        elif other.nullable and not col.nullable:
            out.append(
                f"column {col.name} may be null in the collection but is NOT NULL in the table"
            )
    for col in columns:
        if col.name not in theirs:
            out.append(f"column {col.name} ({col.type}) of the collection is not in the table")
    if not out:
        parts = set(table.partition_by)
        own = [c.name for c in columns if c.name not in parts]
        want = [c.name for c in table.columns if c.name not in parts]
        if own != want:
            out.append(
                f"columns are in another order: ({', '.join(own)}) in the collection, "
                f"({', '.join(want)}) in the table"
            )
    if out:
        out[0] = "schema differs: " + out[0]
    return out


def _value_problems(spec: TableSpec, values: tuple[str | None, ...]) -> list[str]:
    out = []
    for key, value in zip(spec.partition_by, values, strict=True):
        if value is not None and _parse(spec.column(key).type, value) is None:
            out.append(f"partition value {value!r} of {key} is not a valid {spec.column(key).type}")
    return out


def _canonical(spec: TableSpec, values: tuple[str | None, ...]) -> tuple[str | None, ...]:
    """Values spelled as Spark casts them to strings, so upserts find the same partition."""
    out: list[str | None] = []
    for key, value in zip(spec.partition_by, values, strict=True):
        parsed = None if value is None else _parse(spec.column(key).type, value)
        out.append(value if parsed is None else parsed)
    return tuple(out)


def _parse(kind: str, value: str) -> str | None:
    """``value`` as the canonical string of a ``kind`` value, or None if it is not one."""
    text = value.strip()
    if kind in _INT_RANGES:
        if not re.fullmatch(r"[+-]?\d{1,20}", text):
            return None
        number = int(text)
        limit = _INT_RANGES[kind]
        return str(number) if -limit <= number < limit else None
    if kind == "BOOLEAN":
        return text.lower() if text.lower() in ("true", "false") else None
    if kind == "DATE":
        try:
            return dt.date.fromisoformat(text).isoformat()
        except ValueError:
            return None
    if kind in ("FLOAT", "DOUBLE") or kind.startswith("DECIMAL"):
        try:
            float(text)
        except ValueError:
            return None
        return value
    return value
