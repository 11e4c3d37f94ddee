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

The JVM ends by itself when this process does (it reads its stdin, a pipe of ours, until
EOF), but only once it has started: one interrupted while it starts (Ctrl-C in the first
seconds of a command) waits for a connection that never comes and would outlive us. So an
interrupted or failed start stops it (`stop_process`), and `terminate_launched` ends it when
the process is about to exit without unwinding (a second Ctrl-C).
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkConf

TAIL_LINES = 200
STOP_WAIT_S = 10.0
"""How long a JVM asked to stop (SIGTERM: Spark's shutdown hooks remove its temporary
folders) may take before it is killed."""

_DEFERRED = (signal.SIGINT, signal.SIGTERM)
_launched: list[subprocess.Popen[bytes]] = []
"""The JVM process (``spark-submit``) this process launched, once it is started."""


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
    lines it wrote go to stderr before the error is raised; when the start is interrupted
    (`KeyboardInterrupt`), the JVM is stopped and nothing is shown.
    """
    from pyspark import java_gateway

    read_fd, write_fd = os.pipe()
    output = JvmOutput(read_fd, forward=forward)
    started: list[subprocess.Popen[bytes]] = []
    namespace = vars(java_gateway)
    original_popen = namespace["Popen"]
    try:
        # PySpark keeps the process it starts to itself until the JVM answers; catching it
        # is the only way to stop a JVM whose start is interrupted.
        namespace["Popen"] = _recording_popen(started)
        gateway = java_gateway.launch_gateway(conf, popen_kwargs={"stderr": write_fd})
    except BaseException as error:
        os.close(write_fd)
        for process in started:
            stop_process(process)
        if not forward and not isinstance(error, KeyboardInterrupt):
            output.wait_closed(timeout_s=5.0)
            lines = output.tail()
            if lines:
                print("\n".join(lines), file=sys.stderr, flush=True)
        raise
    finally:
        namespace["Popen"] = original_popen
    os.close(write_fd)  # the JVM holds its own copy; EOF comes when it exits
    _launched[:] = started
    return gateway


def _recording_popen(started: list[subprocess.Popen[bytes]]) -> Any:
    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        with _signals_deferred():
            process: subprocess.Popen[bytes] = subprocess.Popen(*args, **kwargs)
            started.append(process)
        return process

    return popen


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the block, then deliver them.

    PySpark starts the JVM with a ``preexec_fn``, so Python runs fork handlers in this
    process around the fork (logging's, for one); an exception a signal handler raises there
    is printed as ignored and lost (the command would go on as if never interrupted), and one
    raised before the process is recorded would leave the JVM unknown to us. Only the main
    thread handles signals; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {signum: signal.signal(signum, _recorder(received)) for signum in _DEFERRED}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for delivered in received:
            signal.raise_signal(delivered)


def _recorder(received: list[int]) -> Callable[[int, Any], None]:
    def record(signum: int, frame: Any) -> None:
        received.append(signum)

    return record


def stop_jvm(gateway: Any) -> None:
    """Stop the JVM behind ``gateway`` (one `launch_gateway` started), after a start that
    did not finish: close the gateway's connections and end the process."""
    with contextlib.suppress(Exception):  # the JVM may be half started or gone
        gateway.close()
    process = getattr(gateway, "proc", None)
    if process is not None:
        stop_process(process)
    _launched.clear()


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """End ``process`` (SIGTERM, SIGKILL after `STOP_WAIT_S`) and reap it."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        process.wait(STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def launched_process() -> subprocess.Popen[bytes] | None:
    """The JVM process (``spark-submit``) this process launched last, if any."""
    return _launched[-1] if _launched else None


def terminate_launched() -> None:
    """Ask the JVM this process launched, if it still runs, to end (SIGTERM, no waiting):
    for a process about to end without unwinding."""
    for process in _launched:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
