"""Vacuum: delete the files no retained snapshot can read, and the orphans of failed writes.

Retention: the snapshot that was current ``retain_hours`` ago (the last commit at or before
that moment; the first commit when all are younger) and every later one stay readable. A
retired file is deleted, then forgotten by the catalog, only when the commit that retired it
is at or before that snapshot, so no retained snapshot lists it. The oldest readable commit
is recorded first (`versioned.catalog.retention`), so ``as_of`` an older version fails
clearly instead of reading a snapshot with missing files.

Orphans are files under the table directory that no catalog record lists: what a write left
when it crashed (an aborted write removes its own files, best effort: see
docs/write-transactions.md), and ``_staging/`` leftovers. One is deleted only when it
is older than the grace period and the transaction in its path (`StorageLayout.transaction_of`,
e.g. ``version_id=N``, ``txn=N``, an acid ``_vT``) is not open, nor the layout says it is a
write in progress (`VacuumPaths.in_progress`), so files of a write still in progress are
never touched. A layout may claim some unlisted files as folders to remove whole
(`VacuumPaths.folders`: an acid compaction's output, whose name Hive's readers see and
another compaction may reuse): such a folder is kept while any of its files would be, and
otherwise handed to the layout's `VacuumPaths.remove_folder`, which judges it again.
``_dead_letter/`` holds rejected rows for the user and is never vacuumed, and neither is a
file older than the table itself: no write of the table made it (files a dropped table of the
same name kept, or files put there by hand; a new table never takes a directory that holds
files, see `Catalog.create_table`).

Directories left empty go too (transaction directories: `VacuumPaths.transaction_dir`,
partition, ``_index/`` and ``_staging/`` directories), up to but never including the table
directory.

Shared by the layouts; each gives its path rules (`VacuumPaths`). Plain Python over the
catalog and `FileIO`: no Spark.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from versioned.catalog.records import CommitInfo, DataFile, TableInfo
from versioned.catalog.retention import (
    VACUUMED_BEFORE_SEQ,
    VACUUMED_BEFORE_VERSION,
    oldest_readable_seq,
)
from versioned.errors import InputError
from versioned.layouts.layout import DEAD_LETTER_DIR, STAGING_DIR, StorageLayout
from versioned.options import Progress
from versioned.results import VacuumResult
from versioned.storage.filesystem import FileIO, FileStat

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext
    from versioned.layouts.table_request import VacuumRequest

DEFAULT_RETAIN_HOURS = 168.0
DEFAULT_GRACE_HOURS = 1.0
_FORGET_CHUNK = 1000


def _nothing_in_progress(_rel: str) -> bool:
    return False


def _no_rule() -> Callable[[str], bool]:
    return _nothing_in_progress


def _no_folders(_unlisted: Sequence[str]) -> Mapping[str, str]:
    return {}


def _keep_folder(_folder: str) -> bool:
    return False


@dataclass(frozen=True)
class VacuumPaths:
    """A layout's path rules for vacuum.

    Attributes:
        layout: Tells which transaction wrote a path (`StorageLayout.transaction_of`).
        transaction_dir: Matches a path segment naming a directory that one write fills
            (``version_id=N``, ``delta_...``): once vacuum emptied it, it goes whole.
        in_progress: Reads the rule telling whether an unlisted file (path relative to the
            table) outside `folders` belongs to a write still in progress where the path
            alone cannot tell (acid write ids; an acid folder being moved into place).
            Called after the table is listed: a write that began before the listing and
            commits after the rule was read is then either open by the rule or listed by
            the ledger, read last.
        folders: Which unlisted files (paths relative to the table) lie in a folder that
            goes whole, mapped to that folder.
        remove_folder: Removes such a folder if it is still an orphan (it may re-check
            what it knows better than a listing); returns whether it did.
    """

    layout: StorageLayout
    transaction_dir: re.Pattern[str]
    in_progress: Callable[[], Callable[[str], bool]] = _no_rule
    folders: Callable[[Sequence[str]], Mapping[str, str]] = _no_folders
    remove_folder: Callable[[str], bool] = _keep_folder


def vacuum_table(ctx: EngineContext, request: VacuumRequest, paths: VacuumPaths) -> VacuumResult:
    """Delete the request's table's files that no snapshot within ``retain_hours`` reads,
    and orphans (``dry_run``: report what would be deleted; delete nothing).

    ``retain_hours``: snapshots current at any time within this many hours stay readable;
    ``grace_hours``: unlisted files younger than this are left alone (a write may be about
    to commit them).
    """
    retain_hours, grace_hours = request.retain_hours, request.grace_hours
    if not retain_hours >= 0 or not grace_hours >= 0:
        raise InputError(
            f"retain_hours and grace_hours must be >= 0, got {retain_hours} and {grace_hours}"
        )
    store, fileio, table, say = ctx.store, ctx.fileio, request.table, request.say
    started = time.monotonic()
    now = store.now()  # the catalog's clock, which stamped the commits and transactions
    name = table.spec.name
    location = table.location
    # Order matters: list the directory before reading open transactions and the file
    # ledger, so a file committed meanwhile is either listed by the catalog or belongs to a
    # transaction that was still open.
    listing = fileio.list_files(location)
    store.reap_expired()
    open_txns = store.txn_snapshot().open_ids
    in_progress = paths.in_progress()
    history = store.history(name)
    ledger = store.all_files(name)

    oldest = _oldest_retained(history, now - retain_hours * 3600)
    retired = _retired_before(ledger, oldest.seq) if oldest else []
    orphans, folders, kept_orphans = _orphans(
        listing,
        location,
        {f.path for f in ledger},
        paths,
        open_txns,
        in_progress,
        young_after=now - grace_hours * 3600,
        born=table.created_at,
    )
    unlisted = [*orphans, *(s for files in folders.values() for s in files)]
    say(
        f"{name}: {len(retired)} retired file(s) past the retention, {len(unlisted)} orphan(s), "
        f"{kept_orphans} recent or in-progress unlisted file(s) kept"
    )
    deletable = tuple([f.path for f in retired] + [s.path[len(location) + 1 :] for s in unlisted])
    result = VacuumResult(
        table=str(name),
        dry_run=request.dry_run,
        oldest_version=oldest.version if oldest else None,
        retired_files=len(retired),
        retired_bytes=sum(f.size_bytes for f in retired),
        orphan_files=len(unlisted),
        orphan_bytes=sum(s.size for s in unlisted),
        kept_orphans=kept_orphans,
        paths=deletable,
    )
    if request.dry_run:
        return _timed(result, started)
    if oldest is not None and oldest.seq > max(
        oldest_readable_seq(table.spec.properties), history[0].seq
    ):
        store.set_table_properties(
            name,
            {VACUUMED_BEFORE_SEQ: str(oldest.seq), VACUUMED_BEFORE_VERSION: str(oldest.version)},
        )
        say(f"{name}: versions before {oldest.version} are no longer readable")
    _delete(ctx, paths, table, retired, orphans, say)
    _remove_folders(fileio, paths, location, folders, say)
    return _timed(result, started)


def _orphans(
    listing: Sequence[FileStat],
    location: str,
    known: set[str],
    paths: VacuumPaths,
    open_txns: frozenset[int],
    in_progress: Callable[[str], bool],
    *,
    young_after: float,
    born: float,
) -> tuple[list[FileStat], dict[str, list[FileStat]], int]:
    """The unlisted files to delete, the folders to remove whole (`VacuumPaths.folders`) with
    their files, and how many unlisted files are kept (too young, of a transaction still
    open, or older than the table, born at ``born``; a folder is kept whole when one of its
    files is). Dead letters are never orphans."""
    unlisted = [
        (stat, rel)
        for stat in listing
        if (rel := stat.path[len(location) + 1 :]) not in known
        and rel.split("/", 1)[0] != DEAD_LETTER_DIR
    ]
    in_folder = paths.folders([rel for _, rel in unlisted])
    orphans: list[FileStat] = []
    folders: dict[str, list[FileStat]] = {}
    kept_folders: set[str] = set()
    kept = 0
    for stat, rel in unlisted:
        txn = paths.layout.transaction_of(rel)
        folder = in_folder.get(rel)
        running = (txn is not None and txn in open_txns) or (folder is None and in_progress(rel))
        keep = stat.mtime > young_after or running or stat.mtime < born
        if folder is not None:
            folders.setdefault(folder, []).append(stat)
            if keep:
                kept_folders.add(folder)
        elif keep:
            kept += 1
        else:
            orphans.append(stat)
    kept += sum(len(folders.pop(f)) for f in kept_folders)
    return orphans, folders, kept


def _delete(
    ctx: EngineContext,
    paths: VacuumPaths,
    table: TableInfo,
    retired: Sequence[DataFile],
    orphans: Sequence[FileStat],
    say: Progress,
) -> None:
    """Delete the retired files (forgetting them in the catalog), the orphans, and the
    directories that leaves empty."""
    name, location = table.spec.name, table.location
    store, fileio = ctx.store, ctx.fileio
    deleted: list[str] = []
    for start in range(0, len(retired), _FORGET_CHUNK):
        chunk = retired[start : start + _FORGET_CHUNK]
        for f in chunk:
            fileio.delete_file(f"{location}/{f.path}", missing_ok=True)
            deleted.append(f"{location}/{f.path}")
        # Forgotten only once deleted: a crash in between leaves rows that the next run
        # deletes (missing files are fine) and forgets.
        store.forget_files(name, [f.id for f in chunk])
        say(f"{name}: deleted {min(start + _FORGET_CHUNK, len(retired))}/{len(retired)} retired")
    for stat in orphans:
        fileio.delete_file(stat.path, missing_ok=True)
        deleted.append(stat.path)
    _remove_emptied_dirs(fileio, paths, location, deleted)
    say(f"{name}: vacuumed {len(retired)} retired file(s) and {len(orphans)} orphan(s)")


def _remove_folders(
    fileio: FileIO,
    paths: VacuumPaths,
    location: str,
    folders: Mapping[str, Sequence[FileStat]],
    say: Progress,
) -> None:
    """Hand each orphan folder to the layout, then drop partition directories it leaves
    empty (never the folder's own name: another writer may have just put one there)."""
    removed = [f for f in sorted(folders) if paths.remove_folder(f)]
    for folder in sorted(set(folders) - set(removed)):
        say(f"kept {folder}: its writer's layout found it is not an orphan any more")
    parents = {f"{location}/{f}".rsplit("/", 1)[0] for f in removed}
    for directory in sorted(parents - {location}, key=lambda d: d.count("/"), reverse=True):
        fileio.delete_empty_dir(directory)


def _remove_emptied_dirs(
    fileio: FileIO, paths: VacuumPaths, location: str, deleted: Sequence[str]
) -> None:
    """Remove the directories that deleting the ``deleted`` files left without files.

    First the ``version_id=N`` / ``txn=N`` directories that held them, with everything in
    them: their transactions have ended, so nobody writes there any more. Then, deepest
    first, the directories above, up to the table directory (never it), and ``_staging/``,
    which every write leaves behind: partition directories and their ``_index/`` mirror.
    Writers may be adding a version to one of those right now, so a directory goes only if
    no file is in it, checked and deleted in one step (`FileIO.delete_empty_dir`): a file
    written meanwhile stays, and so do the directories above it. A partition directory's
    empty subdirectories (a compaction that kept no row leaves an empty ``version_id=C``)
    go with it; under ``_staging/`` a running Spark job's still empty output directories
    must not, so ``_staging/`` goes only when it holds nothing at all.
    """
    txn_dirs = {d for path in deleted for d in _transaction_dir(paths, path)}
    for directory in sorted(txn_dirs, key=len, reverse=True):
        if not fileio.list_files(directory):
            fileio.delete_dir(directory, missing_ok=True)
    holders = {d.rsplit("/", 1)[0] for d in txn_dirs}
    holders.update(p.rsplit("/", 1)[0] for p in deleted if not _transaction_dir(paths, p))
    candidates = {f"{location}/{STAGING_DIR}"}
    for holder in holders:
        parts = holder[len(location) + 1 :].split("/") if holder != location else []
        if parts and parts[0] != DEAD_LETTER_DIR:
            candidates.update(f"{location}/{'/'.join(parts[:i])}" for i in range(1, len(parts) + 1))
    for directory in sorted(candidates, key=lambda d: d.count("/"), reverse=True):
        top = directory[len(location) + 1 :].split("/", 1)[0]
        fileio.delete_empty_dir(
            directory, empty_subdirs=directory in holders and top != STAGING_DIR
        )


def _oldest_retained(history: Sequence[CommitInfo], cutoff: float) -> CommitInfo | None:
    """The oldest commit whose snapshot must stay readable."""
    if not history:
        return None
    before = [c for c in history if c.committed_at <= cutoff]
    return before[-1] if before else history[0]


def _retired_before(ledger: Sequence[DataFile], seq: int) -> list[DataFile]:
    """Files no snapshot from commit ``seq`` on lists: retired at or before ``seq``."""
    return [f for f in ledger if f.removed_seq is not None and f.removed_seq <= seq]


def _transaction_dir(paths: VacuumPaths, path: str) -> list[str]:
    """The transaction directory holding ``path`` (to drop once empty)."""
    parts = path.split("/")
    for i in range(len(parts) - 2, -1, -1):
        if paths.transaction_dir.match(parts[i]):
            return ["/".join(parts[: i + 1])]
    return []


def _timed(result: VacuumResult, started: float) -> VacuumResult:
    return replace(result, seconds=round(time.monotonic() - started, 3))
