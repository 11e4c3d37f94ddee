"""One check per session that Spark's Python workers can run versioned's code.

Acid upserts (Hive's bucket ids), the version layout's bulk load (Bloom pieces), `vm.apply` and
the change stream run Python in Spark's worker processes. A session whose workers run another
interpreter than the one versioned is installed in (a virtualenv's python started without
activating it, ``PYSPARK_PYTHON`` unset) failed there only after the first task's retries, with
a long ``PythonException … No module named 'versioned'``. `require_python_workers` runs one
one-row task first, once per session and worker interpreter, and says in one line which
interpreter the workers run and how to point them at the right one.
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from versioned.errors import ConfigError

WORKER_MODULES = ("pyarrow", "versioned", "sqlalchemy", "pyorc", "pybloom_live")
"""What versioned's code in the workers imports (a missing one fails the check)."""

log = logging.getLogger(__name__)
_WAIT_FOR_JOB_S = 30.0
_POLL_S = 0.05
_MISSING = re.compile(r"No module named '([^']+)'")
_CHECKED: set[tuple[str, str]] = set()  # (application id, worker interpreter) that passed


def require_python_workers(spark: Any, also: Sequence[str] = ()) -> None:
    """Check, once per session and worker interpreter, that Spark's Python workers import
    versioned and its dependencies (and the modules ``also`` names: a job about to run
    imports them in the workers the check leaves running).

    Raises:
        ConfigError: They cannot: one line naming the interpreter, the module and the fix.
    """
    context = spark.sparkContext
    if (str(context.applicationId), str(context.pythonExec)) in _CHECKED:
        return
    modules = (*WORKER_MODULES, *also)

    def import_all(batches: Iterator[Any]) -> Iterator[Any]:
        for name in modules:
            importlib.import_module(name)
        yield from batches

    with python_worker_job(spark):
        spark.range(0, 1, 1, 1).mapInArrow(import_all, "id long").collect()


@contextmanager
def checked_beside(spark: Any, also: Sequence[str] = ()) -> Iterator[None]:
    """Run `require_python_workers` beside the block's Spark job (one that runs no Python,
    such as a write): the check's one-task job starts once the block's job is running, so
    that it takes a core the block's job leaves idle at its end, and Spark's Python workers
    (whose first start costs 1-2 s in a fresh process) are up, with ``also`` imported, when
    the next job needs them.

    Raises:
        ConfigError: When the block ends: the workers cannot import versioned's code.
    """
    context = spark.sparkContext
    if (str(context.applicationId), str(context.pythonExec)) in _CHECKED:
        yield
        return
    ended, block_failed = threading.Event(), threading.Event()
    failed: list[ConfigError] = []

    def check() -> None:
        tracker = context.statusTracker()
        waited = time.monotonic() + _WAIT_FOR_JOB_S
        while not tracker.getActiveJobsIds() and not ended.is_set() and time.monotonic() < waited:
            ended.wait(_POLL_S)  # after the block's job, so that its tasks come first
        if block_failed.is_set():
            return  # no job follows that needs the workers
        try:
            require_python_workers(spark, also)
        except ConfigError as exc:
            failed.append(exc)
        except Exception:  # a lost warm-up only costs the next job its start
            log.debug("the Python workers' check beside a job failed", exc_info=True)

    thread = threading.Thread(target=check, name="versioned-python-workers", daemon=True)
    thread.start()
    try:
        yield
    except BaseException:
        block_failed.set()
        raise
    finally:
        ended.set()
        thread.join()
    if failed:
        raise failed[0]


@contextmanager
def python_worker_job(spark: Any) -> Iterator[None]:
    """Run a job of Python tasks that itself does the check of `require_python_workers`
    (no job before it): a worker that cannot import a module fails the job with the same
    one-line `ConfigError`, and a job that ran marks the session checked.

    Raises:
        ConfigError: The workers cannot import what versioned's code needs.
    """
    context = spark.sparkContext
    key = (str(context.applicationId), str(context.pythonExec))
    try:
        yield
    except Exception as exc:
        found = _MISSING.search(str(exc))
        if found is None:
            raise
        raise ConfigError(
            f"Spark's Python workers run {context.pythonExec}, which cannot import "
            f"{found.group(1)!r}: point them at the Python versioned is installed in "
            f"({sys.executable}) with PYSPARK_PYTHON or spark.pyspark.python (docs/cluster.md)"
        ) from None
    _CHECKED.add(key)
