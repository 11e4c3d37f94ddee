"""ValidWriteIdList: validity, ranges, usable bases, Hive's string form."""

from __future__ import annotations

import pytest

from versioned.layouts.acid.errors import WriteIdListError
from versioned.layouts.acid.write_ids import LONG_MAX, RangeResponse, ValidWriteIdList

ALL, SOME, NONE = RangeResponse.ALL, RangeResponse.SOME, RangeResponse.NONE


def snapshot() -> ValidWriteIdList:
    # write ids 1..10 allocated; 4 and 7 open, 5 and 6 aborted
    return ValidWriteIdList("db.t", 10, open_ids=(7, 4), aborted_ids=(6, 5))


def test_valid_means_at_most_the_mark_and_neither_open_nor_aborted() -> None:
    ids = snapshot()
    assert [w for w in range(0, 13) if ids.is_valid(w)] == [0, 1, 2, 3, 8, 9, 10]
    assert ids.is_open(4) and ids.is_open(7) and not ids.is_open(11)
    assert ids.is_aborted(5) and not ids.is_aborted(4)
    assert ids.open_ids == (4, 7) and ids.aborted_ids == (5, 6)
    assert ids.min_open == 4


def test_base_usable_only_below_the_lowest_open_write_id() -> None:
    ids = snapshot()
    assert ids.is_valid_base(3)
    assert not ids.is_valid_base(4)  # the open write id itself
    assert not ids.is_valid_base(8)
    nothing_open = ValidWriteIdList("db.t", 10, aborted_ids=(5,))
    assert nothing_open.is_valid_base(10)
    assert not nothing_open.is_valid_base(11)  # above the high-water mark


@pytest.mark.parametrize(
    ("low", "high", "valid", "aborted"),
    [
        (1, 3, ALL, NONE),
        (1, 4, SOME, NONE),
        (4, 4, NONE, NONE),
        (5, 6, NONE, ALL),
        (4, 7, NONE, SOME),
        (5, 8, SOME, SOME),
        (8, 10, ALL, NONE),
        (9, 12, SOME, NONE),  # 11 and 12 are above the mark
        (11, 12, NONE, NONE),
    ],
)
def test_range_answers(low: int, high: int, valid: RangeResponse, aborted: RangeResponse) -> None:
    ids = snapshot()
    assert ids.is_range_valid(low, high) is valid
    assert ids.is_range_aborted(low, high) is aborted


def test_string_form_is_hives() -> None:
    assert snapshot().to_string() == "db.t:10:4:4,7:5,6"
    clean = ValidWriteIdList("db.t", 3)
    assert clean.to_string() == f"db.t:3:{LONG_MAX}::"
    assert ValidWriteIdList.from_string("db.t:10:4:4,7:5,6") == snapshot()
    assert ValidWriteIdList.from_string(f"db.t:3:{LONG_MAX}") == clean  # Java split drops ""
    assert ValidWriteIdList.from_string(f"db.t:3:{LONG_MAX}::").min_open is None
    aborted_only = ValidWriteIdList("db.t", 9, aborted_ids=(2,))
    assert ValidWriteIdList.from_string(aborted_only.to_string()) == aborted_only


@pytest.mark.parametrize(
    "text", ["db.t:10", "db.t:x:1::", "db.t:10:4:4,a:", "a:1:2:3:4:5", "db.t:3:1:5:"]
)
def test_malformed_strings_are_refused(text: str) -> None:
    with pytest.raises(WriteIdListError):
        ValidWriteIdList.from_string(text)


def test_inconsistent_snapshots_are_refused() -> None:
    with pytest.raises(WriteIdListError, match="both open and aborted"):
        ValidWriteIdList("db.t", 5, open_ids=(3,), aborted_ids=(3,))
    with pytest.raises(WriteIdListError, match="above the high-water mark"):
        ValidWriteIdList("db.t", 5, open_ids=(6,))
    with pytest.raises(WriteIdListError, match="above the open write id"):
        ValidWriteIdList("db.t", 5, open_ids=(3,), min_open=4)
    with pytest.raises(WriteIdListError, match="positive"):
        ValidWriteIdList("db.t", 5, aborted_ids=(0,))


def test_lowest_open_may_be_given_for_ids_above_the_mark() -> None:
    ids = ValidWriteIdList("db.t", 5, min_open=6)  # 6 open, allocated after the snapshot
    assert ids.is_valid_base(5)
    assert ids.to_string() == "db.t:5:6::"


def test_compactor_view_stops_below_the_lowest_open_id() -> None:
    compactor = snapshot().for_compactor()
    assert compactor.high_water_mark == 3
    assert compactor.aborted_ids == ()
    assert compactor.is_range_valid(1, 3) is ALL
    assert compactor.is_range_valid(2, 5) is NONE  # a delta with an open id is never compacted
    view = ValidWriteIdList("db.t", 10, open_ids=(9,), aborted_ids=(2, 5)).for_compactor()
    assert view.high_water_mark == 8 and view.aborted_ids == (2, 5)
    assert view.is_range_valid(1, 8) is ALL
    assert view.is_aborted(5) and not view.is_valid(5)
