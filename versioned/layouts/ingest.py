"""Where a transaction batch's records go: one sink per batch, per table layout.

A `TransactionBatch` hands each transaction's typed rows to its sink and asks it, at each
commit, for the catalog change that makes them visible; the batch owns the catalog
transactions (open, heartbeat, commit, abort). Sinks write files directly (no Spark).

The order of calls for one batch::

    sink = ingests(layout_of(spec.layout)).ingest_sink()(context)  # versioned.layouts.abilities
    for each transaction the batch begins:
        sink.write(txn_id, write_id, rows)   # zero or more times
        then either
            change = sink.prepare_commit(txn_id, write_id)   # durable on storage
            store.commit(txn_id, ..., partitions=change.changes,
                         expected_seq=change.expected_seq,
                         unless_since=change.unless_since)
            sink.committed(txn_id)           # the catalog has it
        or
            sink.abort(txn_id)               # the transaction's rows must never show
    sink.close()  -> final changes to commit in a transaction of their own, or None
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from versioned.catalog.records import PartitionCommit, PartitionInfo, SinceCheck, TableInfo
from versioned.catalog.store import MetaStore
from versioned.storage.filesystem import FileIO


@dataclass(frozen=True)
class SinkContext:
    """What a sink needs: the catalog, the storage, the table and partition, and the
    batch's write ids (contiguous; acid tables) and transaction ids. ``kept`` lives as long
    as the connection: what a sink keeps there (the partition's Bloom filters) serves the
    connection's later batches."""

    store: MetaStore
    fileio: FileIO
    table: TableInfo
    partition: PartitionInfo
    txn_ids: tuple[int, ...]
    write_ids: tuple[int, ...]
    agent: str | None = None
    kept: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedCommit:
    """A sink's part of one commit: the endpoint partition's change, what to report, and
    changes to other partitions (an acid table whose keys move between partitions gets
    delete events where a replaced key's row lives)."""

    change: PartitionCommit
    metrics: Mapping[str, Any] = field(default_factory=dict)
    others: tuple[PartitionCommit, ...] = ()
    """Changes to other partitions that commit with ``change`` (a version-layout table whose
    key is unique table-wide retires a streamed key's row in the partition that held it)."""
    expected_seq: int | None = None
    """The table's commit sequence the change was planned against, when any commit to the
    table since then must make it conflict (``MetaStore.commit(expected_seq=...)``)."""
    version: int | None = None
    """The commit's version when it is not the transaction id (``MetaStore.commit(version=...)``:
    a version-layout transaction whose partition passed its id gets a fresh one)."""
    unless_since: SinceCheck | None = None
    """With ``expected_seq``: which commits since it still leave this change right
    (``MetaStore.commit(unless_since=...)``; a version-layout table's check of the other
    partitions' new Bloom filters)."""

    @property
    def changes(self) -> tuple[PartitionCommit, ...]:
        """Every partition change, for ``MetaStore.commit(partitions=...)``."""
        return (self.change, *self.others)


class IngestSink(Protocol):
    """Writes one transaction batch into one partition of one table."""

    def write(self, txn_id: int, write_id: int, rows: pa.Table) -> None:
        """Add ``rows`` (the table's data columns) to the open transaction."""

    def prepare_commit(self, txn_id: int, write_id: int) -> PreparedCommit:
        """Make the transaction's rows durable and return the catalog change to commit.

        Raises:
            StreamingIOFailure: Storage failed; the batch is unusable.
        """

    def committed(self, txn_id: int) -> None:
        """The catalog committed the change `prepare_commit` returned."""

    def abort(self, txn_id: int) -> None:
        """Forget the open transaction's rows (it is, or will be, aborted)."""

    def close(self) -> Sequence[PartitionCommit] | PartitionCommit | None:
        """Finish the batch's files; last changes for the catalog, if any are needed."""


SinkFactory = Callable[[SinkContext], IngestSink]
