from __future__ import annotations

import pytest

from versioned.collections.matching import parse_partition_spec as parse_import_partition
from versioned.errors import InputError
from versioned.storage.partition_paths import DEFAULT_PARTITION_NAME
from versioned.storage.partition_spec import (
    LIST_SPEC,
    PATH_SPEC,
    parse_partition_spec,
    table_partition,
)
from versioned.storage.partition_spec import (
    partition_path_values as parse_compaction_partition,
)

KEYS = ["store", "day"]


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("store=7/day=2024-01-01", [("store", "7"), ("day", "2024-01-01")]),
        ("store=a/b/day=x=y", [("store", "a/b"), ("day", "x=y")]),
        ("store=a//b/day=1", [("store", "a//b"), ("day", "1")]),
        (f"store=/day={DEFAULT_PARTITION_NAME}", [("store", None), ("day", None)]),
        (" /store=%2F/day=1/ ", [("store", "%2F"), ("day", "1")]),
        ("store=1/day=2/extra=3", [("store", "1"), ("day", "2/extra=3")]),
    ],
)
def test_path_spec_values_run_up_to_the_next_key_and_stay_unescaped(
    text: str, pairs: list[tuple[str, str | None]]
) -> None:
    assert list(parse_partition_spec(text, PATH_SPEC, KEYS)) == pairs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("day=1/store=7", "write it as store=.../day=..."),
        ("store=7", "lacks day: write it as store=.../day=..."),
        ("shop=7/day=1", "does not match the table's partition columns"),
        ("", "does not match"),
    ],
)
def test_path_spec_must_name_the_keys_in_order(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as raised:
        list(parse_partition_spec(text, PATH_SPEC, KEYS))
    assert raised.value.partition == text  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("store=a%2Fb,day=1", [("store", "a/b"), ("day", "1")]),
        ("day=1,store=x%2Cy", [("day", "1"), ("store", "x,y")]),
        (f"store={DEFAULT_PARTITION_NAME}", [("store", None)]),
        ("store=", [("store", "")]),
        ("store=a=b,,  ,", [("store", "a=b")]),
        (" Store =1", [(" Store ", "1")]),
        (",", []),
    ],
)
def test_list_spec_splits_at_every_comma_and_decodes_escapes(
    text: str, pairs: list[tuple[str, str | None]]
) -> None:
    assert list(parse_partition_spec(text, LIST_SPEC)) == pairs


def test_list_spec_item_without_equals_sign_is_refused() -> None:
    with pytest.raises(InputError, match="partition item 'store' is not key=value"):
        list(parse_partition_spec("day=1,store", LIST_SPEC))


def test_import_refuses_a_bad_key_before_reading_later_items() -> None:
    with pytest.raises(InputError, match="invalid partition key 'a%day'"):
        parse_import_partition("a%day=1,no-equals-sign")


def test_compaction_and_import_parse_through_the_shared_parser() -> None:
    # The same partition in each spelling: a path for compaction, a list for import.
    assert parse_compaction_partition("store=a/b/day=", KEYS) == ("a/b", None)
    assert parse_import_partition("day=,store=a%2Fb") == {"day": "", "store": "a/b"}
    assert parse_import_partition(f"Day={DEFAULT_PARTITION_NAME}") == {"day": None}


@pytest.mark.parametrize(
    "text, values",
    [
        ("store=7,day=2024-01-01", ("7", "2024-01-01")),
        ("store=a%2Cb,day=x=y", ("a,b", "x=y")),
        (f"store={DEFAULT_PARTITION_NAME},day=", (None, None)),
    ],
)
def test_a_table_partition_is_named_in_the_one_user_syntax(
    text: str, values: tuple[str | None, ...]
) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation for the current syntax
        assert table_partition(text, KEYS) == values


def test_the_old_path_syntax_still_names_a_partition_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"write store=\.\.\.,day=\.\.\."):
        assert table_partition("store=a/b/day=1", KEYS) == ("a/b", "1")


def test_a_table_partition_must_name_the_columns_in_order() -> None:
    with pytest.raises(InputError, match=r"write it as store=\.\.\.,day=\.\.\."):
        table_partition("day=1,store=7", KEYS)
    with pytest.raises(InputError, match="not partitioned"):
        table_partition("a=1", [])
