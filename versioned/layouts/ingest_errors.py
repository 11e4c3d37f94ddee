"""Errors of the streaming ingest API, named after Hive's.

Each is a `StreamingError` and also an error of its area in `versioned.errors`, so code that
catches the area (and the CLI's exit codes) treats a streaming error like any other:

| error | also a | exit code |
|---|---|---|
| `StreamingConnectionError` | `InputError` (the endpoint does not fit the table) | 2 |
| `InvalidTable` | `NoSuchTableError` | 3 |
| `InvalidPartition` | `InputError` | 2 |
| `InvalidColumn` | `SchemaError` (the writer's field names do not fit the table) | 2 |
| `SerializationError` | `InputError` (a record cannot be parsed or typed) | 2 |
| `StreamingTransactionError` | `versioned.errors.TransactionError` | 1 |
| `StreamingIOFailure` | `StorageError`; retryable: abort, close, start a new batch | 75 |
"""

from __future__ import annotations

from versioned import errors as base


class StreamingError(base.VersionedError):
    """Root of the streaming ingest API's errors (Hive's ``StreamingException``)."""


class StreamingConnectionError(StreamingError, base.InputError):
    """An endpoint cannot be connected: partition values missing for a partitioned table, or
    given for an unpartitioned one (Hive's ``ConnectionError``)."""


class InvalidTable(StreamingError, base.NoSuchTableError):
    """The endpoint's table does not exist or cannot be streamed into."""


class InvalidPartition(StreamingError, base.InputError):
    """The endpoint's partition values do not fit the table's partition columns."""


class InvalidColumn(StreamingError, base.SchemaError):
    """A record writer's field names do not fit the table: an unknown or repeated name, or
    more names than the table has columns."""


class SerializationError(StreamingError, base.InputError):
    """A record cannot be parsed or typed. The transaction batch stays usable: write more
    records, or commit."""


class StreamingTransactionError(StreamingError, base.TransactionError):
    """A transaction batch cannot do what was asked: it is closed, or its transaction was
    aborted (e.g. not heartbeated within its timeout)."""


class StreamingIOFailure(StreamingError, base.StorageError):
    """Writing or flushing a batch's files failed; the batch is dead. Abort and close it,
    then start a new batch (after a back-off) and write the lost transaction again."""

    retryable = True
    exit_code = 75
