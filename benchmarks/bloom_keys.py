"""Speed of key encoding and Bloom filters per million keys (layout 1's write path).

Run: ``.venv/bin/python -m benchmarks.bloom_keys [--keys 1000000] [--repeat 3]``.
Prints the best of ``--repeat`` runs of each step, next to pybloom-live's own per-key loop.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pybloom_live import BloomFilter

from benchmarks.internals import KeyBloomFilter, KeyDigests, encode_key, encode_keys


def _best(repeat: int, fn: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print one line per step."""
    args = parser().parse_args(argv)
    n, repeat = args.keys, args.repeat
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pa.array([f"customer-{i}" for i in range(n)]),
        }
    )
    rows = list(zip(range(n), table.column("name").to_pylist(), strict=True))
    keys = encode_keys(table, ["id"])
    absent = encode_keys(pa.table({"id": pa.array(range(n, 2 * n), pa.int64())}), ["id"])
    bloom = KeyBloomFilter.build(keys)
    versions = [KeyBloomFilter.build(keys[i::10]) for i in range(10)]

    def ten_versions() -> None:
        digests = KeyDigests(absent)  # hashed once, tested against every version
        for version in versions:
            version.might_contain_many(digests)

    native = BloomFilter(max(n, 1000), 0.01)

    def native_add() -> None:
        for key in keys:
            native.add(key.decode(), skip_check=True)
        native.count = 0

    steps: list[tuple[str, Callable[[], Any]]] = [
        ("encode_keys (BIGINT)", lambda: encode_keys(table, ["id"])),
        ("encode_keys (STRING)", lambda: encode_keys(table, ["name"])),
        ("encode_keys (BIGINT, STRING)", lambda: encode_keys(table, ["id", "name"])),
        ("encode_key per row (BIGINT, STRING)", lambda: [encode_key(r) for r in rows]),
        ("KeyBloomFilter.build", lambda: KeyBloomFilter.build(keys)),
        ("might_contain_many (present)", lambda: bloom.might_contain_many(keys)),
        ("might_contain_many (absent)", lambda: bloom.might_contain_many(absent)),
        ("10 versions of 100k keys, KeyDigests", ten_versions),
        ("pybloom-live add loop", native_add),
        ("pybloom-live `in` loop", lambda: [k.decode() in native for k in absent]),
    ]
    print(f"{n:,} keys, best of {repeat}")
    for name, fn in steps:
        print(f"  {name:<38} {_best(repeat, fn):7.3f} s")
    false_positives = sum(bloom.might_contain_many(absent)) / n
    print(f"  false-positive rate at error_rate=0.01: {false_positives:.4f}")


if __name__ == "__main__":
    main()
