"""The acid test tables: keyed by ``id``, bucketed by it, partitioned by ``store``."""

from __future__ import annotations

from typing import Any


def acid_table(cat: Any, name: str = "s.t", **options: Any) -> Any:
    """``cat.create_table(name, ...)`` of an acid table; ``options`` override the defaults
    (primary key and bucket column ``id``, 4 buckets, partitioned by ``store``)."""
    args: dict[str, Any] = {
        "primary_key": "id",
        "partition_by": "store",
        "layout": "acid",
        "bucket_by": "id",
        "buckets": 4,
    }
    args.update(options)
    return cat.create_table(name, **args)
