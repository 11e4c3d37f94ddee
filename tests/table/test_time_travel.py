"""Time travel by a version the table does not have, by time, and changes from the start.

Versions are transaction ids shared by every table of a catalog, so a user cannot know which
ones a table has: ``as_of=V`` reads the table's latest version at or below V (issue 27 item
14), ``as_of_time`` its last commit at or before a time, and ``changes(since=0)`` starts from
the empty table (Delta's ``startingVersion=0``).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from tests.table.sales import batch, latest, make_table
from versioned.api.catalog import Catalog
from versioned.errors import InputError, NoSuchVersionError


def test_a_version_between_two_commits_reads_the_older_and_time_reads_by_commit_time(
    cat: Catalog, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    first = t.upsert(batch([(1, 1.0, "I", "a"), (2, 2.0, "I", "b")])).version
    other = make_table(cat, "t.other", layout=layout)
    between = other.upsert(batch([(9, 9.0, "I", "a")])).version  # a version t does not have
    second = t.upsert(batch([(1, 10.0, "U", "a"), (3, 3.0, "I", "b")])).version
    assert first is not None and between is not None and second is not None
    assert first < between < second
    after_first = [(1, 1.0, "a"), (2, 2.0, "b")]
    assert latest(t, as_of=between) == after_first
    assert t.snapshot(between).version == first
    assert latest(t, as_of=second + 1000) == [(1, 10.0, "a"), (2, 2.0, "b"), (3, 3.0, "b")]
    with pytest.raises(NoSuchVersionError, match=f"has no version {first - 1} or below"):
        t.snapshot(first - 1)

    commits = t.history()
    at_first = commits[0].committed_at

    def as_of_second(when: float) -> int:  # times count to the second, as history shows them
        return [c.version for c in commits if c.committed_at < math.floor(when) + 1][-1]

    assert t.snapshot(as_of_time=at_first).version == as_of_second(at_first)
    aware = datetime.fromtimestamp(at_first, UTC)
    read = t.read(as_of_time=aware).select("id", "amt", "p").collect()
    assert sorted(tuple(r) for r in read) == latest(t, as_of=as_of_second(at_first))
    assert t.snapshot(as_of_time=commits[-1].committed_at + 3600).version == second
    with pytest.raises(NoSuchVersionError, match="has no commit at or before"):
        t.snapshot(as_of_time=at_first - 3600)
    with pytest.raises(InputError, match="has no time zone"):
        t.snapshot(as_of_time=datetime(2024, 5, 1, 12))


def test_changes_since_zero_are_every_live_row_as_an_insert(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout)
    t.upsert(batch([(1, 1.0, "I", "a"), (2, 2.0, "I", "b")]))
    t.upsert(batch([(1, 10.0, "U", "a"), (2, None, "D", "b"), (3, 3.0, "I", "b")]))
    rows = t.changes(since=0).select("_change", "id", "amt").collect()
    assert sorted(tuple(r) for r in rows) == [("insert", 1, 10.0), ("insert", 3, 3.0)]
