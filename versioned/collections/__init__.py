"""Data collections: a folder of data files plus ``_versioned_collection.json``.

Written by `Catalog.export` or, without any catalog, by `write`; read without a catalog by
`read`, or imported into a table by `Catalog.import_`. See ``docs/import-export.md``.

```python
from versioned import collections

collections.write(df, "/data/orders-20101109", primary_key="id", sort_by=None,
                  table="sales.orders", partition={"datestamp": "20101109"})
collections.read(spark, "/data/orders-20101109").show()
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.collections.errors import (
    CollectionError,
    CollectionFormatError,
    ImportMismatchError,
    IncompleteCollectionError,
    PartitionExistsError,
)
from versioned.collections.folder import read_metadata
from versioned.collections.metadata import (
    FORMAT_VERSION,
    METADATA_FILE,
    CollectionFile,
    CollectionMetadata,
    CollectionPartition,
)

if TYPE_CHECKING:
    from versioned.api.collection_files import read, write


def __getattr__(name: str) -> Any:
    """`read` and `write` need Spark: imported on first use (the one upward import of this
    package, allowed by ``tests/unit/test_layers.py``)."""
    if name in ("read", "write"):
        import versioned.api.collection_files as spark_half

        return getattr(spark_half, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMAT_VERSION",
    "METADATA_FILE",
    "CollectionError",
    "CollectionFile",
    "CollectionFormatError",
    "CollectionMetadata",
    "CollectionPartition",
    "ImportMismatchError",
    "IncompleteCollectionError",
    "PartitionExistsError",
    "read",
    "read_metadata",
    "write",
]
