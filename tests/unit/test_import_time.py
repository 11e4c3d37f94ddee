"""No module builds Spark columns or expressions when it is imported (DESIGN.md, invariant 10).

A scheduled job imports versioned before anything starts Spark; a module-level ``F.col(...)``
or ``F.lit(...)`` fails there with PySpark's bare ``AssertionError`` (no SparkContext). Every
module of the package is imported here in a new interpreter that cannot start a JVM.
tests/table/test_cold_start.py covers the other half: operations that build columns before
they hold a session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import versioned

IMPORT_ALL = """
import importlib, pkgutil, sys
import versioned
names = sorted(m.name for m in pkgutil.walk_packages(versioned.__path__, "versioned."))
for name in names:
    importlib.import_module(name)
from pyspark import SparkContext
assert SparkContext._active_spark_context is None, "an import started Spark"
print(len(names))
"""


def test_every_module_imports_with_no_spark_started(tmp_path: Path) -> None:
    env = dict(os.environ, SPARK_HOME=str(tmp_path / "no-spark-here"))
    env["PYTHONPATH"] = str(Path(versioned.__path__[0]).parent)
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip().splitlines()[-1]) > 100  # every module was walked
