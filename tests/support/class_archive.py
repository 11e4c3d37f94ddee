"""A class-data archive (Java's AppCDS) for the test JVMs: Spark's classes loaded and verified
once, then mapped from a file by every later JVM.

A test JVM spends much of its start loading and verifying the same ~15,000 classes of Spark,
Hadoop and Hive. `ensure_archive` runs one probe session (a small upsert, read and
compaction of each layout) whose JVM writes the classes it loaded to an archive at exit
(``-XX:ArchiveClassesAtExit``); `archive_options` gives the option that maps it
(``-XX:SharedArchiveFile``). On 2 cores a worker's start and first query took 8 CPU-seconds
without it and 5 with it. The soak starts about twenty such JVMs; the shared sessions of
`make test` use it too.

The archive sits in the virtualenv (``<sys.prefix>/versioned-test-classes/``), named by a
hash of what it depends on (the Java version, PySpark's jars, the classpath and the JVM
options), and is made once per virtualenv: under a file lock, so CI's two lanes make it
once. It serves JVMs whose classpath starts as the probe's did (`hive_common_first`); the
cluster's JVMs (a scratch SPARK_HOME) and the console-script runs (no extra classpath) start
without it. A JVM that cannot map it runs as if it had none: the option only saves time, and
its messages are switched off (``-Xlog:cds=off``) so that no test sees them on stderr.

    python -m tests.support.class_archive    # make it now (prints where it is)
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from tests.support.spark_settings import LOCAL_INTERPRETED, SHORT_LIVED_JVM, hive_common_first

ENV_CLASS_ARCHIVE_OFF = "VERSIONED_TEST_CLASS_ARCHIVE"
OFF = os.environ.get(ENV_CLASS_ARCHIVE_OFF) == "off"
"""``VERSIONED_TEST_CLASS_ARCHIVE=off``: no archive is made or mapped (read at import: the
tests clear ``VERSIONED_*`` from their environment). For a run in a new virtualenv that
starts few JVMs, where making the archive costs more than it saves: CI's test-oldest-spark
stage (its first test's set-up took 120 s beside the other lane, most of it the probe)."""
QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
"""Options beside the archive: use it if it maps, and say nothing either way."""


@cache
def _java_version() -> str:
    java = Path(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else "java"
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stderr


def archive_path() -> Path:
    """Where the archive of this virtualenv, Java and PySpark is (whether made or not)."""
    import pyspark

    jars = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    key = "\n".join([_java_version(), *jars, repr(hive_common_first()), SHORT_LIVED_JVM])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(sys.prefix) / "versioned-test-classes" / f"spark-{digest}.jsa"


def archive_options() -> str:
    """The JVM options that map the archive, or ``""`` when it has not been made."""
    if OFF:
        return ""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path.is_file() else ""


def ensure_archive() -> str:
    """Make the archive unless it exists (a probe session, ~15 s once per virtualenv) and
    return `archive_options`. A probe that fails leaves no archive: the tests then run
    without one, which is slower, and say so on stderr once."""
    path = archive_path()
    if OFF or path.is_file():
        return archive_options()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be making it
        if not path.is_file():
            _make(path)
    return archive_options()


def _make(path: Path) -> None:
    fd, scratch = tempfile.mkstemp(prefix=".making-", suffix=".jsa", dir=path.parent)
    os.close(fd)
    os.unlink(scratch)  # the JVM writes it at exit
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.class_archive", "--dump", scratch],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode == 0 and Path(scratch).is_file():
        os.replace(scratch, path)
        return
    Path(scratch).unlink(missing_ok=True)
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    print(f"no class archive for the test JVMs (they start slower): {tail}", file=sys.stderr)


def _probe(dump_to: str) -> None:
    """The probe session: what a test JVM loads first (both layouts' upsert, read, compact)."""
    import versioned
    from versioned.engine.spark.session import get_or_create_spark

    spark = get_or_create_spark(
        "local[1]",
        "versioned-test-class-archive",
        conf={
            "spark.sql.shuffle.partitions": "2",
            **LOCAL_INTERPRETED,
            **hive_common_first(),
            "spark.driver.extraJavaOptions": f"{SHORT_LIVED_JVM} -XX:ArchiveClassesAtExit="
            f"{dump_to} -Xlog:cds=off -Xlog:cds+dynamic=off",
        },
        archive=False,
    )
    with tempfile.TemporaryDirectory() as scratch:
        catalog = versioned.connect(warehouse=scratch, spark=spark, user="probe")
        columns = "id BIGINT, name STRING, region STRING, op STRING"
        for layout in ("versioned", "acid"):
            table = catalog.create_table(
                f"probe.{layout}",
                columns=columns,
                primary_key="id",
                partition_by="region",
                op_code_column="op",
                layout=layout,
            )
            for rows in ([(1, "a", "x", "I"), (2, "b", "y", "I")], [(1, "c", "x", "U")]):
                table.upsert(spark.createDataFrame(rows, columns))
            table.read().collect()
            table.compact()
        catalog.close()
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        _probe(sys.argv[2])
    else:
        ensure_archive()
        print(archive_path() if archive_path().is_file() else "no archive was made")
