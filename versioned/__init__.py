"""versioned: an upsert engine for data-lake tables on Apache Spark.

```python
import versioned

cat = versioned.connect()                       # catalog, warehouse and Spark from defaults/env
t = cat.create_table("test.sell", columns="sell_id BIGINT, total_amt DOUBLE, store_id STRING",
                     primary_key=["sell_id"], partition_by=["store_id"], op_code_column="op_code")
result = t.upsert("changes.csv")                # -> CommitResult
t.read().show()                                 # latest version of every record
cat.register_views()                            # SELECT ... FROM test.sell in Spark SQL
```
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog, connect
    from versioned.api.change_stream import register_data_source
    from versioned.api.table import Table
    from versioned.catalog.records import CommitInfo, Snapshot, StreamMark
    from versioned.errors import (
        CatalogError,
        CommitConflictError,
        InputError,
        LockTimeoutError,
        NotFoundError,
        PermissionDeniedError,
        SchemaError,
        StorageError,
        StreamBatchCommittedError,
        TransactionError,
        TransactionExpiredError,
        VersionedError,
    )
    from versioned.options import CompactionOptions, CompactionThresholds, WriteOptions
    from versioned.results import CommitResult, CompactionResult, PartitionCompaction, VacuumResult
    from versioned.schema import Column, TableSpec

# Where each name of the package's face lives, imported on first use: importing `versioned`
# (and so any of its modules, the console script's first) stays cheap, and the command line
# handles Ctrl-C from its first milliseconds (`versioned.cli.console`), not after a second of
# imports.
_EXPORTS = {
    "Catalog": "versioned.api.catalog",
    "connect": "versioned.api.catalog",
    "register_data_source": "versioned.api.change_stream",
    "Table": "versioned.api.table",
    "CommitInfo": "versioned.catalog.records",
    "Snapshot": "versioned.catalog.records",
    "StreamMark": "versioned.catalog.records",
    "CatalogError": "versioned.errors",
    "CommitConflictError": "versioned.errors",
    "InputError": "versioned.errors",
    "LockTimeoutError": "versioned.errors",
    "NotFoundError": "versioned.errors",
    "PermissionDeniedError": "versioned.errors",
    "SchemaError": "versioned.errors",
    "StorageError": "versioned.errors",
    "StreamBatchCommittedError": "versioned.errors",
    "TransactionError": "versioned.errors",
    "TransactionExpiredError": "versioned.errors",
    "VersionedError": "versioned.errors",
    "CompactionOptions": "versioned.options",
    "CompactionThresholds": "versioned.options",
    "WriteOptions": "versioned.options",
    "CommitResult": "versioned.results",
    "CompactionResult": "versioned.results",
    "PartitionCompaction": "versioned.results",
    "VacuumResult": "versioned.results",
    "Column": "versioned.schema",
    "TableSpec": "versioned.schema",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once
    return value


__version__ = "0.1.0"

__all__ = [
    "Catalog",
    "CatalogError",
    "Column",
    "CommitConflictError",
    "CommitInfo",
    "CommitResult",
    "CompactionOptions",
    "CompactionResult",
    "CompactionThresholds",
    "InputError",
    "LockTimeoutError",
    "NotFoundError",
    "PartitionCompaction",
    "PermissionDeniedError",
    "SchemaError",
    "Snapshot",
    "StorageError",
    "StreamBatchCommittedError",
    "StreamMark",
    "Table",
    "TableSpec",
    "TransactionError",
    "TransactionExpiredError",
    "VacuumResult",
    "VersionedError",
    "WriteOptions",
    "__version__",
    "connect",
    "register_data_source",
]
