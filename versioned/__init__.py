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
