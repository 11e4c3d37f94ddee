"""The table's own maintenance: after a write commits, compact what crossed its thresholds.

A new table has ``auto_compact=true`` (`new_table_properties`); a table without the property
(created before it existed) or with ``auto_compact=false`` is left to ``versioned compact``.
After each committed upsert or delete through `Table`, the write's call compacts, in the
same process and before it returns, the partitions that crossed one of the table's
thresholds (`auto_thresholds`, from catalog metadata only: nothing is read when nothing is
due). The write is committed first: maintenance never changes what it committed, and a
failed maintenance is a warning (`MaintenanceWarning`), not a failed write. Compactions
commit partition by partition with compare-and-swap like any other (``docs/
compaction-and-vacuum.md``), so concurrent writers, readers of older snapshots and time
travel see what they would with a compaction run by hand; each compaction's commit records
``trigger: auto`` (``history``), and `describe` shows the settings and the last run.

The thresholds, table properties over these defaults (the version-partition layout):

* ``auto_compact.index_ratio`` (0.005): version-index entries over the partition's stored
  rows. Any entry makes a read of the partition read its keys and probe them (about 1.6x a
  plain scan for a narrow query), and the probe grows with the entries; a rewrite costs
  about a plain rewrite of the partition. At 0.5 % a table taking 1 % batches of scattered
  updates is compacted after every batch (reads near 1.0x), one taking 0.1 % batches every
  six or so;
* ``auto_compact.min_versions`` (10): versions a partition holds (the compacted one
  included), for writes that add rows without updating any (each version is files to open);
* ``auto_compact.min_small_files`` (10): data files under half the target size;
* ``auto_compact.min_rows`` (10000): partitions with fewer stored rows are compacted only for
  small files: their reads cost little either way.

The acid layout follows Hive's initiator rules (its ``compactor.*`` properties, as the
scheduled ``versioned compact --all`` does) for partitions of at least ``min_rows``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from versioned.errors import SchemaError, VersionedError
from versioned.options import CompactionOptions, CompactionThresholds, WriteOptions

if TYPE_CHECKING:
    from versioned.api.table_maintenance import TableMaintenance
    from versioned.options import Progress
    from versioned.results import CompactionResult
    from versioned.schema import TableSpec

log = logging.getLogger(__name__)

AUTO_COMPACT = "auto_compact"
_PREFIX = f"{AUTO_COMPACT}."
_ON, _OFF = ("true", "on", "yes", "1"), ("false", "off", "no", "0")
DEFAULTS: Mapping[str, float] = {
    "min_versions": 10,
    "index_ratio": 0.005,
    "min_small_files": 10,
    "min_rows": 10_000,
}
_WHOLE = ("min_versions", "min_small_files", "min_rows")


class MaintenanceWarning(UserWarning):
    """A table's own maintenance failed after its write committed (the write stands)."""


def new_table_properties(properties: Mapping[str, str] | None) -> dict[str, str]:
    """A new table's properties: ``auto_compact=true`` unless given; the settings checked.

    Raises:
        SchemaError: An ``auto_compact`` property has a bad value or an unknown name.
    """
    merged = {AUTO_COMPACT: "true", **(properties or {})}
    _check(merged, "the new table")
    return merged


def check_properties(properties: Mapping[str, str], owner: object) -> None:
    """Check a table's ``auto_compact`` settings before they are stored.

    Raises:
        SchemaError: A value is bad or a setting's name unknown.
    """
    _check(properties, str(owner))


def auto_thresholds(spec: TableSpec) -> CompactionThresholds | None:
    """The thresholds of the table's own maintenance, or ``None`` when it is off.

    Raises:
        SchemaError: An ``auto_compact`` property has a bad value.
    """
    settings = _check(spec.properties, str(spec.name))
    if settings is None:
        return None
    return _thresholds(settings)


def policy_thresholds(spec: TableSpec) -> CompactionThresholds:
    """The thresholds of the table's own maintenance, or the defaults when it is off (what
    the policy would pick: the metadata tables and ``versioned ui`` show it)."""
    return auto_thresholds(spec) or _thresholds(DEFAULTS)


def _thresholds(settings: Mapping[str, float]) -> CompactionThresholds:
    return CompactionThresholds(
        min_versions=int(settings["min_versions"]),
        max_index_entries=None,
        min_small_files=int(settings["min_small_files"]),
        index_ratio=settings["index_ratio"] or None,
        min_rows=int(settings["min_rows"]),
    )


def describe_maintenance(spec: TableSpec, history: list[Any]) -> dict[str, Any]:
    """What `Table.describe` shows: on or off, the thresholds, and the last automatic run."""
    settings = _check(spec.properties, str(spec.name))
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


def _check(properties: Mapping[str, str], owner: str) -> dict[str, float] | None:
    """The maintenance settings of ``properties`` (None: off), every value checked."""
    raw = str(properties.get(AUTO_COMPACT, "false")).strip().lower()
    if raw not in _ON + _OFF:
        raise SchemaError(
            f"table property {AUTO_COMPACT}={properties[AUTO_COMPACT]!r} of {owner} must be "
            "true or false",
            property=AUTO_COMPACT,
        )
    settings = dict(DEFAULTS)
    for name, value in properties.items():
        if not name.startswith(_PREFIX):
            continue
        key = name[len(_PREFIX) :]
        if key not in DEFAULTS:
            raise SchemaError(
                f"unknown table property {name} of {owner}; the {AUTO_COMPACT} settings are "
                + ", ".join(_PREFIX + k for k in DEFAULTS),
                property=name,
            )
        settings[key] = _number(name, value, owner, whole=key in _WHOLE)
    return settings if raw in _ON else None


def _number(name: str, value: str, owner: str, *, whole: bool) -> float:
    try:
        number = int(value) if whole else float(value)
    except ValueError:
        number = -1
    if not number >= 0:
        kind = "a whole number" if whole else "a number"
        raise SchemaError(
            f"table property {name}={value!r} of {owner} must be {kind} >= 0",
            property=name,
        )
    return float(number)
