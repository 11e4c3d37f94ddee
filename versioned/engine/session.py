"""The SparkSession versioned uses when the caller does not hand one in.

A session built here leaves nothing behind in the working directory: Spark's own warehouse
(where its in-memory catalog creates a folder per database), Derby's home and log go to a
private temporary folder that is removed when the process exits, and Spark logs only errors
that are not also raised to the caller (failed tasks are reported by the exception the
caller gets, so their executor-side log lines are dropped).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
}

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


@cache
def private_dir() -> Path:
    """A folder of this process for Spark's warehouse, Derby and the log configuration.

    Created on first use, removed at exit.
    """
    path = Path(tempfile.mkdtemp(prefix="versioned-spark-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    (path / "log4j2.properties").write_text(_LOG4J2, encoding="utf-8")
    return path


def session_conf(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The configuration a session built by versioned starts with (``extra`` wins)."""
    home = private_dir()
    java_options = (
        f"-Dlog4j2.configurationFile={(home / 'log4j2.properties').as_uri()} "
        f"-Dderby.system.home={home / 'derby'} -Dderby.stream.error.file={home / 'derby.log'}"
    )
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


def get_or_create_spark(
    master: str = "local[*]", app_name: str = "versioned", conf: dict[str, str] | None = None
) -> SparkSession:
    """Return the active SparkSession, or build one for ``master`` with sensible defaults."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in session_conf(conf).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    _quiet_query_error_logs()
    return session


def _quiet_query_error_logs() -> None:
    """PySpark logs every failed query's error with its JVM stack on stderr; the error is
    raised to the caller anyway (and versioned reports it), so the log only adds noise."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # pragma: no cover - older PySpark logs nothing of the kind
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
