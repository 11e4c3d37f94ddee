"""When Hive's compaction initiator compacts a partition, and how (``Initiator``).

Plain Python over sizes and counts, so that the rule is tested without Spark:

1. More aborted write ids in the partition than ``hive.compactor.abortedtxn.threshold``
   (default 1000) -> major.
2. No delta -> nothing to do.
3. Deltas but no base: the "no base" case (a minor compaction would still need a major one
   later, so it becomes major once the delta count is reached).
4. Delta bytes over base bytes above ``hive.compactor.delta.pct.threshold`` (default 0.1)
   -> major.
5. More deltas than ``hive.compactor.delta.num.threshold`` (default 10) -> minor (major in
   the no-base case); otherwise nothing.

The thresholds are read from table properties the way Hive reads per-table overrides
(``compactorthreshold.hive.compactor.delta.pct.threshold``); the short forms
``compactor.delta.pct.threshold`` etc. are accepted too. Hive's time-based aborted rule
(``hive.compactor.aborted.txn.time.threshold``) is not applied: aborted writes leave no
committed files here, only multi-write-id deltas can hold aborted rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from versioned.errors import InputError

CompactionKind = Literal["major", "minor"]

PCT_PROPERTY = "compactor.delta.pct.threshold"
NUM_PROPERTY = "compactor.delta.num.threshold"
ABORTED_PROPERTY = "compactor.abortedtxn.threshold"
HIVE_OVERRIDE_PREFIX = "compactorthreshold.hive."
DEFAULT_PCT = 0.1
DEFAULT_NUM = 10
DEFAULT_ABORTED = 1000


@dataclass(frozen=True)
class InitiatorThresholds:
    """Hive's initiator thresholds for one table."""

    delta_pct: float = DEFAULT_PCT
    delta_num: int = DEFAULT_NUM
    aborted: int = DEFAULT_ABORTED

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> InitiatorThresholds:
        """The thresholds of a table: its properties over Hive's defaults.

        Raises:
            InputError: A property is not a number >= 0.
        """
        return cls(
            delta_pct=_number(properties, PCT_PROPERTY, DEFAULT_PCT, float),
            delta_num=int(_number(properties, NUM_PROPERTY, DEFAULT_NUM, int)),
            aborted=int(_number(properties, ABORTED_PROPERTY, DEFAULT_ABORTED, int)),
        )


@dataclass(frozen=True)
class PartitionAcidStats:
    """What the initiator looks at in one partition (current directories only).

    Attributes:
        base_bytes: Size of the chosen base's files (0: no base).
        delta_bytes: Size of the chosen deltas' files (insert and delete deltas).
        deltas: Number of chosen delta directories (insert and delete deltas).
        aborted: Aborted write ids inside the ranges of those deltas.
    """

    base_bytes: int
    delta_bytes: int
    deltas: int
    aborted: int = 0


def choose_compaction(
    stats: PartitionAcidStats, thresholds: InitiatorThresholds
) -> tuple[CompactionKind | None, str]:
    """The compaction Hive's initiator starts for a partition, and why (``None``: none)."""
    if stats.aborted > thresholds.aborted:
        return "major", f"{stats.aborted} aborted write ids > {thresholds.aborted}"
    if stats.deltas == 0:
        return None, "no delta"
    no_base = stats.base_bytes == 0
    if not no_base:
        ratio = stats.delta_bytes / stats.base_bytes
        if ratio > thresholds.delta_pct:
            return "major", f"delta/base size {ratio:.3g} > {thresholds.delta_pct}"
    if stats.deltas > thresholds.delta_num:
        kind: CompactionKind = "major" if no_base else "minor"
        why = f"{stats.deltas} deltas > {thresholds.delta_num}" + (" (no base)" if no_base else "")
        return kind, why
    return None, f"{stats.deltas} deltas <= {thresholds.delta_num}, delta/base size below"


def _number(
    properties: Mapping[str, str], name: str, default: float, kind: type[float] | type[int]
) -> float:
    raw = properties.get(HIVE_OVERRIDE_PREFIX + name, properties.get(name))
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if not value >= 0:
        raise InputError(
            f"table property {name}={raw!r} must be a number >= 0 (Hive's default: {default})",
            property=name,
        )
    return value
