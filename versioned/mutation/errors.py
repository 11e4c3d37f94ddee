"""Errors of the mutation API, named after Hive's.

Each is a `MutationError` and also an error of its area in `versioned.errors`, so code that
catches the area (and the CLI's exit codes) treats them like any other:

| error | also a | exit code |
|---|---|---|
| `RecordSequenceError` | `InputError` (records of a group not in ROW__ID order) | 2 |
| `GroupRevisitedError` | `InputError` (a (partition, bucket) group came back) | 2 |
| `BucketIdError` | `InputError` (a record would move between buckets) | 2 |
| `PartitionColumnUpdateError` | `InputError` (a record would move between partitions) | 2 |
| `UnstorableValueError` | `InputError` (a DATE/TIMESTAMP ORC would not give back as written) | 2 |
| `UnknownOperationError` | `InputError` (`apply`: an op value that is no operation) | 2 |
| `MissingRowIdError` | `InputError` (`apply`: an update or delete without ROW__ID) | 2 |
| `MutationSchemaError` | `SchemaError` (`apply`: the DataFrame lacks a needed column) | 2 |
| `MutationTaskError` | `MutationError` (`apply`: a Spark task failed; transaction aborted) | 1 |
| `MissingPartitionError` | `NoSuchPartitionError` (update or delete in no partition) | 3 |
| `PartitionCreationError` | `CatalogError` (partitions missing at commit, or not created) | 1 |
| `MutationTransactionError` | `TransactionError` (lost, expired, misused transaction) | 1 |
| `MutationConflictError` | `CommitConflictError`; retryable: redo the mutation | 75 |
"""

from __future__ import annotations

from versioned import errors as base


class MutationError(base.VersionedError):
    """Root of the mutation API's errors."""


class RecordSequenceError(MutationError, base.InputError):
    """Within a (partition, bucket) group, an update or delete's ROW__ID is not above the
    previous one's (``(writeId, rowId)`` order). Escalate it: abort the transaction."""


class GroupRevisitedError(MutationError, base.InputError):
    """A coordinator got a record of a (partition, bucket) group it had left: group the
    mutations by partition and bucket before applying them."""


class BucketIdError(MutationError, base.InputError):
    """An insert or update's ROW__ID bucket is not the bucket of its bucket columns
    (records never move between buckets; attach bucket ids with `BucketIdResolver`)."""


class PartitionColumnUpdateError(MutationError, base.InputError):
    """A record's partition columns name another partition than the one it is applied to
    (records never move between partitions)."""


class UnstorableValueError(MutationError, base.InputError):
    """An insert or update's DATE or TIMESTAMP value is one ORC's readers would not give
    back as written (a day of 1582-10-05..14, a time in the last second before 1970): the
    record is refused instead of stored changed (`versioned.values.orc_values`)."""


class MissingPartitionError(MutationError, base.NoSuchPartitionError):
    """An update or delete names a partition that does not exist (its rows cannot exist)."""


class PartitionCreationError(MutationError, base.CatalogError):
    """Partitions a transaction wrote into do not exist and the client may not create them
    (``create_partitions=False``): create them with ``client.create_partitions``."""


class MutationTransactionError(MutationError, base.TransactionError):
    """The transaction cannot do what was asked: it is not open, was lost (expired,
    aborted elsewhere), or its coordinators' files do not add up."""


class MutationConflictError(MutationError, base.CommitConflictError):
    """Another writer committed into a partition this transaction changed after it began:
    the ROW__IDs it was given may be stale. The transaction is aborted; read again and
    apply the mutations in a new one."""


class UnknownOperationError(MutationError, base.InputError):
    """A mutation's op value (`apply`'s op column) is not ``insert``, ``update`` or
    ``delete``."""


class MissingRowIdError(MutationError, base.InputError):
    """An update or delete has no ROW__ID (read it with ``Table.read(with_row_id=True)``)."""


class MutationSchemaError(MutationError, base.SchemaError):
    """The mutations DataFrame given to `apply` lacks a column it needs, or its ROW__ID is
    not Hive's ``struct<writeid, bucketid, rowid>``."""


class MutationTaskError(MutationError):
    """A Spark task of `apply` failed for a reason that is not a mutation error (a lost
    executor, a full disk): the transaction is aborted; apply the mutations in a new one."""
