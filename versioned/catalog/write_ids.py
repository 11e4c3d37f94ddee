"""Per-table write ids (Hive's ``TXN_TO_WRITE_ID`` / ``NEXT_WRITE_ID``) and a snapshot's view.

Tables of the acid layout name their directories and ROW__IDs by write id, not by
transaction id: write ids count from 1 per table, so a table's directory names stay dense
whatever other tables do. A transaction gets at most one write id per table; a batch of
transactions (`allocate`) gets contiguous write ids in the order given, as Hive's
``allocateTableWriteIdsBatch`` does. A write id shares its transaction's fate: valid once it
commits, invisible forever once it aborts.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from versioned.catalog import transactions
from versioned.catalog.models import CommitRow, TableRow, TransactionRow, WriteIdRow
from versioned.catalog.records import TableWriteIds
from versioned.errors import InputError


def allocate(session: Session, table: TableRow, txn_ids: Sequence[int], now: float) -> list[int]:
    """The write ids of ``table`` for ``txn_ids``, allocated now unless they have them.

    The caller holds the table row locked, so allocations of one table are serialized.
    Transactions that have write ids of the table already get the same ones again (a
    retried call is harmless).

    Raises:
        InputError: No transaction given, one given twice, or only some of them have
            write ids already.
        TransactionStateError / TransactionExpiredError: A transaction is not open.
    """
    ids = list(txn_ids)
    if not ids or len(set(ids)) != len(ids):
        raise InputError(f"allocate write ids for distinct transactions, got {ids!r}")
    found = session.execute(
        sa.select(WriteIdRow.txn_id, WriteIdRow.write_id).where(
            WriteIdRow.table_id == table.id, WriteIdRow.txn_id.in_(ids)
        )
    )
    existing = {int(txn): int(write_id) for txn, write_id in found}
    if len(existing) == len(ids):
        return [int(existing[t]) for t in ids]
    if existing:
        raise InputError(
            f"transactions {sorted(existing)} have write ids of this table already, the others "
            "not: allocate write ids for a batch of transactions once, all together",
            txn_ids=ids,
        )
    for txn_id in sorted(ids):  # one lock order
        transactions.require_open(transactions.get(session, txn_id, for_update=True), now)
    last = session.scalar(
        sa.select(sa.func.max(WriteIdRow.write_id)).where(WriteIdRow.table_id == table.id)
    )
    first = int(last or 0) + 1
    rows = [
        {"table_id": table.id, "write_id": first + i, "txn_id": t, "allocated_at": now}
        for i, t in enumerate(ids)
    ]
    session.execute(sa.insert(WriteIdRow), rows)
    return [first + i for i in range(len(ids))]


def write_id_list(session: Session, table: TableRow, seq: int) -> TableWriteIds:
    """The table's write ids as the snapshot at commit ``seq`` sees them.

    A write id is valid when its transaction committed, unless that commit to this table
    came after ``seq``; then, like an open one, it is listed open. Aborted ones are listed
    aborted. At the latest commit the high-water mark is the highest write id allocated
    (Hive's), for an older commit the highest valid one, so later write ids are above it.
    """
    rows = session.execute(
        sa.select(
            WriteIdRow.write_id,
            WriteIdRow.txn_id,
            TransactionRow.state,
            CommitRow.seq,
            CommitRow.version,
        )
        .join(TransactionRow, TransactionRow.id == WriteIdRow.txn_id)
        .outerjoin(
            CommitRow,
            sa.and_(
                CommitRow.table_id == WriteIdRow.table_id, CommitRow.txn_id == WriteIdRow.txn_id
            ),
        )
        .where(WriteIdRow.table_id == table.id)
        .order_by(WriteIdRow.write_id)
    ).all()
    valid: dict[int, int] = {}
    open_ids: list[int] = []
    aborted: list[int] = []
    for write_id, txn_id, state, commit_seq, version in rows:
        if state == transactions.ABORTED:
            aborted.append(int(write_id))
        elif state == transactions.OPEN or (commit_seq is not None and commit_seq > seq):
            open_ids.append(int(write_id))
        else:  # a commit that came after a higher version's took a fresh version
            valid[int(write_id)] = int(txn_id if version is None else version)
    allocated = int(rows[-1][0]) if rows else 0
    hwm = allocated if seq >= table.current_seq else max(valid, default=0)
    return TableWriteIds(
        table=f"{table.database.name}.{table.name}",
        high_water_mark=hwm,
        open_ids=tuple(w for w in open_ids if w <= hwm),
        aborted_ids=tuple(w for w in aborted if w <= hwm),
        versions=valid,
    )
