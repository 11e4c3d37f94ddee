"""The Spark session a benchmark runs in: its own, or one JVM shared by a run of several.

Alone, a benchmark builds its session as versioned builds its own
(`versioned.engine.spark.session.get_or_create_spark`, ``local[2]``: the machine's two cores),
with the settings it asks for. Inside `shared_session` (``python -m benchmarks run all``)
every benchmark gets a new session of one shared JVM instead: its own SQL settings and temp
views, no JVM start and no second JIT warm-up. Settings fixed when the JVM starts (driver
memory, master) are then the shared session's; `machine` records the ones in force.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from benchmarks.harness.log import log

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MASTER = "local[2]"
_shared: list[SparkSession] = []


def _build(master: str, app_name: str, conf: dict[str, str] | None) -> SparkSession:
    from versioned.engine.spark.session import get_or_create_spark

    return get_or_create_spark(master, app_name=app_name, conf=conf)


def spark_session(
    app_name: str, conf: dict[str, str] | None = None, *, master: str = MASTER
) -> SparkSession:
    """The session of the benchmark ``app_name``, with ``conf`` (see the module docstring)."""
    if not _shared:
        return _build(master, app_name, conf)
    session = _shared[-1].newSession()
    for key, value in (conf or {}).items():
        if session.conf.isModifiable(key):
            session.conf.set(key, value)
        elif session.sparkContext.getConf().get(key) != value:
            log(f"{app_name}: {key}={value} not applied (the shared session's JVM is running)")
    return session


def is_shared() -> bool:
    """Whether benchmarks now run in a shared session (`shared_session`)."""
    return bool(_shared)


@contextmanager
def shared_session(conf: dict[str, str] | None = None) -> Iterator[SparkSession]:
    """Build one session; every `spark_session` inside the block is a new session of it."""
    spark = _build(MASTER, "benchmarks", conf)
    _shared.append(spark)
    try:
        yield spark
    finally:
        _shared.pop()
