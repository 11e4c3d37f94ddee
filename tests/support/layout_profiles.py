"""What each layout's tables need in the tests, declared once per layout instead of
``if layout == "acid"`` in each test (issue 47): the arguments a test table of the layout
takes besides its columns and key.

A layout without a profile takes none. The acid layout's tables are bucketed (Hive's
streaming ingest and mutation API write per bucket, and its compaction tests want more than
one bucket file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from versioned.layouts.base import layouts

LAYOUTS = tuple(each.name for each in layouts())
"""The registered layouts' names, the default first: what a suite that runs for every layout
parametrises over (never a literal list of names)."""

PROFILES: dict[str, Callable[[str, int], dict[str, Any]]] = {
    "acid": lambda key, buckets: {"bucket_by": key, "buckets": buckets},
}
"""Per layout name: ``(key column, buckets) -> create_table arguments``."""


def table_args(layout: str, *, key: str = "id", buckets: int = 2) -> dict[str, Any]:
    """The `Catalog.create_table` arguments a test table of ``layout`` takes besides its
    columns and primary key (bucketing by ``key`` into ``buckets`` where the layout buckets)."""
    profile = PROFILES.get(layout)
    return profile(key, buckets) if profile is not None else {}
