"""How many stored rows of a partition its version-index entries retire: what a write records
per index file, and the live-row estimate of the ``partitions`` metadata table.

The write path reads no data, so an entry is written wherever a key's Bloom filters match,
and some entries retire no row: the key's row in the partition was retired already (it
moved to another partition, or was deleted, and is written again or comes back), the
entry is a tombstone of a deleted key, or the filter gave a false positive. Counting every
entry as one retired row made a partition holding rows look empty.

Two facts narrow it, from catalog metadata only:

* **Where a key was written last.** A write knows the newest version whose filter matched
  each key, in its own partition and in the others it probes. When that version is newer in
  another partition, the key was written there since its row here (which that write
  retired, having found it in the same filter): an entry here retires nothing. Nor does one
  whose newest match here is a version that wrote no rows here (it only deleted keys here:
  the key was deleted then). The index file records how many of its entries may retire a
  row (`RETIRING_STAT`; ties between the named partition and another, which compaction
  makes by giving its files the partition's head version, count for the named one, where a
  change usually lands again).
* **Order.** An entry retires only rows of older versions, at most one row per entry. The
  estimate matches entries with older rows, as many as the counts allow
  (`live_rows_estimate`): entries that no older row is left for retire nothing.

What remains is a false positive of a filter (a Bloom filter's error rate, 1% by default, of
the keys probed against it) that is newer than the key's own: the estimate can be that much
too low, and is exact otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from versioned.catalog.records import DataFile

if TYPE_CHECKING:
    from versioned.layouts.version_partition.elsewhere import ElsewhereProbe

RETIRING_STAT = "retiring"
"""Stat of an index file: how many of its entries may retire a row (default: all)."""

_NONE = -1


@dataclass(frozen=True)
class KeyHomes:
    """Per batch key, where its Bloom filters matched last: the newest matching version in
    the partition its change names, and the newest in any other partition (with that
    partition's id; `_NONE` when no filter matched, or two partitions tie); and whether
    those versions wrote rows there (a version that only deleted keys in a partition has a
    filter over them: a match there is a key deleted then, whose row is gone)."""

    own: np.ndarray
    own_rows: np.ndarray
    elsewhere: np.ndarray
    elsewhere_partition: np.ndarray
    elsewhere_rows: np.ndarray

    @classmethod
    def of(
        cls,
        own: np.ndarray,
        probe: ElsewhereProbe,
        row_versions: Callable[[int | None], Collection[int]],
        own_partition: np.ndarray | None = None,
    ) -> KeyHomes:
        """``own``: per key, the newest matching version in its named partition (`_NONE`);
        ``own_partition``: per key, the id of that partition (default: one partition for
        all, ``None``'s); ``row_versions``: the versions with data files in a partition."""
        n = len(own)
        own = np.asarray(own, dtype=np.int64)
        named = np.full(n, _NONE, dtype=np.int64) if own_partition is None else own_partition
        own_rows = np.zeros(n, dtype=bool)
        for pid in np.unique(named):
            at = named == pid
            versions = row_versions(None if pid == _NONE else int(pid))
            own_rows[at] = np.isin(own[at], np.fromiter(versions, np.int64))
        best = np.full(n, _NONE, dtype=np.int64)
        where = np.full(n, _NONE, dtype=np.int64)
        best_rows = np.zeros(n, dtype=bool)
        for pid, rows in probe.hits.items():
            versions = np.asarray(probe.newest[pid], dtype=np.int64)
            newer = versions > best[rows]
            tied = versions == best[rows]
            where[rows[tied]] = _NONE
            best[rows[newer]] = versions[newer]
            where[rows[newer]] = pid
            landed = np.isin(versions, np.fromiter(row_versions(pid), np.int64))
            best_rows[rows[newer]] = landed[newer]
        return cls(own, own_rows, best, where, best_rows)

    def retiring_here(self, rows: np.ndarray) -> int:
        """How many entries in their named partition, for the keys at ``rows``, may retire
        a row: the key's filters there match a version that wrote rows, no older than
        elsewhere."""
        own = self.own[rows]
        found = (own != _NONE) & self.own_rows[rows]
        return int((found & (own >= self.elsewhere[rows])).sum())

    def retiring_in(self, partition_id: int, rows: np.ndarray) -> int:
        """How many entries in another partition, for the keys at ``rows``, may retire a
        row: that partition alone has the key's newest match, in a version that wrote
        rows there, newer than its match in its named partition."""
        mine = (self.elsewhere_partition[rows] == partition_id) & self.elsewhere_rows[rows]
        return int((mine & (self.elsewhere[rows] > self.own[rows])).sum())


def row_versions_of(files: Sequence[DataFile]) -> Callable[[int | None], frozenset[int]]:
    """The versions with data files in each partition, among ``files`` (a snapshot's)."""
    found: dict[int | None, set[int]] = {}
    for f in files:
        if f.kind == "data":
            found.setdefault(f.partition_id, set()).add(f.version)
    frozen = {pid: frozenset(v) for pid, v in found.items()}
    return lambda pid: frozen.get(pid, frozenset())


def live_rows_estimate(files: Sequence[DataFile]) -> int:
    """The live rows of a partition from its live ``files``: its stored rows less the rows
    its index entries may retire (`RETIRING_STAT` of each index file, matched with older
    rows: see the module docstring)."""
    rows: Counter[int] = Counter()
    entries: Counter[int] = Counter()
    for f in files:
        if f.kind == "data":
            rows[f.version] += f.row_count
        elif f.kind == "index":
            entries[f.version] += int(f.stats.get(RETIRING_STAT, f.row_count))
    older = retired = 0
    for version in sorted(rows.keys() | entries.keys()):
        matched = min(entries[version], older)  # rows of older versions only
        retired += matched
        older += rows[version] - matched
    return sum(rows.values()) - retired
