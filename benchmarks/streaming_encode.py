"""Records/s of the streaming record writers' `encode` (records -> typed Arrow rows), one core.

Only the encoding, no file writing or commit (the streaming benchmark of issue 13 measures
those end to end). Run: ``.venv/bin/python -m benchmarks.streaming_encode``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from versioned import TableSpec
from versioned.streaming import DelimitedInputWriter, StrictJsonWriter, StrictRegexWriter

N = 100_000
ALERTS = TableSpec.build(
    "testing.alerts",
    columns="id INT, msg STRING, continent STRING, country STRING",
    primary_key="id",
    partition_by="continent,country",
)
WIDE = TableSpec.build(
    "testing.wide",
    columns="id BIGINT, name STRING, qty INT, price DECIMAL(10,2), score DOUBLE, ok BOOLEAN, "
    "day DATE, ts TIMESTAMP, dt STRING",
    primary_key="id",
    partition_by="dt",
)
WIDE_FIELDS = ["id", "name", "qty", "price", "score", "ok", "day", "ts"]


def _best_of(fn: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _reporter(n: int) -> Callable[[str, Callable[[], object]], None]:
    def report(name: str, fn: Callable[[], object]) -> None:
        seconds = _best_of(fn)
        print(f"{name:48s} {n / seconds:>12,.0f} records/s  ({seconds * 1000:.1f} ms / {n:,})")

    return report


def parser() -> argparse.ArgumentParser:
    """The probe's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=N, help="records per writer")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Print records/s of each writer on ``--records`` records (best of 5)."""
    n = parser().parse_args(argv).records
    report = _reporter(n)
    alerts = [f"{i},Hello streaming {i}".encode() for i in range(n)]
    delimited = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS)
    report("delimited alerts (id INT, msg STRING)", lambda: delimited.encode(alerts))
    bad = list(alerts)
    for i in range(0, n, 100):
        bad[i] = b"x,oops"
    lenient = DelimitedInputWriter(["id", "msg"], ",", spec=ALERTS, dead_letter=True)
    report("delimited alerts, 1% bad, dead_letter=True", lambda: lenient.encode(bad))
    wide = [
        f"{i},name {i},{i % 1000},{i % 10000}.25,{i / 7:.6f},{'true' if i % 2 else 'false'},"
        f"2024-01-{1 + i % 28:02d},2024-01-01T10:{i % 60:02d}:05Z".encode()
        for i in range(n)
    ]
    wide_writer = DelimitedInputWriter(WIDE_FIELDS, ",", spec=WIDE)
    report("delimited wide (8 columns, BIGINT..TIMESTAMP)", lambda: wide_writer.encode(wide))
    alerts_json = [json.dumps({"id": i, "msg": f"Hello streaming {i}"}).encode() for i in range(n)]
    json_writer = StrictJsonWriter(spec=ALERTS)
    report("json alerts", lambda: json_writer.encode(alerts_json))
    wide_json = [
        json.dumps(dict(zip(WIDE_FIELDS, r.decode().split(","), strict=True))).encode()
        for r in wide
    ]
    wide_json_writer = StrictJsonWriter(spec=WIDE)
    report("json wide (8 columns, values as strings)", lambda: wide_json_writer.encode(wide_json))
    regex = StrictRegexWriter(r"([^,]*),(.*)", spec=ALERTS)
    report("regex alerts", lambda: regex.encode(alerts))


if __name__ == "__main__":
    main()
