"""Spark's side of an S3 warehouse: Hadoop's S3A connector set up from the same AWS settings as
the driver's pyarrow file system (`versioned.storage.object_store`), and the connector's jars
on the classpath of the sessions versioned builds (issue 46).

The jars are not part of PySpark: ``VERSIONED_SPARK_JARS`` names them (comma-separated paths,
e.g. those ``make jars`` puts in ``.jars/s3a/``: ``hadoop-aws`` of PySpark's Hadoop version and
the AWS SDK bundle it was built with). A session given by the caller must have them already;
its Hadoop settings for the warehouse's bucket are set when the catalog first uses it, and a
session without the connector is one clear error then, not a Java stack trace at its first
write.
"""

from __future__ import annotations

import os
from typing import Any

from versioned.errors import StorageError
from versioned.storage.object_store import S3A_CLASS, S3Location

ENV_SPARK_JARS = "VERSIONED_SPARK_JARS"
_HADOOP = "spark.hadoop."


def session_settings(location: S3Location | None) -> dict[str, str]:
    """The configuration a session versioned builds starts with for the warehouse: S3A's
    settings for its bucket and ``spark.jars`` from ``VERSIONED_SPARK_JARS``."""
    if location is None:
        return {}
    conf = location.spark_conf()
    jars = os.environ.get(ENV_SPARK_JARS, "").strip()
    if jars:
        conf["spark.jars"] = jars
    return conf


def apply_to_session(spark: Any, location: S3Location | None) -> None:
    """Set S3A's settings for the warehouse's bucket on a running (classic) session's Hadoop
    configuration: a session the caller built, or one that was running already.

    Raises:
        StorageError: The session's classpath has no S3A connector.
    """
    if location is None:
        return
    context = getattr(spark, "sparkContext", None)
    jsc = getattr(context, "_jsc", None)
    if jsc is None:  # Spark Connect: the server's configuration is its own
        return
    hadoop = jsc.hadoopConfiguration()
    if hadoop.getClassByNameOrNull(S3A_CLASS) is None:
        raise StorageError(
            f"Spark cannot reach the warehouse s3://{location.bucket}: Hadoop's S3A connector "
            f"({S3A_CLASS}) is not on its classpath; run `make jars` and set "
            f"{ENV_SPARK_JARS}=$(ls .jars/s3a/*.jar | paste -sd, -) (docs/object-storage.md)",
            bucket=location.bucket,
        )
    for key, value in location.spark_conf().items():
        hadoop.set(key[len(_HADOOP) :], value)
