"""The metadata file of a data collection, and its validation as untrusted input.

A collection is one folder: data files (Hive-style ``k=v/`` directories when it has partition
columns) and ``_versioned_collection.json``, which Spark and Hadoop jobs skip because its
name starts with ``_``. The file is JSON::

    {
      "format": "versioned-collection",
      "format_version": "1.0",
      "table": "sales.orders",              # full source (or intended) table name, or null
      "schema": [{"name": "id", "type": "BIGINT", "nullable": true}, ...],
      "primary_key": ["id"],
      "partition_by": ["store"],
      "sort_by": [],
      "storage_format": "parquet",
      "layout": "versioned",
      "options": {"op_code_column": null, "ordering_column": null, "bucket_by": [],
                  "buckets": null, "properties": {}},
      "partitions": [{"values": {"store": "a/b"}, "path": "store=a%2Fb", "rows": 2,
                      "files": [{"path": "store=a%2Fb/part-0.parquet", "size_bytes": 812,
                                 "rows": 2}]}],
      "source": {"kind": "export", "version": 42, ...}   # informational only
    }

``schema`` lists every column, partition columns included. The format version is
``MAJOR.MINOR``: a reader refuses a major it does not know and ignores fields a newer minor
added. Everything read here is checked: names, types, that each partition's ``path`` is the
Hive-escaped form of its values, and that every file path is a plain relative path inside
its partition's directory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from versioned.collections.errors import CollectionError, CollectionFormatError
from versioned.collections.layout import check_partitions
from versioned.errors import InputError
from versioned.names import TableName
from versioned.schema import Column, TableSpec

METADATA_FILE = "_versioned_collection.json"
FORMAT_NAME = "versioned-collection"
FORMAT_MAJOR = 1
FORMAT_MINOR = 0
FORMAT_VERSION = f"{FORMAT_MAJOR}.{FORMAT_MINOR}"
MAX_METADATA_BYTES = 64 << 20
_PLACEHOLDER = TableName("default", "unnamed_collection")


@dataclass(frozen=True)
class CollectionFile:
    """One data file of a collection.

    Attributes:
        path: Relative to the collection folder, inside its partition's directory.
        size_bytes: Size of the file; import refuses a file of another size.
        row_count: Rows in the file.
    """

    path: str
    size_bytes: int
    row_count: int


@dataclass(frozen=True)
class CollectionPartition:
    """The data of one partition (or of the whole collection, when it has no partitions).

    Attributes:
        values: Partition values in ``partition_by`` order (``None``: Hive's default
            partition); ``()`` when the collection has no partition columns.
        path: The escaped ``k=v/...`` directory (``""`` when unpartitioned).
        files: Its data files.
    """

    values: tuple[str | None, ...]
    path: str
    files: tuple[CollectionFile, ...]

    @property
    def rows(self) -> int:
        """Rows in the partition."""
        return sum(f.row_count for f in self.files)


@dataclass(frozen=True)
class CollectionMetadata:
    """What a collection holds: the table definition, partitions and files.

    Build one with `from_spec`; read one with `from_json`. Construction validates the
    definition (as `TableSpec` does) and the partitions (see the module docstring).
    """

    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    partition_by: tuple[str, ...] = ()
    sort_by: tuple[str, ...] = ()
    file_format: str = "parquet"
    layout: str = "versioned"
    table: TableName | None = None
    op_code_column: str | None = None
    ordering_column: str | None = None
    bucket_by: tuple[str, ...] = ()
    buckets: int | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    partitions: tuple[CollectionPartition, ...] = ()
    source: Mapping[str, Any] = field(default_factory=dict)
    format_version: str = FORMAT_VERSION

    def __post_init__(self) -> None:
        self.spec_for(self.table or _PLACEHOLDER)  # validates the definition
        check_partitions(self.partition_by, self.partitions)

    # --- conversions ---------------------------------------------------------------------

    @classmethod
    def from_spec(
        cls,
        spec: TableSpec,
        *,
        table: TableName | None,
        partitions: Sequence[CollectionPartition] = (),
        source: Mapping[str, Any] | None = None,
    ) -> CollectionMetadata:
        """The metadata of a collection holding data of a table defined by ``spec``."""
        return cls(
            columns=spec.columns,
            primary_key=spec.primary_key,
            partition_by=spec.partition_by,
            sort_by=spec.sort_by,
            file_format=spec.file_format,
            layout=spec.layout,
            table=table,
            op_code_column=spec.op_code_column,
            ordering_column=spec.ordering_column,
            bucket_by=spec.bucket_by,
            buckets=spec.buckets,
            properties=dict(spec.properties),
            partitions=tuple(partitions),
            source=dict(source or {}),
        )

    def spec_for(self, name: TableName) -> TableSpec:
        """The definition of a table called ``name`` holding this collection's data.

        Raises:
            InputError: The definition is invalid (unknown type, key not a column, ...).
        """
        return TableSpec(
            name=name,
            columns=self.columns,
            primary_key=self.primary_key,
            partition_by=self.partition_by,
            op_code_column=self.op_code_column,
            ordering_column=self.ordering_column,
            layout=self.layout,
            file_format=self.file_format,  # type: ignore[arg-type]
            bucket_by=self.bucket_by,
            buckets=self.buckets,
            sort_by=self.sort_by,
            properties=dict(self.properties),
        )

    @property
    def data_columns(self) -> tuple[Column, ...]:
        """Columns stored inside the data files (partition columns live in the paths)."""
        return tuple(c for c in self.columns if c.name not in self.partition_by)

    @property
    def files(self) -> tuple[CollectionFile, ...]:
        """Every data file, partition by partition."""
        return tuple(f for p in self.partitions for f in p.files)

    @property
    def rows(self) -> int:
        """Rows in the collection."""
        return sum(p.rows for p in self.partitions)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (see the module docstring)."""
        return {
            "format": FORMAT_NAME,
            "format_version": self.format_version,
            "table": None if self.table is None else str(self.table),
            "schema": [c.to_dict() for c in self.columns],
            "primary_key": list(self.primary_key),
            "partition_by": list(self.partition_by),
            "sort_by": list(self.sort_by),
            "storage_format": self.file_format,
            "layout": self.layout,
            "options": {
                "op_code_column": self.op_code_column,
                "ordering_column": self.ordering_column,
                "bucket_by": list(self.bucket_by),
                "buckets": self.buckets,
                "properties": dict(self.properties),
            },
            "partitions": [
                {
                    "values": dict(zip(self.partition_by, p.values, strict=True)),
                    "path": p.path,
                    "rows": p.rows,
                    "files": [
                        {"path": f.path, "size_bytes": f.size_bytes, "rows": f.row_count}
                        for f in p.files
                    ],
                }
                for p in self.partitions
            ],
            "source": dict(self.source),
        }

    def to_json(self) -> bytes:
        """The metadata file's bytes."""
        return (json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes, *, where: str = "collection") -> CollectionMetadata:
        """Parse and validate a metadata file.

        Raises:
            CollectionFormatError: Not a collection metadata file, or an unknown major version.
            CollectionError: The file is malformed (``where`` names it in the message).
        """
        if len(data) > MAX_METADATA_BYTES:
            raise CollectionError(
                f"{where}: metadata file is {len(data)} bytes, more than the "
                f"{MAX_METADATA_BYTES} this release reads",
                path=where,
            )
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise CollectionError(f"{where}: metadata file is not valid JSON: {exc}") from exc
        return cls.from_dict(raw, where=where)

    @classmethod
    def from_dict(cls, raw: Any, *, where: str = "collection") -> CollectionMetadata:
        """Inverse of `to_dict`, validating everything (see `from_json`)."""
        reader = _Fields(raw, where)
        _check_format(reader, where)
        partition_by = tuple(reader.strings("partition_by"))
        options = _Fields(reader.get("options", dict, {}), f"{where}: options")
        try:
            return cls(
                columns=tuple(
                    Column.from_dict(_Fields(c, f"{where}: schema").raw)
                    for c in reader.get("schema", list)
                ),
                primary_key=tuple(reader.strings("primary_key")),
                partition_by=partition_by,
                sort_by=tuple(reader.strings("sort_by", optional=True)),
                file_format=reader.get("storage_format", str),
                layout=reader.get("layout", str, "versioned"),
                table=_table(reader.get("table", str, None)),
                op_code_column=options.get("op_code_column", str, None),
                ordering_column=options.get("ordering_column", str, None),
                bucket_by=tuple(options.strings("bucket_by", optional=True)),
                buckets=options.get("buckets", int, None),
                properties=_properties(options.get("properties", dict, {}), where),
                partitions=tuple(
                    _partition(p, partition_by, where) for p in reader.get("partitions", list)
                ),
                source=reader.get("source", dict, {}),
                format_version=reader.get("format_version", str),
            )
        except CollectionError:
            raise
        except (InputError, KeyError, TypeError, ValueError) as exc:
            raise CollectionError(f"{where}: invalid metadata: {exc}") from exc


class _Fields:
    """Typed access to one JSON object of untrusted metadata."""

    def __init__(self, raw: Any, where: str) -> None:
        if not isinstance(raw, dict):
            raise CollectionError(f"{where}: expected a JSON object, got {type(raw).__name__}")
        self.raw: dict[str, Any] = raw
        self.where = where

    _MISSING: Any = object()

    def get(self, key: str, kind: type, default: Any = _MISSING) -> Any:
        if key not in self.raw or (self.raw[key] is None and default is not _Fields._MISSING):
            if default is _Fields._MISSING:
                raise CollectionError(f"{self.where}: metadata field {key!r} is missing")
            return default
        value = self.raw[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CollectionError(
                f"{self.where}: metadata field {key!r} must be a {kind.__name__}, "
                f"got {type(value).__name__}"
            )
        return value

    def strings(self, key: str, *, optional: bool = False) -> list[str]:
        values = self.get(key, list, [] if optional else _Fields._MISSING)
        if not all(isinstance(v, str) for v in values):
            raise CollectionError(f"{self.where}: metadata field {key!r} must list strings")
        return list(values)


def _check_format(reader: _Fields, where: str) -> None:
    name = reader.raw.get("format")
    if name != FORMAT_NAME:
        raise CollectionFormatError(
            f"{where}: not a versioned collection (format {name!r}, expected {FORMAT_NAME!r})",
            format=name,
        )
    version = reader.get("format_version", str)
    major, dot, minor = version.partition(".")
    if not (major.isdigit() and dot and minor.isdigit()):
        raise CollectionFormatError(
            f"{where}: format version {version!r} is not MAJOR.MINOR", format_version=version
        )
    if int(major) != FORMAT_MAJOR:
        raise CollectionFormatError(
            f"{where}: collection format {version} is not readable by this release, which "
            f"reads format {FORMAT_MAJOR}.x: use a versioned release that writes and reads "
            f"format {major}.x",
            format_version=version,
        )


def _table(text: str | None) -> TableName | None:
    return None if text is None else TableName.parse(text)


def _properties(raw: dict[str, Any], where: str) -> dict[str, str]:
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise CollectionError(f"{where}: table properties must map strings to strings")
    return dict(raw)


def _partition(raw: Any, partition_by: tuple[str, ...], where: str) -> CollectionPartition:
    reader = _Fields(raw, f"{where}: partition")
    values_raw = reader.get("values", dict, {})
    if sorted(values_raw) != sorted(partition_by):
        raise CollectionError(
            f"{where}: a partition has values for ({', '.join(map(str, values_raw))}) but the "
            f"partition columns are ({', '.join(partition_by)})"
        )
    values = tuple(values_raw[k] for k in partition_by)
    files = []
    for item in reader.get("files", list):
        entry = _Fields(item, f"{where}: file")
        files.append(
            CollectionFile(
                entry.get("path", str), entry.get("size_bytes", int), entry.get("rows", int)
            )
        )
    return CollectionPartition(values, reader.get("path", str), tuple(files))
