"""Committing a change to a table: one SQL transaction of compare-and-swap updates.

Every guard is an UPDATE whose WHERE clause states what the writer planned against; an
update that matches no row means another writer got there first, and the whole SQL
transaction rolls back, so a conflicting commit leaves nothing behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from versioned.catalog import (
    access,
    clock,
    commit_changes,
    partition_summaries,
    stream_progress,
    tables,
    transactions,
)
from versioned.catalog.models import CommitRow, FileRow, PartitionRow, TableRow, TransactionRow
from versioned.catalog.partition_summaries import PartitionSummariser
from versioned.catalog.records import (
    CommitInfo,
    DataFile,
    FileAdd,
    FileGrowth,
    PartitionCommit,
    SinceCheck,
    StreamMark,
)
from versioned.errors import CommitConflictError, InputError, SchemaError
from versioned.names import TableName

_CHUNK = 500
_NO_SYNC = {"synchronize_session": False}


def commit_as(
    session: Session,
    *,
    user: str,
    name: TableName,
    txn_id: int,
    operation: str,
    changes: Sequence[PartitionCommit],
    metrics: Mapping[str, Any] | None,
    version: int | None,
    expected_seq: int | None = None,
    stream_mark: StreamMark | None = None,
    unless_since: SinceCheck | None = None,
    summarise: PartitionSummariser | None = None,
    in_commit_order: bool = False,
) -> CommitInfo:
    """``user`` commits ``changes`` to table ``name`` as transaction ``txn_id``.

    Locks the table row, then the transaction row, in the same order as lock requests do.
    With ``stream_mark`` the commit also records the writer's micro-batch, and is refused
    when the writer recorded it (or a later one) already (`stream_progress`).

    Raises:
        PermissionDeniedError: ``user`` may not write to the table.
        StreamBatchCommittedError: ``stream_mark``'s batch was applied already.
        TransactionExpiredError: The transaction expired (the caller aborts it).
        CommitConflictError: See `apply`.
    """
    if not isinstance(operation, str) or not operation:
        raise InputError("commit needs an operation name, e.g. 'upsert'")
    if stream_mark is not None:
        stream_progress.check_mark(stream_mark)
    now = clock.now(session)
    table = tables.get_table(session, name, for_update=True)
    access.require_table(session, user, table, "write")
    if stream_mark is not None:  # the table row is locked: no other commit runs meanwhile
        stream_progress.refuse_done(session, table, stream_mark)
    txn = transactions.get(session, txn_id, for_update=True)
    transactions.require_open(txn, now)
    transactions.reap(session, now)
    info = apply(
        session,
        table=table,
        txn=txn,
        user=user,
        operation=operation,
        changes=changes,
        metrics=metrics,
        version=version,
        now=now,
        expected_seq=expected_seq,
        unless_since=unless_since,
        summarise=summarise,
        in_commit_order=in_commit_order,
    )
    if stream_mark is not None:
        stream_progress.record(session, table, stream_mark, info, now)
    return info


def apply(
    session: Session,
    *,
    table: TableRow,
    txn: TransactionRow,
    user: str,
    operation: str,
    changes: Sequence[PartitionCommit],
    metrics: Mapping[str, Any] | None,
    version: int | None,
    now: float,
    expected_seq: int | None = None,
    finish: bool = True,
    unless_since: SinceCheck | None = None,
    summarise: PartitionSummariser | None = None,
    in_commit_order: bool = False,
) -> CommitInfo:
    """Commit ``changes`` to ``table`` as transaction ``txn`` (both rows locked by the caller).

    ``finish=False`` leaves the transaction open (and its locks held): a commit to several
    tables (`commit_tables_as`) applies each table's changes, then finishes it once.

    ``summarise`` makes the new summary of every partition whose files the commit changed
    (`partition_summaries`; without it their summaries are cleared).

    ``unless_since``: with ``expected_seq``, the table having moved past it is a conflict
    only when this check, given every file the commits since then added or retired, returns
    a reason (it runs while the table row is locked, so nothing commits meanwhile).

    ``version`` (default: the transaction id) is the commit's version. ``in_commit_order``
    keeps the table's versions in commit order, for layouts whose files do not carry it:
    when a commit of a higher version came first (a transaction opened later committed
    earlier), the commit takes a fresh version above it (`_in_commit_order`). Head guards
    still compare the version planned; a head it moves to that version moves to the new.

    Raises:
        CommitConflictError: A head, a removed file or the table moved since it was planned
            (with ``expected_seq``: any commit since that sequence, unless ``unless_since``
            clears them).
    """
    metrics_data = _json_object(metrics or {}, "metrics")
    commit_changes.validate(changes)
    planned = txn.id if version is None else int(version)
    version = _in_commit_order(session, table, planned, user, now) if in_commit_order else planned
    changes = commit_changes.create_partitions(session, table, changes, now)
    commit_changes.check_partitions(session, table, changes)
    old_seq = table.current_seq
    if expected_seq is not None and old_seq != expected_seq:
        reason = "a key unique table-wide may have moved meanwhile"
        if unless_since is not None:
            found = unless_since(_changed_since(session, table, expected_seq))
            reason = "" if found is None else found
        if reason:
            raise _conflict(
                table,
                txn,
                f"the table changed since this write planned (commit {old_seq}, planned "
                f"against {expected_seq}); {reason}",
            )
    seq = old_seq + 1
    moved = session.execute(
        sa.update(TableRow)
        .where(TableRow.id == table.id, TableRow.current_seq == old_seq)
        .values(current_seq=seq)
        .execution_options(**_NO_SYNC)
    )
    if _rowcount(moved) != 1:
        raise _conflict(table, txn, "another commit changed the table at the same moment")
    set_committed_value(table, "current_seq", seq)
    touched: set[int] = set()
    for change in changes:
        _move_head(session, table, txn, change, version if change.new_head == planned else None)
        _retire(session, table, txn, change.remove, seq)
        _grow(session, table, txn, change)
        if change.add or change.remove or change.grow:
            if change.partition_id is not None:
                touched.add(change.partition_id)
            if change.remove:
                touched |= partition_summaries.partitions_of_files(session, table.id, change.remove)
    commit = CommitRow(
        table_id=table.id,
        seq=seq,
        txn_id=txn.id,
        version=version,
        operation=operation,
        user=user,
        committed_at=now,
        metrics=metrics_data,
    )
    session.add(commit)
    files = [_file_row(table.id, add, seq) for change in changes for add in change.add]
    for chunk in _chunks(files):
        session.execute(sa.insert(FileRow), chunk)
    partition_summaries.refresh(session, table, touched, seq, summarise)
    if finish:
        transactions.finish(session, txn, transactions.COMMITTED, now, None)
    session.flush()
    return commit.info()


def _in_commit_order(session: Session, table: TableRow, version: int, user: str, now: float) -> int:
    """``version``, unless ``table`` has a commit of a higher version already: then a fresh
    transaction id, above every version so far (the table row is locked)."""
    highest = session.scalar(
        sa.select(sa.func.max(CommitRow.version)).where(CommitRow.table_id == table.id)
    )
    if highest is None or highest <= version:
        return version
    return transactions.allocate_committed(session, user=user, now=now)


def _changed_since(session: Session, table: TableRow, seq: int) -> list[DataFile]:
    """Every file of ``table`` that a commit after ``seq`` added or retired."""
    rows = session.scalars(
        sa.select(FileRow).where(
            FileRow.table_id == table.id,
            sa.or_(FileRow.added_seq > seq, FileRow.removed_seq > seq),
        )
    )
    return [r.info() for r in rows]


def _move_head(
    session: Session,
    table: TableRow,
    txn: TransactionRow,
    change: PartitionCommit,
    moved_to: int | None = None,
) -> None:
    """Guard and move the partition's head as ``change`` says; it moves to ``moved_to``
    instead of ``change.new_head`` when given (a commit that took a fresh version)."""
    if change.partition_id is None or (not change.check_head and change.new_head is None):
        return
    head = PartitionRow.head_version
    where = [PartitionRow.id == change.partition_id, PartitionRow.table_id == table.id]
    if change.check_head:
        if (
            change.new_head is not None
            and change.expected_head is not None
            and change.new_head <= change.expected_head
        ):
            raise _head_conflict(session, table, txn, change)
        where.append(head.is_not_distinct_from(change.expected_head))
    else:
        where.append(sa.or_(head.is_(None), head < change.new_head))
    new_value = head if change.new_head is None else (moved_to or change.new_head)
    result = session.execute(
        sa.update(PartitionRow)
        .where(*where)
        .values(head_version=new_value)
        .execution_options(**_NO_SYNC)
    )
    if _rowcount(result) != 1:
        raise _head_conflict(session, table, txn, change)


def _retire(
    session: Session, table: TableRow, txn: TransactionRow, paths: Sequence[str], seq: int
) -> None:
    for chunk in _chunks(list(paths)):
        result = session.execute(
            sa.update(FileRow)
            .where(
                FileRow.table_id == table.id,
                FileRow.path.in_(chunk),
                FileRow.removed_seq.is_(None),
            )
            .values(removed_seq=seq)
            .execution_options(**_NO_SYNC)
        )
        if _rowcount(result) != len(chunk):
            retired_now = set(
                session.scalars(
                    sa.select(FileRow.path).where(
                        FileRow.table_id == table.id,
                        FileRow.path.in_(chunk),
                        FileRow.removed_seq == seq,
                    )
                )
            )
            gone = sorted(set(chunk) - retired_now)
            raise _conflict(
                table,
                txn,
                f"{len(gone)} file(s) to remove are no longer live (e.g. {gone[0]!r}); "
                "another commit retired them or they were never committed",
            )


def _grow(session: Session, table: TableRow, txn: TransactionRow, change: PartitionCommit) -> None:
    """Record the new committed length of each live file in ``change.grow``."""
    for growth in change.grow:
        if not isinstance(growth, FileGrowth):
            raise InputError(f"PartitionCommit.grow takes FileGrowth records, got {growth!r}")
        row = session.scalars(
            sa.select(FileRow).where(
                FileRow.table_id == table.id,
                FileRow.path == growth.path,
                FileRow.removed_seq.is_(None),
            )
        ).one_or_none()
        elsewhere = change.partition_id is not None and row is not None
        if row is None or (elsewhere and row.partition_id != change.partition_id):
            raise _conflict(
                table, txn, f"file {growth.path!r} to grow is not live in this partition"
            )
        if growth.size_bytes < row.size_bytes or growth.row_count < row.row_count:
            raise SchemaError(
                f"file {growth.path!r} cannot shrink ({row.size_bytes} bytes, {row.row_count} "
                f"rows recorded; {growth.size_bytes} bytes, {growth.row_count} rows given)",
                path=growth.path,
            )
        row.size_bytes = int(growth.size_bytes)
        row.row_count = int(growth.row_count)
        row.stats = _json_object(growth.stats, f"stats of {growth.path!r}")


def _head_conflict(
    session: Session, table: TableRow, txn: TransactionRow, change: PartitionCommit
) -> CommitConflictError:
    row = session.get(PartitionRow, change.partition_id)
    where = f"partition {row.path or '(root)'!r}" if row else f"partition {change.partition_id}"
    actual = row.head_version if row else None
    if change.check_head and actual == change.expected_head:
        detail = (
            f"{where} would move from head version {actual} to {change.new_head}, "
            "but versions in a partition must grow"
        )
    else:
        detail = (
            f"{where} is at head version {actual}, but this commit planned against "
            f"{change.expected_head if change.check_head else 'an older head'}"
        )
    return _conflict(table, txn, detail, partition_id=change.partition_id, actual_head=actual)


def _conflict(
    table: TableRow, txn: TransactionRow, detail: str, **context: Any
) -> CommitConflictError:
    name = f"{table.database.name}.{table.name}"
    return CommitConflictError(
        f"commit of transaction {txn.id} to {name} conflicts: {detail}. Nothing was "
        "written and the transaction is still open: re-plan against the current state and "
        "commit again, or abort it",
        table=name,
        txn_id=txn.id,
        **context,
    )


def race_conflict(name: TableName, txn_id: int) -> CommitConflictError:
    """The error for a commit that lost a race on a unique file path or commit number."""
    return CommitConflictError(
        f"commit of transaction {txn_id} to {name} conflicts with a concurrent commit (a file "
        "path or commit number is taken). Nothing was written and the transaction is still "
        "open: re-plan and commit again, or abort it",
        table=str(name),
        txn_id=txn_id,
    )


def _file_row(table_id: int, add: FileAdd, seq: int) -> dict[str, Any]:
    if not isinstance(add, FileAdd):
        raise InputError(f"PartitionCommit.add takes FileAdd records, got {type(add).__name__}")
    return {
        "table_id": table_id,
        "partition_id": add.partition_id,
        "path": add.path,
        "kind": add.kind,
        "version": int(add.version),
        "size_bytes": int(add.size_bytes),
        "row_count": int(add.row_count),
        "stats": _json_object(add.stats, f"stats of {add.path!r}"),
        "added_seq": seq,
        "removed_seq": None,
    }


def _json_object(data: Mapping[str, Any], what: str) -> dict[str, Any]:
    try:
        return cast(dict[str, Any], json.loads(json.dumps(dict(data))))
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be JSON-serialisable: {exc}") from exc


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _rowcount(result: sa.Result[Any]) -> int:
    return int(cast(sa.CursorResult[Any], result).rowcount)
