"""A new process's state on the shared SparkSession: no SparkContext is active until versioned
asks for its session.

In a scheduled job (a cron job, an Airflow task) a command is the first thing its process does:
no SparkContext exists until versioned starts one, and building a Spark column or expression
before that (``F.col``, ``F.lit``, ``F.expr``) fails with PySpark's bare ``AssertionError``.
The suite's shared session is always active, which hides that; `spark_not_started` takes it
away (PySpark's active context and sessions) until `Catalog.spark` asks for a session, then
hands the shared one back. A test runs an operation inside it on a catalog opened without a
session (``connect(...)`` with no ``spark=``), as the CLI opens one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass
class SparkStarts:
    """How often the code under test asked for a session while none was active."""

    asked: int = 0


@contextmanager
def spark_not_started(spark: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[SparkStarts]:
    """Detach the shared session ``spark`` until versioned asks for one (`Catalog.spark`
    builds it with `get_or_create_spark`), as in a process where nothing has started it."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    import versioned.engine.spark.session as session_module

    context = SparkContext._active_spark_context
    assert context is not None, "the shared session must be running"
    saved = (SparkSession._instantiatedSession, SparkSession._activeSession)
    starts = SparkStarts()

    def attach() -> None:
        SparkContext._active_spark_context = context
        SparkSession._instantiatedSession, SparkSession._activeSession = saved

    def started(*args: Any, **kwargs: Any) -> Any:
        starts.asked += 1
        attach()
        return spark

    def no_session_yet() -> bool:
        return SparkContext._active_spark_context is not None

    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    with monkeypatch.context() as patch:
        patch.setattr(session_module, "get_or_create_spark", started)
        patch.setattr(session_module, "has_active_session", no_session_yet)
        try:
            yield starts
        finally:
            attach()
