"""One exception root, `VersionedError`, with a base per area.

Every error keeps its inputs as attributes and pickles cleanly (they cross Spark and
process boundaries). `retryable` says whether trying the same operation again can succeed;
`exit_code` is what the CLI exits with.
"""

from __future__ import annotations

from typing import Any, ClassVar


class VersionedError(Exception):
    """Root of every error raised by versioned."""

    retryable: ClassVar[bool] = False
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        for key, value in context.items():
            setattr(self, key, value)

    def __reduce__(self) -> tuple[Any, ...]:
        state = {k: v for k, v in self.__dict__.items() if k != "message"}
        return (self.__class__, (self.message,), state)

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        self.__dict__.update(state or {})

    def __str__(self) -> str:
        return self.message


# --- input: the caller asked for something malformed --------------------------------------


class InputError(VersionedError):
    """The caller's input is malformed: a name, a column spec, a value, an option."""

    exit_code = 2


class NotSupportedError(InputError):
    """The table's layout does not implement an operation (``layout``, ``operation``)."""

    @classmethod
    def of(cls, layout: str, operation: str, table: object | None = None) -> NotSupportedError:
        """The error for ``operation`` on a table (or a new table) of ``layout``."""
        what = f"{operation} of {table}" if table is not None else operation
        return cls(
            f"{what}: the {layout} layout does not support {operation} in this release; "
            "use a table with --layout versioned",
            layout=layout,
            operation=operation,
            table=None if table is None else str(table),
        )


class InvalidNameError(InputError):
    """A database, table, column or principal name is not allowed."""


class SchemaError(InputError):
    """A table definition or a batch does not fit: unknown column, bad type, bad key."""


class QueryError(InputError):
    """A SQL statement is malformed, or is not a read-only query over readable tables."""


class ConfigError(InputError):
    """Configuration cannot be resolved (bad URL, bad warehouse, bad option)."""


# --- catalog ---------------------------------------------------------------------------------


class CatalogError(VersionedError):
    """The catalog (metastore) refused or failed an operation."""


class NotFoundError(CatalogError):
    """A database, table, partition, version or transaction does not exist."""

    exit_code = 3


class NoSuchDatabaseError(NotFoundError):
    """The database does not exist."""


class NoSuchTableError(NotFoundError):
    """The table does not exist."""


class NoSuchPartitionError(NotFoundError):
    """The partition does not exist."""


class NoSuchVersionError(NotFoundError):
    """The version (snapshot) does not exist or is no longer retained."""


class AlreadyExistsError(CatalogError):
    """The object to create exists already."""

    exit_code = 2


class TableAlreadyExistsError(AlreadyExistsError):
    """A table of that name exists already."""


class CatalogSchemaVersionError(CatalogError):
    """The catalog database was written by an incompatible release of versioned."""


class CatalogReadOnlyError(CatalogError):
    """The catalog cannot be written by this process (``url``, ``reason``): its SQLite file,
    or the directory SQLite keeps its write-ahead log in, is not writable, or it is on a
    read-only file system. Commands that only read work; nothing was written."""

    exit_code = 2


class CatalogUnavailableError(CatalogError):
    """The catalog database could not be reached (``url``) for ``waited_s`` seconds: the
    operation did not happen (a commit whose outcome was in doubt was checked first, see
    `CommitOutcomeUnknownError`). Retry when it is back."""

    retryable = True
    exit_code = 75


class CommitOutcomeUnknownError(CatalogUnavailableError):
    """The connection to the catalog was lost while it committed, and the catalog could not
    be asked afterwards whether the commit happened. The transaction id (``txn_id``) says:
    the commit happened exactly when the table's history lists it; it never happens twice
    (retrying a commit of the same transaction is refused once it is committed)."""


class CommitConflictError(CatalogError):
    """Another writer committed first; nothing of this commit was written. Retry."""

    retryable = True
    exit_code = 75


class StreamBatchCommittedError(CatalogError):
    """A commit of micro-batch ``batch_id`` of writer ``writer_id`` was refused: the writer
    recorded that batch or a later one (``last_batch_id``) already. Nothing was written;
    retrying cannot succeed (the streaming sink counts the batch as skipped)."""


class StreamBatchInterruptedError(VersionedError):
    """Micro-batch ``batch_id`` of the streaming sink into ``table`` stopped half-way because
    its query was stopped (Spark interrupted or cancelled its jobs). Nothing of it was
    committed; a restart on the checkpoint applies it."""

    retryable = True


class CommitRetriesExhaustedError(CommitConflictError):
    """Every attempt of a write lost its commit to a concurrent writer (``attempts``)."""

    @classmethod
    def after(cls, attempts: int, last: CommitConflictError) -> CommitRetriesExhaustedError:
        """The error for giving up after ``attempts`` attempts, the last lost to ``last``."""
        context = {k: v for k, v in vars(last).items() if k != "message"}
        return cls(
            f"gave up after {attempts} attempt(s), each lost to a concurrent commit; the "
            f"last: {last.message.rstrip('.')}. Nothing of this write is visible: run it "
            "again when fewer writers change the same partitions",
            **{**context, "attempts": attempts},
        )


# --- transactions and locks -----------------------------------------------------------------


class TransactionError(VersionedError):
    """A transaction or lock operation failed."""


class NoSuchTransactionError(TransactionError, NotFoundError):
    """The transaction id is unknown to the catalog."""


class TransactionExpiredError(TransactionError):
    """The transaction was not heartbeated within its timeout and has been aborted."""

    exit_code = 75


class TransactionStateError(TransactionError):
    """The transaction is not open (already committed or aborted)."""


class LockTimeoutError(TransactionError):
    """A lock could not be acquired within the wait timeout."""

    retryable = True
    exit_code = 75


# --- permissions -------------------------------------------------------------------------------


class PermissionDeniedError(VersionedError):
    """The principal lacks the permission the operation needs."""

    exit_code = 77


# --- storage -------------------------------------------------------------------------------


class StorageError(VersionedError):
    """A file-system operation failed or a path is not allowed."""


class UnsafePathError(StorageError):
    """A path would leave the directory it must stay in (traversal, symlink, absolute path)."""

    exit_code = 2
