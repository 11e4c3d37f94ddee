"""A table's own maintenance policy: its ``auto_compact`` properties, checked, and the
compaction thresholds they set (plain Python: the catalog's commit-time summary of a
partition judges with them, as the write's own maintenance does, `versioned.api.auto_maintenance`).

A new table has ``auto_compact=true`` (`new_table_properties`); a table without the property
(created before it existed) or with ``auto_compact=false`` is left to ``versioned compact``.
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

from collections.abc import Mapping

from versioned.errors import SchemaError
from versioned.options import CompactionThresholds
from versioned.schema import TableSpec

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


def new_table_properties(properties: Mapping[str, str] | None) -> dict[str, str]:
    """A new table's properties: ``auto_compact=true`` unless given; the settings checked.

    Raises:
        SchemaError: An ``auto_compact`` property has a bad value or an unknown name.
    """
    merged = {AUTO_COMPACT: "true", **(properties or {})}
    settings_of(merged, "the new table")
    return merged


def check_properties(properties: Mapping[str, str], owner: object) -> None:
    """Check a table's ``auto_compact`` settings before they are stored.

    Raises:
        SchemaError: A value is bad or a setting's name unknown.
    """
    settings_of(properties, str(owner))


def auto_thresholds(spec: TableSpec) -> CompactionThresholds | None:
    """The thresholds of the table's own maintenance, or ``None`` when it is off.

    Raises:
        SchemaError: An ``auto_compact`` property has a bad value.
    """
    settings = settings_of(spec.properties, str(spec.name))
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


def settings_of(properties: Mapping[str, str], owner: str) -> dict[str, float] | None:
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
