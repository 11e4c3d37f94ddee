"""Repeated, interleaved and warmed-up timings, and their medians.

Every timing is a `Meter` result (``seconds``, ``cpu_s``, ``others_cpu_s``). Variants compared
with each other run interleaved, round by round, so that load from other processes on the
shared machine hits them alike; reports give medians.
"""

from __future__ import annotations

import math
import shutil
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from benchmarks.harness.log import log
from benchmarks.harness.meter import Meter

T = TypeVar("T")
Timing = dict[str, Any]
Order = Literal["fixed", "rotate", "alternate"]


def median(values: Iterable[float]) -> float:
    """The median, or NaN when there is nothing to take it of (a report shows ``nan``)."""
    values = list(values)
    return statistics.median(values) if values else math.nan


def medians(timings: list[Timing]) -> dict[str, float]:
    """Median wall and CPU seconds of ``timings``."""
    return {
        "seconds": median(t["seconds"] for t in timings),
        "cpu_s": median(t["cpu_s"] for t in timings),
    }


def rotated(items: Sequence[T], turn: int) -> list[T]:
    """``items`` starting at position ``turn`` (modulo its length): round ``turn``'s order."""
    k = turn % len(items) if items else 0
    return [*items[k:], *items[:k]]


def alternating(items: Sequence[T], turn: int) -> list[T]:
    """``items`` in order on odd turns, reversed on even ones (turn 0 is reversed)."""
    return list(items) if turn % 2 else list(items)[::-1]


def ordered(items: Sequence[T], turn: int, order: Order) -> list[T]:
    """Round ``turn``'s order of ``items``: ``fixed``, `rotated` or `alternating`."""
    if order == "rotate":
        return rotated(items, turn)
    if order == "alternate":
        return alternating(items, turn)
    return list(items)


def checkpoints(points: Sequence[int], last: int) -> list[int]:
    """The ``points`` up to ``last``, and ``last``: where a run of ``last`` steps (batches,
    versions) stops to measure (``1, 5, 10`` of 10 steps; ``1, 3`` of a 3-step smoke run)."""
    return sorted({p for p in points if p <= last} | {last})


def repeat(fn: Callable[[int], object], times: int, *, warm_up: int = 0) -> list[Timing]:
    """Call ``fn(i)`` ``warm_up`` times untimed (``i`` = -1, -2, ...), then ``times`` times
    timed (``i`` = 0, 1, ...); the timings."""
    for i in range(warm_up):
        fn(-1 - i)
    timings = []
    for i in range(times):
        with Meter() as meter:
            fn(i)
        timings.append(meter.result())
    return timings


@dataclass
class Interleaved:
    """The timings of each variant, in round order, and each variant's last answer."""

    timings: dict[str, list[Timing]]
    answers: dict[str, Any] = field(default_factory=dict)


def interleave(
    variants: Mapping[str, Callable[[], Any]],
    rounds: int,
    *,
    order: Order = "fixed",
    warm_up_rounds: int = 0,
) -> Interleaved:
    """Run every variant once per round, ``warm_up_rounds`` untimed rounds first.

    Round ``r`` (counting the warm-up rounds from 0) runs the variants in `ordered` order.
    """
    names = list(variants)
    result = Interleaved({name: [] for name in names})
    for r in range(warm_up_rounds + rounds):
        for name in ordered(names, r, order):
            with Meter() as meter:
                result.answers[name] = variants[name]()
            if r >= warm_up_rounds:
                result.timings[name].append(meter.result())
    return result


def warm_up(rows: int, work: Path, run: Callable[[], object]) -> None:
    """A small untimed run of the Spark paths (``run``, on ``rows`` rows under ``work``), so
    that the timed runs do not pay JIT compilation and class loading; ``rows`` 0 skips it."""
    if not rows:
        return
    log(f"warming up the JVM ({rows:,} rows, not recorded)")
    run()
    shutil.rmtree(work, ignore_errors=True)
