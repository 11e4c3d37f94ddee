"""What compacting one acid partition reads, writes and retires
(`versioned.layouts.acid.compaction_plan`), without Spark."""

from __future__ import annotations

import pytest

from versioned.catalog.records import DataFile, PartitionInfo
from versioned.errors import InputError
from versioned.layouts.acid.compaction_plan import plan_partition, tombstone_write_id
from versioned.layouts.acid.compaction_rules import InitiatorThresholds
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.options import CompactionOptions

PARTITION = PartitionInfo(1, 1, ("a",), "p=a", 9, 0.0)
RULES = InitiatorThresholds()
_ids = iter(range(1, 1000))


def _file(path: str, kind: str, version: int) -> DataFile:
    return DataFile(next(_ids), 1, path, kind, version, 100, 1, {}, 1, None)


def _write(write_id: int, version: int, *, deletes: bool = True) -> list[DataFile]:
    """What a writer's commit lists: its delta, delete delta and tombstone file."""
    name = f"{write_id:07d}_{write_id:07d}_0000"
    files = [
        _file(f"p=a/delta_{name}/bucket_00000", "delta", version),
        _file(f"p=a/delta_{name}/_orc_acid_version", "acid_marker", version),
    ]
    if deletes:
        files += [
            _file(f"p=a/delete_delta_{name}/bucket_00000", "delete_delta", version),
            _file(f"p=a/_tombstones/delete_delta_{name}.orc", "acid_tombstone", version),
        ]
    return files


def _paths(files: tuple[DataFile, ...]) -> set[str]:
    return {f.path for f in files}


def test_tombstone_write_id_comes_from_the_file_name() -> None:
    writer = _file("p=a/_tombstones/delete_delta_0000004_0000004_0000.orc", "acid_tombstone", 7)
    merged = _file("p=a/_tombstones/base_0000006_v0000012.orc", "acid_tombstone", 12)
    odd = _file("p=a/_tombstones/something.orc", "acid_tombstone", 12)
    assert (tombstone_write_id(writer), tombstone_write_id(merged)) == (4, 6)
    assert tombstone_write_id(odd) is None


def test_major_compaction_merges_the_tombstones_its_base_covers() -> None:
    files = _write(1, 3, deletes=False) + _write(2, 5) + _write(3, 6)
    ids = ValidWriteIdList("d.t", 4, open_ids=(4,))  # write id 4 still open
    late = _file("p=a/_tombstones/delete_delta_0000005_0000005_0000.orc", "acid_tombstone", 8)
    plan = plan_partition(PARTITION, [*files, late], ids, kind="major", thresholds=RULES)
    assert plan is not None and plan.max_write_id == 3
    tombstones = {f.path for f in files if f.kind == "acid_tombstone"}
    assert _paths(plan.tombstones) == tombstones
    assert tombstones <= _paths(plan.retired) and late.path not in _paths(plan.retired)
    assert plan.tombstone_output(20) == "p=a/_tombstones/base_0000003_v0000020.orc"
    assert plan.versions == 3  # three commits, whatever the number of directories


def test_a_merged_tombstone_file_is_merged_again_by_the_next_major_compaction() -> None:
    merged = _file("p=a/_tombstones/base_0000003_v0000020.orc", "acid_tombstone", 20)
    base = [
        _file("p=a/base_0000003_v0000020/bucket_00000", "base", 20),
        _file("p=a/base_0000003_v0000020/_orc_acid_version", "acid_marker", 20),
    ]
    files = [*base, merged, *_write(4, 21)]
    ids = ValidWriteIdList("d.t", 4)
    plan = plan_partition(PARTITION, files, ids, kind="major", thresholds=RULES)
    assert plan is not None
    assert merged.path in _paths(plan.tombstones) and len(plan.tombstones) == 2
    assert plan.tombstone_output(30) == "p=a/_tombstones/base_0000004_v0000030.orc"
    # the base of an earlier release (``_vT``) is compacted into an unsuffixed one
    assert plan.base is not None and plan.base.name == "base_0000003_v0000020"
    assert plan.outputs()[0].name == "base_0000004"


def test_compaction_output_names_carry_no_visibility_suffix() -> None:
    """Issue 28 item 3: Hive 3's names, which Hive 2.3, 3 and 4 read (``_vT`` is Hive 4's)."""
    files = _write(1, 3) + _write(2, 5)
    ids = ValidWriteIdList("d.t", 2)
    major = plan_partition(PARTITION, files, ids, kind="major", thresholds=RULES)
    minor = plan_partition(PARTITION, files, ids, kind="minor", thresholds=RULES)
    assert major is not None and minor is not None
    assert [d and d.name for d in major.outputs()] == ["base_0000002", None]
    assert [d and d.name for d in minor.outputs()] == [
        "delta_0000001_0000002",
        "delete_delta_0000001_0000002",
    ]


def test_minor_compaction_leaves_the_tombstones_alone() -> None:
    files = _write(1, 3) + _write(2, 5)
    plan = plan_partition(
        PARTITION, files, ValidWriteIdList("d.t", 2), kind="minor", thresholds=RULES
    )
    assert plan is not None and plan.tombstones == () and plan.tombstone_output(9) is None
    assert not any(f.kind == "acid_tombstone" for f in plan.retired)


def test_an_unknown_compaction_kind_is_refused() -> None:
    for kind in ("major", "minor", "auto", None):
        CompactionOptions(kind=kind)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="compaction kind 'medium': use major, minor or auto"):
        CompactionOptions(kind="medium")  # type: ignore[arg-type]


def test_compaction_retires_the_key_filters_of_the_directories_it_compacts() -> None:
    """A bucket file's key Bloom filter lives in its directory: retired with it (else its
    catalog entry stays live and vacuum never removes the directory)."""
    files = _write(1, 3, deletes=False) + _write(2, 5)
    blooms = [
        _file(f"p=a/delta_{w:07d}_{w:07d}_0000/_key_bloom_00000", "acid_key_bloom", v)
        for w, v in ((1, 3), (2, 5))
    ]
    ids = ValidWriteIdList("d.t", 2)
    for kind in ("minor", "major"):
        plan = plan_partition(PARTITION, [*files, *blooms], ids, kind=kind, thresholds=RULES)  # type: ignore[arg-type]
        assert plan is not None
        assert _paths(tuple(blooms)) <= _paths(plan.retired), kind
        assert not _paths(tuple(blooms)) & _paths(plan.inputs), kind
