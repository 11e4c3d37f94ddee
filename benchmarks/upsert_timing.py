"""Wall time, CPU time and contention of one timed operation (Linux ``/proc``; no psutil).

``cpu_s`` is the user + system CPU of this process and all its descendants (the Spark JVM is
one), so it counts the work of Spark, delta-rs and pyiceberg alike and is much less sensitive
than wall time to other processes sharing the machine. ``others_cpu_s`` is the CPU every other
process used meanwhile: ``others_cpu_s / (seconds * cores)`` near 0 means a quiet machine.
"""

from __future__ import annotations

import os
import time
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of one process, or None if it vanished."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds used so far by ``root`` (default: this process) and its descendants."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(entry)
            if st is not None:
                parents[int(entry)], cpu[int(entry)] = st
    total = 0.0
    for pid, used in cpu.items():
        p = pid
        while p and p != root:
            p = parents.get(p, 0)
        if p == root:
            total += used
    return total


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
