"""Settings of the tests' shared local SparkSession."""

from __future__ import annotations

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
