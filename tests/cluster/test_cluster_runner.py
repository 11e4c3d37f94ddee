"""`python -m tests.support.spark_cluster` (what `make test-cluster` runs) starts a real
standalone cluster, hands the command its URL, returns the command's exit code and stops the
daemons whatever the command did.

It runs in `make test-cluster` only (a cluster of its own beside that run's: two more JVMs),
where the runner it checks is the one running the tier."""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path

import pytest

from tests.support.jvm_processes import JvmProcesses
from tests.support.spark_cluster import ENV_MASTER, MASTER

pytestmark = [
    pytest.mark.slow,
    pytest.mark.cluster,
    pytest.mark.skipif(MASTER is None, reason=f"runs only on make test-cluster (${ENV_MASTER})"),
]

ROOT = Path(__file__).resolve().parents[2]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_a_failing_command_gets_its_exit_code_and_the_cluster_is_stopped(
    tmp_path: Path, jvm_processes: JvmProcesses
) -> None:
    seen = tmp_path / "seen.txt"
    # The command records the URL it was given and whether the master answers on it, then fails.
    command = (
        "import os, socket, sys; url = os.environ['VERSIONED_TEST_SPARK_MASTER']; "
        "port = int(url.rsplit(':', 1)[1]); s = socket.create_connection(('127.0.0.1', port)); "
        f"open({str(seen)!r}, 'w').write(url); sys.exit(3)"
    )
    run = jvm_processes.run(
        [
            *(sys.executable, "-m", "tests.support.spark_cluster", "--executors", "1", "--"),
            *(sys.executable, "-c", command),
        ],
        cwd=ROOT,
        timeout=300,
    )
    assert run.returncode == 3, run.stderr
    url = seen.read_text()
    assert re.fullmatch(r"spark://127\.0\.0\.1:\d+", url)
    assert url in run.stdout
    assert not _listening(int(url.rsplit(":", 1)[1])), "the master still listens after the run"
    # The logs of a failed run stay for whoever looks into it; their folder is named.
    logs = re.search(r"its logs stay in (\S+)", run.stderr)
    assert logs is not None, run.stderr
    assert (Path(logs.group(1)) / "master.log").exists()


def test_without_a_command_it_refuses_before_starting_anything(
    jvm_processes: JvmProcesses,
) -> None:
    run = jvm_processes.run([sys.executable, "-m", "tests.support.spark_cluster"], cwd=ROOT)
    assert run.returncode == 2
    assert "give the command to run after --" in run.stderr
