"""What the Spark JVM prints on its standard error, shown only when asked for.

PySpark starts the JVM (``spark-submit``) as a child process that inherits our stderr, so
Spark's log lines and the JVM's own notices would mix with versioned's messages. Some of
them no log4j setting can remove: ``WARNING: Using incubator modules: jdk.incubator.vector``
is printed by the JVM itself at start-up (Spark's launcher adds the module), before any
logging exists. So a session built by versioned starts the JVM with its stderr on a pipe of
ours; a daemon thread reads it line by line, writes the lines to our stderr only when
``forward`` is set (``--verbose`` / ``VERSIONED_LOG_LEVEL``), and keeps the last lines so
that a JVM that fails to start can still say why. The JVM's children (Python workers)
inherit the pipe too. Its stdout stays ours.
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkConf

TAIL_LINES = 200


class JvmOutput:
    """Drains the read end of a pipe the JVM writes its stderr to."""

    def __init__(self, read_fd: int, *, forward: bool) -> None:
        self.forward = forward
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._thread = threading.Thread(
            target=self._pump, args=(read_fd,), name="versioned-jvm-stderr", daemon=True
        )
        self._thread.start()

    def tail(self) -> list[str]:
        """The last lines the JVM wrote (at most `TAIL_LINES`)."""
        return list(self._tail)

    def wait_closed(self, timeout_s: float) -> None:
        """Wait until every writer closed the pipe (the JVM exited), at most ``timeout_s``."""
        self._thread.join(timeout_s)

    def _pump(self, read_fd: int) -> None:
        # Never stop reading: a JVM whose stderr pipe is full blocks on its next log line.
        with os.fdopen(read_fd, "rb") as stream:
            for line in stream:
                self._tail.append(line.decode("utf-8", errors="replace").rstrip("\r\n"))
                if self.forward:
                    _write_stderr(line)


def _write_stderr(data: bytes) -> None:
    """Write to file descriptor 2, where the JVM would have written (not `sys.stderr`,
    which a caller may have swapped for a buffer it has closed since)."""
    with contextlib.suppress(OSError):
        os.write(2, data)


def launch_gateway(conf: SparkConf, *, forward: bool) -> Any:
    """Start the Py4J gateway (the driver JVM) for ``conf`` with its stderr on a pipe.

    Returns the gateway, for ``SparkContext(gateway=...)``. When the JVM does not start, the
    lines it wrote go to stderr before the error is raised.
    """
    from pyspark.java_gateway import launch_gateway as pyspark_launch_gateway

    read_fd, write_fd = os.pipe()
    output = JvmOutput(read_fd, forward=forward)
    try:
        gateway = pyspark_launch_gateway(conf, popen_kwargs={"stderr": write_fd})
    except BaseException:
        os.close(write_fd)
        if not forward:
            output.wait_closed(timeout_s=5.0)
            lines = output.tail()
            if lines:
                print("\n".join(lines), file=sys.stderr, flush=True)
        raise
    os.close(write_fd)  # the JVM holds its own copy; EOF comes when it exits
    return gateway
