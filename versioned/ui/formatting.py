"""How the page writes times, ages, sizes and counts."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def local_time(value: datetime | None) -> str:
    """ISO-8601 in the server process's local time zone, to the second (``""`` for none)."""
    if value is None:
        return ""
    return value.astimezone().isoformat(timespec="seconds")


def age(seconds: float | None) -> str:
    """A duration the way a person reads it: ``42 s``, ``7 min``, ``3 h``, ``5 d``."""
    if seconds is None:
        return ""
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            digits = 0 if seconds >= 10 * size else 1
            return f"{seconds / size:.{digits}f} {unit}"
    return f"{seconds:.0f} s"


def size(n: int | None) -> str:
    """Bytes in binary units: ``812 B``, ``3.4 KiB``, ``1.2 GiB``."""
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def count(n: Any) -> str:
    """An integer with thousands separators (``""`` for none)."""
    return "" if n is None else f"{int(n):,}"


def ratio(x: float | None) -> str:
    """A read amplification as the partitions table holds it, to three decimals: ``1.250``
    (``""`` when the partition has no live row)."""
    return "" if x is None else f"{x:.3f}"
