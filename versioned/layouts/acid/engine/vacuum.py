"""Hive's cleaner for the acid layout: the shared vacuum (`versioned.layouts.vacuum`) with the
acid path rules.

The directories a compaction made obsolete (and those of aborted writes still listed) are
retired by the compaction's commit, so "obsolete and aborted directories that no open
transaction or retained snapshot needs" are exactly the catalog's retired files older than
the retention: vacuum deletes them and forgets them. Orphans (unlisted files: a crashed
write's ``delta_W_W_0000``, a crashed compactor's staging folder or an old aborted
compactor's ``_vT`` output) go after the grace period unless their writer is still open: the
transaction in a ``_vT`` suffix or ``_staging/txn=N`` (`StorageLayout.transaction_of`), or, for
a writer's ``delta_W_W`` / ``delete_delta_W_W`` / ``base_W`` named by write id (and its
tombstone file, ``_tombstones/delete_delta_W_W_0000.orc``), a write id still open.

A compaction's folder (``base_W``, ``delta_MIN_MAX``: no ``_vT`` since issue 28) that no
commit lists is a compactor's between its rename and its commit, or the orphan of one that
died there. Its mark (`compacted_dirs`) names the compactor: vacuum keeps the folder whole
while that transaction is open (or a file is younger than the grace period), and otherwise
hands it to `placement.remove_orphan_folder`, which checks again and removes it in one
rename, never file by file: Hive's readers see the name, and a compaction of the same write
ids may be about to reuse it.

Tombstone files are retired only by a major compaction that merged them into its own
(``_tombstones/base_W_vT.orc``), so vacuum never deletes a tombstone a retained snapshot
needs. Emptied ``base_`` / ``delta_`` / ``delete_delta_`` directories go whole (with their
markers).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from versioned.layouts.acid.compacted_dirs import (
    is_compactor_mark,
    is_visible_acid_folder,
    marked_folders,
)
from versioned.layouts.acid.directories import DeltaDir, parse_directory
from versioned.layouts.acid.engine.placement import remove_orphan_folder
from versioned.layouts.acid.errors import AcidNameError
from versioned.layouts.acid.snapshot_dirs import TOMBSTONE_DIR
from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.layout import STAGING_DIR, StorageLayout
from versioned.layouts.table_request import VacuumRequest
from versioned.layouts.vacuum import VacuumPaths, vacuum_table
from versioned.results import VacuumResult
from versioned.storage.filesystem import FileIO

_PAST_EVERY_COMMIT = 2**62
TRANSACTION_DIR = re.compile(r"^(?:base_|delta_|delete_delta_|txn=)")


def open_write_id_paths(open_write_ids: frozenset[int]) -> Callable[[str], bool]:
    """Whether a path lies in a directory named by write ids of which one is open."""

    def in_progress(rel: str) -> bool:
        for segment in _named_by_write_ids(rel):
            try:
                parsed = parse_directory(segment)
            except AcidNameError:
                continue
            if parsed is None or parsed.visibility_txn_id:
                continue
            low, high = (
                (parsed.min_write_id, parsed.max_write_id)
                if isinstance(parsed, DeltaDir)
                else (parsed.write_id, parsed.write_id)
            )
            if any(low <= w <= high for w in open_write_ids):
                return True
        return False

    return in_progress


def folders_marked_now(fileio: FileIO, location: str) -> Callable[[str], bool]:
    """Whether an unlisted file lies in a Hive-visible acid folder that holds a compactor's
    mark now, listed again (once per folder): on an object store a compactor's folder is
    moved into place file by file, its mark first (`placement.move_folder`), so the table's
    listing may have caught a file of it and not yet the mark. Such a file is left to the
    next vacuum, which sees the folder marked and judges it whole."""
    marked: dict[str, bool] = {}

    def being_placed(rel: str) -> bool:
        folder = rel.rpartition("/")[0]
        if not folder or not is_visible_acid_folder(folder):
            return False
        if folder not in marked:
            names = [s.path.rpartition("/")[2] for s in fileio.list_files(f"{location}/{folder}")]
            marked[folder] = any(is_compactor_mark(n) for n in names)
        return marked[folder]

    return being_placed


def _named_by_write_ids(rel: str) -> list[str]:
    """The segments of a path that may name write ids: its directories, and the file name
    of a tombstone file (``_tombstones/delete_delta_W_W_0000.orc``)."""
    *dirs, name = rel.split("/")
    if dirs and dirs[-1] == TOMBSTONE_DIR:
        return [*dirs, name.removesuffix(".orc")]
    return dirs


def vacuum_acid_table(
    ctx: EngineContext, request: VacuumRequest, layout: StorageLayout
) -> VacuumResult:
    """Vacuum an acid table (see `versioned.layouts.vacuum.vacuum_table`)."""
    table = request.table
    name = table.spec.name
    store = ctx.store

    def in_progress() -> Callable[[str], bool]:
        # Read after the table's listing (`VacuumPaths.in_progress`): a stream's delta_W_W
        # written before it, of a write id allocated after this was read, would be taken
        # for an orphan and deleted just before its transaction commits it.
        # At a seq past every commit, every write id allocated so far counts (the latest
        # snapshot's, read apart from this, would leave out one allocated after a commit
        # that came between the two reads).
        store.reap_expired()
        ids = store.write_ids(name, _PAST_EVERY_COMMIT)
        by_write_id = open_write_id_paths(frozenset(ids.open_ids))
        being_placed = folders_marked_now(ctx.fileio, table.location)
        return lambda rel: by_write_id(rel) or being_placed(rel)

    paths = VacuumPaths(
        layout,
        TRANSACTION_DIR,
        in_progress,
        folders=marked_folders,
        remove_folder=lambda rel: remove_orphan_folder(
            ctx, table, rel, f"{table.location}/{STAGING_DIR}"
        ),
    )
    return vacuum_table(ctx, request, paths)
