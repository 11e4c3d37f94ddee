"""Vacuum of a version-partition table: the shared vacuum (`versioned.layouts.vacuum`) with
this layout's path rules (``version_id=N`` and ``_staging/txn=N`` directories)."""

from __future__ import annotations

import re
from collections.abc import Callable

from versioned.catalog.records import TableInfo
from versioned.catalog.store import MetaStore
from versioned.layouts.vacuum import (
    DEFAULT_GRACE_HOURS,
    DEFAULT_RETAIN_HOURS,
    VacuumPaths,
)
from versioned.layouts.vacuum import vacuum_table as _vacuum
from versioned.layouts.version_partition.layout import LAYOUT
from versioned.results import VacuumResult
from versioned.storage.filesystem import FileIO

TRANSACTION_DIR = re.compile(r"^(?:version_id|txn)=(\d+)$")


def vacuum_table(
    store: MetaStore,
    fileio: FileIO,
    table: TableInfo,
    *,
    retain_hours: float = DEFAULT_RETAIN_HOURS,
    grace_hours: float = DEFAULT_GRACE_HOURS,
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> VacuumResult:
    """Delete the table's files no snapshot within ``retain_hours`` reads, and orphans
    (see `versioned.layouts.vacuum.vacuum_table`)."""
    paths = VacuumPaths(LAYOUT, TRANSACTION_DIR)
    return _vacuum(
        store,
        fileio,
        paths,
        table,
        retain_hours=retain_hours,
        grace_hours=grace_hours,
        dry_run=dry_run,
        progress=progress,
    )
