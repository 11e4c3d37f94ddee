"""Checking a collection's data files against its metadata, and reading their keys (pyarrow).

Import reads only the footer and the key columns of each file: enough to prove the file is
of the listed format, holds the listed columns and row count, and to build the Bloom filter
that lets later upserts find the imported keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from versioned.collections.errors import CollectionError
from versioned.collections.metadata import CollectionFile
from versioned.keys.encoding import encode_keys
from versioned.schema import Column
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type


def row_count(fileio: FileIO, rel: str, file_format: str) -> int:
    """Rows of a Parquet or ORC file, from its footer."""
    with fileio.open_input(rel) as handle:
        if file_format == "orc":
            return int(paorc.ORCFile(handle).nrows)
        return int(pq.ParquetFile(handle).metadata.num_rows)


def read_key_columns(
    fileio: FileIO,
    f: CollectionFile,
    *,
    file_format: str,
    data_columns: Sequence[Column],
    key_columns: Sequence[str],
) -> pa.Table:
    """The key columns of one data file, after checking the file against the metadata.

    Raises:
        CollectionError: The file is not of ``file_format``, its columns or their types
            differ from ``data_columns``, or its row count from the listed one.
    """
    expected = {c.name: arrow_type(c.type) for c in data_columns}
    with fileio.open_input(f.path) as handle:
        try:
            if file_format == "orc":
                orc = paorc.ORCFile(handle)
                schema, rows = orc.schema, int(orc.nrows)
                keys = orc.read(columns=list(key_columns)) if key_columns else None
            else:
                parquet = pq.ParquetFile(handle)
                schema, rows = parquet.schema_arrow, int(parquet.metadata.num_rows)
                keys = parquet.read(columns=list(key_columns)) if key_columns else None
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise CollectionError(
                f"file {f.path!r} is not a readable {file_format} file: {exc}", path=f.path
            ) from exc
    problems = _schema_problems(schema, expected)
    if problems:
        raise CollectionError(
            f"file {f.path!r} does not hold the collection's columns: {'; '.join(problems)}",
            path=f.path,
        )
    if rows != f.row_count:
        raise CollectionError(
            f"file {f.path!r} holds {rows} rows but the metadata says {f.row_count}",
            path=f.path,
        )
    if keys is None:
        return pa.table({})
    return pa.Table.from_arrays(
        [keys.column(k).cast(expected[k]) for k in key_columns], names=list(key_columns)
    )


def encode_partition_keys(keys: pa.Table, key_columns: Sequence[str], where: str) -> list[bytes]:
    """The encoded keys of one partition, refusing null and duplicate keys.

    Raises:
        CollectionError: A key is null, or two rows share a key.
    """
    for name in key_columns:
        nulls = keys.column(name).null_count
        if nulls:
            raise CollectionError(
                f"{where}: {nulls} row(s) have a null {name}, which is part of the primary key",
                column=name,
            )
    encoded = encode_keys(keys, key_columns)
    seen: set[bytes] = set()
    for key in encoded:
        if key in seen:
            raise CollectionError(
                f"{where}: {len(encoded) - len(set(encoded))} row(s) repeat a primary key "
                f"(e.g. {key.decode(errors='replace')}); deduplicate the data first",
            )
        seen.add(key)
    return encoded


def _schema_problems(schema: pa.Schema, expected: dict[str, pa.DataType]) -> list[str]:
    found = {field.name: field.type for field in schema}
    problems = [f"column {n} is missing" for n in expected if n not in found]
    problems += [f"column {n} is not in the metadata" for n in found if n not in expected]
    for name, want in expected.items():
        have = found.get(name)
        if have is not None and not _fits(have, want):
            problems.append(f"column {name} is {have}, expected {want}")
    return problems


def _fits(have: pa.DataType, want: pa.DataType) -> bool:
    if pa.types.is_dictionary(have):
        return _fits(have.value_type, want)
    if have.equals(want):
        return True
    kinds = (
        (pa.types.is_timestamp, pa.types.is_timestamp),
        (pa.types.is_string, pa.types.is_large_string),
        (pa.types.is_binary, pa.types.is_large_binary),
    )
    for first, second in kinds:
        if (first(have) or second(have)) and (first(want) or second(want)):
            return True
    return False
