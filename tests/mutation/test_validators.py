"""The coordinator's order checks, as Hive's TestSequenceValidator and TestGroupingValidator."""

from __future__ import annotations

import pytest

from versioned import mutation as vm


def rid(write_id: int, row_id: int, bucket: int = 536870912) -> vm.RecordIdentifier:
    return vm.RecordIdentifier(write_id, bucket, row_id)


def test_the_first_record_is_always_in_sequence_even_with_negative_ids() -> None:
    assert vm.SequenceValidator().is_in_sequence(rid(-1, -1))
    assert vm.SequenceValidator().is_in_sequence(rid(0, 0))


def test_increasing_row_ids_in_one_write_id_and_increasing_write_ids_are_in_sequence() -> None:
    validator = vm.SequenceValidator()
    assert [validator.is_in_sequence(r) for r in (rid(0, 0), rid(0, 1), rid(0, 4), rid(1, 0))] == [
        True,
        True,
        True,
        True,
    ]


def test_a_row_id_not_above_the_last_of_its_write_id_is_out_of_sequence() -> None:
    validator = vm.SequenceValidator()
    assert validator.is_in_sequence(rid(0, 0))
    assert validator.is_in_sequence(rid(0, 4))
    assert not validator.is_in_sequence(rid(0, 1))
    assert not validator.is_in_sequence(rid(0, 4))  # equal is not above


def test_a_lower_write_id_is_out_of_sequence() -> None:
    validator = vm.SequenceValidator()
    assert validator.is_in_sequence(rid(1, 4))
    assert not validator.is_in_sequence(rid(0, 6))


def test_mixed_cases_compare_write_id_then_row_id() -> None:
    validator = vm.SequenceValidator()
    assert validator.is_in_sequence(rid(1, 4))
    assert not validator.is_in_sequence(rid(1, 0))
    assert validator.is_in_sequence(rid(1, 5))
    assert not validator.is_in_sequence(rid(0, 6))


def test_reset_starts_a_new_group() -> None:
    validator = vm.SequenceValidator()
    assert validator.is_in_sequence(rid(5, 5))
    validator.reset()
    assert validator.is_in_sequence(rid(0, 0))


def test_a_missing_row_id_is_refused() -> None:
    with pytest.raises(TypeError):
        vm.SequenceValidator().is_in_sequence(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("partition", [("asia", "india"), ()])
def test_unique_groups_and_repeating_the_current_group_are_accepted(
    partition: tuple[str, ...],
) -> None:
    validator = vm.GroupingValidator()
    assert validator.is_in_sequence(partition, 1)
    assert validator.is_in_sequence(partition, 1)
    assert validator.is_in_sequence(partition, 2)
    assert validator.is_in_sequence(partition, 3)


@pytest.mark.parametrize("partition", [("asia", "india"), ()])
def test_returning_to_an_earlier_group_is_refused(partition: tuple[str, ...]) -> None:
    validator = vm.GroupingValidator()
    assert validator.is_in_sequence(partition, 1)
    assert validator.is_in_sequence(partition, 2)
    assert not validator.is_in_sequence(partition, 1)


def test_same_partition_other_bucket_and_same_bucket_other_partition_are_new_groups() -> None:
    validator = vm.GroupingValidator()
    assert validator.is_in_sequence(("asia", "india"), 1)
    assert validator.is_in_sequence(("asia", "india"), 2)
    assert validator.is_in_sequence(("europe", "uk"), 2)
    assert validator.is_in_sequence(("europe", "uk"), 1)
    assert not validator.is_in_sequence(("asia", "india"), 2)
