"""Time travel by a version the table does not have, by time, and changes from the start.

Versions are transaction ids shared by every table of a catalog, so a user cannot know which
ones a table has: ``as_of=V`` reads the table's latest version at or below V (issue 27 item
14), ``as_of_time`` its last commit at or before a time, and ``changes(since=0)`` starts from
the empty table (Delta's ``startingVersion=0``).

A transaction opened before another can commit after it. ``as_of=V`` is then still the
table right after V's commit, a state it had; and a commit made after one of a higher
version takes a fresh version above it, on acid tables always, on version-layout tables
when the higher version is in its partition (docs/layout-and-semantics.md#time-travel).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.table.sales import batch, latest, make_table
from versioned import streaming as vs
from versioned.api.catalog import Catalog
from versioned.api.table import Table
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
    assert t.snapshot(as_of_time=at_first).version == first  # to the microsecond
    aware = datetime.fromtimestamp(at_first, UTC)
    read = t.read(as_of_time=aware).select("id", "amt", "p").collect()
    assert sorted(tuple(r) for r in read) == after_first
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


def _late_stream_commit(cat: Catalog, t: Table, upsert_into: str) -> list[list[tuple]]:
    """A streaming batch into partition ``a`` whose second transaction commits after an
    upsert into ``upsert_into`` that opened after it; returns the rows right after each
    commit (as `latest` shows them), oldest first."""
    t.upsert(batch([(1, 1.0, "I", "a"), (2, 2.0, "I", upsert_into)]))
    states = [[(1, 1.0, "a"), (2, 2.0, upsert_into)]]
    endpoint = vs.EndPoint(cat, str(t.name), ["a"])
    writer = vs.DelimitedInputWriter(["id", "amt"], ",", endpoint=endpoint)
    with endpoint.connect() as conn, conn.fetch_transaction_batch(2, writer) as stream:
        stream.begin_next_transaction()
        stream.write("3,3.0")
        stream.commit()
        states.append([*states[-1], (3, 3.0, "a")])
        stream.begin_next_transaction()  # opened before the upsert, committed after it
        stream.write("1,10.0")
        t.upsert(batch([(2, 20.0, "U", upsert_into)]))
        states.append(sorted({*states[-1]} - {(2, 2.0, upsert_into)} | {(2, 20.0, upsert_into)}))
        stream.commit()
        states.append(sorted({*states[-1]} - {(1, 1.0, "a")} | {(1, 10.0, "a")}))
    return [sorted(s) for s in states]


def _after_each_commit(t: Table) -> list[list[tuple]]:
    """The rows ``as_of`` each data commit's version reads, in commit order (a streaming
    batch's closing commit changes no row)."""
    commits = [c for c in t.history() if c.operation != "stream_close"]
    return [latest(t, as_of=c.version) for c in commits]


def test_a_transaction_committing_after_a_higher_version_gets_a_version_above_it(
    cat: Catalog, layout: str
) -> None:
    # The issue: on acid a streaming transaction committed after a higher-numbered upsert
    # kept its lower version, so `--as-of` of it showed a newer state than the upsert's.
    t = make_table(cat, layout=layout)
    states = _late_stream_commit(cat, t, upsert_into="a")
    versions = [c.version for c in t.history()]  # in commit order
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert _after_each_commit(t) == states
    late = [c for c in t.history() if c.operation == "stream"][-1].version
    read = t.read(with_version=True).where("id = 1").select("amt", "version_id").collect()
    assert [tuple(r) for r in read] == [(10.0, late)]  # the later commit wins its key


@pytest.mark.never(
    ["versioned"],
    reason="a version is in the paths of its files (version_id=V): a commit keeps it when "
    "only another partition got a higher version first",
)
def test_versions_follow_the_commit_order_across_partitions(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout)
    _late_stream_commit(cat, t, upsert_into="b")
    versions = [c.version for c in t.history()]
    assert versions == sorted(versions)


def test_as_of_a_version_reads_the_table_right_after_its_commit_in_any_commit_order(
    cat: Catalog, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    states = _late_stream_commit(cat, t, upsert_into="b")
    assert _after_each_commit(t) == states
