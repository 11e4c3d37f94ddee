"""Directory choice per snapshot, on the cases of Hive's TestAcidUtils and the research doc."""

from __future__ import annotations

import pytest

from versioned.layouts.acid.acid_state import AcidState, acid_state
from versioned.layouts.acid.directories import AcidDir, BaseDir, DeltaDir, parse_directory
from versioned.layouts.acid.errors import AcidNameError, NotEnoughHistoryError
from versioned.layouts.acid.write_ids import ValidWriteIdList


def _base(w: int, v: int = 0) -> str:
    return BaseDir(w, v).name


def _delta(low: int, high: int, stmt: int | None = None, v: int = 0, delete: bool = False) -> str:
    return DeltaDir(low, high, stmt, v, delete).name


def names(dirs: tuple[AcidDir, ...]) -> list[str]:
    return [d.name for d in dirs]


def everything_committed(hwm: int) -> ValidWriteIdList:
    return ValidWriteIdList("db.t", hwm)


def test_highest_base_then_deltas_above_it() -> None:
    # TestAcidUtils.testBaseDeltas
    dirs = [
        _base(5),
        _base(10),
        _base(49),
        _delta(25, 25),
        _delta(29, 29),
        _delta(25, 30),
        _delta(50, 105),
        _delta(90, 120),
    ]
    state = acid_state(dirs, everything_committed(100))
    assert state.base == BaseDir(49)
    assert names(state.deltas) == [_delta(50, 105)]  # 106..120 are beyond the snapshot
    assert sorted(names(state.obsolete)) == sorted(
        [_base(5), _base(10), _delta(25, 30), _delta(25, 25), _delta(29, 29)]
    )
    assert _delta(90, 120) not in names(state.obsolete)  # it still holds write ids 106..120
    assert state.aborted == () and state.pending == ()


def test_overlapping_deltas_from_minor_compaction() -> None:
    # TestAcidUtils.testOverlapingDelta
    dirs = [
        _delta(63, 63),
        _delta(62, 62),
        _delta(61, 61),
        _delta(40, 60),
        _delta(60, 60),
        _delta(52, 55),
        _base(50),
    ]
    state = acid_state(dirs, everything_committed(100))
    assert state.base == BaseDir(50)
    assert names(state.deltas) == [_delta(40, 60), _delta(61, 61), _delta(62, 62), _delta(63, 63)]
    assert sorted(names(state.obsolete)) == sorted([_delta(52, 55), _delta(60, 60)])


def test_statement_deltas_of_one_write_id_are_all_kept() -> None:
    # TestAcidUtils.testOverlapingDelta2
    dirs = [
        _delta(63, 63, 0),
        _delta(62, 62, 0),
        _delta(62, 62, 3),
        _delta(61, 61, 0),
        _delta(40, 60),
        _delta(60, 60, 1),
        _delta(60, 60, 4),
        _delta(60, 60, 7),
        _delta(52, 55),
        _delta(58, 58),
        _base(50),
    ]
    state = acid_state(dirs, everything_committed(100))
    assert names(state.deltas) == [
        _delta(40, 60),
        _delta(61, 61, 0),
        _delta(62, 62, 0),
        _delta(62, 62, 3),
        _delta(63, 63, 0),
    ]
    assert sorted(names(state.obsolete)) == sorted(
        [_delta(52, 55), _delta(58, 58), _delta(60, 60, 1), _delta(60, 60, 4), _delta(60, 60, 7)]
    )


def test_delete_deltas_are_chosen_like_deltas_with_their_twins() -> None:
    # TestAcidUtils.testBaseWithDeleteDeltas
    dirs = [
        _base(5),
        _base(10),
        _base(49),
        _delta(25, 25),
        _delta(29, 29),
        _delta(29, 29, delete=True),
        _delta(25, 30),
        _delta(25, 30, delete=True),
        _delta(50, 105),
        _delta(50, 105, delete=True),
        _delta(110, 110, delete=True),
    ]
    state = acid_state(dirs, everything_committed(100))
    assert state.base == BaseDir(49)
    assert names(state.deltas) == [_delta(50, 105, delete=True), _delta(50, 105)]
    assert names(state.delete_deltas) == [_delta(50, 105, delete=True)]
    assert names(state.insert_deltas) == [_delta(50, 105)]
    assert sorted(names(state.obsolete)) == sorted(
        [
            _base(5),
            _base(10),
            _delta(25, 30),
            _delta(25, 30, delete=True),
            _delta(25, 25),
            _delta(29, 29),
            _delta(29, 29, delete=True),
        ]
    )


def test_open_write_ids_are_read_around() -> None:
    # TestAcidUtils.testDeltasWithOpenTxnInRead2: write id 4 is open
    dirs = [_delta(1, 1), _delta(2, 5), _delta(4, 4, 1), _delta(4, 4, 3), _delta(101, 101, 1)]
    state = acid_state(dirs, ValidWriteIdList.from_string("db.t:100:4:4:"))
    assert names(state.deltas) == [_delta(1, 1), _delta(2, 5)]
    assert state.obsolete == ()


def test_fully_aborted_deltas_are_aborted_and_partly_aborted_ones_read() -> None:
    ids = ValidWriteIdList("db.t", 10, aborted_ids=(3, 6, 7))
    dirs = [_delta(1, 2), _delta(3, 3, 0), _delta(6, 7), _delta(5, 8), _delta(9, 9, delete=True)]
    state = acid_state(dirs, ids)
    assert sorted(names(state.aborted)) == sorted([_delta(3, 3, 0), _delta(6, 7)])
    assert names(state.deltas) == [_delta(1, 2), _delta(5, 8), _delta(9, 9, delete=True)]
    assert state.has_uncompacted_aborts  # delta_5_8 holds aborted 6 and 7
    clean = acid_state([_delta(1, 2)], ids)
    assert not clean.has_uncompacted_aborts


def test_compactor_output_is_ignored_until_its_transaction_commits() -> None:
    small = [_delta(w, w, 0) for w in range(1, 6)]
    minor = _delta(1, 5, v=40)
    before = acid_state([*small, minor], everything_committed(5), committed_txns={1, 2})
    assert names(before.deltas) == small
    assert names(before.pending) == [minor]
    assert before.obsolete == ()
    after = acid_state([*small, minor], everything_committed(5), committed_txns={40})
    assert names(after.deltas) == [minor]
    assert sorted(names(after.obsolete)) == sorted(small)
    aborted = acid_state([*small, minor], everything_committed(5), aborted_txns={40})
    assert names(aborted.aborted) == [minor]
    assert names(aborted.deltas) == small


def test_major_compaction_base_hides_older_directories_once_committed() -> None:
    dirs = [_delta(1, 1, 0), _delta(2, 3), _delta(2, 3, delete=True), _base(3, 25), _delta(4, 4)]
    pending = acid_state(dirs, everything_committed(4))
    assert pending.base is None
    assert names(pending.pending) == [_base(3, 25)]
    done = acid_state(dirs, everything_committed(4), committed_txns={25})
    assert done.base == BaseDir(3, 25)
    assert names(done.deltas) == [_delta(4, 4)]
    assert sorted(names(done.obsolete)) == sorted(
        [_delta(1, 1, 0), _delta(2, 3), _delta(2, 3, delete=True)]
    )


def test_base_with_an_open_write_id_below_it_is_not_usable_nor_obsolete() -> None:
    dirs = [_base(3, 20), _delta(4, 4), _delta(5, 5), _delta(6, 10), _base(10, 30)]
    ids = ValidWriteIdList("db.t", 12, open_ids=(5,))
    state = acid_state(dirs, ids, committed_txns={20, 30})
    assert state.base == BaseDir(3, 20)
    assert names(state.deltas) == [_delta(4, 4), _delta(6, 10)]
    assert _base(10, 30) not in names(state.obsolete)  # a later snapshot needs it
    # A base at the lowest open write id is not below it either (Hive's source accepts it).
    with pytest.raises(NotEnoughHistoryError):
        acid_state([_base(5, 20)], ValidWriteIdList("db.t", 9, open_ids=(5,)), committed_txns={20})


def test_snapshot_older_than_every_compacted_base_has_not_enough_history() -> None:
    dirs = [_base(10, 30), _delta(11, 11)]
    with pytest.raises(NotEnoughHistoryError, match="base_0000010_v0000030"):
        acid_state(dirs, ValidWriteIdList("db.t", 11, open_ids=(5,)), committed_txns={30})


def test_insert_overwrite_bases() -> None:
    overwrite = BaseDir(2, insert_overwrite=True)  # same name as a compacted base_2
    dirs: list[AcidDir] = [DeltaDir(1, 1), overwrite, DeltaDir(3, 3)]
    state = acid_state(dirs, ValidWriteIdList("db.t", 3))
    assert state.base == overwrite
    assert names(state.obsolete) == [_delta(1, 1)]
    aborted = acid_state(dirs, ValidWriteIdList("db.t", 3, aborted_ids=(2,)))
    assert names(aborted.aborted) == [_base(2)]
    assert aborted.base is None
    assert names(aborted.deltas) == [_delta(1, 1), _delta(3, 3)]
    # An INSERT OVERWRITE base keeps its history: an open write id elsewhere does not matter.
    opened = acid_state([overwrite, DeltaDir(3, 3)], ValidWriteIdList("db.t", 3, open_ids=(1,)))
    assert opened.base == overwrite


def test_compactor_base_wins_over_insert_overwrite_base_of_the_same_write_id() -> None:
    overwrite = BaseDir(5, insert_overwrite=True)
    for compacted in (BaseDir(5, 9), BaseDir(5)):
        state = acid_state([overwrite, compacted], everything_committed(5), committed_txns={9})
        assert state.base == compacted
        assert state.obsolete == (overwrite,)


def test_an_unsuffixed_base_is_a_compacted_base() -> None:
    """What compaction writes since issue 28: ``base_W`` erases history below W, so a
    snapshot with a write id at or below W open cannot use it, as with ``base_W_vT``."""
    dirs = [_base(10), _delta(11, 11)]
    state = acid_state(dirs, everything_committed(11))
    assert state.base == BaseDir(10) and names(state.deltas) == [_delta(11, 11)]
    with pytest.raises(NotEnoughHistoryError, match="base_0000010"):
        acid_state(dirs, ValidWriteIdList("db.t", 11, open_ids=(5,)))
    older = acid_state([_base(3), *dirs], ValidWriteIdList("db.t", 11, open_ids=(5,)))
    assert older.base == BaseDir(3) and names(older.deltas) == [_delta(11, 11)]


def test_unsuffixed_compaction_output_replaces_a_suffixed_one_of_an_earlier_release() -> None:
    """A table compacted before issue 28 (``_vT`` names) and again after it."""
    old = [_base(3, 20), _delta(4, 5, v=30), _delta(4, 5, v=30, delete=True)]
    new = [_base(5)]
    dirs = [*old, *new, _delta(6, 6, 0)]
    state = acid_state(dirs, everything_committed(6), committed_txns={20, 30})
    assert state.base == BaseDir(5)
    assert names(state.deltas) == [_delta(6, 6, 0)]
    assert sorted(names(state.obsolete)) == sorted(names(tuple(map(_parsed, old))))
    before = acid_state([*old, _delta(6, 6, 0)], everything_committed(6), committed_txns={20, 30})
    assert before.base == BaseDir(3, 20)
    assert names(before.deltas) == [
        _delta(4, 5, v=30, delete=True),
        _delta(4, 5, v=30),
        _delta(6, 6, 0),
    ]


def _parsed(name: str) -> AcidDir:
    parsed = parse_directory(name)
    assert parsed is not None
    return parsed


def test_input_may_be_parsed_directories_and_must_be_acid_names() -> None:
    parsed = [parse_directory(_delta(1, 1))]
    state: AcidState = acid_state([p for p in parsed if p is not None], everything_committed(1))
    assert names(state.deltas) == [_delta(1, 1)]
    with pytest.raises(AcidNameError, match="not a base or delta"):
        acid_state(["000000_0"], everything_committed(1))
