"""Planning a micro-batch of a change stream on the driver: one task per commit.

A task is plain data (pickled to an executor): the commit, the files that hold what it
wrote, and the files live just before it in the partitions it touched, where the pre-images
of its keys are. The catalog's change log (`catalog.change_log`) lists them all; nothing
lists a directory. An executor turns a task into change rows without Spark
(`commit_changes`).

Commits that never change a row get no task: ``compact`` rewrites the live rows of a
partition as they are, ``alter`` changes the catalog only (a column added reads null before
and after). Neither does a commit that wrote no row, index entry or event.
"""

from __future__ import annotations

from collections.abc import Sequence

from versioned.catalog.change_log import ChangeLog, LoggedCommit
from versioned.catalog.records import DataFile
from versioned.errors import NoSuchVersionError, SchemaError
from versioned.layouts.abilities import streams_changes
from versioned.layouts.base import layout_of
from versioned.layouts.change_task import CommitStamp, CommitTask
from versioned.schema import Column, TableSpec
from versioned.schema_changes import is_widening
from versioned.values.arrow_types import arrow_type

UNCHANGING_OPERATIONS = frozenset({"compact", "alter"})
"""Commits that never change a row (see the module docstring)."""
ROWS_PER_TASK = 1_000_000
"""A commit that wrote more rows than this, into several partitions of a table whose key
cannot move between partitions, is split into tasks of whole partitions."""


def plan_tasks(log: ChangeLog, columns: Sequence[Column], warehouse: str) -> list[CommitTask]:
    """The tasks of every commit of ``log`` that may have changed rows, in commit order.

    Raises:
        NoSuchVersionError: Vacuum deleted files a commit's changes need.
        SchemaError: A commit has columns the stream does not (the table was altered after
            the query started).
    """
    layout = layout_of(log.table.spec.layout)
    changed_files = streams_changes(layout, log.table.spec.name).change_files()
    tasks: list[CommitTask] = []
    for commit in log.commits:
        _check_readable(log, commit)
        _check_columns(log, commit, columns)
        if commit.info.operation in UNCHANGING_OPERATIONS:
            continue
        written, before = changed_files(log, commit)
        if not written:
            continue
        for part in _split(commit.spec, written):
            touched = {f.partition_id for f in part}
            task = CommitTask(
                stamp=CommitStamp(commit.info.seq, commit.info.version, commit.info.committed_at),
                layout=log.table.spec.layout,
                warehouse=warehouse,
                location=log.table.location,
                spec=commit.spec,
                columns=tuple(columns),
                partitions={
                    pid: log.partitions[pid].values
                    for pid in touched
                    if pid is not None and pid in log.partitions
                },
                written=tuple(part),
                before=tuple(f for f in before if f.partition_id in touched),
                write_ids=commit.write_ids,
            )
            tasks.append(task)
    return tasks


def _split(spec: TableSpec, written: list[DataFile]) -> list[list[DataFile]]:
    """The commit's files in groups of whole partitions of about `ROWS_PER_TASK` rows; one
    group when a key may move between partitions (its images must meet in one task)."""
    if spec.keys_move or sum(f.row_count for f in written) <= ROWS_PER_TASK:
        return [written]
    by_partition: dict[int | None, list[DataFile]] = {}
    for f in written:
        by_partition.setdefault(f.partition_id, []).append(f)
    groups: list[list[DataFile]] = [[]]
    rows = 0
    for files in by_partition.values():
        size = sum(f.row_count for f in files)
        if groups[-1] and rows + size > ROWS_PER_TASK:
            groups.append([])
            rows = 0
        groups[-1].extend(files)
        rows += size
    return groups


def _check_readable(log: ChangeLog, commit: LoggedCommit) -> None:
    """Raise when vacuum deleted the files of the snapshot before the commit (its pre-images)
    or of the commit itself."""
    needed = max(commit.info.seq - 1, 1)
    if needed >= log.oldest_readable_seq:
        return
    name = log.table.spec.name
    raise NoSuchVersionError(
        f"{name}: the changes of version {commit.info.version} cannot be read any more, "
        "vacuum deleted the files of the versions around it; start the stream later "
        "(option startingVersion, or 'latest') from a new checkpoint",
        table=str(name),
        version=commit.info.version,
    )


def _check_columns(log: ChangeLog, commit: LoggedCommit, columns: Sequence[Column]) -> None:
    """Raise when the commit has a column the stream lacks, or a wider type than the
    stream's: the table was altered after the query fixed its schema."""
    ours = {c.name: c for c in columns}
    for c in commit.spec.columns:
        mine = ours.get(c.name)
        if mine is not None and (
            arrow_type(mine.type) == arrow_type(c.type) or is_widening(c.type, mine.type)
        ):
            continue
        name = log.table.spec.name
        raise SchemaError(
            f"{name} was altered at version {commit.info.version} (column {c.name} "
            f"{c.type}) after this change stream fixed its columns; restart the query to "
            "read the new columns",
            table=str(name),
            version=commit.info.version,
            column=c.name,
        )
