"""The table's own maintenance: after a write commits, compact what crossed its thresholds.

A new table has ``auto_compact=true``; a table without the property (created before it
existed) or with ``auto_compact=false`` is left to ``versioned compact``.
After each committed upsert or delete through `Table`, the write's call compacts, in the
same process and before it returns, the partitions that crossed one of the table's
thresholds (`auto_thresholds`, from catalog metadata only: nothing is read when nothing is
due). The write is committed first: maintenance never changes what it committed, and a
failed maintenance is a warning (`MaintenanceWarning`), not a failed write. Compactions
commit partition by partition with compare-and-swap like any other (``docs/
compaction-and-vacuum.md``), so concurrent writers, readers of older snapshots and time
travel see what they would with a compaction run by hand; each compaction's commit records
``trigger: auto`` (``history``), and `describe` shows the settings and the last run.

The thresholds and the properties that set them: `versioned.maintenance_policy`.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Any

from versioned.errors import VersionedError
from versioned.maintenance_policy import auto_thresholds, settings_of
from versioned.options import CompactionOptions, WriteOptions

if TYPE_CHECKING:
    from versioned.api.table_maintenance import TableMaintenance
    from versioned.options import Progress
    from versioned.results import CompactionResult
    from versioned.schema import TableSpec

log = logging.getLogger(__name__)


class MaintenanceWarning(UserWarning):
    """A table's own maintenance failed after its write committed (the write stands)."""


def describe_maintenance(spec: TableSpec, history: list[Any]) -> dict[str, Any]:
    """What `Table.describe` shows: on or off, the thresholds, and the last automatic run."""
    settings = settings_of(spec.properties, str(spec.name))
    auto = [c for c in history if c.operation == "compact" and c.metrics.get("trigger") == "auto"]
    last = max(auto, key=lambda c: c.seq) if auto else None
    return {
        "auto_compact": settings is not None,
        "auto_compact_thresholds": dict(settings) if settings is not None else None,
        "auto_compactions": len(auto),
        "last_auto_compaction": (
            {
                "version": last.version,
                "committed_at": last.committed_at,
                "partition": last.metrics.get("partition"),
            }
            if last is not None
            else None
        ),
    }


def maintain(
    maintenance: TableMaintenance,
    spec: TableSpec,
    progress: Progress | None,
    write_options: WriteOptions | None = None,
) -> CompactionResult | None:
    """Run the table's own maintenance after a committed write; ``None`` when it is off
    (`TableMaintenance.after_write`).

    ``spec``: the table's definition the write resolved (its properties decide).

    Its transactions time out like the write's (``write_options.txn_timeout_s``). A failure
    is a `MaintenanceWarning` (the write committed already) and returns ``None``.
    """
    try:
        thresholds = auto_thresholds(spec)
        if thresholds is None:
            return None
        say = progress or (lambda _m: None)
        options = CompactionOptions()
        if write_options is not None:
            options = CompactionOptions(txn_timeout_s=write_options.txn_timeout_s)
        return maintenance.compact(
            thresholds=thresholds,
            options=options,
            progress=lambda m: say(f"auto compaction: {m}"),
            trigger="auto",
        )
    except (VersionedError, OSError) as error:
        message = (
            f"{maintenance.table_name}: automatic compaction failed; the write committed: {error}"
        )
        log.warning(message)
        warnings.warn(message, MaintenanceWarning, stacklevel=4)
        return None
