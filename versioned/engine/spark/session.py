"""The SparkSession versioned uses when the caller does not hand one in.

A session built here leaves nothing behind in the working directory: Spark's own warehouse
(where its in-memory catalog creates a folder per database), Derby's home and log go to a
private temporary folder that is removed when the process exits.

It is quiet unless asked: the JVM's stderr goes to a pipe that is shown only with a log level
(``versioned --verbose``, or ``VERSIONED_LOG_LEVEL``; `engine.jvm_output`), and even then
Spark logs at that level only. Without one Spark logs only errors, which are also raised to
the caller (failed tasks are reported by the exception the caller gets, so their
executor-side log lines are dropped). Errors reach the user through versioned's messages.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from versioned.config import ENV_LOG_LEVEL, log_level

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

DEFAULT_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.driver.memory": "4g",
    # PySpark 4 sends the Python call site of every Column function to the JVM (about eight
    # py4j round trips each: the session, a class lookup, a setting, set, clear) for error
    # messages that would point into versioned's own code. Off, building a plan costs a
    # quarter of it (`F.col("a") + F.lit(1)`: 3.9 ms -> 1.0 ms); a session the caller passes
    # in keeps its own setting.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}

_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
# Spark treats a PySpark driver as a shell and caps the console at the level of the logger
# that set logging up, this one (WARN unless configured: INFO and DEBUG would not get through).
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = {level}
"""
# Quiet (no log level asked for): what remains at ERROR is also raised to the caller.
_LOG4J2_QUIET = """\
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
"""


@cache
def private_dir() -> Path:
    """A folder of this process for Spark's warehouse, Derby and the log configuration.

    Created on first use, removed at exit.
    """
    path = Path(tempfile.mkdtemp(prefix="versioned-spark-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def log4j_config(level: str | None) -> Path:
    """The log4j2 configuration file of a session logging at ``level`` (``None``: quiet)."""
    path = private_dir() / f"log4j2-{(level or 'quiet').lower()}.properties"
    if not path.exists():
        text = _LOG4J2.format(level=(level or "error").lower())
        path.write_text(text if level else text + _LOG4J2_QUIET, encoding="utf-8")
    return path


def session_log_level(requested: str | None = None) -> str | None:
    """The log level of a new session: ``requested``, else ``VERSIONED_LOG_LEVEL``, else
    ``None`` (quiet)."""
    return log_level(requested if requested is not None else os.environ.get(ENV_LOG_LEVEL))


def session_conf(
    extra: dict[str, str] | None = None, *, level: str | None = None, archive: bool = True
) -> dict[str, str]:
    """The configuration a session built by versioned starts with (``extra`` wins).

    ``archive``: the driver JVM maps the class-data archive, when one was made
    (`versioned.engine.spark.class_archive`)."""
    from versioned.engine.spark.class_archive import java_options as archive_options

    home = private_dir()
    java_options = (
        f"-Dlog4j2.configurationFile={log4j_config(level).as_uri()} "
        f"-Dderby.system.home={home / 'derby'} -Dderby.stream.error.file={home / 'derby.log'}"
    )
    mapped = archive_options() if archive else ""
    if mapped:
        java_options = f"{java_options} {mapped}"
    conf = {
        **DEFAULT_CONF,
        "spark.sql.warehouse.dir": (home / "spark-warehouse").as_uri(),
        "spark.driver.extraJavaOptions": java_options,
    }
    for key, value in (extra or {}).items():
        if key == "spark.driver.extraJavaOptions":
            value = f"{java_options} {value}"
        conf[key] = value
    return conf


def has_active_session() -> bool:
    """Whether this thread has an active SparkSession (`get_or_create_spark` returns it
    without starting anything)."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is not None


def get_or_create_spark(
    master: str = "local[*]",
    app_name: str = "versioned",
    conf: dict[str, str] | None = None,
    *,
    log_level: str | None = None,
    archive: bool = True,
) -> SparkSession:
    """Return the active SparkSession, or build one for ``master`` with sensible defaults.

    ``log_level`` (a log4j level; default ``VERSIONED_LOG_LEVEL``) asks for Spark's output on
    stderr at that level; without one the session is quiet (see the module's docstring).
    ``archive``: map the class-data archive when one was made (`session_conf`).
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    level = session_log_level(log_level)
    spark_conf = SparkConf().setMaster(master).setAppName(app_name)
    spark_conf.setAll(list(session_conf(conf, level=level, archive=archive).items()))
    # Python workers (``mapInArrow``: the acid layout's bucket hash) run this interpreter,
    # which has versioned's dependencies, unless PYSPARK_PYTHON names another.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if SparkContext._active_spark_context is None and _can_launch_jvm():
        from versioned.engine.spark.jvm_output import launch_gateway

        gateway = launch_gateway(spark_conf, forward=level is not None)
        try:
            with _own_sigint_handler_kept():
                SparkContext(conf=spark_conf, gateway=gateway)
        except BaseException:
            _forget_jvm(gateway)  # interrupted or failed: no half-started JVM stays behind
            raise
    with _own_sigint_handler_kept():  # a context it starts (under spark-submit) takes it too
        session = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    session.sparkContext.setLogLevel(level or "ERROR")
    if level is None:
        _quiet_query_error_logs()
    return session


def cancel_all_jobs() -> None:
    """Ask the SparkContext of this process, if one runs, to cancel every job it runs.

    Safe in a signal handler: the request goes from a thread of its own, since a py4j call
    from the main thread would reuse the connection an interrupted call of that thread is
    still waiting on (PySpark's own Ctrl-C handler does that, and fails with a traceback).
    Does nothing when PySpark was never imported.
    """
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is not None:
        threading.Thread(
            target=_cancel_jobs, args=(context,), name="versioned-cancel-jobs", daemon=True
        ).start()


def _cancel_jobs(context: SparkContext) -> None:
    with contextlib.suppress(Exception):  # the JVM may be gone already: nothing to cancel
        context.cancelAllJobs()


@contextlib.contextmanager
def _own_sigint_handler_kept() -> Iterator[None]:
    """A SparkContext that starts puts PySpark's SIGINT handler in place, which cancels jobs
    with a py4j call from the main thread: interrupting one, it fails with py4j's tracebacks.
    A handler the application installed itself (the command line's) is put back at once,
    so that a Ctrl-C while the session is still being built is the application's too;
    Python's default one is left to PySpark."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if callable(previous) and previous is not signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)


def _forget_jvm(gateway: Any) -> None:
    """Stop the JVM of a SparkContext whose start did not finish, and let the next session
    launch a new one (PySpark keeps the gateway of a failed start)."""
    from pyspark import SparkContext

    from versioned.engine.spark.jvm_output import stop_jvm

    stop_jvm(gateway)
    with SparkContext._lock:
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None


def _can_launch_jvm() -> bool:
    """Whether the next SparkContext starts its own JVM here: not under ``spark-submit``
    (which hands over a running one) and not while an earlier JVM of ours still runs."""
    from pyspark import SparkContext

    return SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ


def _quiet_query_error_logs() -> None:
    """PySpark logs every failed query's error with its JVM stack on stderr; the error is
    raised to the caller anyway (and versioned reports it), so the log only adds noise."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # pragma: no cover - older PySpark logs nothing of the kind
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
