"""The acid layout's `MutationFormat` (its ``mutation_format`` method): how the mutation API's
ROW__ID-ordered mutations become Hive ACID delta and delete-delta files.

Records are bucketed by Hive's bucket hash of their bucket columns with the table's
bucketing version (`layouts.acid.bucket_hash`); each (partition, bucket) group is written
by a `GroupWriter`; at commit, the ROW__IDs of the delete events must be live
(`live_rows`). The Spark step (each mutation's bucket) lives in
``layouts/acid/engine/mutation_buckets.py`` and is imported only when asked for.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from versioned.catalog.records import FileAdd, Snapshot, TableInfo
from versioned.layouts.acid.bucket_codec import RecordIdentifier
from versioned.layouts.acid.bucket_hash import bucket_ids
from versioned.layouts.acid.key_filters import KEY_BLOOM_KIND
from versioned.layouts.acid.mutation.group_writer import GroupWriter
from versioned.layouts.acid.mutation.live_rows import stale_row_ids
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, MARKER_KIND
from versioned.layouts.acid.table_rules import bucketing_version
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from versioned.layouts.mutation_format import MutationFormat, RowBuckets


class AcidMutations:
    """Mutations as Hive ACID deltas (see the module docstring); stateless."""

    shared_kinds = frozenset({MARKER_KIND})
    side_kinds = frozenset({MARKER_KIND, KEY_BLOOM_KIND})
    delete_kinds = frozenset({DELETE_KIND})

    def __repr__(self) -> str:
        return "AcidMutations()"

    def row_buckets(self, spec: TableSpec) -> RowBuckets:
        """Hive's bucket of each row (``(hash & 0x7FFFFFFF) % buckets``, the table's
        bucketing version); an unbucketed table puts every row in bucket 0."""
        columns = tuple(spec.bucket_by)
        return functools.partial(
            bucket_ids,
            columns=columns,
            types=tuple(spec.column(c).type for c in columns),
            num_buckets=spec.buckets or 1,
            version=bucketing_version(spec),
        )

    def group_writer(
        self,
        fileio: FileIO,
        table: TableInfo,
        *,
        txn_id: int,
        write_id: int,
        partition_path: str,
        bucket: int,
    ) -> GroupWriter:
        """A `GroupWriter` of the group's ``delta_W_W_0000`` and ``delete_delta_W_W_0000``
        bucket files."""
        return GroupWriter(
            fileio,
            table,
            txn_id=txn_id,
            write_id=write_id,
            partition_path=partition_path,
            bucket=bucket,
        )

    def stale_row_ids(
        self, fileio: FileIO, snapshot: Snapshot, partition_id: int, staged: Sequence[FileAdd]
    ) -> list[RecordIdentifier]:
        """`live_rows.stale_row_ids`: the deleted ROW__IDs not live in ``snapshot``."""
        return stale_row_ids(fileio, snapshot, partition_id, staged)

    def spark_buckets(self) -> Callable[..., Any]:
        """``layouts.acid.engine.mutation_buckets.mutation_buckets`` (imports pyspark)."""
        from versioned.layouts.acid.engine.mutation_buckets import mutation_buckets

        return mutation_buckets


MUTATIONS: MutationFormat = AcidMutations()
"""The acid layout's `MutationFormat`, named by its ``mutation_format`` method."""
