from __future__ import annotations

import random

import pytest

from versioned.storage.partition_paths import (
    DEFAULT_PARTITION_NAME,
    escape_path_name,
    parse_partition_path,
    partition_path,
)

HOSTILE = [
    "../x",
    "a/b",
    "%",
    "%2F",
    "\n",
    "ünïcødé ✓",
    "a=b",
    "..",
    ".",
    "/",
    "\\",
    "x" * 200,
    "'\"#*:?{[]^",
    "\x01\x7f",
    "__x__",
    "a b",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_stay_in_one_directory_level_and_round_trip(value: str):
    path = partition_path(["k"], [value])
    assert path.count("/") == 0
    assert path.startswith("k=")
    assert ".." not in path.split("/")
    assert parse_partition_path(path) == [("k", value)]


def test_null_and_empty_map_to_hive_default_partition():
    assert partition_path(["a", "b"], [None, ""]) == (
        f"a={DEFAULT_PARTITION_NAME}/b={DEFAULT_PARTITION_NAME}"
    )
    assert parse_partition_path(partition_path(["a"], [None])) == [("a", None)]


def test_matches_hive_escaping():
    # FileUtils.escapePathName: upper-case hex for the fixed ASCII set, others untouched.
    assert escape_path_name("2024-01-01 10:00:00") == "2024-01-01 10%3A00%3A00"
    assert escape_path_name("a/b=c%d") == "a%2Fb%3Dc%25d"
    assert escape_path_name("é") == "é"


def test_random_strings_round_trip_and_distinct_values_give_distinct_paths():
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(1, 200)] + ["%", "/", "=", "."]
    seen: dict[str, str] = {}
    for _ in range(3000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        path = partition_path(["k", "j"], [value, value])
        assert path.count("/") == 1
        assert parse_partition_path(path) == [("k", value), ("j", value)]
        assert seen.setdefault(path, value) == value


def test_mismatched_keys_and_values_raise():
    with pytest.raises(ValueError):
        partition_path(["a", "b"], ["1"])
