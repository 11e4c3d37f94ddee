"""Time travel by time: ``as_of_time`` reads the last commit made at or before it, to the
microsecond, the precision `history` shows commit times with (`catalog.commit_times`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest

from tests.catalog.conftest import ORDERS
from versioned.catalog import FileAdd, MetaStore, PartitionCommit, TableInfo, clock
from versioned.catalog.records import CommitInfo
from versioned.errors import InputError, NoSuchVersionError

SECOND = 1_700_000_000.0
"""A whole second; the test's commits are made within the one after it."""


@pytest.fixture
def commits(
    store: MetaStore, orders: TableInfo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[CommitInfo]]:
    """Three commits of sales.orders made within one second, the first two a microsecond
    apart (the catalog's clock is set for each)."""
    part = store.add_partition(ORDERS, ["s1", "2024-01-01"])
    made = []
    for n, at in enumerate((0.25, 0.250001, 0.9)):
        monkeypatch.setattr(clock, "now", lambda _session, at=at: SECOND + at)
        txn = store.begin()
        add = FileAdd(part.id, f"{part.path}/f{n}.parquet", "data", txn, 100, 10, {})
        change = PartitionCommit(part.id, add=(add,), check_head=False)
        made.append(store.commit(txn, ORDERS, operation="upsert", partitions=[change]))
    monkeypatch.undo()
    yield made


def test_the_exact_time_of_a_commit_reads_that_commit_even_within_one_second(
    store: MetaStore, commits: list[CommitInfo]
) -> None:
    for commit in commits:
        shown = datetime.fromtimestamp(commit.committed_at, UTC)  # as history shows it
        assert store.snapshot(ORDERS, as_of_time=shown).seq == commit.seq
        assert store.snapshot(ORDERS, as_of_time=commit.committed_at).seq == commit.seq
    later = datetime.fromtimestamp(commits[-1].committed_at + 0.01, UTC)
    assert store.snapshot(ORDERS, as_of_time=later).seq == commits[-1].seq


def test_a_time_before_the_first_commit_in_its_second_finds_no_commit(
    store: MetaStore, commits: list[CommitInfo]
) -> None:
    before = datetime.fromtimestamp(SECOND + 0.249999, UTC)
    shown = r"2023-11-14T22:13:20\.249999"
    with pytest.raises(NoSuchVersionError, match=f"no commit at or before {shown}"):
        store.snapshot(ORDERS, as_of_time=before)


@pytest.mark.parametrize(
    "when",
    [math.nan, math.inf, 1e20, datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))), "today"],
)
def test_what_is_no_time_is_bad_input_not_a_python_error(
    store: MetaStore, orders: TableInfo, when: object
) -> None:
    with pytest.raises(InputError, match=r"give an aware datetime .* or seconds since the epoch"):
        store.snapshot(ORDERS, as_of_time=when)
