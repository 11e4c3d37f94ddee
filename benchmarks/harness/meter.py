"""Wall time, CPU time, contention and peak memory of one measured operation (Linux ``/proc``;
no psutil).

``cpu_s`` is the user + system CPU of this process and all its descendants (the Spark JVM is
one), so it counts the work of Spark, delta-rs and pyiceberg alike and is much less sensitive
than wall time to other processes sharing the machine. ``others_cpu_s`` is the CPU every other
process used meanwhile: ``others_cpu_s / (seconds * cores)`` near 0 means a quiet machine.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: str) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds, resident bytes) of one process, or None if it vanished."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK, int(fields[21]) * _PAGE


def _tree(root: int) -> Iterator[tuple[float, int]]:
    """(CPU seconds, resident bytes) of ``root`` and each of its descendants."""
    parents: dict[int, int] = {}
    usage: dict[int, tuple[float, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(entry)
            if st is not None:
                parents[int(entry)], usage[int(entry)] = st[0], st[1:]
    for pid, used in usage.items():
        p = pid
        while p and p != root:
            p = parents.get(p, 0)
        if p == root:
            yield used


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds used so far by ``root`` (default: this process) and its descendants."""
    return sum(cpu for cpu, _ in _tree(os.getpid() if root is None else root))


def tree_rss(root: int | None = None) -> int:
    """Resident bytes of ``root`` (default: this process) and its descendants (the JVM)."""
    return sum(rss for _, rss in _tree(os.getpid() if root is None else root))


def own_rss() -> int:
    """Resident bytes of this (the Python driver's) process alone."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def system_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores, all processes)."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)  # idle + iowait
    return (sum(parts[:8]) - idle) / _TICK


class Meter:
    """``with Meter() as m: ...`` then ``m.result()``."""

    def __enter__(self) -> Meter:
        self._busy = system_busy()
        self._cpu = tree_cpu()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
        self.cpu_s = tree_cpu() - self._cpu
        self.others_cpu_s = max(0.0, system_busy() - self._busy - self.cpu_s)

    def result(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "cpu_s": self.cpu_s, "others_cpu_s": self.others_cpu_s}


def contention(entries: list[dict[str, Any]]) -> float:
    """Mean share of the machine's cores other processes used during ``entries``."""
    cores = os.cpu_count() or 1
    wall = sum(e["seconds"] for e in entries)
    others = sum(e.get("others_cpu_s", 0.0) for e in entries)
    return others / (wall * cores) if wall else 0.0


class PeakRss:
    """``with PeakRss() as peak: ...`` then ``peak.bytes`` (this process and its children:
    the Spark JVM) and ``peak.python_bytes`` (the Python driver alone), sampled every 100 ms."""

    def __enter__(self) -> PeakRss:
        self.bytes = tree_rss()
        self.python_bytes = own_rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.bytes = max(self.bytes, tree_rss())
            self.python_bytes = max(self.python_bytes, own_rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
