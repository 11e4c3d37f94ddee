"""Schema evolution rules: which column changes a table accepts without rewriting a file.

Two kinds of change are allowed, both recorded in the catalog only:

* adding nullable columns (rows written before read null);
* widening a column's type so that every stored value reads unchanged under the new type:
  ``TINYINT -> SMALLINT -> INT -> BIGINT``, ``FLOAT -> DOUBLE`` and
  ``DECIMAL(p,s) -> DECIMAL(p',s)`` with ``p' >= p``.

Old files keep their physical types; readers read them under the new type. Dropping and
renaming columns, narrowing, and any other type change are refused: they would change what
stored rows mean. Partition columns cannot be widened (their values name directories and
catalog partitions), nor bucket columns (Hive's bucket hash depends on the type);
primary-key columns can, because the key encoding of Bloom filters
(`versioned.keys.encoding`) does not depend on an integer's or decimal's
width. Added columns never become key or partition columns.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from versioned.errors import SchemaError
from versioned.schema import Column, TableSpec, parse_columns

_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_DECIMAL = re.compile(r"^DECIMAL\((\d+),(\d+)\)$")
ALLOWED_WIDENINGS = (
    "TINYINT/SMALLINT/INT -> any wider integer type, FLOAT -> DOUBLE, "
    "DECIMAL(p,s) -> DECIMAL(p',s) with p' >= p"
)


@dataclass(frozen=True)
class SchemaChange:
    """Columns to add, columns to widen (each with its new type), and table properties.

    Attributes:
        add: New columns, appended after the existing ones in this order.
        widen: Existing columns with their new, wider type.
        properties: Table properties to set (``(name, value)``) or remove (``(name, None)``).
    """

    add: tuple[Column, ...] = ()
    widen: tuple[Column, ...] = ()
    properties: tuple[tuple[str, str | None], ...] = ()

    @classmethod
    def parse(
        cls,
        add: str | Sequence[Column] | None = None,
        widen: str | Sequence[Column] | None = None,
    ) -> SchemaChange:
        """Build a change from column lists (``"c STRING, d INT"`` or `Column` sequences).

        Raises:
            SchemaError: A column definition is malformed, or there is nothing to change.
        """
        change = cls(add=_columns(add), widen=_columns(widen))
        if not change.add and not change.widen:
            raise SchemaError(
                "no schema change given: add columns (--add-columns 'c STRING') or widen "
                "them (--widen 'c BIGINT')"
            )
        return change

    def describe(self) -> dict[str, Any]:
        """Plain-data summary (stored with the ``alter`` commit and printed by the CLI)."""
        described: dict[str, Any] = {
            "added_columns": [f"{c.name} {c.type}" for c in self.add],
            "widened_columns": [f"{c.name} {c.type}" for c in self.widen],
        }
        if self.properties:
            described["set_properties"] = {k: v for k, v in self.properties if v is not None}
            described["unset_properties"] = [k for k, v in self.properties if v is None]
        return described


def _columns(value: str | Sequence[Column] | None) -> tuple[Column, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return parse_columns(value) if value.strip() else ()
    columns = tuple(value)
    for c in columns:
        if not isinstance(c, Column):
            raise SchemaError(f"columns are given as Column objects or text, got {c!r}")
    return columns


def evolve(spec: TableSpec, change: SchemaChange) -> TableSpec:
    """``spec`` with ``change`` applied.

    Raises:
        SchemaError: Any part of the change is not allowed; every problem is listed and
            nothing is applied.
    """
    problems: list[str] = []
    current = {c.name: c for c in spec.columns}
    widened: dict[str, Column] = {}
    for col in change.widen:
        if col.name in widened:
            problems.append(f"{col.name} is widened twice")
            continue
        old = current.get(col.name)
        if old is None:
            problems.append(f"cannot widen {col.name}: no such column (add it instead)")
            continue
        problem = widening_problem(spec, old, col)
        if problem:
            problems.append(problem)
        else:
            widened[col.name] = dataclasses.replace(old, type=col.type)
    added_names: set[str] = set()
    for col in change.add:
        if col.name in current or col.name in added_names:
            problems.append(f"cannot add {col.name}: the table has a column of that name")
        elif not col.nullable:
            problems.append(
                f"cannot add {col.name} as NOT NULL: rows written before have no value for "
                "it; add it nullable"
            )
        added_names.add(col.name)
    if problems:
        raise SchemaError(
            f"cannot change the schema of {spec.name}: {'; '.join(problems)}. Dropping and "
            "renaming columns are not supported",
            table=str(spec.name),
            problems=tuple(problems),
        )
    columns = tuple(widened.get(c.name, c) for c in spec.columns) + change.add
    properties = dict(spec.properties)
    for key, value in change.properties:
        if value is None:
            properties.pop(key, None)
        else:
            properties[key] = value
    return dataclasses.replace(spec, columns=columns, properties=properties)


def widening_problem(spec: TableSpec, old: Column, new: Column) -> str | None:
    """Why ``old`` cannot become ``new`` in ``spec``, or None when it can."""
    if old.name in spec.partition_by:
        return (
            f"cannot change the type of partition column {old.name}: its values name "
            "directories and catalog partitions; create a new table and import the data"
        )
    if old.name in spec.bucket_by:
        return (
            f"cannot change the type of bucket column {old.name}: a row's bucket is Hive's "
            "hash of the value as its type, so a wider type would put stored rows in the "
            "wrong buckets; create a new table and import the data"
        )
    if not new.nullable and old.nullable:
        return f"cannot make {old.name} NOT NULL: only its type can be widened"
    if old.type == new.type:
        return f"{old.name} is {old.type} already"
    if is_widening(old.type, new.type):
        return None
    return (
        f"cannot change {old.name} from {old.type} to {new.type}: only widening that keeps "
        f"every stored value is allowed ({ALLOWED_WIDENINGS})"
    )


def is_widening(old: str, new: str) -> bool:
    """Whether every value of canonical type ``old`` reads unchanged as type ``new``."""
    if old in _INTEGERS and new in _INTEGERS:
        return _INTEGERS.index(new) > _INTEGERS.index(old)
    if (old, new) == ("FLOAT", "DOUBLE"):
        return True
    before, after = _DECIMAL.match(old), _DECIMAL.match(new)
    if before and after:
        return int(after.group(2)) == int(before.group(2)) and int(after.group(1)) > int(
            before.group(1)
        )
    return False
