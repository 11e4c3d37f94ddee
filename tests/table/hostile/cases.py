"""A seeded generator of hostile change feeds, each row with the outcome it must have.

Every generated row has a unique key (a few keys are deliberately repeated) and knows, from
`tests.table.hostile.oracle`, the canonical values the table must hold for it, or `REJECT`.
Set ``HOSTILE_SEED`` to replay a failing run; the seed is in every assertion message.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.table.hostile import oracle
from tests.table.hostile.oracle import REJECT
from versioned.storage.partition_paths import (
    DEFAULT_PARTITION_NAME,
    MAX_SEGMENT_BYTES,
    segment_bytes,
)

SEED = int(os.environ.get("HOSTILE_SEED", "20240610"))
COLUMNS = (
    "k BIGINT, p STRING, s STRING, vc VARCHAR(8), i INT, n BIGINT, f DOUBLE, "
    "x DECIMAL(12,3), b BOOLEAN, d DATE, ts TIMESTAMP"
)
NAMES = ("k", "p", "s", "vc", "i", "n", "f", "x", "b", "d", "ts")
Text = str | bytes  # bytes: not valid UTF-8

STRINGS: list[Text] = [
    "plain", "with,comma", 'with "quotes"', "multi\nline", "tab\there", "\x01\x02ctrl",
    "ünïcödé", "emoji \U0001f389", "  spaces  ", "=cmd()", "NULL", "null", "\\N", "'single'",
    "\u2028sep", "\ufeffbom inside", '"', "\\", "a" * 10_000, "\u00a0nbsp", "<b>&amp;</b>",
    b"caf\xe9", b"\xff\xfe", b"ok\xc3",
]  # fmt: skip
VARCHARS: list[Text] = ["", "12345678", "123456789", "éééééééé", "ééééééééé", "a b"]
PARTITIONS: list[Text | None] = [
    "a", "../x", "a/b", ".", "..", "%2F", "x=y", "k=v/../..", "#?*[]^", " lead", "trail ",
    "\x7f", "a\nb", "ü/ü", DEFAULT_PARTITION_NAME, "", None, "x" * 253, "x" * 254,
    "é" * 126, "é" * 127, "/" * 84, "/" * 85, b"p\xe9",
]  # fmt: skip
INTS = ["0", "-0", "+5", " 7 ", "2147483647", "2147483648", "-2147483648", "-2147483649",
        "1.0", "1e3", "0x10", "NaN", "", "\u0661\u0662", "12 34"]  # fmt: skip
BIGINTS = ["9223372036854775807", "9223372036854775808", "-9223372036854775808", "1", "-1.5"]
DOUBLES = ["1.5", "-0", "-0.0", "NaN", "Infinity", "-Infinity", "1e308", "1e309", "1e-400",
           "4.9e-324", "0.1", "1,5", ".5", "5.", "1e5", "abc", "", "1.5d", "0x1p3"]  # fmt: skip
DECIMALS = ["1.5", "1.2345", "1.2340", "123456789.123", "1234567890.1", "-0.000", "1e2",
            "1e-3", "1e-4", "NaN", "", ".5", ".", "999999999.9995"]  # fmt: skip
BOOLEANS = ["true", "FALSE", "t", "F", "1", "0", "yes", "no", "y", "2", " true ", "on"]
DATES = ["2024-02-29", "2023-02-29", "19788", "2024-1-5", "0001-01-01", "9999-12-31",
         "0000-01-01", "2024-13-01", "2024-01-01T00:00", " 2024-01-01 ", "+2024-01-01", "",
         "2024-01-01 10:00:00", "1/2/2024"]  # fmt: skip
TIMESTAMPS = ["2024-01-01T00:00:00Z", "2024-01-01 12:30", "2024-01-01T12:30:45.123456+05:30",
              "2024-01-01T12:30:45.1234567", "2024-01-01T12:30:45.123456000",
              "2024-02-29T23:59:59-08:00", "2024-01-01", "9999-12-31T23:59:59-05:00",
              "0001-01-01T00:00:00+01:00", "2024-01-01T24:00", "2024-01-01T23:59:60",
              "yesterday", "1704067200", "2024-01-01T00:00:00+0200", "2024-01-01T00:00:00+02",
              "2024-01-01T00:00:00-00:00", ""]  # fmt: skip


@dataclass
class Row:
    """One change: its cells as written and the canonical values it must land as."""

    key: int | None
    cells: dict[str, Any]
    expected: dict[str, Any] | None  # None: the row must be a dead letter
    label: str = ""
    raw: str = field(default="", compare=False)  # the line written, once rendered


def expected_text(value: Text | None, *, limit: int | None = None) -> Any:
    if value is None:
        return None
    if isinstance(value, bytes):
        return REJECT
    if limit is not None and len(value) > limit:
        return REJECT
    return value


def expected_partition(value: Text | None) -> Any:
    if isinstance(value, bytes):
        return REJECT
    if value is None or value == "":
        return None
    if value == DEFAULT_PARTITION_NAME or segment_bytes("p", value) > MAX_SEGMENT_BYTES:
        return REJECT
    return value


def _typed(parse: Callable[[str], Any]) -> Callable[[Text | None], Any]:
    def expect(value: Text | None) -> Any:
        if value is None:
            return None
        if isinstance(value, bytes):
            return REJECT
        text = value.strip(" ")
        return None if text == "" else parse(text)

    return expect


EXPECT: dict[str, Callable[[Any], Any]] = {
    "p": expected_partition,
    "s": expected_text,
    "vc": lambda v: expected_text(v, limit=8),
    "i": _typed(lambda t: oracle.integer(t, 32)),
    "n": _typed(lambda t: oracle.integer(t, 64)),
    "f": _typed(oracle.double),
    "x": _typed(lambda t: oracle.decimal(t, 12, 3)),
    "b": _typed(oracle.boolean),
    "d": _typed(oracle.date_days),
    "ts": _typed(oracle.timestamp_micros),
}
POOLS: dict[str, list[Any]] = {
    "p": PARTITIONS, "s": STRINGS, "vc": VARCHARS, "i": INTS, "n": BIGINTS, "f": DOUBLES,
    "x": DECIMALS, "b": BOOLEANS, "d": DATES, "ts": TIMESTAMPS,
}  # fmt: skip


def make_row(key: int, cells: dict[str, Any], label: str, *, csv: bool) -> Row:
    """A row of key ``key``; its expectation follows from its cells."""
    expected: dict[str, Any] | None = {"k": key}
    for name in NAMES[1:]:
        value = cells.get(name)
        if csv and isinstance(value, str):
            value = value.replace("\r\n", "\n")  # Spark's CSV parser normalises line breaks
            value = None if value == "" else value  # and an empty field is null
        outcome = EXPECT[name](value)
        if outcome is REJECT:
            expected = None
        elif expected is not None:
            expected[name] = outcome
    return Row(key, {"k": str(key), **cells}, expected, label)


def generate(rng: random.Random, first_key: int, *, csv: bool) -> list[Row]:
    """Every pool value of every column once (each in a row of otherwise valid values), then
    random combinations; keys from ``first_key``."""
    rows: list[Row] = []
    key = first_key
    for name, pool in POOLS.items():
        for value in pool:
            cells = _plain_cells(rng)
            cells[name] = value
            rows.append(make_row(key, cells, f"{name}={value!r}", csv=csv))
            key += 1
    for _ in range(120):
        cells = {name: rng.choice(pool) for name, pool in POOLS.items()}
        rows.append(make_row(key, cells, "random", csv=csv))
        key += 1
    return rows


def _plain_cells(rng: random.Random) -> dict[str, Any]:
    return {
        "p": rng.choice(["a", "b", "c"]),
        "s": f"s{rng.randrange(1000)}",
        "vc": "v",
        "i": str(rng.randrange(-1000, 1000)),
        "n": str(rng.randrange(-(10**12), 10**12)),
        "f": repr(rng.uniform(-1e6, 1e6)),
        "x": f"{rng.randrange(-(10**6), 10**6)}.{rng.randrange(1000):03d}",
        "b": rng.choice(["true", "false"]),
        "d": f"{rng.randrange(1990, 2030)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        "ts": "2024-05-06T07:08:09.101112Z",
    }


# --- rendering ------------------------------------------------------------------------------


def csv_field(value: Any, rng: random.Random) -> bytes:
    if value is None:
        return b""
    raw = value if isinstance(value, bytes) else value.encode()
    special = any(c in raw for c in (b",", b'"', b"\n", b"\r")) or raw != raw.strip(b" ")
    if special or rng.random() < 0.2:
        return b'"' + raw.replace(b'"', b'""') + b'"'
    return raw


def csv_file(
    rows: list[Row], order: list[str], rng: random.Random, *, crlf: bool, bom: bool
) -> bytes:
    end = b"\r\n" if crlf else b"\n"
    lines = [b",".join(n.encode() for n in order)]
    for row in rows:
        line = b",".join(csv_field(row.cells.get(n), rng) for n in order)
        row.raw = line.decode("utf-8", "replace")
        lines.append(line)
    return (b"\xef\xbb\xbf" if bom else b"") + end.join(lines) + end


def json_line(cells: dict[str, Any]) -> bytes:
    """A JSON object of the cells; bytes values go in as their raw (invalid UTF-8) bytes."""
    parts = []
    for name, value in cells.items():
        if isinstance(value, bytes):
            encoded = b'"' + value + b'"'
        elif isinstance(value, JsonNative):
            encoded = value.text.encode()
        else:
            encoded = json.dumps(value, ensure_ascii=False).encode()
        parts.append(json.dumps(name).encode() + b": " + encoded)
    return b"{" + b", ".join(parts) + b"}"


@dataclass(frozen=True)
class JsonNative:
    """A JSON value written as is (a number, object, array, boolean)."""

    text: str


# JSON-only cases: native values and what they must become.
JSON_NATIVE: list[tuple[str, str, Any]] = [
    ("i", "5", 5),
    ("i", "5.0", 5),  # a JSON number is its value: 5.0 is 5
    ("n", "9223372036854775808", REJECT),
    ("f", "1.5", 1.5),
    ("f", "1e400", REJECT),
    ("f", "-0.0", -0.0),  # the sign kept, as in CSV and Parquet (issue 27 item 5)
    ("x", "1.234", oracle.decimal("1.234", 12, 3)),
    ("x", "1.2345", REJECT),
    ("x", "0.1000000000000000055511151231257827", REJECT),
    ("b", "true", True),
    ("b", "1", True),
    ("s", "12.50", "12.5"),
    ("s", '{"a": 1}', REJECT),
    ("s", "[1, 2]", REJECT),
    ("s", "null", None),
    ("s", "true", "true"),
    ("d", "19788", REJECT),
    ("p", "7", "7"),
]
JSON_LINES_REJECTED = [
    b"not json",
    b"[1, 2]",
    b'"just a string"',
    b'{"k": 1, "k": 2}',
    b'{"k": 3, "s": "\\ud800"}',
    b'{"k": 4, "s": "unterminated}',
    b'{"k": 5, "s": "caf\xe9"}',
]
