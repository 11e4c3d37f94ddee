"""Commits: compare-and-swap on partition heads and live files, snapshots and history."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import pytest

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import (
    CommitInfo,
    FileAdd,
    FileGrowth,
    MetaStore,
    PartitionCommit,
    PartitionInfo,
    TableInfo,
)
from versioned.errors import (
    CatalogError,
    CommitConflictError,
    InputError,
    NoSuchPartitionError,
    NoSuchVersionError,
    SchemaError,
)
from versioned.names import TableName

P1 = ["s1", "2024-01-01"]


@pytest.fixture
def part(store: MetaStore, orders: TableInfo) -> PartitionInfo:
    return store.add_partition(ORDERS, P1)


def _files(part: PartitionInfo, version: int, count: int = 2) -> tuple[FileAdd, ...]:
    return tuple(
        FileAdd(
            part.id,
            f"{part.path}/version_id={version}/part-{i}.parquet",
            "data",
            version,
            100 + i,
            10 + i,
            {"min_key": i},
        )
        for i in range(count)
    )


def _write(
    store: MetaStore,
    txn: int,
    part: PartitionInfo,
    expected: int | None,
    *,
    remove: Sequence[str] = (),
    count: int = 2,
) -> CommitInfo:
    change = PartitionCommit(
        part.id, expected, txn, add=_files(part, txn, count), remove=tuple(remove)
    )
    return store.commit(
        txn, ORDERS, operation="upsert", partitions=[change], metrics={"files": count}
    )


def test_second_writer_against_the_same_head_conflicts_and_leaves_nothing(
    store: MetaStore, part: PartitionInfo
) -> None:
    first, second = store.open_transactions(2)
    head = store.partition(ORDERS, P1).head_version  # both plan against this head
    _write(store, first, part, head)
    with pytest.raises(CommitConflictError) as raised:
        _write(store, second, part, head)
    assert raised.value.retryable
    assert vars(raised.value)["partition_id"] == part.id
    assert [c.txn_id for c in store.history(ORDERS)] == [first]
    assert {f.version for f in store.all_files(ORDERS)} == {first}
    assert store.table(ORDERS).current_seq == 1
    assert store.transaction(second).state == "open"
    assert store.partition(ORDERS, P1).head_version == first
    # Re-planned against the new head, the same transaction commits.
    commit = _write(store, second, part, first)
    assert (commit.seq, commit.version) == (2, second)
    assert store.partition(ORDERS, P1).head_version == second


def test_concurrent_writers_to_different_partitions_all_commit(
    store: MetaStore, orders: TableInfo, connect: Callable[[str], MetaStore]
) -> None:
    parts = [store.add_partition(ORDERS, [f"s{i}", "2024-01-01"]) for i in range(4)]
    errors: list[BaseException] = []

    def writer(part: PartitionInfo) -> None:
        own = connect("alice")
        head = None
        try:
            for _ in range(5):
                txn = own.begin()
                head = _write(own, txn, part, head).version
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    history = store.history(ORDERS)
    assert [c.seq for c in history] == list(range(1, 21))
    assert store.table(ORDERS).current_seq == 20
    assert len(store.snapshot(ORDERS).files) == 40


def test_removing_a_file_that_is_not_live_conflicts(store: MetaStore, part: PartitionInfo) -> None:
    t1, t2, t3, t4 = store.open_transactions(4)
    old = [f.path for f in _files(part, t1)]
    _write(store, t1, part, None)
    _write(store, t2, part, t1, remove=old)
    with pytest.raises(CommitConflictError, match="no longer live"):
        _write(store, t3, part, t2, remove=old[:1])
    with pytest.raises(CommitConflictError, match="no longer live"):
        _write(store, t3, part, t2, remove=["never/committed.parquet"])
    assert store.table(ORDERS).current_seq == 2
    assert len(store.all_files(ORDERS)) == 4
    _write(store, t4, part, t2)


def test_compaction_guards_with_removed_files_instead_of_the_head(
    store: MetaStore, part: PartitionInfo
) -> None:
    t1, t2, compactor = store.open_transactions(3)
    _write(store, t1, part, None)
    _write(store, t2, part, t1)
    live = [f.path for f in store.snapshot(ORDERS).files]
    merged = FileAdd(part.id, f"{part.path}/version_id={t2}/compacted.parquet", "data", t2, 1, 1)
    change = PartitionCommit(part.id, check_head=False, add=(merged,), remove=tuple(live))
    commit = store.commit(
        compactor, ORDERS, operation="compact", partitions=[change], version=t2 + 100
    )
    assert commit.version == t2 + 100
    assert store.partition(ORDERS, P1).head_version == t2  # unchanged
    assert [f.path for f in store.snapshot(ORDERS).files] == [merged.path]


def test_heads_only_grow(store: MetaStore, part: PartitionInfo) -> None:
    t1, t2 = store.open_transactions(2)
    _write(store, t2, part, None)
    with pytest.raises(CommitConflictError, match="must grow"):
        _write(store, t1, part, t2)
    late = PartitionCommit(part.id, check_head=False, new_head=t1)
    with pytest.raises(CommitConflictError):
        store.commit(t1, ORDERS, operation="upsert", partitions=[late])
    assert store.partition(ORDERS, P1).head_version == t2


def test_snapshot_as_of_each_version_has_exactly_its_live_files(
    store: MetaStore, part: PartitionInfo
) -> None:
    t1, t2, t3 = store.open_transactions(3)
    _write(store, t1, part, None, count=3)
    first_files = {f.path for f in _files(part, t1, 3)}
    _write(store, t2, part, t1, count=1, remove=sorted(first_files)[:2])
    _write(store, t3, part, t2, count=2)
    expected = {
        t1: first_files,
        t2: (first_files - set(sorted(first_files)[:2])) | {f.path for f in _files(part, t2, 1)},
        t3: (first_files - set(sorted(first_files)[:2]))
        | {f.path for f in _files(part, t2, 1)}
        | {f.path for f in _files(part, t3, 2)},
    }
    for version, paths in expected.items():
        snap = store.snapshot(ORDERS, as_of=version)
        assert snap.version == version
        assert {f.path for f in snap.files} == paths
    latest = store.snapshot(ORDERS)
    assert (latest.seq, latest.version) == (3, t3)
    assert {f.path for f in latest.files} == expected[t3]
    assert latest.partitions[part.id].head_version == t3
    one = next(f for f in latest.files if f.path.endswith(f"version_id={t3}/part-1.parquet"))
    assert (one.kind, one.version, one.size_bytes, one.row_count) == ("data", t3, 101, 11)
    assert one.stats == {"min_key": 1} and one.partition_id == part.id
    assert [(c.seq, c.version, c.operation) for c in store.history(ORDERS)] == [
        (1, t1, "upsert"),
        (2, t2, "upsert"),
        (3, t3, "upsert"),
    ]
    # A version without a commit of the table stands for its latest version at or below it.
    assert store.snapshot(ORDERS, as_of=t3 + 999).version == t3
    with pytest.raises(NoSuchVersionError, match=f"has no version {t1 - 1} or below.*history"):
        store.snapshot(ORDERS, as_of=t1 - 1)


def test_empty_table_has_an_empty_snapshot(store: MetaStore, part: PartitionInfo) -> None:
    snap = store.snapshot(ORDERS)
    assert (snap.seq, snap.version, snap.files) == (0, None, ())
    assert set(snap.partitions) == {part.id}


def test_commit_records_metrics_user_and_time(store: MetaStore, part: PartitionInfo) -> None:
    txn = store.begin()
    commit = _write(store, txn, part, None)
    assert commit.metrics == {"files": 2}
    assert commit.user == "alice" and commit.committed_at > 0
    assert store.history(ORDERS) == [commit]


def test_a_path_committed_twice_conflicts(store: MetaStore, part: PartitionInfo) -> None:
    t1, t2 = store.open_transactions(2)
    _write(store, t1, part, None)
    clash = PartitionCommit(part.id, t1, t2, add=_files(part, t1))
    with pytest.raises(CommitConflictError):
        store.commit(t2, ORDERS, operation="upsert", partitions=[clash])
    assert store.table(ORDERS).current_seq == 1
    assert store.transaction(t2).state == "open"


def test_malformed_commits_are_rejected_before_anything_is_written(
    store: MetaStore, part: PartitionInfo
) -> None:
    txn = store.begin()
    other = store.create_table(orders_spec(TableName("sales", "other")))
    foreign = store.add_partition(other.spec.name, P1)
    with pytest.raises(NoSuchPartitionError):
        store.commit(txn, ORDERS, operation="upsert", partitions=[PartitionCommit(foreign.id)])
    with pytest.raises(SchemaError):
        store.commit(txn, ORDERS, operation="upsert", partitions=[PartitionCommit(None)])
    twice = [PartitionCommit(part.id, None, txn), PartitionCommit(part.id, None, txn)]
    with pytest.raises(SchemaError):
        store.commit(txn, ORDERS, operation="upsert", partitions=twice)
    wrong_home = PartitionCommit(part.id, None, txn, add=_files(foreign, txn))
    with pytest.raises(SchemaError):
        store.commit(txn, ORDERS, operation="upsert", partitions=[wrong_home])
    with pytest.raises(InputError):
        store.commit(txn, ORDERS, operation="upsert", partitions=[], metrics={"bad": object()})
    assert store.table(ORDERS).current_seq == 0
    assert store.transaction(txn).state == "open"


def test_table_level_files_commit_without_a_partition(store: MetaStore, orders: TableInfo) -> None:
    txn = store.begin()
    manifest = FileAdd(None, "_manifest/1.json", "manifest", txn, 10, 0)
    change = PartitionCommit(None, check_head=False, add=(manifest,))
    store.commit(txn, ORDERS, operation="upsert", partitions=[change])
    assert [f.partition_id for f in store.snapshot(ORDERS).files] == [None]


def test_vacuum_forgets_only_retired_files(store: MetaStore, part: PartitionInfo) -> None:
    t1, t2 = store.open_transactions(2)
    _write(store, t1, part, None)
    _write(store, t2, part, t1, remove=[f.path for f in _files(part, t1)])
    every = store.all_files(ORDERS)
    retired = [f.id for f in every if f.removed_seq is not None]
    live = [f.id for f in every if f.removed_seq is None]
    assert len(retired) == 2 and len(live) == 2
    with pytest.raises(CatalogError):
        store.forget_files(ORDERS, retired + live[:1])
    assert len(store.all_files(ORDERS)) == 4
    store.forget_files(ORDERS, retired)
    assert sorted(f.id for f in store.all_files(ORDERS)) == sorted(live)
    assert {f.id for f in store.snapshot(ORDERS).files} == set(live)


def _grow(store: MetaStore, txn: int, part: PartitionInfo, head: int, growth: FileGrowth) -> None:
    change = PartitionCommit(part.id, head, txn, grow=(growth,))
    store.commit(txn, ORDERS, operation="stream", partitions=[change])


def test_a_live_file_grows_and_never_shrinks(store: MetaStore, part: PartitionInfo) -> None:
    t1, t2, t3, t4, t5 = store.open_transactions(5)
    growing = _files(part, t1, 1)[0]
    _write(store, t1, part, None, count=1)
    _grow(store, t2, part, t1, FileGrowth(growing.path, 500, 40, {"stream_open": True}))
    (live,) = store.snapshot(ORDERS).files
    assert (live.size_bytes, live.row_count, live.stats) == (500, 40, {"stream_open": True})
    assert (live.added_seq, live.removed_seq) == (1, None)
    with pytest.raises(SchemaError, match="cannot shrink"):
        _grow(store, t3, part, t2, FileGrowth(growing.path, 499, 40))
    with pytest.raises(CommitConflictError, match="not live in this partition"):
        _grow(store, t3, part, t2, FileGrowth("never/committed.orc", 600, 1))
    (still,) = store.snapshot(ORDERS).files
    assert (still.size_bytes, still.row_count) == (500, 40)
    _write(store, t4, part, t2, remove=[growing.path])
    with pytest.raises(CommitConflictError, match="not live"):
        _grow(store, t5, part, t4, FileGrowth(growing.path, 600, 41))


def test_a_commit_in_commit_order_after_a_higher_version_takes_a_fresh_version(
    store: MetaStore, orders: TableInfo
) -> None:
    early, late, other = store.begin(), store.begin(), store.begin()
    a, b = store.add_partition(ORDERS, P1), store.add_partition(ORDERS, ["s2", "2024-01-01"])
    c = store.add_partition(ORDERS, ["s3", "2024-01-01"])

    def commit(txn: int, part: PartitionInfo, n: int, **kw: bool) -> CommitInfo:
        add = FileAdd(part.id, f"{part.path}/f{n}.orc", "delta", txn, 10, 1)
        change = PartitionCommit(part.id, check_head=False, new_head=txn, add=(add,))
        return store.commit(txn, ORDERS, operation="upsert", partitions=[change], **kw)

    assert commit(late, a, 1, in_commit_order=True).version == late  # in order: its id
    kept = commit(other, b, 2)  # without it a commit keeps its id, whatever came first
    assert kept.version == other
    with pytest.raises(CommitConflictError, match="head"):  # heads guard the id planned
        commit(early, b, 3, in_commit_order=True)
    renumbered = commit(early, c, 4, in_commit_order=True)
    assert renumbered.txn_id == early and renumbered.version > other
    assert [i.version for i in store.history(ORDERS)] == [late, other, renumbered.version]
    assert {p.id: p.head_version for p in store.partitions(ORDERS)}[c.id] == renumbered.version
    assert store.transaction(renumbered.version).state == "committed"
