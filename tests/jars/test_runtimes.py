"""The cached jar sets work in a Spark of their own: Delta's and Iceberg's runtimes create a
table and apply a change batch with MERGE INTO on the Spark line each is built for (their
own virtualenvs: jars/pins.toml says why), where versioned upserts the same batch in the same
session and reads the same rows; and Spark reads a file through S3A and the AWS SDK on our
PySpark. Each runs a JVM in a process of its own, its jars from .jars/ only.

A test whose set is not in the cache (or whose Spark line has no virtualenv) is skipped,
saying what to run, unless ``VERSIONED_REQUIRE_JARS=1`` (CI sets it after `make jars` and
`make spark-venvs` in its setup stage): then it runs and fails with that message.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmarks.harness.jars import MissingJarsError, spark_jars, spark_python
from tests.support.jvm_processes import JvmProcesses, script_env

HERE = Path(__file__).resolve().parent
REQUIRED = os.environ.get("VERSIONED_REQUIRE_JARS") == "1"


def missing(name: str) -> str | None:
    """What to run before the set ``name`` can be tested, or None when it can."""
    try:
        spark_jars(name)
        spark_python(name)
    except MissingJarsError as exc:
        return str(exc)
    return None


def needs(name: str) -> pytest.MarkDecorator:
    """Skip unless the set ``name`` and the Python of its Spark line are there (see above)."""
    why = missing(name)
    return pytest.mark.skipif(why is not None and not REQUIRED, reason=why or "")


def run_probe(jvm_processes: JvmProcesses, name: str, *args: str) -> dict[str, Any]:
    """Run a probe script of this folder with the Python of the set ``name``; its JSON."""
    python = spark_python(name)
    # The probe's own PySpark, not this process's import path or Spark.
    env = script_env(PYTHONPATH=None, SPARK_HOME=None, PYSPARK_PYTHON=str(python))
    done = jvm_processes.run([str(python), *args], env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@needs("delta")
def test_delta_merges_a_change_batch_on_its_spark_line_as_versioned_upserts_it(
    jvm_processes: JvmProcesses, tmp_path: Path
) -> None:
    probe = str(HERE / "merge_probe.py")
    result = run_probe(jvm_processes, "delta", probe, "delta", spark_jars("delta"), str(tmp_path))
    assert result["rows"] == [[1, "a"], [2, "b"], [4, "b"]]  # 2 updated, 3 deleted, 4 inserted
    assert result["versioned"] == result["rows"]  # versioned on the same Spark, the same batch
    assert result["operations"] == ["CREATE TABLE", "WRITE", "MERGE"]
    assert str(result["spark"]).startswith("4.2.")
    assert (tmp_path / "t" / "_delta_log" / f"{2:020d}.json").is_file()


@needs("iceberg")
def test_iceberg_merges_a_change_batch_on_its_spark_line_as_versioned_upserts_it(
    jvm_processes: JvmProcesses, tmp_path: Path
) -> None:
    probe = str(HERE / "merge_probe.py")
    jars = spark_jars("iceberg")
    result = run_probe(jvm_processes, "iceberg", probe, "iceberg", jars, str(tmp_path))
    assert result["rows"] == [[1, "a"], [2, "b"], [4, "b"]]
    assert result["versioned"] == result["rows"]
    assert result["operations"] == ["append", "overwrite"]  # the insert, then the merge
    assert str(result["spark"]).startswith("4.1.")
    assert list((tmp_path / "db" / "t" / "metadata").glob("v*.metadata.json"))


@needs("s3a")
def test_spark_reads_through_s3a_and_the_aws_sdk(jvm_processes: JvmProcesses) -> None:
    result = run_probe(jvm_processes, "s3a", str(HERE / "s3a_probe.py"), spark_jars("s3a"))
    assert result["filesystem"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert result["rows"] == [["1", "a"], ["2", "b"], ["3", "c"]]
    assert "GET /lake/feeds/batch.csv" in result["requests"]  # the object's bytes, by the SDK
