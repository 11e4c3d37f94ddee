"""The live Bloom filters of one partition (and, if asked, of the others), kept in memory
between commits.

A client that commits many small versions into one partition (a streaming connection)
probes each version's keys against every live filter of the partition. Reading them from
storage at every commit would cost one file per live version; here they are read once and
kept. Bloom files are immutable (their names carry a uuid), so a cached filter is always
the file's content; what can change is which files are live. Every commit that changes a
partition's live files of this layout moves its head version (writes, compaction, import),
so the cache keeps the list of live Bloom files together with the head it was taken at:
while the catalog reports the same head, the list is current.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from versioned.catalog.records import DataFile, FileAdd
from versioned.keys.bloom import KeyBloomFilter
from versioned.storage.filesystem import FileIO


@dataclass(frozen=True)
class LiveBlooms:
    """A partition's live Bloom files as of one head version."""

    head: int | None
    files: tuple[DataFile, ...]


class PartitionBloomCache:
    """The Bloom filters of one partition, by file path, and its live Bloom files."""

    def __init__(self, fileio: FileIO, table_location: str) -> None:
        self.fileio = fileio
        self.table_location = table_location
        self.live: LiveBlooms | None = None
        self._filters: dict[str, KeyBloomFilter] = {}
        self.files_read = 0

    def __len__(self) -> int:
        return len(self._filters)

    def current(self, head: int | None) -> LiveBlooms | None:
        """The live Bloom files, if they were taken at ``head``; else None (refresh)."""
        if self.live is not None and self.live.head == head:
            return self.live
        return None

    def refresh(
        self, head: int | None, files: Iterable[DataFile], *, keep: Iterable[str] = ()
    ) -> LiveBlooms:
        """Set the partition's live Bloom files at ``head``; forget the filters of files
        that are neither live there nor in ``keep`` (other partitions' live Bloom files,
        for a table whose keys move between partitions)."""
        self.live = LiveBlooms(head, tuple(files))
        paths = {f.path for f in self.live.files} | set(keep)
        self._filters = {p: b for p, b in self._filters.items() if p in paths}
        return self.live

    def add_version(self, expected_head: int | None, add: FileAdd, bloom: KeyBloomFilter) -> None:
        """A commit moved the head from ``expected_head`` to ``add.version``, adding the
        Bloom file ``add`` (holding ``bloom``): extend the live list without a catalog read.

        If the cache did not hold the files at ``expected_head``, it is left for a refresh.
        """
        if self.live is None or self.live.head != expected_head:
            self.live = None
            return
        entry = DataFile(
            id=0,
            partition_id=add.partition_id,
            path=add.path,
            kind=add.kind,
            version=add.version,
            size_bytes=add.size_bytes,
            row_count=add.row_count,
            stats=add.stats,
            added_seq=0,  # not known here; nothing reads it
            removed_seq=None,
        )
        self.live = LiveBlooms(add.version, (*self.live.files, entry))
        self._filters[add.path] = bloom

    def load(self, bloom_file: DataFile) -> KeyBloomFilter:
        """The filter of a live Bloom file (read on first use)."""
        bloom = self._filters.get(bloom_file.path)
        if bloom is None:
            bloom = KeyBloomFilter.read(self.fileio, f"{self.table_location}/{bloom_file.path}")
            self.files_read += 1
            self._filters[bloom_file.path] = bloom
        return bloom
