"""Who may watch the catalog changes users see (commits, tables made or dropped, grants).

`MetaStore` tells its ``watch``, if it has one, when such a change begins and what it made
durable when it ends. Each change is one SQL transaction, so it happens or it does not; a
watcher knows which once it ends. The command line watches to answer Ctrl-C truthfully
(`versioned.cli.interrupts`): it holds an interrupt back while a change is being made and
then says what the interrupted command changed, if anything. Bookkeeping no user sees
(transactions begun, heartbeats, locks, partitions made for a write) is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, Protocol

ChangeKind = Literal["commit", "create", "drop", "properties", "grant", "revoke"]


@dataclass(frozen=True)
class CatalogChange:
    """A change users see, made durable in the catalog.

    Attributes:
        kind: ``commit`` (a version in the table's history: upsert, delete, compaction,
            import, alter), ``create`` or ``drop`` (of a table), ``properties`` (of a
            table), ``grant`` or ``revoke``.
        target: The table (``db.table``); for grants the database or the table.
        version: The committed version (``commit`` only).
    """

    kind: ChangeKind
    target: str
    version: int | None = None


class ChangeWatch(Protocol):
    """Told about each change as it is made (a change may happen in any thread)."""

    def change_started(self, kind: ChangeKind, target: str) -> None:
        """A change of ``target`` begins; its outcome is unknown until `change_ended`."""

    def change_ended(self, made: Sequence[CatalogChange]) -> None:
        """The change this thread began last ended; ``made`` is what it made durable
        (empty: nothing, e.g. it failed). May raise (the command line's deferred Ctrl-C)."""


@contextmanager
def watched(
    watch: ChangeWatch | None, kind: ChangeKind, target: str
) -> Iterator[list[CatalogChange]]:
    """Report the change the block makes to ``watch`` (nothing without one).

    The block appends to the list it gets what it made durable. Blocks may nest (a
    transaction's commit around the catalog's): only the innermost appends.
    """
    made: list[CatalogChange] = []
    if watch is None:
        yield made
        return
    watch.change_started(kind, target)
    try:
        yield made
    finally:
        watch.change_ended(made)
