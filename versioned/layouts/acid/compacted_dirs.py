"""What a compaction's output folder holds besides its bucket files (plain Python)::

    base_W/  or  delta_MIN_MAX/  or  delete_delta_MIN_MAX/
      bucket_NNNNN ...
      _orc_acid_version               "2", as in every acid directory (`paths`)
      _metadata_acid                  {"thisFileVersion":"0","dataFormat":"compacted"} (bases)
      _versioned_compactor_txn=T      empty: the compactor transaction T that wrote the folder

``_metadata_acid`` is Hive 3's ``AcidUtils.MetaDataFile``: Hive 3 (and Hive 4, for a base
without ``_vT``) takes a base without it for an INSERT OVERWRITE base, which keeps its
history and so serves snapshots a compacted base must refuse. Hive 2.3 has no such file (its
``AcidUtils`` treats every base alike) and skips it, as Hive's readers skip every name
starting with ``_``.

The mark names the transaction that wrote the folder, which its name no longer says (no
``_vT``): between the moment a compactor gives its folder its Hive name and its commit, the
folder is on storage under a name another compaction of the same write ids also wants, and
the mark tells whether the writer may still commit it (its transaction is open) or never will
(`versioned.layouts.acid.engine.placement`). Both files are listed in the commit's manifest
(``MARKER_KIND``), so they are retired and vacuumed with their folder; only the folder of a
compactor that died before its commit has them unlisted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from versioned.layouts.acid.directories import (
    ACID_VERSION_CONTENT,
    ACID_VERSION_MARKER,
    AcidDir,
    BaseDir,
    is_hidden,
    parse_directory,
)
from versioned.layouts.acid.errors import AcidNameError
from versioned.layouts.acid.paths import acid_dir_path
from versioned.storage.filesystem import FileIO

METADATA_FILE = "_metadata_acid"
COMPACTED_METADATA = b'{"thisFileVersion":"0","dataFormat":"compacted"}'
"""Hive 3's ``MetaDataFile`` content for a compactor's base (version 0, compacted)."""
COMPACTOR_MARK_PREFIX = "_versioned_compactor_txn="
_MARK = re.compile(rf"^{re.escape(COMPACTOR_MARK_PREFIX)}(\d+)$")


def compactor_mark(txn_id: int) -> str:
    """The file name marking a folder as written by compactor transaction ``txn_id``."""
    return f"{COMPACTOR_MARK_PREFIX}{txn_id}"


def is_compactor_mark(name: str) -> bool:
    """Whether a file name is a compactor's mark (`compactor_mark`)."""
    return _MARK.match(name) is not None


def compactor_of(names: Iterable[str]) -> int | None:
    """The compactor transaction a folder's file names mark, or ``None`` without a mark."""
    for name in names:
        match = _MARK.match(name)
        if match:
            return int(match.group(1))
    return None


def compaction_markers(directory: AcidDir, txn_id: int) -> dict[str, bytes]:
    """The marker files (name -> content) compactor ``txn_id`` writes into ``directory``,
    also when it holds no bucket file (every event was deleted or aborted): Hive's
    compactor, too, leaves an empty base, which hides the deltas it replaces."""
    markers = {ACID_VERSION_MARKER: ACID_VERSION_CONTENT, compactor_mark(txn_id): b""}
    if isinstance(directory, BaseDir):
        markers[METADATA_FILE] = COMPACTED_METADATA
    return markers


def write_compaction_markers(
    fileio: FileIO, root: str, partition: str, directory: AcidDir, txn_id: int
) -> dict[str, int]:
    """Write `compaction_markers` into ``<root>/<partition>/<directory>``.

    Returns:
        Their paths relative to ``root`` (as the manifest lists them), with their sizes.
    """
    folder = acid_dir_path(partition, directory)
    written = {}
    for name, content in compaction_markers(directory, txn_id).items():
        fileio.write_bytes_atomic(f"{root}/{folder}/{name}", content)
        written[f"{folder}/{name}"] = len(content)
    return written


def marked_folders(unlisted: Iterable[str]) -> dict[str, str]:
    """The files among ``unlisted`` (paths relative to the table) that lie in a compaction
    folder holding a compactor's mark, each mapped to that folder.

    Such a folder is a compaction's output that no commit lists (yet): vacuum must treat it
    whole (`versioned.layouts.acid.engine.placement.remove_orphan_folder`), never file by file.
    Folders under a hidden one (``_staging/``) are the compactor's own, not Hive-visible.
    """
    rels = list(unlisted)
    folders = set()
    for rel in rels:
        folder, _, name = rel.rpartition("/")
        if _MARK.match(name) and is_visible_acid_folder(folder):
            folders.add(folder)
    return {rel: folder for rel in rels if (folder := rel.rpartition("/")[0]) in folders}


def is_visible_acid_folder(folder: str) -> bool:
    """Whether ``folder`` (relative to the table) is an acid directory Hive's readers see
    (none of its parents hidden)."""
    *parents, name = folder.split("/")
    if any(is_hidden(p) for p in parents):
        return False
    try:
        return parse_directory(name) is not None
    except AcidNameError:
        return False
