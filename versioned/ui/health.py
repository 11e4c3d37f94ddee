"""The health marks of a table: what the overview flags, by rules a legend explains.

Each rule reads rows the metadata tables already hold (`versioned.api.metadata_tables`):

* **needs compaction**: some partition has ``compaction_due``, i.e. the table's maintenance
  policy (the ``auto_compact.*`` properties) would compact it now;
* **stream writer idle**: a streaming writer last recorded a batch more than
  `IDLE_AFTER_S` ago and the table got no commit since (the writer stopped, and nothing
  else writes the table either);
* **dead letters rising**: the last `WINDOW` commits rejected more rows than the `WINDOW`
  commits before them (with fewer than ``2 * WINDOW`` commits, the earlier window is what
  there is, possibly nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

IDLE_AFTER_S = 15 * 60
"""A streaming writer silent this long, with no commit to the table since, is idle."""
WINDOW = 10
"""Commits per window of the dead-letter rule."""


@dataclass(frozen=True)
class HealthMark:
    """One mark on a table: its kind (`LEGEND`'s key) and what set it off."""

    kind: str
    detail: str

    @property
    def label(self) -> str:
        """The mark's name, as the legend lists it."""
        return LEGEND[self.kind][0]


LEGEND: Mapping[str, tuple[str, str]] = {
    "compaction": (
        "needs compaction",
        "a partition is past the thresholds of the table's maintenance policy "
        "(auto_compact.* properties): the compaction it would run is listed per partition",
    ),
    "idle": (
        "stream writer idle",
        f"a streaming writer recorded no batch for {IDLE_AFTER_S // 60} minutes and the "
        "table got no commit since",
    ),
    "dead_letters": (
        "dead letters rising",
        f"the last {WINDOW} commits rejected more rows than the {WINDOW} commits before them",
    ),
}
"""Each mark's kind -> (name, the rule that sets it)."""


def health_marks(
    history: Sequence[Mapping[str, Any]],
    partitions: Sequence[Mapping[str, Any]],
    writers: Sequence[Mapping[str, Any]],
    now: datetime,
) -> list[HealthMark]:
    """The marks a table earns from its ``history``, ``partitions`` and
    ``stream_progress`` rows (as `Table.metadata` gives them), at time ``now`` (aware)."""
    marks = []
    due = [p for p in partitions if p.get("compaction_due")]
    if due:
        first = due[0]
        where = first["partition"] or "the table"
        more = f" and {len(due) - 1} more" if len(due) > 1 else ""
        marks.append(HealthMark("compaction", f"{where}: {first['compaction_due']}{more}"))
    idle = idle_writers(history, writers, now)
    if idle:
        names = ", ".join(str(w["writer_id"]) for w in idle)
        marks.append(HealthMark("idle", f"no batch for over {IDLE_AFTER_S // 60} min: {names}"))
    recent, before = rejected_windows(history)
    if recent > before:
        marks.append(
            HealthMark(
                "dead_letters",
                f"{recent:,} rows rejected by the last {WINDOW} commits, {before:,} before",
            )
        )
    return marks


def idle_writers(
    history: Sequence[Mapping[str, Any]],
    writers: Sequence[Mapping[str, Any]],
    now: datetime,
) -> list[Mapping[str, Any]]:
    """The writers of ``stream_progress`` silent for `IDLE_AFTER_S` with no commit since."""
    last_commit = history[-1] if history else None
    idle = []
    for writer in writers:
        recorded = writer["recorded_at"]
        if (now - recorded).total_seconds() <= IDLE_AFTER_S:
            continue
        if last_commit is not None and _committed_after(last_commit, writer):
            continue
        idle.append(writer)
    return idle


def _committed_after(commit: Mapping[str, Any], writer: Mapping[str, Any]) -> bool:
    """Whether ``commit`` (the table's latest) came after the writer's last batch: a later
    commit number than the one the batch made, or (a batch that committed nothing) a later
    time."""
    if writer.get("commit") is not None:
        return bool(commit["commit"] > writer["commit"])
    return bool(commit["committed_at"] > writer["recorded_at"])


def rejected_windows(history: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """Rows rejected by the last `WINDOW` commits and by the `WINDOW` before them."""
    rejected = [r.get("rejected") or 0 for r in history]
    recent = rejected[-WINDOW:] if rejected else []
    before = rejected[-2 * WINDOW : -WINDOW] if len(rejected) > WINDOW else []
    return sum(recent), sum(before)
