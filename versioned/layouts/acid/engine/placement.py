"""Giving a compaction's folders their Hive names: written out of sight, renamed just before
the commit (plain Python over the catalog and `FileIO`).

Hive's readers list a partition's folders (ours read the catalog's manifest). So a compactor
writes its folders under its staging folder (``_staging/txn=T/compacted/<partition>/<name>``:
hidden from Hive, claimed by T, so an abort removes them and vacuum leaves them while T
runs) and, once they are complete, moves each to its name with one rename and commits. Hive
sees a compacted folder whole or not at all.

The names carry no ``_vT``, so a folder may already be at the name (`folder_state`):

* ``committed``: the catalog lists a file in it (another compaction of the same write ids
  committed first, or one retired but not yet vacuumed): `CommitConflictError`, and the
  compactor plans again;
* ``writing``: unlisted, marked (`compacted_dirs`) by a transaction still open: another
  compaction of the same write ids is between its rename and its commit:
  `CommitConflictError` too;
* ``orphan``: unlisted, and its mark's transaction is not open: its compactor died between
  its rename and its commit, or its commit failed. It can never commit the folder: an
  aborted transaction stays aborted, and a committed one would be listed (the catalog is
  read after the transaction states). `remove_orphan_folder` moves it under a hidden folder
  of ours (one rename: Hive never sees it half deleted) and deletes it there; then ours takes
  the name. What it held is what ours holds: a name's events are fixed by the name
  (`compaction_plan`);
* ``foreign``: unlisted files without a mark: no versioned compactor wrote them, so they are
  left alone and the compaction fails saying so.

On an object store a folder moves object by object (a copy and a delete each), so a move
is seen half done, and one that fails stays half done. Its mark is what keeps that safe
(`move_folder`): it is copied to the new place before any other file and deleted from the
old one after all of them, so each end holds the mark whenever it holds a file of the
folder. A half-moved folder at a Hive name is then an orphan of its compactor, never
"foreign", and vacuum, which reads the name's files whole or not at all by the mark, never
takes one of them for a lone orphan file.

Two parties may judge one orphan at once (two compactions of the same write ids, or one and
vacuum): the one that moves it second may find another compactor's fresh folder at the name
instead, so what is moved aside is checked again and moved back unless it bears the same
mark. If the commit then loses a race (`CommitConflictError`), the transaction is still open,
so nobody else touches its folders: `unplace_folders` moves them back under its staging
folder before it aborts. Vacuum removes orphans through `remove_orphan_folder` too, never
file by file.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Literal

from versioned.catalog.records import TableInfo
from versioned.errors import CommitConflictError, StorageError
from versioned.layouts.acid.compacted_dirs import compactor_of, is_compactor_mark
from versioned.layouts.engine_protocol import EngineContext
from versioned.storage.filesystem import FileIO

log = logging.getLogger(__name__)
FolderState = Literal["absent", "committed", "writing", "orphan", "foreign"]


def folder_state(ctx: EngineContext, table: TableInfo, rel: str) -> FolderState:
    """What is at ``rel`` (a compaction folder, relative to the table); see the module."""
    return _inspect(ctx, table, rel)[0]


def remove_orphan_folder(ctx: EngineContext, table: TableInfo, rel: str, hidden: str) -> bool:
    """Remove the folder at ``rel`` (relative to the table) if it is an orphan.

    It moves to a new folder under ``hidden`` (a folder Hive does not read, on the table's
    file system) and is deleted there.

    Returns:
        Whether nothing is left at ``rel``.

    Raises:
        StorageError: A folder moved aside turned out not to be the orphan (another
            compactor's took the name meanwhile) and could not be moved back; the message
            says where it is.
    """
    return _clear(ctx, table, rel, hidden) == "absent"


def _inspect(ctx: EngineContext, table: TableInfo, rel: str) -> tuple[FolderState, int | None]:
    """The folder's state and the compactor its mark names."""
    store, fileio = ctx.store, ctx.fileio
    folder = f"{table.location}/{rel}"
    if not fileio.exists(folder):
        return "absent", None
    names = _names(fileio, folder)
    owner = compactor_of(names)
    # The transaction states first, then the catalog: a compactor that commits in between
    # is then listed, so "not open" and "unlisted" together mean it never commits.
    store.reap_expired()
    open_ids = store.txn_snapshot().open_ids
    if any(f.path.startswith(f"{rel}/") for f in store.all_files(table.spec.name)):
        return "committed", owner
    if owner is not None and owner in open_ids:
        return "writing", owner
    if owner is None and fileio.list_files(folder):
        return "foreign", owner
    return "orphan", owner


def _clear(ctx: EngineContext, table: TableInfo, rel: str, hidden: str) -> FolderState:
    """Remove an orphan at ``rel``; the state that keeps the name taken, or ``absent``."""
    state, owner = _inspect(ctx, table, rel)
    fileio = ctx.fileio
    if state != "orphan":
        return state
    folder = f"{table.location}/{rel}"
    aside = f"{hidden}/orphan.{uuid.uuid4().hex}"
    try:
        move_folder(fileio, folder, f"{aside}/{rel}")
    except StorageError as err:
        if getattr(err, "not_found", False):
            return "absent"  # someone else removed it first
        raise
    if compactor_of(_names(fileio, f"{aside}/{rel}")) != owner:
        # Another compactor removed the orphan and put its own folder there meanwhile.
        _move_back(fileio, f"{aside}/{rel}", folder)
        fileio.delete_dir(aside, missing_ok=True)
        return "writing"
    fileio.delete_dir(aside, missing_ok=True)
    log.info("removed %s of %s: an orphan of compactor %s", rel, table.spec.name, owner)
    return "absent"


def place_folders(
    ctx: EngineContext, table: TableInfo, staged: str, rels: Sequence[str]
) -> list[str]:
    """Move each folder ``<staged>/<rel>`` to ``<table>/<rel>``, removing an orphan of
    that name first (its remains go under ``staged``).

    Returns:
        The folders moved (a compaction that wrote nothing into one has no folder there).

    Raises:
        CommitConflictError: A folder of that name is committed, or another compactor's
            is about to be; nothing stays moved.
        StorageError: Files no versioned compactor wrote are at the name.
    """
    fileio = ctx.fileio
    placed: list[str] = []
    try:
        for rel in rels:
            if not fileio.exists(f"{staged}/{rel}"):
                continue
            _make_room(ctx, table, rel, staged)
            try:
                move_folder(fileio, f"{staged}/{rel}", f"{table.location}/{rel}")
            except StorageError as err:
                # The name was taken after all (a rename onto a folder fails on a local file
                # system); on an object store it is a fault, and what was moved is ours.
                local = fileio.object_store is None
                if local and folder_state(ctx, table, rel) in ("committed", "writing"):
                    raise _taken(table, rel, "was taken meanwhile") from err
                raise
            placed.append(rel)
    except BaseException:
        unplace_folders(fileio, table, staged, placed)
        raise
    return placed


def unplace_folders(fileio: FileIO, table: TableInfo, staged: str, rels: Sequence[str]) -> None:
    """Move placed folders back under ``staged`` (before the transaction aborts, while no
    one else may touch them), so that Hive no longer sees them."""
    for rel in reversed(rels):
        move_folder(fileio, f"{table.location}/{rel}", f"{staged}/{rel}")


def _make_room(ctx: EngineContext, table: TableInfo, rel: str, hidden: str) -> None:
    state = _clear(ctx, table, rel, hidden)
    if state == "absent":
        return
    if state == "foreign":
        names = _names(ctx.fileio, f"{table.location}/{rel}")
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        raise StorageError(
            f"{table.location}/{rel} holds files that no versioned commit lists and no versioned "
            f"compactor wrote ({shown}); move them out of the table's folder and compact again",
            path=rel,
        )
    what = "is committed" if state == "committed" else "is being committed by another compaction"
    raise _taken(table, rel, what)


def _taken(table: TableInfo, rel: str, what: str) -> CommitConflictError:
    return CommitConflictError(
        f"{table.spec.name}: {rel} {what}; planning again",
        table=str(table.spec.name),
        path=rel,
    )


def _move_back(fileio: FileIO, aside: str, folder: str) -> None:
    try:
        move_folder(fileio, aside, folder)
    except StorageError as err:
        raise StorageError(
            f"moved {folder} aside to {aside} as an orphan, but another compactor's folder had "
            f"taken its name, and moving it back failed ({err}); move {aside} back to {folder}",
            path=folder,
        ) from err


def move_folder(fileio: FileIO, src: str, dst: str) -> None:
    """Move the compaction folder ``src`` to ``dst`` (paths under ``fileio``'s root): one
    rename where the file system has them; on an object store file by file, its compactor's
    mark copied first and deleted from ``src`` last (see the module).

    Raises:
        StorageError: The move failed (on an object store, part of the folder may be at
            each end, both marked); ``not_found`` when nothing is at ``src``.
    """
    if fileio.object_store is None:
        fileio.move(src, dst)
        return
    files = [s.path for s in fileio.list_files(src)]
    if not files:
        raise StorageError(f"cannot move {src!r}: not found", path=src, not_found=True)
    marks = [p for p in files if is_compactor_mark(p.rpartition("/")[2])]
    for path in marks:
        fileio.write_bytes_atomic(dst + path[len(src) :], fileio.read_bytes(path))
    for path in files:
        if path not in marks:
            fileio.move_file(path, dst + path[len(src) :])
    for path in marks:
        fileio.delete_file(path, missing_ok=True)


def _names(fileio: FileIO, folder: str) -> list[str]:
    return [s.path.rpartition("/")[2] for s in fileio.list_files(folder, recursive=False)]
