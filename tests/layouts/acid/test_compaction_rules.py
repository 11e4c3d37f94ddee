"""Hive's compaction initiator rules (`versioned.layouts.acid.compaction_rules`)."""

from __future__ import annotations

import pytest

from versioned.errors import InputError
from versioned.layouts.acid.compaction_rules import (
    InitiatorThresholds,
    PartitionAcidStats,
    choose_compaction,
)

DEFAULTS = InitiatorThresholds()


def test_defaults_are_hive_s() -> None:
    assert (DEFAULTS.delta_pct, DEFAULTS.delta_num, DEFAULTS.aborted) == (0.1, 10, 1000)


def test_deltas_over_ten_percent_of_the_base_make_a_major_compaction() -> None:
    kind, _ = choose_compaction(PartitionAcidStats(1000, 101, 1), DEFAULTS)
    assert kind == "major"


def test_deltas_at_ten_percent_of_the_base_make_no_compaction() -> None:
    assert choose_compaction(PartitionAcidStats(1000, 100, 1), DEFAULTS)[0] is None


def test_more_than_ten_small_deltas_make_a_minor_compaction() -> None:
    assert choose_compaction(PartitionAcidStats(10_000, 11, 11), DEFAULTS)[0] == "minor"
    assert choose_compaction(PartitionAcidStats(10_000, 10, 10), DEFAULTS)[0] is None


def test_without_a_base_many_deltas_make_a_major_compaction_and_few_none() -> None:
    assert choose_compaction(PartitionAcidStats(0, 500, 11), DEFAULTS)[0] == "major"
    assert choose_compaction(PartitionAcidStats(0, 500, 3), DEFAULTS)[0] is None


def test_too_many_aborted_write_ids_make_a_major_compaction() -> None:
    stats = PartitionAcidStats(10_000, 1, 1, aborted=1001)
    assert choose_compaction(stats, DEFAULTS)[0] == "major"
    assert choose_compaction(PartitionAcidStats(10_000, 1, 1, aborted=1000), DEFAULTS)[0] is None


def test_no_delta_means_nothing_to_compact() -> None:
    assert choose_compaction(PartitionAcidStats(10_000, 0, 0), DEFAULTS)[0] is None


def test_table_properties_override_the_defaults_in_hive_s_and_the_short_form() -> None:
    hive = InitiatorThresholds.from_properties(
        {"compactorthreshold.hive.compactor.delta.num.threshold": "2"}
    )
    short = InitiatorThresholds.from_properties(
        {"compactor.delta.pct.threshold": "0.5", "compactor.abortedtxn.threshold": "3"}
    )
    assert (hive.delta_num, hive.delta_pct) == (2, 0.1)
    assert (short.delta_pct, short.aborted, short.delta_num) == (0.5, 3, 10)
    assert choose_compaction(PartitionAcidStats(10_000, 3, 3), hive)[0] == "minor"


@pytest.mark.parametrize("raw", ["x", "-1", "nan"])
def test_a_bad_threshold_property_is_refused_clearly(raw: str) -> None:
    with pytest.raises(InputError, match=r"compactor\.delta\.pct\.threshold"):
        InitiatorThresholds.from_properties({"compactor.delta.pct.threshold": raw})
