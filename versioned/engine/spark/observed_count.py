"""Counts Spark takes while an action reads a DataFrame (no job of their own)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F


class ObservedCount:
    """Counts Spark takes while an action reads a DataFrame, without a job of their own.

    Reading one never blocks: before an action has read the whole frame it is None (and the
    caller counts with a job of its own).
    """

    def __init__(self, frame: DataFrame, condition: Column, name: str, **more: Column) -> None:
        self._observation = Observation()
        counts = {name: condition, **more}
        self.frame = frame.observe(
            self._observation,
            *[F.count(F.when(c, F.lit(1))).alias(n) for n, c in counts.items()],
        )
        self._name = name

    def value(self, name: str | None = None) -> int | None:
        """The count ``name`` (default: the first), once an action has read the frame; else
        None."""
        try:  # pyspark has no public non-blocking read; `get` waits for ever
            done = self._observation._jo.future().isCompleted()  # type: ignore[union-attr]
        except Exception:  # another Spark build: count with a job instead
            return None
        if not done:
            return None
        try:
            metrics = self._observation.get
        except Exception:  # no metrics row: AQE proved the plan empty (every row rejected)
            return None
        return int(metrics[name or self._name])
