"""What a text value of each column type must become, written independently of the engine.

Each function takes the text as written (after the reader's trimming rules) and returns the
canonical value the table must hold, or `REJECT`. Canonical forms avoid Python's date range:
a DATE is its day number since 1970-01-01, a TIMESTAMP its microseconds since the epoch (the
session time zone is UTC), a DECIMAL its `Decimal`.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

REJECT = object()

_INT = re.compile(r"[+-]?[0-9]+")
# re.ASCII: \d is 0-9 only (Python's \d also matches other scripts' digits, Spark's not)
_FLOAT = re.compile(r"(?i)[+-]?((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|nan|inf|infinity)", re.ASCII)
_DECIMAL = re.compile(r"[+-]?(\d*)(\.\d*)?([eE][+-]?\d{1,6})?", re.ASCII)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6})0{0,3})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?",
    re.ASCII,
)
_BOOLEANS = {"true": True, "t": True, "1": True, "false": False, "f": False, "0": False}


def integer(text: str, bits: int) -> Any:
    if not _INT.fullmatch(text):
        return REJECT
    value = int(text)
    return value if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1) else REJECT


def double(text: str) -> Any:
    if not _FLOAT.fullmatch(text):
        return REJECT
    value = float(text)
    explicit = "inf" in text.lower()
    if math.isinf(value) and not explicit:
        return REJECT  # overflow
    mantissa = re.split(r"[eE]", text)[0]
    if value == 0 and re.search(r"[1-9]", mantissa):
        return REJECT  # underflow
    return value


def decimal(text: str, precision: int, scale: int) -> Any:
    if not _DECIMAL.fullmatch(text) or not re.search(r"\d", text.split("e")[0].split("E")[0]):
        return REJECT
    try:
        value = Decimal(text)
    except InvalidOperation:
        return REJECT
    if value != value.quantize(Decimal(1).scaleb(-scale)) or abs(value) >= Decimal(10) ** (
        precision - scale
    ):
        return REJECT
    return value.quantize(Decimal(1).scaleb(-scale))


def boolean(text: str) -> Any:
    return _BOOLEANS.get(text.lower(), REJECT)


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _valid_day(y: int, m: int, d: int) -> bool:
    if y == 0 or not 1 <= m <= 12:
        return False
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    return 1 <= d <= days


def date_days(text: str) -> Any:
    match = _DATE.fullmatch(text)
    if not match:
        return REJECT
    y, m, d = (int(g) for g in match.groups())
    return days_from_civil(y, m, d) if _valid_day(y, m, d) else REJECT


def timestamp_micros(text: str) -> Any:
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return REJECT
    y, mo, d = (int(g) for g in match.groups()[:3])
    hh, mi, ss = (int(g) if g else 0 for g in match.groups()[3:6])
    fraction, zone = match.group(7), match.group(8)
    if not _valid_day(y, mo, d) or hh > 23 or mi > 59 or ss > 59:
        return REJECT
    offset = 0
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        zh, zm = int(digits[:2]), int(digits[2:] or 0)
        if zh > 17 or zm > 59:
            return REJECT
        offset = (1 if zone[0] == "+" else -1) * (zh * 3600 + zm * 60)
    seconds = days_from_civil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss - offset
    return seconds * 1_000_000 + int((fraction or "0").ljust(6, "0"))
