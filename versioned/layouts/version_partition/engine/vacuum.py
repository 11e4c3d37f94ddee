"""Vacuum of a version-partition table: the shared vacuum (`versioned.layouts.vacuum`) with
this layout's path rules (``version_id=N`` and ``_staging/txn=N`` directories)."""

from __future__ import annotations

import re

from versioned.layouts.engine_protocol import EngineContext
from versioned.layouts.table_request import VacuumRequest
from versioned.layouts.vacuum import VacuumPaths
from versioned.layouts.vacuum import vacuum_table as _vacuum
from versioned.layouts.version_partition.layout import LAYOUT
from versioned.results import VacuumResult

TRANSACTION_DIR = re.compile(r"^(?:version_id|txn)=(\d+)$")


def vacuum_table(ctx: EngineContext, request: VacuumRequest) -> VacuumResult:
    """Delete the table's files no snapshot within ``retain_hours`` reads, and orphans
    (see `versioned.layouts.vacuum.vacuum_table`)."""
    return _vacuum(ctx, request, VacuumPaths(LAYOUT, TRANSACTION_DIR))
