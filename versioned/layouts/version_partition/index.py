"""The version index: which keys a version supersedes or deletes.

An index file is Parquet with the key columns (their Arrow types), ``_version`` (int64: the
version that wrote the entry), ``_op`` (``U``: the version's row supersedes older rows of the
key; ``D``: the key is deleted as of the version; ``M``: the key moved to another partition)
and, when the table has one, the ordering column (the entry's ordering value, so a delete's
tombstone keeps it). A reader keeps a data row of version v only when no entry of a higher
version exists for its key.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from versioned.errors import SchemaError, StorageError
from versioned.keys.columns import index_key_columns
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type

VERSION_COLUMN = "_version"
OP_COLUMN = "_op"
UPSERT = "U"
DELETE = "D"
MOVED = "M"
"""The key's row moved to another partition as of the entry's version (table-wide keys):
it supersedes the key's older rows here like ``U``, but is no delete (no tombstone)."""
OPS = (UPSERT, DELETE, MOVED)


def index_schema(spec: TableSpec) -> pa.Schema:
    """Arrow schema of a table's index files: keys, ``_version``, ``_op``[, ordering]."""
    fields = [
        pa.field(name, arrow_type(spec.column(name).type), nullable=False)
        for name in index_key_columns(spec)
    ]
    fields.append(pa.field(VERSION_COLUMN, pa.int64(), nullable=False))
    fields.append(pa.field(OP_COLUMN, pa.string(), nullable=False))
    ordering = spec.ordering_column
    if ordering is not None and ordering not in (*spec.primary_key, *spec.partition_by):
        fields.append(pa.field(ordering, arrow_type(spec.column(ordering).type)))
    return pa.schema(fields)


def build_index(
    spec: TableSpec, rows: pa.Table, *, version: int, ops: str | Sequence[str] | pa.Array
) -> pa.Table:
    """Index entries for ``rows`` (key columns and, if the table has one, the ordering column).

    Args:
        spec: The table.
        rows: One row per key that needs an entry; other columns are ignored.
        version: The version writing the entries.
        ops: ``"U"``, ``"D"`` or ``"M"`` for every row, or one op per row.

    Raises:
        SchemaError: A column is missing or cannot be cast, or an op is not ``U``/``D``.
    """
    schema = index_schema(spec)
    n = rows.num_rows
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise SchemaError(f"version must be a non-negative int, got {version!r}")
    if isinstance(ops, str):
        op_array = pa.repeat(pa.scalar(ops, pa.string()), n)
    else:
        op_array = pa.array(ops, pa.string())
    if len(op_array) != n:
        raise SchemaError(f"{len(op_array)} ops for {n} index rows")
    columns: list[pa.Array | pa.ChunkedArray] = []
    for field in schema:
        if field.name == VERSION_COLUMN:
            columns.append(pa.repeat(pa.scalar(version, pa.int64()), n))
        elif field.name == OP_COLUMN:
            columns.append(op_array)
        elif field.name in rows.column_names:
            columns.append(rows.column(field.name))
        else:
            raise SchemaError(f"index rows lack column {field.name!r}")
    try:
        table = pa.Table.from_arrays(columns, names=schema.names).cast(schema)
    except (ValueError, TypeError) as exc:  # Arrow cast errors, nulls in key columns
        raise SchemaError(
            f"index rows do not fit the index schema (key types, no nulls): {exc}"
        ) from exc
    validate_index(table)
    return table


def validate_index(table: pa.Table) -> None:
    """Check the columns every index needs and that every op is ``U`` or ``D``.

    Raises:
        SchemaError: The table is not a valid version index.
    """
    names = table.column_names
    if VERSION_COLUMN not in names or OP_COLUMN not in names:
        raise SchemaError(f"a version index needs {VERSION_COLUMN} and {OP_COLUMN} columns")
    if not pa.types.is_int64(table.schema.field(VERSION_COLUMN).type):
        raise SchemaError(f"{VERSION_COLUMN} must be int64")
    ops = table.column(OP_COLUMN)
    if not pc.all(pc.is_in(ops, value_set=pa.array(OPS)), min_count=0).as_py():
        raise SchemaError(f"{OP_COLUMN} values must be one of {', '.join(OPS)}")
    if table.column(VERSION_COLUMN).null_count:
        raise SchemaError(f"{VERSION_COLUMN} must not be null")


def write_index(fileio: FileIO, rel: str, table: pa.Table) -> int:
    """Write index entries atomically as Parquet at ``rel``; returns the bytes written.

    Raises:
        SchemaError: ``table`` is not a valid version index (see `validate_index`).
    """
    validate_index(table)
    with fileio.open_output_atomic(rel) as out:
        pq.write_table(table, out)
        written = out.tell()
    return int(written)


def read_index(fileio: FileIO, rel: str) -> pa.Table:
    """Read an index file written by `write_index`.

    Raises:
        StorageError: The file is missing, not Parquet, or not a version index.
    """
    with fileio.open_input(rel) as handle:
        try:
            table = pq.ParquetFile(handle).read()
        except (pa.ArrowInvalid, OSError) as exc:
            raise StorageError(f"cannot read index file {rel!r}: {exc}", path=rel) from exc
    try:
        validate_index(table)
    except SchemaError as exc:
        raise StorageError(f"index file {rel!r} is invalid: {exc}", path=rel) from exc
    return table
