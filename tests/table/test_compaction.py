"""Compaction on real Spark, real files and a real catalog: content, snapshots and races."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.layout_profiles import table_args
from tests.support.test_warehouse import files_under, warehouse_for
from tests.table.sales import apply, batch, latest, make_table, model_rows
from versioned.api.catalog import Catalog, connect
from versioned.errors import InputError, NoSuchPartitionError
from versioned.options import CompactionOptions

VERSION_FILES = (
    "inspects version-partition files (one version of data and Bloom files per partition)"
)


def _three_versions(t: Any) -> dict[int, Any]:
    model: dict[int, Any] = {}
    for rows in (
        [(i, float(i), "I", "ab"[i % 2]) for i in range(40)],
        [(i, 100.0 + i, "U", "ab"[i % 2]) for i in range(0, 40, 3)]
        + [(i, None, "D", "ab"[i % 2]) for i in range(1, 40, 5)],
        [(i, 200.0 + i, "U", "ab"[i % 2]) for i in range(0, 40, 7)] + [(50, 5.0, "I", "a")],
    ):
        t.upsert(batch(rows))
        apply(model, rows)
    return model


@pytest.mark.never(
    ["acid"],
    reason=VERSION_FILES,
)
def test_compaction_keeps_the_latest_rows_in_one_version_per_partition(
    cat: Catalog, layout: str
) -> None:
    t = make_table(cat, layout=layout)
    model = _three_versions(t)
    before_version = t.history()[-1].version
    before = t.snapshot()
    heads = {p.path: p.head_version for p in before.partitions.values()}
    versions = {
        p.path: len({f.version for f in before.files if f.partition_id == p.id})
        for p in before.partitions.values()
    }
    old_frame = t.read()  # a reader that resolved its snapshot before the compaction
    result = t.compact()
    assert [p.status for p in result.partitions] == ["compacted", "compacted"]
    assert latest(t) == model_rows(model)
    snapshot = t.snapshot()
    folders = set()
    for part in result.partitions:
        files = [
            f for f in snapshot.files if snapshot.partitions[f.partition_id].path == part.partition
        ]
        # The compacted rows keep the partition's head version, in a folder named for the
        # compaction's own transaction (above every compacted version). The commit's version
        # is that transaction id, or above it when the other partition's compaction, opened
        # later, committed first (versions stay in commit order).
        assert {f.version for f in files} == {heads[part.partition]}
        (folder,) = {f.path.split("/")[-2] for f in files}
        assert part.version is not None and part.version > before_version
        match = re.fullmatch(r"compacted-(\d+)", folder)
        assert match is not None, folder
        assert before_version < int(match.group(1)) <= part.version
        folders.add(folder)
        assert part.high_water_mark == heads[part.partition]
        assert part.versions_compacted == versions[part.partition] == 3
        assert sorted(f.kind for f in files) == ["bloom", "data"]  # no index without ordering
        assert part.rows == sum(1 for _, p in model.values() if f"p={p}" == part.partition)
    assert len(folders) == 2  # each compaction wrote into a folder of its own
    history = t.history()
    assert [c.operation for c in history[-2:]] == ["compact", "compact"]
    # The old reader and time travel still see the snapshot they resolved.
    assert sorted(tuple(r) for r in old_frame.select("id", "amt", "p").collect()) == latest(t)
    assert latest(t, as_of=before_version) == latest(t)
    # Nothing left to do: a second run plans nothing and commits nothing.
    assert t.compact().partitions == ()
    assert len(t.history()) == len(history)


@pytest.mark.cluster
def test_writes_after_compaction_update_compacted_rows(cat: Catalog, layout: str) -> None:
    """The compacted version's Bloom filter covers its keys, so later updates and deletes
    of compacted rows get index entries and win."""
    t = make_table(cat, layout=layout)
    model = _three_versions(t)
    t.compact()
    rows = [(0, -1.0, "U", "a"), (3, None, "D", "b"), (60, 6.0, "I", "b")]
    result = t.upsert(batch(rows))
    apply(model, rows)
    assert (result.updated, result.deleted, result.inserted) == (1, 1, 1)
    assert latest(t) == model_rows(model)


def test_named_partitions_only_and_dry_run_writes_nothing(cat: Catalog, layout: str) -> None:
    t = make_table(cat, partition_by="p", layout=layout)
    model = _three_versions(t)
    files_before = sorted(files_under(cat))
    plan = t.compact(["p=a"], dry_run=True)
    assert [(p.partition, p.status) for p in plan.partitions] == [("p=a", "planned")]
    assert plan.partitions[0].versions_compacted == 3
    assert sorted(files_under(cat)) == files_before
    result = t.compact([{"p": "a"}])
    assert [p.partition for p in result.partitions] == ["p=a"]
    versions = {
        snapshot_part.path: {f.version for f in t.snapshot().files if f.partition_id == pid}
        for pid, snapshot_part in t.snapshot().partitions.items()
    }
    assert len(versions["p=a"]) == 1 and len(versions["p=b"]) == 3
    assert latest(t) == model_rows(model)
    with pytest.raises(NoSuchPartitionError):
        t.compact(["p=zzz"])
    with pytest.raises(InputError, match=re.escape("p=...")):
        t.compact(["q=a"])


def test_a_dry_run_counts_the_files_the_compaction_then_writes(cat: Catalog, layout: str) -> None:
    """Issue: an acid dry run said ``files_to_write 0``, and the compaction then wrote seven
    files a partition (a bucket file per bucket and the folder's markers)."""
    extra = table_args(layout, buckets=4)
    t = make_table(cat, layout=layout, properties={"auto_compact": "false"}, **extra)
    _three_versions(t)
    kinds = [CompactionOptions()]
    if layout == "acid":
        kinds.insert(0, CompactionOptions(kind="minor"))
    for options in kinds:
        plan = t.compact(dry_run=True, options=options)
        done = t.compact(options=options)
        expected = [(p.partition, p.files_added) for p in done.partitions]
        assert [(p.partition, p.files_added) for p in plan.partitions] == expected
        assert all(added > 1 for _, added in expected)
        t.upsert(batch([(i, 1.0, "U", "ab"[i % 2]) for i in range(0, 40, 4)]))


def test_partition_spec_values_are_unescaped_and_may_hold_slashes(
    cat: Catalog, layout: str
) -> None:
    t = cat.create_table(
        "t.two",
        columns="id BIGINT, v INT, s STRING, d STRING",
        primary_key="id",
        partition_by="s,d",
        layout=layout,
    )
    import pyarrow as pa

    for v in (1, 2):
        t.upsert(pa.table({"id": [1, 2], "v": [v, v], "s": ["x/y", "x/y"], "d": ["2024=1", None]}))
    result = t.compact(["s=x/y/d=2024=1"])
    assert [p.partition for p in result.partitions] == ["s=x%2Fy/d=2024%3D1"]
    result = t.compact(["s=x/y/d=__HIVE_DEFAULT_PARTITION__"])
    assert [p.partition for p in result.partitions] == ["s=x%2Fy/d=__HIVE_DEFAULT_PARTITION__"]
    assert sorted(tuple(r) for r in t.read().collect()) == [
        (1, 2, "x/y", "2024=1"),
        (2, 2, "x/y", None),
    ]


def test_unpartitioned_table(cat: Catalog, layout: str) -> None:
    t = cat.create_table("t.flat", columns="k STRING, n INT", primary_key="k", layout=layout)
    import pyarrow as pa

    t.upsert(pa.table({"k": ["a", "b", "c"], "n": [1, 2, 3]}))
    t.upsert(pa.table({"k": ["b"], "n": [20]}))
    (part,) = t.compact().partitions
    assert part.partition == "" and part.status == "compacted"
    assert sorted(tuple(r) for r in t.read().collect()) == [("a", 1), ("b", 20), ("c", 3)]
    assert len({f.version for f in t.snapshot().files}) == 1


# --- races: every interleaving with a writer, and with a second compaction -----------------


def _other(cat: Catalog, spark: Any, name: str = "t.sales") -> Any:
    return connect(
        catalog=cat.settings.catalog_url,
        warehouse=cat.settings.warehouse,
        spark=spark,
        user="alice",
    ).table(name)


@pytest.fixture
def race_cat(spark: Any, tmp_path: Path, catalog_url: str) -> Any:
    catalog = connect(
        catalog=catalog_url, warehouse=warehouse_for(tmp_path), spark=spark, user="alice"
    )
    yield catalog
    catalog.close()


def test_a_write_committed_during_a_compaction_and_the_compaction_both_commit(
    race_cat: Catalog, spark: Any, layout: str
) -> None:
    """Compaction never conflicts with writers (Hive's design, and the version layout's:
    its rows keep the head version they compacted, below any write that commits meanwhile).
    The writer commits while the compaction writes; both commit on their first attempt and
    the write's rows win."""
    t = make_table(race_cat, layout=layout)
    model = _three_versions(t)
    other = _other(race_cat, spark)
    rows = [(0, -5.0, "U", "a"), (2, None, "D", "a"), (70, 7.0, "I", "a")]
    writes: list[Any] = []

    def race(message: str) -> None:
        if "writing" in message and not writes:
            writes.append(other.upsert(batch(rows)))

    result = t.compact(["p=a"], progress=race)
    apply(model, rows)
    (part,) = result.partitions
    assert (part.status, part.attempts) == ("compacted", 1)
    assert part.high_water_mark is not None
    assert part.high_water_mark < writes[0].version  # opened after the compaction's
    assert latest(t) == model_rows(model)
    ops = [c.operation for c in t.history()]
    assert ops[-2:] == ["upsert", "compact"]
    # committed after the write's higher version, the compaction took a version above it
    versions = [c.version for c in t.history()]
    assert versions == sorted(versions) and part.version == versions[-1]
    # The write's files stay live beside the compacted ones.
    assert writes[0].version in {f.version for f in t.snapshot().files}


def test_writers_committing_throughout_a_compaction_never_make_it_give_up(
    race_cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(race_cat, layout=layout)
    model = _three_versions(t)
    other = _other(race_cat, spark)
    n = [100]

    def race(message: str) -> None:
        if "writing" in message or "committing" in message:
            n[0] += 1
            rows = [(n[0], 1.0, "I", "b")]
            other.upsert(batch(rows))
            apply(model, rows)

    result = t.compact(["p=b"], progress=race)
    (part,) = result.partitions
    assert (part.status, part.attempts, result.conflicts) == ("compacted", 1, 0)
    assert n[0] > 101  # writers committed while it wrote and while it committed
    assert latest(t) == model_rows(model)
    assert [c.operation for c in t.history()][-1] == "compact"
    # Only the files of the compacted snapshot were retired: the writes stay.
    t.compact()
    assert latest(t) == model_rows(model)


def test_a_write_planned_before_a_compaction_commits_on_its_first_attempt(
    race_cat: Catalog, spark: Any, layout: str
) -> None:
    """The writer planned against the old files; the compaction commits first; the write
    commits without re-planning (a compaction moves no key and no partition head, and its
    rows keep versions below the write's transaction id), and its rows win."""
    t = make_table(race_cat, layout=layout)
    model = _three_versions(t)
    other = _other(race_cat, spark)
    compactions: list[Any] = []
    said: list[str] = []

    def race(message: str) -> None:
        said.append(message)
        if message.startswith("writing") and not compactions:
            compactions.append(other.compact(["p=a"]))

    rows = [(0, -9.0, "U", "a"), (4, None, "D", "a"), (80, 8.0, "I", "a")]
    result = t.upsert(batch(rows), progress=race)
    apply(model, rows)
    compacted = compactions[0].partitions[0]
    assert compacted.status == "compacted"
    (write,) = [c for c in t.history() if c.version == result.version]
    assert write.txn_id < compacted.version  # opened before the compaction, committed after
    assert not [m for m in said if "retrying" in m], said
    assert (result.updated, result.deleted, result.inserted) == (1, 1, 1)
    assert latest(t) == model_rows(model)


def test_two_compactions_of_one_partition_never_both_commit(
    race_cat: Catalog, spark: Any, layout: str
) -> None:
    t = make_table(race_cat, layout=layout)
    model = _three_versions(t)
    other = _other(race_cat, spark)
    inner: list[Any] = []

    def race(message: str) -> None:
        if "committing" in message and not inner:
            inner.append(other.compact(["p=a"]))

    # The second compaction of the partition starts while the first is committing. One of
    # them commits: the version layout's second one (the first re-plans: nothing left), the
    # acid layout's first one (it holds the partition; the second gives up).
    outer = t.compact(["p=a"], progress=race)
    statuses = {outer.partitions[0].status, inner[0].partitions[0].status}
    assert statuses in ({"compacted", "skipped"}, {"compacted", "conflict"})
    compactions = [c for c in t.history() if c.operation == "compact"]
    assert len(compactions) == 1
    assert latest(t) == model_rows(model)
    one_attempt = CompactionOptions(max_attempts=1)
    t.upsert(batch([(90, 9.0, "I", "a")]))
    inner.clear()
    outer = t.compact(["p=a"], options=one_attempt, progress=race)
    pair = {outer.partitions[0].status, inner[0].partitions[0].status}
    assert pair == {"conflict", "compacted"}
    assert sum(1 for c in t.history() if c.operation == "compact") == 2
