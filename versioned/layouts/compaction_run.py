"""Compaction's skeleton, shared by the layouts (as `versioned.layouts.vacuum` is vacuum's).

What every layout's compaction does alike is here: say what is to be compacted (or that
nothing is), answer a dry run with the planned rows, compact the partitions one by one or a
few at a time, label each partition's progress, and give each partition its attempts: a
commit that loses its race (`CommitConflictError`) plans the partition again against a fresh
snapshot, a partition another compaction emptied is ``skipped``, and one whose attempts all
lose is left as it was (``conflict``), the others still compacted.

What differs is the layout's (`PartitionCompactor`): its plans, the row a planned partition
shows in a dry run, and one attempt at one partition (plan again if it is not the first,
write, commit). Plain Python over the plans: the layout's attempt starts Spark, if anything.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, TypeVar

from versioned.catalog.write_transaction import retry_on_conflict
from versioned.errors import CommitConflictError
from versioned.results import CompactionResult, PartitionCompaction

if TYPE_CHECKING:
    from versioned.layouts.table_request import CompactRequest
    from versioned.options import Progress

P = TypeVar("P")
P_contra = TypeVar("P_contra", contravariant=True)


@dataclasses.dataclass(frozen=True)
class NothingLeft:
    """An attempt found nothing left to compact in its partition: another compaction
    committed first. ``high_water_mark``: the partition's head then, if the layout knows it."""

    high_water_mark: int | None = None


class PartitionCompactor(Protocol[P_contra]):
    """What a layout gives `run_compaction` for plans of type ``P``."""

    @property
    def retry_message(self) -> str:
        """Said when a partition's commit lost its race and it is planned again."""
        ...

    @property
    def gave_up_message(self) -> str | None:
        """Said when every attempt lost (None: nothing more than the result)."""
        ...

    def path(self, plan: P_contra) -> str:
        """The partition's path (``""``: the table's one partition)."""
        ...

    def high_water_mark(self, plan: P_contra) -> int | None:
        """The head a partition left as it was reports."""
        ...

    def planned(self, plan: P_contra) -> PartitionCompaction:
        """The row of a dry run (status ``planned``)."""
        ...

    def attempt(self, plan: P_contra, n: int, say: Progress) -> PartitionCompaction | NothingLeft:
        """Attempt ``n`` (from 1) at the planned partition: plan again against a fresh
        snapshot unless it is the first, then write and commit.

        Raises:
            CommitConflictError: The commit lost its race (the skeleton tries again).
        """
        ...


def run_compaction(
    request: CompactRequest,
    plans: Sequence[P],
    compactor: PartitionCompactor[P],
    *,
    started: float,
    parallelism: int = 1,
) -> CompactionResult:
    """Compact the planned partitions of the request's table, each committed on its own,
    ``parallelism`` at a time (see the module); ``started``: when the request began (the
    result's seconds count from it)."""
    say = request.say
    name = str(request.table.spec.name)
    if not plans:
        say(f"{name}: nothing to compact")
        return CompactionResult(name, request.dry_run, (), _since(started))
    say(f"{name}: {len(plans)} partition(s) to compact")
    if request.dry_run:
        planned = tuple(compactor.planned(p) for p in plans)
        return CompactionResult(name, True, planned, _since(started))

    def one(numbered: tuple[int, P]) -> PartitionCompaction:
        i, plan = numbered
        label = f"{name} [{i}/{len(plans)}] {compactor.path(plan) or '(table)'}"
        return _with_attempts(compactor, plan, _labelled(say, label), request.options.max_attempts)

    numbered = list(enumerate(plans, 1))
    if parallelism == 1 or len(plans) == 1:
        done = [one(n) for n in numbered]
    else:
        with ThreadPoolExecutor(
            min(parallelism, len(plans)), thread_name_prefix="versioned-compact"
        ) as pool:
            try:
                done = list(pool.map(one, numbered))
            except KeyboardInterrupt:  # Ctrl-C: partitions not begun yet stay as they are
                pool.shutdown(cancel_futures=True)
                raise
    return CompactionResult(name, False, tuple(done), _since(started))


def _with_attempts(
    compactor: PartitionCompactor[P], first: P, say: Progress, max_attempts: int
) -> PartitionCompaction:
    """One partition, with up to ``max_attempts`` attempts."""
    started = time.monotonic()
    path = compactor.path(first)

    def attempt(n: int) -> PartitionCompaction:
        done = compactor.attempt(first, n, say)
        if isinstance(done, NothingLeft):
            say("nothing left to compact (compacted concurrently)")
            return PartitionCompaction(
                path,
                "skipped",
                high_water_mark=done.high_water_mark,
                attempts=n,
                seconds=_since(started),
                message="nothing left to compact: another compaction committed first",
            )
        return dataclasses.replace(done, attempts=n, seconds=_since(started))

    try:
        return retry_on_conflict(
            max_attempts, attempt, on_retry=lambda _n, _err: say(compactor.retry_message)
        )
    except CommitConflictError as gave_up:
        if compactor.gave_up_message:
            say(compactor.gave_up_message)
        return PartitionCompaction(
            path,
            "conflict",
            high_water_mark=compactor.high_water_mark(first),
            attempts=max_attempts,
            seconds=_since(started),
            message=str(gave_up),
        )


def _labelled(say: Progress, label: str) -> Callable[[str], None]:
    return lambda message: say(f"{label}: {message}")


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)
