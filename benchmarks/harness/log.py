"""The benchmarks' progress lines: a wall-clock time stamp, then the message."""

from __future__ import annotations

import time


def log(msg: str) -> None:
    """Print ``[HH:MM:SS] msg`` at once (runs take minutes to hours; progress must show)."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)
