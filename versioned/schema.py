"""Table definitions: columns, types and the keys that make a table upsertable.

Types use Hive/Spark SQL names. This module is plain Python; the engine maps the types to
Spark and Arrow types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from versioned.errors import SchemaError
from versioned.names import RESERVED_COLUMNS, TableName, identifier

FileFormat = Literal["parquet", "orc"]
KeyScope = Literal["partition", "table"]
FILE_FORMATS: tuple[str, ...] = ("parquet", "orc")

_SIMPLE_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "BOOL": "BOOLEAN",
    "TINYINT": "TINYINT",
    "BYTE": "TINYINT",
    "SMALLINT": "SMALLINT",
    "SHORT": "SMALLINT",
    "INT": "INT",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "LONG": "BIGINT",
    "FLOAT": "FLOAT",
    "REAL": "FLOAT",
    "DOUBLE": "DOUBLE",
    "STRING": "STRING",
    "TEXT": "STRING",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "BINARY": "BINARY",
}
_PARAM_TYPE = re.compile(
    r"^(DECIMAL|NUMERIC|VARCHAR|CHAR)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$", re.IGNORECASE
)


def normalise_type(text: str) -> str:
    """Canonical spelling of a column type: ``decimal(10, 2)`` -> ``DECIMAL(10,2)``."""
    raw = " ".join(text.strip().split())
    upper = raw.upper()
    if upper in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[upper]
    if upper in ("DECIMAL", "NUMERIC"):
        return "DECIMAL(10,0)"
    match = _PARAM_TYPE.match(raw)
    if match:
        name, first, second = match.group(1).upper(), int(match.group(2)), match.group(3)
        if name in ("DECIMAL", "NUMERIC"):
            scale = int(second) if second is not None else 0
            if not 1 <= first <= 38 or not 0 <= scale <= first:
                raise SchemaError(f"invalid type {text!r}: DECIMAL(p,s) needs 1<=p<=38, 0<=s<=p")
            return f"DECIMAL({first},{scale})"
        if second is not None or first < 1:
            raise SchemaError(f"invalid type {text!r}: {name}(n) takes one positive length")
        return f"{name}({first})"
    raise SchemaError(
        f"unknown column type {text!r}; use one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, "
        "FLOAT, DOUBLE, DECIMAL(p,s), STRING, VARCHAR(n), CHAR(n), DATE, TIMESTAMP, BINARY",
        type=text,
    )


@dataclass(frozen=True)
class Column:
    """One table column: a validated lower-case name, a canonical type, nullability."""

    name: str
    type: str
    nullable: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", identifier(self.name, "column name"))
        object.__setattr__(self, "type", normalise_type(self.type))

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON and the catalog)."""
        return {"name": self.name, "type": self.type, "nullable": self.nullable}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Column:
        """Inverse of `to_dict`."""
        return cls(str(data["name"]), str(data["type"]), bool(data.get("nullable", True)))


def parse_columns(spec: str) -> tuple[Column, ...]:
    """Parse ``"sell_id BIGINT NOT NULL, total DECIMAL(10,2), ..."`` into columns."""
    columns: list[Column] = []
    for part in _split_top_level(spec):
        words = part.split(None, 1)
        if len(words) != 2:
            raise SchemaError(
                f"column definition {part!r} needs a name and a type, e.g. 'sell_id BIGINT'"
            )
        name, rest = words
        nullable = True
        not_null = re.search(r"\s+NOT\s+NULL\s*$", rest, re.IGNORECASE)
        if not_null:
            nullable = False
            rest = rest[: not_null.start()]
        columns.append(Column(name, rest, nullable))
    if not columns:
        raise SchemaError("no columns given; use e.g. --columns 'id BIGINT, name STRING'")
    return tuple(columns)


def _split_top_level(spec: str) -> list[str]:
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(spec):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(spec[start:i])
            start = i + 1
    parts.append(spec[start:])
    return [p.strip() for p in parts if p.strip()]


def _names(values: Sequence[str] | str | None, kind: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    return tuple(identifier(v, kind) for v in values)


@dataclass(frozen=True)
class TableSpec:
    """Everything that defines a table, independent of where it is stored.

    ``columns`` holds every stored column, partition columns included. The primary key is
    unique in the table (see `key_scope`): when some partition column is not part of it, a
    change may move a key to another partition and its row in the old one disappears.
    """

    name: TableName
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    partition_by: tuple[str, ...] = ()
    op_code_column: str | None = None
    ordering_column: str | None = None
    layout: str = "versioned"
    file_format: FileFormat = "parquet"
    bucket_by: tuple[str, ...] = ()
    buckets: int | None = None
    sort_by: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise SchemaError(f"duplicate column names: {', '.join(dupes)}")
        clash = sorted(set(names) & RESERVED_COLUMNS)
        if clash:
            raise SchemaError(f"column names reserved by versioned: {', '.join(clash)}")
        known = set(names)

        def check(cols: Sequence[str], what: str) -> None:
            missing = [c for c in cols if c not in known]
            if missing:
                raise SchemaError(
                    f"{what} {', '.join(missing)} not among the columns ({', '.join(names)})"
                )

        if not self.primary_key:
            raise SchemaError("a primary key is required: --primary-key col[,col...]")
        check(self.primary_key, "primary key column")
        check(self.partition_by, "partition column")
        check(self.bucket_by, "bucket column")
        check(self.sort_by, "sort column")
        if self.ordering_column is not None:
            check([self.ordering_column], "ordering column")
        if set(self.primary_key) <= set(self.partition_by):
            raise SchemaError(
                "the primary key needs at least one column that is not a partition column"
            )
        if len(set(self.partition_by)) != len(self.partition_by):
            raise SchemaError("a partition column is listed twice")
        if len(self.partition_by) >= len(self.columns):
            raise SchemaError("at least one column must not be a partition column")
        if self.file_format not in FILE_FORMATS:
            raise SchemaError(
                f"unknown format {self.file_format!r}; use one of {', '.join(FILE_FORMATS)}"
            )
        self._check_buckets()

    def _check_buckets(self) -> None:
        if self.buckets is not None and not 1 <= self.buckets <= 4096:
            raise SchemaError(
                f"--buckets {self.buckets}: the number of buckets must be between 1 and 4096 "
                "(Hive's bucket id limit)"
            )
        if self.bucket_by and self.buckets is None:
            raise SchemaError("--bucket-by needs --buckets N")
        if self.buckets is not None and not self.bucket_by:
            raise SchemaError("--buckets needs --bucket-by col[,col...]")
        if len(set(self.bucket_by)) != len(self.bucket_by):
            raise SchemaError("a bucket column is listed twice in --bucket-by")
        if set(self.bucket_by) & set(self.partition_by):
            raise SchemaError("a column cannot be both a partition and a bucket column")

    @property
    def column_names(self) -> tuple[str, ...]:
        """All stored column names in order."""
        return tuple(c.name for c in self.columns)

    @property
    def data_columns(self) -> tuple[Column, ...]:
        """Columns stored inside data files (partition columns live in the path)."""
        return tuple(c for c in self.columns if c.name not in self.partition_by)

    @property
    def key_scope(self) -> KeyScope:
        """Where the primary key is unique: ``partition`` or ``table``.

        ``partition`` when every partition column is part of the primary key (a key cannot
        change partition, so a write looks only at its rows' partitions); ``table`` when some
        partition column is not (a change may move a key to another partition, and a write
        retires the key's row in whichever partition holds it).
        """
        if self.partition_by and set(self.partition_by) <= set(self.primary_key):
            return "partition"
        return "table"

    @property
    def keys_move(self) -> bool:
        """Whether a change can move a key from one partition to another."""
        return self.key_scope == "table" and bool(self.partition_by)

    @property
    def key_scope_reason(self) -> str:
        """Why `key_scope` is what it is, in one sentence."""
        if not self.partition_by:
            return "the table is not partitioned"
        outside = [p for p in self.partition_by if p not in self.primary_key]
        if not outside:
            return "every partition column is part of the primary key"
        return (
            f"partition column{'s' if len(outside) > 1 else ''} {', '.join(outside)} "
            f"{'are' if len(outside) > 1 else 'is'} not part of the primary key, so a change "
            "may move a key to another partition"
        )

    @property
    def record_key(self) -> tuple[str, ...]:
        """The columns that identify one record of the table.

        The primary key for a table-wide key; the partition columns and the primary key when
        the key is unique per partition.
        """
        if self.key_scope == "table":
            return self.primary_key
        return tuple(dict.fromkeys([*self.partition_by, *self.primary_key]))

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        for col in self.columns:
            if col.name == name:
                return col
        raise SchemaError(f"no column {name!r} in {self.name}")

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON output, export metadata and the catalog)."""
        return {
            "name": str(self.name),
            "columns": [c.to_dict() for c in self.columns],
            "primary_key": list(self.primary_key),
            "partition_by": list(self.partition_by),
            "op_code_column": self.op_code_column,
            "ordering_column": self.ordering_column,
            "layout": self.layout,
            "file_format": self.file_format,
            "bucket_by": list(self.bucket_by),
            "buckets": self.buckets,
            "sort_by": list(self.sort_by),
            "properties": dict(self.properties),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableSpec:
        """Inverse of `to_dict`."""
        return cls(
            name=TableName.parse(str(data["name"])),
            columns=tuple(Column.from_dict(c) for c in data["columns"]),
            primary_key=tuple(data["primary_key"]),
            partition_by=tuple(data.get("partition_by") or ()),
            op_code_column=data.get("op_code_column"),
            ordering_column=data.get("ordering_column"),
            layout=data.get("layout", "versioned"),
            file_format=data.get("file_format", "parquet"),
            bucket_by=tuple(data.get("bucket_by") or ()),
            buckets=data.get("buckets"),
            sort_by=tuple(data.get("sort_by") or ()),
            properties=dict(data.get("properties") or {}),
        )

    @classmethod
    def build(
        cls,
        name: str | TableName,
        *,
        columns: str | Sequence[Column],
        primary_key: Sequence[str] | str,
        partition_by: Sequence[str] | str | None = None,
        op_code_column: str | None = None,
        ordering_column: str | None = None,
        layout: str = "versioned",
        file_format: str | None = None,
        bucket_by: Sequence[str] | str | None = None,
        buckets: int | None = None,
        sort_by: Sequence[str] | str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> TableSpec:
        """Build a spec from user-facing arguments (strings or sequences), validating all."""
        table_name = name if isinstance(name, TableName) else TableName.parse(name)
        cols = parse_columns(columns) if isinstance(columns, str) else tuple(columns)
        fmt = file_format or "parquet"  # the API passes the layout's default
        return cls(
            name=table_name,
            columns=cols,
            primary_key=_names(primary_key, "primary key column"),
            partition_by=_names(partition_by, "partition column"),
            op_code_column=identifier(op_code_column, "op code column") if op_code_column else None,
            ordering_column=(
                identifier(ordering_column, "ordering column") if ordering_column else None
            ),
            layout=layout,
            file_format=fmt,  # type: ignore[arg-type]
            bucket_by=_names(bucket_by, "bucket column"),
            buckets=buckets,
            sort_by=_names(sort_by, "sort column"),
            properties=dict(properties or {}),
        )


def check_partition_types(spec: TableSpec) -> None:
    """Refuse a TIMESTAMP partition column (new tables).

    A partition value lives in a path as text. Spark writes a TIMESTAMP there as wall-clock
    time in the writing session's time zone and reads it back in the reading session's, so
    one instant would get a different partition (and a table-wide key a second live row) in
    each time zone; Hive's readers take the text as zone-less. A DATE or a STRING column
    derived from the time (``2024-05-01``, ``2024-05-01T12`` in UTC) partitions the same way
    for everybody.

    Raises:
        SchemaError: A partition column is a TIMESTAMP.
    """
    for name in spec.partition_by:
        if spec.column(name).type.upper() == "TIMESTAMP":
            raise SchemaError(
                f"partition column {name} is a TIMESTAMP: its value would be written as "
                "wall-clock time in each writer's session time zone, so one instant would "
                "land in different partitions; partition by a DATE or STRING column derived "
                f"from {name} in UTC (e.g. its day or hour) instead",
                column=name,
            )
