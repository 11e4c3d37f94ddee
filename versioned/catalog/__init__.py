"""The catalog (metastore): databases, tables, partitions, transactions, locks, commits, grants.

`MetaStore.connect(url, user)` opens an SQLite or PostgreSQL catalog; everything it returns
is a plain, frozen, picklable record from `versioned.catalog.records`.
"""

from __future__ import annotations

from versioned.catalog.records import (
    LOCK_MODES,
    PRIVILEGES,
    CommitInfo,
    DatabaseInfo,
    DataFile,
    FileAdd,
    FileGrowth,
    GrantInfo,
    LockInfo,
    LockMode,
    LockState,
    PartitionCommit,
    PartitionInfo,
    Privilege,
    Snapshot,
    TableAccess,
    TableCommit,
    TableInfo,
    TableWriteIds,
    TransactionInfo,
    TxnSnapshot,
    TxnState,
)
from versioned.catalog.store import MetaStore

__all__ = [
    "LOCK_MODES",
    "PRIVILEGES",
    "CommitInfo",
    "DataFile",
    "DatabaseInfo",
    "FileAdd",
    "FileGrowth",
    "GrantInfo",
    "LockInfo",
    "LockMode",
    "LockState",
    "MetaStore",
    "PartitionCommit",
    "PartitionInfo",
    "Privilege",
    "Snapshot",
    "TableAccess",
    "TableCommit",
    "TableInfo",
    "TableWriteIds",
    "TransactionInfo",
    "TxnSnapshot",
    "TxnState",
]
