"""Settings of the tests' shared local SparkSession."""

from __future__ import annotations

from pathlib import Path

LOCAL_INTERPRETED = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""Spark settings of the local test session and the soak's worker processes: expressions are
interpreted, not compiled (Spark's own test suites run both ways). On 2 cores this cut a Spark
test file's time by about a fifth (tests/table/test_upsert_behaviour.py and test_compaction.py:
340 s -> 280 s). The code Spark generates still runs in `make test-cluster`, the console-script
runs and `make wheel-smoke`, which keep Spark's defaults, and
tests/engine/test_feed_codegen.py turns generation back on to check its method sizes."""

SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JVM options of the test processes that run a JVM of their own for seconds: the soak's worker
processes (their driver's `spark.driver.extraJavaOptions`) and the console-script runs
(`SPARK_SUBMIT_OPTS`, which Spark's launcher adds to the driver's command line). A JVM that
lives for one or two commands spends most of its CPU compiling Spark's own code with C2, which
never pays off in that time; C1 alone and the serial collector, on 2 cores: four workers
starting together and running two upserts each, 150 s -> 76 s (one worker: 28 s -> 25 s). The
shared session of `make test` keeps C2 for its hottest methods (`SHARED_SESSION_JVM`): C1
alone made tests/table/test_compaction.py 122 s -> 153 s there."""

SHARED_SESSION_JVM = (
    "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=20000 "
    "-XX:Tier4CompileThreshold=60000 -XX:Tier4BackEdgeThreshold=400000 -XX:+UseSerialGC"
)
"""JVM options of the shared session of `make test` (and CI's `make test-spark`): C2 compiles
only methods ten times hotter than the JVM's defaults ask. The suite runs ever new code paths a
few times each, so C2 never stops finding methods to compile: in CI's run of stop 37, after 23
minutes the session's C2 thread had used 315 CPU-seconds, more than the py4j thread that does
the driver's work (311), and it still took 11 s of each minute; the garbage collector's threads
(G1) another 100. On a 3.5-minute slice alone (tests/change_stream/test_agreement.py and
tests/table/test_upsert_behaviour.py): 214 s and 345 CPU-seconds with the defaults, 225 s and
304 with these, 238 s and 299 with C1 alone (`SHORT_LIVED_JVM`). CI's two lanes share 2 cores,
so CPU-seconds, not one process's wall time, set its length."""

ENV_SHORT_LIVED_SESSION = "VERSIONED_TEST_SHORT_LIVED_SESSION"
"""Set to 1 (`make soak` does), the shared session's driver takes `SHORT_LIVED_JVM` too: the
soak's own session does a few minutes of Spark work in a quarter hour (its worker processes do
the rest), too little for C2 to pay off. One soak differential case alone on 2 cores: 82 s and
151 CPU-seconds with the JVM's defaults, 72 s and 93 with these options."""


def hive_common_first() -> dict[str, str]:
    """The shared session's setting that puts PySpark's ``hive-common`` jar first on the
    driver's classpath (`spark.driver.extraClassPath`, prepended by Spark's launcher).

    ``hive-common-2.3.10`` and ``hive-storage-api`` both hold
    ``org.apache.hadoop.hive.common.ValidReadTxnList``; Hive 2.3's own ACID readers, which
    tests/interop calls, need hive-common's copy (``isValidBase``). Without this setting the
    copy that loads depends on the order in which the file system lists PySpark's jars folder.
    """
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(jars.glob("hive-common-*.jar"))
    return {"spark.driver.extraClassPath": str(found[0])} if found else {}
