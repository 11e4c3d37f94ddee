"""The JVM's stderr: drained always, shown only when forwarded, shown anyway when the JVM
cannot start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.support.jvm_processes import JvmProcesses
from versioned.engine.spark.jvm_output import TAIL_LINES, JvmOutput

# A child that writes far more than a pipe buffers (64 KiB on Linux) to its stderr.
CHATTY = "import sys\nfor i in range(20000): print(f'line {i} ' + 'x' * 60, file=sys.stderr)\n"


def _run_child(forward: bool) -> JvmOutput:
    read_fd, write_fd = os.pipe()
    output = JvmOutput(read_fd, forward=forward)
    child = subprocess.Popen([sys.executable, "-c", CHATTY], stderr=write_fd)
    os.close(write_fd)
    assert child.wait(timeout=120) == 0  # would hang if nobody read the pipe
    output.wait_closed(timeout_s=60)
    return output


def test_a_quiet_drain_reads_everything_and_shows_nothing(capfd: pytest.CaptureFixture) -> None:
    output = _run_child(forward=False)
    assert capfd.readouterr().err == ""
    tail = output.tail()
    assert len(tail) == TAIL_LINES
    assert tail[-1].startswith("line 19999 ")


def test_a_forwarding_drain_shows_every_line(capfd: pytest.CaptureFixture) -> None:
    _run_child(forward=True)
    lines = capfd.readouterr().err.splitlines()
    assert len(lines) == 20000
    assert lines[0].startswith("line 0 ") and lines[-1].startswith("line 19999 ")


def test_a_jvm_that_cannot_start_says_why_on_stderr(jvm_processes: JvmProcesses) -> None:
    script = textwrap.dedent(
        """
        from versioned.engine.spark.session import get_or_create_spark
        try:
            get_or_create_spark("local[1]", conf={"spark.driver.memory": "4zz"})
        except Exception as error:
            print(type(error).__name__)
        """
    )
    proc = jvm_processes.run([sys.executable, "-c", script], timeout=300)
    assert proc.stdout.strip() == "PySparkRuntimeError"
    assert "Invalid maximum heap size: -Xmx4zz" in proc.stderr
