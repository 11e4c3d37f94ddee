"""What a result was measured on: the git commit and the date (`stamp`), and the machine.

Every results document carries both, as ``"stamp"`` and ``"machine"``; `machine` keeps the
field names the reports have always read (``cpu``, ``cores``, ``memory_gb``, ``java``,
``spark_master``, ...).
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("pyspark", "pyarrow", "deltalake", "pyiceberg")


def _run(*command: str) -> str | None:
    """The stripped output (stdout, else stderr) of ``command``, or None if it fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=REPO)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return (done.stdout or done.stderr).strip()


def git_commit() -> dict[str, Any]:
    """``{"commit": sha or "unknown", "dirty": whether tracked files differ from it}``."""
    sha = _run("git", "rev-parse", "HEAD")
    status = _run("git", "status", "--porcelain", "--untracked-files=no")
    return {"commit": sha or "unknown", "dirty": bool(status)}


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo``, or ``unknown``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def java_version() -> str:
    """The first line of ``java -version`` (``$JAVA_HOME/bin/java`` if set: Spark's JVM)."""
    home = os.environ.get("JAVA_HOME")
    out = _run(str(Path(home) / "bin" / "java") if home else "java", "-version")
    return out.splitlines()[0] if out else "unknown"


def package_version(name: str) -> str:
    """The installed version of ``name``, or ``not installed``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine(spark: Any = None) -> dict[str, Any]:
    """Cores, memory, CPU model, OS and the Python, Java and package versions; with a Spark
    session also its version, master and driver memory."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    out: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": round(memory, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "java": java_version(),
    }
    if spark is not None:
        context = spark.sparkContext
        out["spark"] = spark.version
        out["spark_master"] = context.master
        out["driver_memory"] = context.getConf().get("spark.driver.memory", "1g")
    for name in PACKAGES:
        out[name] = package_version(name)
    return out


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def stamp() -> dict[str, Any]:
    """``{"commit", "dirty", "date"}`` of a measurement made now: the checkout's commit,
    whether tracked files differed from it, and the UTC time."""
    return {**git_commit(), "date": now()}
