"""A version-layout table whose warehouse is on a real S3 server on loopback (moto's), driven
through pyarrow on the driver and Hadoop's S3A connector in Spark: upserts, a read and time
travel give the rows a local warehouse gives (issue 46, the first step: what each step asks
of the server is printed for the request budget to come).

The Spark of the probe has the cached "s3a" jar set (`make jars`); without it the test is
skipped saying so, unless ``VERSIONED_REQUIRE_JARS=1`` (CI).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.harness.jars import MissingJarsError, jars
from tests.support.jvm_processes import JvmProcesses, script_env
from tests.support.s3_server import S3Server

HERE = Path(__file__).resolve().parent


def _s3a_jars() -> str | None:
    try:
        return ",".join(str(p) for p in jars("s3a"))
    except MissingJarsError:
        if os.environ.get("VERSIONED_REQUIRE_JARS") == "1":
            raise
        return None


S3A_JARS = _s3a_jars()
pytestmark = pytest.mark.skipif(S3A_JARS is None, reason="no s3a jar set: run `make jars`")


@pytest.fixture
def s3(tmp_path: Path) -> Iterator[S3Server]:
    server = S3Server.start(tmp_path / "s3")
    try:
        server.create_bucket("lake")
        yield server
    finally:
        server.stop()


def test_a_table_on_s3_upserts_reads_and_travels_in_time(
    s3: S3Server, jvm_processes: JvmProcesses, tmp_path: Path
) -> None:
    assert S3A_JARS is not None
    env = script_env(
        **s3.env(), VERSIONED_SPARK_JARS=S3A_JARS, PYSPARK_PYTHON=sys.executable, SPARK_HOME=None
    )
    argv = [
        sys.executable, str(HERE / "s3_probe.py"), "s3://lake/warehouse",
        f"sqlite:///{tmp_path / 'catalog.db'}", str(s3.log_path),
    ]  # fmt: skip
    done = jvm_processes.run(argv, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(result["requests"], indent=1))
    assert result["filesystem"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert result["location"].startswith("s3a://lake/warehouse/")
    assert result["rows"] == 200 and result["as_of_first"] == 200  # 1 insert, 1 delete
    assert result["some"] == [[1, "x1", "a"], [2, "x2", "b"], [500, "x500", "b"]]
    assert all(sum(step.values()) > 0 for step in result["requests"].values())
    # the driver writes a small batch's files once each, in place: no copy, no listing
    for step in ("upsert 1", "upsert 2"):
        assert "CopyObject" not in result["requests"][step]
        assert "ListObjects" not in result["requests"][step]
    # a read takes its file list from the catalog: no listing (each file is opened: a HEAD)
    for step in ("read", "time travel"):
        assert "ListObjects" not in result["requests"][step], step
    bulk = result["bulk"]
    assert bulk["inserted"] == bulk["rows"] == 20_000
    assert any("first load, in bulk" in m for m in bulk["said"])
    # the tasks write the load's files once each, in their final place: no copy (S3 has no
    # rename), no folder marker; one object per file the commit lists (data and Bloom files)
    loaded = result["requests"]["bulk load"]
    assert "CopyObject" not in loaded and "CreateMultipartUpload" not in loaded
    assert loaded["objects"] == bulk["files"]  # (a folder marker would be one more)
    # The tasks write a later batch's files, and a compaction's, in place too: no copy
    ordered = result["ordered"]
    assert ordered["compacted"] == 2
    assert ordered["rows"] == [[0, "v2-0", "b", 2], [1, "v2-1", "a", 2]]
    assert len(ordered["files"]) == 2 and all("/compacted-" in f for f in ordered["files"])
    for step in ("spark upsert 1", "spark upsert 2", "spark compaction"):
        assert "CopyObject" not in result["requests"][step], step
