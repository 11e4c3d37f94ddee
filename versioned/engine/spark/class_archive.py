"""Java's class-data archive (AppCDS) of the classes a versioned command's Spark loads.

A new JVM spends seconds loading, parsing and verifying the thousands of classes of Spark,
Hadoop, Hive and Arrow that one command touches, every time: a scheduled job's JVM lives for
one command. A dynamic class-data archive (``-XX:ArchiveClassesAtExit``, Java 13 and later)
holds them already parsed and verified; a JVM that maps it (``-XX:SharedArchiveFile``)
skips that work. On the 2-core machine it took Spark's start from 4.9 s to 2.6 s and a
10-row upsert's own work from 6.7 s to 4.6 s (benchmarks/results/scheduled_job.md).

`make_archive` writes it once (``versioned init`` does), by a probe process that runs what
commands run (upserts of CSV, JSON and Parquet files, reads, SQL, changes and compactions of
a table of each layout, in a scratch warehouse) in a JVM that dumps its classes when it
exits. The archive lives under the user's cache folder (``$XDG_CACHE_HOME/versioned``, else
``~/.cache/versioned``; ``VERSIONED_CLASS_ARCHIVE=DIR`` names another, ``=off`` turns it off),
named by what it depends on: the Java binary, PySpark's version and jars. A session versioned
builds maps it when it exists (`java_options`); a JVM that cannot map it (another Java, an
extra classpath) starts as if there were none, silently: the archive only saves time.

    python -m versioned.engine.spark.class_archive    # make it now (prints where it is)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ENV_CLASS_ARCHIVE = "VERSIONED_CLASS_ARCHIVE"
"""``off`` (or ``0``, ``false``, ``no``): no archive is made or mapped; a folder: where it is."""
QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
"""Options beside the archive: map it if it fits, and say nothing either way."""
PROBE_TIMEOUT_S = 900


def enabled() -> bool:
    """Whether ``VERSIONED_CLASS_ARCHIVE`` leaves the archive on."""
    value = os.environ.get(ENV_CLASS_ARCHIVE, "").strip().lower()
    return value not in ("off", "0", "false", "no")


def archive_dir() -> Path:
    """The folder of the archives (`ENV_CLASS_ARCHIVE`, else the user's cache folder)."""
    named = os.environ.get(ENV_CLASS_ARCHIVE, "").strip()
    if named and enabled():
        return Path(named).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "versioned" / "class-archive"


def _java() -> Path | None:
    """The Java binary Spark's launcher will run (``JAVA_HOME``, else ``java`` on PATH)."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home, "bin", "java")) if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def archive_path() -> Path | None:
    """Where the archive for this Java and PySpark is (made or not); None without a Java."""
    import pyspark

    java = _java()
    if java is None:
        return None
    stat = java.stat()
    jars = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    key = "\n".join([str(java), str(stat.st_size), str(stat.st_mtime_ns), pyspark.__version__])
    digest = hashlib.sha256("\n".join([key, *jars]).encode()).hexdigest()[:16]
    return archive_dir() / f"spark-{pyspark.__version__}-{digest}.jsa"


def java_options() -> str:
    """The driver JVM's options that map the archive, or ``""`` (none made, or turned off)."""
    if not enabled():
        return ""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path is not None and path.is_file() else ""


def make_archive(say: Callable[[str], None] = lambda _m: None) -> Path | None:
    """Make the archive unless it exists or is turned off; its path, or None.

    Runs the probe in a process of its own (about 20-40 s on 2 cores); the archive appears
    only once the probe's JVM has written it whole (written beside it, then renamed), so a
    JVM never maps half an archive. A probe that fails leaves nothing and says why.
    """
    path = archive_path() if enabled() else None
    if path is None or path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".making-{os.getpid()}-{path.name}")
    scratch.unlink(missing_ok=True)
    say(f"preparing Spark's class archive (once): {path}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERSIONED_")}
    done = subprocess.run(
        [sys.executable, "-m", "versioned.engine.spark.class_archive", "--dump", str(scratch)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # nothing of the probe's lands in the caller's folder
        timeout=PROBE_TIMEOUT_S,
    )
    if done.returncode == 0 and scratch.is_file():
        os.replace(scratch, path)
        return path
    scratch.unlink(missing_ok=True)
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
    say(f"no class archive was made (Spark starts as before): {' '.join(tail)}")
    return None


def _probe(dump_to: str) -> None:
    """What commands run, in a JVM that writes the classes it loaded to ``dump_to`` at exit."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import versioned
    from versioned.engine.spark.jvm_output import launched_process
    from versioned.engine.spark.session import get_or_create_spark

    options = f"-XX:ArchiveClassesAtExit={dump_to} -Xlog:cds=off -Xlog:cds+dynamic=off"
    spark = get_or_create_spark(
        "local[*]", conf={"spark.driver.extraJavaOptions": options}, archive=False
    )
    with tempfile.TemporaryDirectory(prefix="versioned-class-probe-") as scratch:
        root = Path(scratch)
        catalog = versioned.connect(warehouse=str(root / "wh"), spark=spark, user="probe")
        rows = pa.table(
            {
                "op": ["I", "I", "U"],
                "id": pa.array([1, 2, 3], pa.int64()),
                "v": ["a", "b", "c"],
                "amount": [1.0, 2.0, 3.0],
                "p": ["x", "y", "x"],
            }
        )
        (root / "feed.csv").write_text("op,id,v,amount,p\nI,1,a,1.0,x\nD,2,b,2.0,y\n")
        (root / "feed.json").write_text('{"op":"U","id":3,"v":"c","amount":3.5,"p":"y"}\n')
        pq.write_table(rows, root / "feed.parquet")
        for layout in ("versioned", "acid"):
            table = catalog.create_table(
                f"probe.{layout}",
                columns="id BIGINT, v STRING, amount DOUBLE, p STRING",
                primary_key="id",
                partition_by="p",
                op_code_column="op",
                layout=layout,
            )
            for feed in ("feed.parquet", "feed.csv", "feed.json"):
                table.upsert(str(root / feed))
            table.delete("amount > 100")
            table.read().collect()
            table.changes(since=0).collect()
            catalog.sql(f"SELECT p, count(*) FROM probe.{layout} GROUP BY p").collect()
            table.compact()
            table.read().collect()
        catalog.close()
    spark.stop()
    process = launched_process()
    if process is not None:  # the JVM writes the archive as it exits: wait for it
        if process.stdin is not None:
            process.stdin.close()
        process.wait(PROBE_TIMEOUT_S)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        _probe(sys.argv[2])
    else:
        made = make_archive(lambda message: print(message, file=sys.stderr))
        print(made if made is not None else "no archive was made")
