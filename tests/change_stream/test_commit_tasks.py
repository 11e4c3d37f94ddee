"""Planning a micro-batch from the catalog's change log (no Spark, no files)."""

from __future__ import annotations

import dataclasses

import pytest

from versioned.catalog.change_log import ChangeLog, LoggedCommit
from versioned.catalog.records import CommitInfo, DataFile, PartitionInfo, TableInfo
from versioned.change_stream.commit_tasks import ROWS_PER_TASK, plan_tasks
from versioned.errors import NoSuchVersionError, SchemaError
from versioned.schema import Column, TableSpec

BIG = ROWS_PER_TASK * 6 // 10


def _spec(primary_key: str) -> TableSpec:
    return TableSpec.build(
        "db.t", columns="id INT, v STRING, p STRING", primary_key=primary_key, partition_by="p"
    )


def _file(i: int, pid: int, seq: int, kind: str = "data", rows: int = BIG) -> DataFile:
    return DataFile(i, pid, f"p={pid}/version_id={seq}/f{i}", kind, seq, 1, rows, {}, seq, None)


def _log(spec: TableSpec, operations: list[str], oldest: int = 0) -> ChangeLog:
    commits = tuple(
        LoggedCommit(CommitInfo(s, 1, s, s, op, "alice", 0.0, {}), spec, ())
        for s, op in enumerate(operations, start=1)
    )
    files = [_file(10 + pid, pid, 1) for pid in (1, 2, 3)]  # live before commit 2
    files += [_file(20 + pid, pid, 2) for pid in (1, 2, 3)]  # commit 2 writes 3 partitions
    files += [_file(30, 1, 3)]
    parts = {pid: PartitionInfo(pid, 1, (f"v{pid}",), f"p=v{pid}", 2, 0.0) for pid in (1, 2, 3)}
    return ChangeLog(
        table=TableInfo(1, spec, "alice", "db.db/t", 0.0, len(operations)),
        after_seq=1,
        until_seq=len(operations),
        commits=commits[1:],
        files=tuple(files),
        partitions=parts,
        oldest_readable_seq=oldest,
    )


def test_a_big_commit_is_split_by_partition_when_keys_cannot_move() -> None:
    spec = _spec("p,id")
    tasks = plan_tasks(_log(spec, ["upsert", "upsert"]), spec.columns, "/wh")
    assert [sorted(f.partition_id for f in t.written) for t in tasks] == [[1], [2], [3]]
    for task in tasks:  # each task gets the files live before the commit in its partitions
        assert {f.partition_id for f in task.before} == {f.partition_id for f in task.written}
        assert {f.added_seq for f in task.before} == {1}
        assert set(task.partitions) == {task.written[0].partition_id}


def test_a_big_commit_stays_one_task_when_keys_can_move() -> None:
    spec = _spec("id")
    tasks = plan_tasks(_log(spec, ["upsert", "upsert"]), spec.columns, "/wh")
    assert len(tasks) == 1
    assert len(tasks[0].written) == 3 and len(tasks[0].before) == 3


def test_compaction_and_alter_commits_get_no_task() -> None:
    spec = _spec("id")
    tasks = plan_tasks(_log(spec, ["upsert", "compact", "alter"]), spec.columns, "/wh")
    assert tasks == []


def test_a_commit_whose_pre_images_were_vacuumed_fails() -> None:
    spec = _spec("id")
    with pytest.raises(NoSuchVersionError, match="vacuum deleted the files"):
        plan_tasks(_log(spec, ["upsert", "upsert"], oldest=2), spec.columns, "/wh")


def test_a_commit_with_columns_the_stream_lacks_fails() -> None:
    spec = _spec("id")
    wider = dataclasses.replace(spec, columns=(*spec.columns, Column("extra", "STRING")))
    with pytest.raises(SchemaError, match="restart the query"):
        plan_tasks(_log(wider, ["upsert", "upsert"]), spec.columns, "/wh")
    # Widened since the stream started: older commits read wider, newer ones fail.
    widened = dataclasses.replace(spec, columns=(Column("id", "BIGINT"), *spec.columns[1:]))
    assert plan_tasks(_log(spec, ["upsert", "upsert"]), widened.columns, "/wh")
    with pytest.raises(SchemaError, match="column id BIGINT"):
        plan_tasks(_log(widened, ["upsert", "upsert"]), spec.columns, "/wh")
