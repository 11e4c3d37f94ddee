"""A collection's partitions once checked for import, and their keys across partitions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from versioned.collections.errors import CollectionError
from versioned.collections.matching import PlannedPartition, label
from versioned.collections.metadata import CollectionFile
from versioned.keys.columns import index_key_columns, keyed_partition_columns, part_column
from versioned.schema import TableSpec


@dataclass(frozen=True)
class CheckedPartition:
    """One partition of a collection that passed every check: its files and their keys."""

    planned: PlannedPartition
    files: tuple[CollectionFile, ...]
    keys: pa.Table
    encoded: list[bytes]

    @property
    def rows(self) -> int:
        return sum(f.row_count for f in self.files)


def import_keys(
    spec: TableSpec, checked: Sequence[CheckedPartition]
) -> tuple[pa.Table, dict[tuple[str | None, ...], np.ndarray]]:
    """The keys of every imported partition in one table (key columns and partition values
    as strings), with their positions per partition; refuses a key in two partitions."""
    tables, own_rows, start = [], {}, 0
    key_cols = list(index_key_columns(spec))
    keyed = [i for i, _ in keyed_partition_columns(spec)]
    seen: dict[tuple[Any, ...], tuple[str | None, ...]] = {}
    for item in checked:
        values = item.planned.values
        for encoded in item.encoded:
            identity = (*[values[i] for i in keyed], encoded)
            other = seen.setdefault(identity, values)
            if other != values:
                raise CollectionError(
                    f"key {encoded.decode(errors='replace')} is in two partitions of the "
                    f"collection ({label(spec.partition_by, other)} and "
                    f"{label(spec.partition_by, values)}), but {spec.name}'s primary key is "
                    "unique table-wide; keep one row per key",
                )
        table = item.keys.select(key_cols)
        for i in range(len(spec.partition_by)):
            column = pa.array([values[i]] * table.num_rows, pa.string())
            table = table.append_column(part_column(i), column)
        tables.append(table)
        own_rows[values] = np.arange(start, start + table.num_rows)
        start += table.num_rows
    return pa.concat_tables(tables), own_rows
