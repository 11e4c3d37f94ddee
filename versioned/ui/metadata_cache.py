"""A table's metadata rows, read once per commit: what a commit fixes is kept until the
next one.

The history, partitions, dead letters and commits of a table change only when it commits
(its ``current_seq`` moves): a cache keyed by the table's id and commit sequence serves them
again without asking the catalog, and reading a table's listing (`Catalog.tables`, or
`Catalog.table` for one) tells whether an entry is still current. What changes without a
commit (streaming writers' progress, open transactions and locks) is read every time.

The cache holds no grants: callers hand it only tables they resolved for ``read`` in the
same request (`Catalog.tables` lists only those, `Catalog.table` checks), so a revoked grant
takes effect on the next request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from versioned.api.table import Table

T = TypeVar("T")

PER_COMMIT_KINDS = frozenset({"history", "snapshots", "partitions", "files", "dead_letters"})
"""Metadata kinds that only a commit changes."""


class MetadataCache:
    """Metadata rows and things made from them (charts), per table and commit sequence."""

    def __init__(self, capacity: int = 2048) -> None:
        """``capacity``: entries kept (the least recently used go first)."""
        self._capacity = capacity
        self._entries: OrderedDict[tuple[int, int, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Entries kept."""
        with self._lock:
            return len(self._entries)

    def rows(self, table: Table, kind: str) -> list[dict[str, Any]]:
        """The rows of metadata table ``kind`` of ``table`` as dicts: per-commit kinds from
        the cache when the table has not committed since they were read; other kinds read
        now."""

        def read() -> list[dict[str, Any]]:
            return table.metadata(kind).to_pylist()

        if kind in PER_COMMIT_KINDS:
            return self.get(table, kind, read)
        return read()

    def get(self, table: Table, what: str, make: Callable[[], T]) -> T:
        """``what`` of ``table`` as of its latest commit: kept, or made now by ``make``."""
        info = table.info
        key = (info.id, info.current_seq, what)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        value = make()
        self.put(table, what, value)
        return value

    def put(self, table: Table, what: str, value: Any) -> None:
        """Keep ``value`` as ``what`` of ``table`` as of its latest commit."""
        info = table.info
        with self._lock:
            self._entries[(info.id, info.current_seq, what)] = value
            self._entries.move_to_end((info.id, info.current_seq, what))
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
