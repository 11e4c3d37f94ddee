"""The bucket of a record, attached to records to insert (Hive's ``BucketIdResolver``).

A record to insert has no ROW__ID yet; it gets ``RecordIdentifier(-1, property, -1)`` whose
bucket property (BucketCodec V1) names the bucket the table's layout puts its bucket
columns in (the acid layout: Hive's bucket hash; `MutationFormat.row_buckets`), so the
caller can group and sort inserts with the other mutations, and spread them over workers.
Only that bucket is used by the coordinator: the write id and row id are assigned when the
row is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from versioned.errors import SchemaError
from versioned.mutation.formats import format_for
from versioned.mutation.records import ROW_ID, as_mapping
from versioned.record_ids import RecordIdentifier, encode_bucket_property
from versioned.schema import TableSpec
from versioned.values.arrow_types import arrow_type


def table_spec(table: Any) -> TableSpec:
    """The `TableSpec` of a table given as a spec, or anything with a ``spec``
    (``versioned.Table``, a catalog ``TableInfo``)."""
    spec = table if isinstance(table, TableSpec) else getattr(table, "spec", None)
    if not isinstance(spec, TableSpec):
        raise SchemaError(f"{table!r} is not a table (no TableSpec)")
    return spec


class BucketIdResolver:
    """Computes the bucket of records of one table (its bucket columns, in CLUSTERED BY
    order, as its layout buckets them: for acid tables Hive's hash with the table's bucket
    count and bucketing version). Unbucketed tables put every row in bucket 0, as the acid
    layout's writers do. Picklable."""

    def __init__(self, table: Any) -> None:
        """A resolver for ``table`` (a ``versioned.Table``, ``TableInfo`` or ``TableSpec``).

        Raises:
            NotSupportedError: The table's layout does not store the mutation API's
                mutations.
            SchemaError: The table's bucketing settings are invalid.
        """
        spec = table_spec(table)
        self.table = str(spec.name)
        self.columns = tuple(spec.bucket_by)
        self._arrow = [arrow_type(spec.column(c).type) for c in self.columns]
        self.num_buckets = spec.buckets or 1
        self._buckets = format_for(spec).row_buckets(spec)

    def __repr__(self) -> str:
        return f"BucketIdResolver({self.table}, {list(self.columns)}, {self.num_buckets})"

    def bucket_of(self, record: Any) -> int:
        """The bucket number of a record (a mapping holding at least the bucket columns).

        Raises:
            SchemaError: A bucket column is missing.
            InputError: A value does not fit its column's type.
        """
        if not self.columns:
            return 0
        fields = as_mapping(record)
        missing = [c for c in self.columns if c not in fields]
        if missing:
            raise SchemaError(
                f"the record lacks bucket column(s) {', '.join(missing)} of {self.table}",
                columns=missing,
            )
        row = pa.table(
            {c: pa.array([fields[c]], t) for c, t in zip(self.columns, self._arrow, strict=True)}
        )
        return int(self._buckets(row)[0])

    def attach_bucket_id(self, record: Any) -> dict[str, Any]:
        """A copy of ``record`` with ``ROW__ID = RecordIdentifier(-1, property, -1)``, the
        property naming `bucket_of` the record; the other fields are untouched."""
        fields: Mapping[str, Any] = as_mapping(record)
        prop = encode_bucket_property(self.bucket_of(fields))
        return {**fields, ROW_ID: RecordIdentifier(-1, prop, -1)}
