"""Transaction batches (Hive's TestStreaming, translated): contiguous ids used in order,
visibility only after commit, aborted data never visible, interleaved batches, closed
batches and connections, heartbeats and expiry, locks, primary keys, and I/O failures."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.support.lake_rows import lake_rows
from tests.support.layout_profiles import LAYOUTS, table_args
from versioned import streaming as vs
from versioned.streaming.transaction_batch import TransactionState

TABLE = "testing.alerts"
PARTITION = ["Asia", "India"]


@pytest.fixture(params=LAYOUTS)
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _alerts(lake: Any, layout: str) -> Any:
    extra = table_args(layout, buckets=2)
    return lake.create_table(
        TABLE,
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key="id",
        partition_by="continent,country",
        layout=layout,
        **extra,
    )


def _connect(lake: Any, **options: Any) -> tuple[Any, Any]:
    endpoint = vs.EndPoint(lake, TABLE, PARTITION)
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    return endpoint.connect(create_partition=True, **options), writer


def _rows(table: Any) -> list[tuple[Any, ...]]:
    """(id, msg) of the live rows, read without Spark (catalog snapshot and pyarrow)."""
    return sorted((r["id"], r["msg"]) for r in lake_rows(table))


def _spark_rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted((r.id, r.msg) for r in table.read().collect())


def test_a_batch_uses_its_contiguous_transactions_in_order(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake, agent="flume-1")
    with conn, conn.fetch_transaction_batch(3, writer) as batch:
        done = batch
        ids = list(batch.txn_ids)
        assert ids == list(range(ids[0], ids[0] + 3))
        assert batch.current_transaction_id is None
        assert batch.current_transaction_state is TransactionState.INACTIVE
        assert batch.remaining_transactions() == 3
        for expected in ids:
            batch.begin_next_transaction()
            assert batch.current_transaction_id == expected
            assert batch.current_transaction_state is TransactionState.OPEN
            batch.write(f"{expected},m{expected}")
            batch.commit()
            assert batch.current_transaction_state is TransactionState.COMMITTED
        assert batch.remaining_transactions() == 0
        with pytest.raises(vs.StreamingTransactionError, match="no transaction left"):
            batch.begin_next_transaction()
    # Hive's TestStreaming: OPEN after begin, COMMITTED after commit, INACTIVE after close
    assert done.closed and done.current_transaction_state is TransactionState.INACTIVE
    assert _rows(table) == [(i, f"m{i}") for i in ids]
    streamed = [c for c in table.history() if c.operation == "stream"]
    assert [c.version for c in streamed] == ids
    assert {c.metrics["agent"] for c in streamed} == {"flume-1"}


def test_records_are_visible_right_after_commit_and_never_before(cat: Any, layout: str) -> None:
    # On Spark: Table.read() and SQL over the catalog's views see what the client committed.
    table = _alerts(cat, layout)
    conn, writer = _connect(cat)
    with conn, conn.fetch_transaction_batch(2, writer) as batch:
        batch.begin_next_transaction()
        batch.write_many(["1,Hello streaming", "2,Welcome streaming"])
        assert _spark_rows(table) == [] == _rows(table)
        assert cat.sql(f"SELECT count(*) AS n FROM {TABLE}").first().n == 0
        batch.commit()
        assert _spark_rows(table) == [(1, "Hello streaming"), (2, "Welcome streaming")]
        assert cat.sql(f"SELECT count(*) AS n FROM {TABLE}").first().n == 2
        batch.begin_next_transaction()
        batch.write("3,pending")
        # the open transaction stays unseen
        assert [r[0] for r in _spark_rows(table)] == [1, 2] == [r[0] for r in _rows(table)]
        batch.commit()
    assert [r[0] for r in _spark_rows(table)] == [1, 2, 3]


def test_empty_transactions_commit_and_abort(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake)
    with conn, conn.fetch_transaction_batch(2, writer) as batch:
        batch.begin_next_transaction()
        batch.commit()
        assert batch.current_transaction_state is TransactionState.COMMITTED
        batch.begin_next_transaction()
        batch.abort()
        assert batch.current_transaction_state is TransactionState.ABORTED
    assert _rows(table) == []


def test_aborted_records_never_show_even_beside_committed_ones(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake)
    with conn, conn.fetch_transaction_batch(4, writer) as batch:
        batch.begin_next_transaction()
        batch.write_many(["1,a", "2,b"])
        batch.commit()
        batch.begin_next_transaction()
        batch.write_many(["3,aborted", "1,aborted"])
        batch.abort()
        batch.begin_next_transaction()
        batch.write("4,d")
        batch.commit()
        batch.begin_next_transaction()
        batch.write("5,open when closed")
    assert _rows(table) == [(1, "a"), (2, "b"), (4, "d")]
    first, last = batch.txn_ids[0], batch.txn_ids[-1]
    assert lake.engine_context.store.transaction(first + 1).state == "aborted"
    assert (
        lake.engine_context.store.transaction(last).state == "aborted"
    )  # close() aborts the open one
    assert {c.version for c in table.history()} >= {first, first + 2}


def test_batches_interleave_and_a_later_batch_may_commit_first(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake)
    with conn:
        first = conn.fetch_transaction_batch(2, writer)
        second = conn.fetch_transaction_batch(2, writer)
        first.begin_next_transaction()
        second.begin_next_transaction()
        first.write("1,first")
        second.write("2,second")
        second.commit()
        assert _rows(table) == [(2, "second")]
        first.commit()
        assert _rows(table) == [(1, "first"), (2, "second")]
        first.close()
        second.begin_next_transaction()
        second.write("3,second again")
        second.commit()
        second.close()
    assert [r[0] for r in _rows(table)] == [1, 2, 3]


def test_a_closed_batch_or_connection_refuses_work(lake: Any, layout: str) -> None:
    _alerts(lake, layout)
    conn, writer = _connect(lake)
    batch = conn.fetch_transaction_batch(3, writer)
    batch.begin_next_transaction()
    batch.write("1,x")
    batch.close()
    unused = batch.txn_ids[1:]
    assert all(lake.engine_context.store.transaction(t).state == "aborted" for t in batch.txn_ids)
    assert batch.remaining_transactions() == 0 and len(unused) == 2
    for call in (batch.begin_next_transaction, lambda: batch.write("2,y"), batch.commit):
        with pytest.raises(vs.StreamingTransactionError, match="has been closed"):
            call()
    batch.heartbeat()  # no-ops after close
    batch.abort()
    batch.close()
    other = conn.fetch_transaction_batch(1, writer)
    conn.close()
    with pytest.raises(vs.StreamingTransactionError, match="connection has been closed"):
        other.begin_next_transaction()
    with pytest.raises(vs.StreamingTransactionError, match="connection has been closed"):
        conn.fetch_transaction_batch(1, writer)
    other.close()


def test_bad_records_raise_and_the_batch_stays_usable(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake)
    with conn, conn.fetch_transaction_batch(1, writer) as batch:
        batch.begin_next_transaction()
        batch.write("1,good")
        with pytest.raises(vs.SerializationError, match="record 1"):
            batch.write_many(["2,fine", "x,not a number"])
        batch.write("3,also good")
        batch.commit()
    assert _rows(table) == [(1, "good"), (3, "also good")]


def test_a_transaction_not_heartbeated_expires(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake, transaction_timeout_s=1)
    with conn:
        batch = conn.fetch_transaction_batch(2, writer)
        batch.begin_next_transaction()
        batch.write("1,late")
        time.sleep(1.6)
        with pytest.raises(vs.StreamingTransactionError, match="transaction_timeout_s=1"):
            batch.commit()
        batch.close()
        with conn.fetch_transaction_batch(1, writer) as fresh:  # the connection still works
            fresh.begin_next_transaction()
            fresh.write("2,on time")
            fresh.commit()
    assert _rows(table) == [(2, "on time")]


def test_one_heartbeat_keeps_every_unused_transaction_alive(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake, transaction_timeout_s=1.5)
    with conn, conn.fetch_transaction_batch(3, writer) as batch:
        for _ in range(4):
            time.sleep(0.5)
            batch.heartbeat()
        for i in range(3):
            batch.begin_next_transaction()
            batch.write(f"{i},kept alive")
            batch.commit()
    assert [r[0] for r in _rows(table)] == [0, 1, 2]


def test_auto_heartbeat_keeps_a_batch_alive(lake: Any, layout: str) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake, transaction_timeout_s=1)
    with conn, conn.fetch_transaction_batch(2, writer, auto_heartbeat=True) as batch:
        batch.begin_next_transaction()
        batch.write("1,slow")
        time.sleep(2.5)
        batch.commit()
    assert _rows(table) == [(1, "slow")]


def test_an_open_transaction_holds_a_shared_lock_on_its_partition(lake: Any, layout: str) -> None:
    _alerts(lake, layout)
    conn, writer = _connect(lake)
    with conn, conn.fetch_transaction_batch(2, writer) as batch:
        assert lake.engine_context.store.locks(TABLE) == []
        batch.begin_next_transaction()
        (lock,) = lake.engine_context.store.locks(TABLE)
        assert lock.mode == "shared_read" and lock.txn_id == batch.current_transaction_id
        assert lock.partition_id == conn.partition.id
        batch.commit()
        assert lake.engine_context.store.locks(TABLE) == []
        batch.begin_next_transaction()
        assert len(lake.engine_context.store.locks(TABLE)) == 1
        batch.abort()
        assert lake.engine_context.store.locks(TABLE) == []


def test_a_streamed_key_replaces_the_stored_row(cat: Any, layout: str) -> None:
    # On Spark: rows Table.upsert stored (an acid upsert looks keys up with Spark).
    table = _alerts(cat, layout)
    table.upsert(
        pa.table(
            {
                "id": pa.array([1, 2], pa.int32()),
                "msg": ["stored 1", "stored 2"],
                "continent": ["Asia", "Asia"],
                "country": ["India", "India"],
            }
        )
    )
    conn, writer = _connect(cat)
    with conn, conn.fetch_transaction_batch(3, writer) as batch:
        batch.begin_next_transaction()
        batch.write_many(["1,streamed 1", "3,new", "3,new twice"])  # last one wins
        batch.commit()
        assert _spark_rows(table) == [(1, "streamed 1"), (2, "stored 2"), (3, "new twice")]
        batch.begin_next_transaction()
        batch.write_many(["3,replaced in the batch", "1,again"])
        batch.commit()
    assert _spark_rows(table) == [(1, "again"), (2, "stored 2"), (3, "replaced in the batch")]
    table.upsert(
        pa.table(
            {
                "id": pa.array([3], pa.int32()),
                "msg": ["upserted"],
                "continent": ["Asia"],
                "country": ["India"],
            }
        )
    )
    assert _spark_rows(table) == [(1, "again"), (2, "stored 2"), (3, "upserted")]


def test_an_io_failure_kills_the_batch_and_aborts_its_transactions(
    lake: Any, layout: str, tmp_path: Path
) -> None:
    table = _alerts(lake, layout)
    conn, writer = _connect(lake)
    with conn:
        batch = conn.fetch_transaction_batch(3, writer)
        # Where the batch's files must go is taken by a plain file: writing them fails.
        folder = Path(
            lake.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
        )
        blocked = folder / "continent=Asia" / "country=India"
        blocked.mkdir(parents=True, exist_ok=True)
        if layout == "acid":  # the batch's delta directory
            name = f"delta_{min(batch.write_ids):07d}_{max(batch.write_ids):07d}"
        else:  # the first transaction's version directory
            name = f"version_id={batch.txn_ids[0]}"
        (blocked / name).write_text("in the way")
        batch.begin_next_transaction()
        batch.write("1,lost")
        with pytest.raises(vs.StreamingIOFailure, match=r"(?i)exists"):
            batch.commit()
        assert all(
            lake.engine_context.store.transaction(t).state == "aborted" for t in batch.txn_ids
        )
        with pytest.raises(vs.StreamingTransactionError, match="I/O failure"):
            batch.begin_next_transaction()
        batch.close()
    assert _rows(table) == []


def test_rejected_records_go_to_the_dead_letter_area_on_commit(lake: Any, layout: str) -> None:
    import json

    table = _alerts(lake, layout)
    endpoint = vs.EndPoint(lake, TABLE, PARTITION)
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint, dead_letter=True)
    with endpoint.connect(create_partition=True, agent="a1") as conn:
        with conn.fetch_transaction_batch(2, writer) as batch:
            batch.begin_next_transaction()
            batch.write_many(["1,good", "x,bad id"])
            batch.write_many(["2,good", ",no id"])
            batch.commit()
            batch.begin_next_transaction()
            batch.write("y,aborted and bad")
            batch.abort()
        assert batch.rejected == 2
    assert _rows(table) == [(1, "good"), (2, "good")]
    (commit,) = [c for c in table.history() if c.operation == "stream"]
    assert commit.metrics["rejected"] == 2
    letters = Path(
        lake.engine_context.fileio.full_path(commit.metrics["dead_letters"]).removeprefix("file://")
    )
    records = [json.loads(line) for line in letters.read_text().splitlines()]
    assert [(r["_raw"], r["_source"]) for r in records] == [
        ("x,bad id", "stream:a1:1"),
        (",no id", "stream:a1:3"),
    ]
    assert all(r["_reason"] for r in records)
    assert len(list(letters.parent.parent.iterdir())) == 1  # nothing for the aborted one


def test_a_key_unique_per_partition_is_replaced_within_its_partition(
    lake: Any, layout: str
) -> None:
    extra = table_args(layout, buckets=2)
    table = lake.create_table(
        TABLE,
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key="continent,country,id",
        partition_by="continent,country",
        layout=layout,
        **extra,
    )
    for values, msg in ((PARTITION, "india"), (["Europe", "Spain"], "spain")):
        endpoint = vs.EndPoint(lake, TABLE, values)
        writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
        conn = endpoint.connect(create_partition=True)
        with conn, conn.fetch_transaction_batch(2, writer) as batch:
            for suffix in ("first", "second"):
                batch.begin_next_transaction()
                batch.write_many([f"1,{msg} {suffix}", f"2,{msg} {suffix}"])
                batch.commit()
    got = sorted((r["country"], r["id"], r["msg"]) for r in lake_rows(table))
    assert got == [
        ("India", 1, "india second"),
        ("India", 2, "india second"),
        ("Spain", 1, "spain second"),
        ("Spain", 2, "spain second"),
    ]


def test_keys_that_move_away_and_back_retire_only_their_live_rows(lake: Any, layout: str) -> None:
    """A key unique table-wide moves from the partition of one open batch to another's and
    back: the batch it comes back to replaces only the row live now, not its own row that
    the other batch retired already (acid wrote a second delete event for it)."""
    table = _alerts(lake, layout)
    batches = []
    with contextlib.ExitStack() as stack:
        for values in (PARTITION, ["Europe", "UK"]):
            endpoint = vs.EndPoint(lake, TABLE, values)
            writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
            conn = stack.enter_context(endpoint.connect(create_partition=True))
            batches.append(stack.enter_context(conn.fetch_transaction_batch(2, writer)))
        asia, uk = batches
        for batch, msg in ((asia, "asia"), (uk, "uk"), (asia, "back")):
            batch.begin_next_transaction()
            batch.write_many([f"1,{msg}", f"2,{msg}"])
            batch.commit()
    assert sorted((r["id"], r["msg"], r["country"]) for r in lake_rows(table)) == [
        (1, "back", "India"),
        (2, "back", "India"),
    ]
    counts = [(c.metrics["inserted"], c.metrics["updated"]) for c in table.history()[:3]]
    assert counts == [(2, 0), (0, 2), (0, 2)]
    parts = {p["partition"]: p for p in table.metadata("partitions").to_pylist()}
    assert [p["live_rows_estimate"] for p in parts.values()] == [2, 0]
    if layout == "acid":  # one delete event per retired row
        asia_part = parts["continent=Asia/country=India"]
        assert (asia_part["stored_rows"], asia_part["entries"]) == (4, 2)


def test_a_drop_of_the_table_waits_for_open_streaming_transactions(lake: Any, layout: str) -> None:
    import threading

    _alerts(lake, layout)
    conn, writer = _connect(lake)
    dropped = threading.Event()
    with conn:
        batch = conn.fetch_transaction_batch(1, writer)
        batch.begin_next_transaction()
        batch.write("1,in flight")
        dropper = threading.Thread(target=lambda: (lake.drop_table(TABLE), dropped.set()))
        dropper.start()
        assert not dropped.wait(1.5)  # the shared lock holds the drop back
        batch.commit()
        dropper.join(30)
        assert dropped.is_set()
        batch.close()
    assert TABLE not in [str(t.name) for t in lake.tables()]


def test_aborted_records_in_a_file_beside_committed_ones_stay_invisible(
    lake: Any, layout: str
) -> None:
    """A transaction whose records reached storage but whose commit failed is aborted;
    the acid layout's batch file then holds them between committed ones."""
    from versioned.errors import PermissionDeniedError

    table = _alerts(lake, layout)
    lake.grant("bob", "write", TABLE)
    import versioned

    settings = lake.settings
    bob = versioned.connect(catalog=settings.catalog_url, warehouse=settings.warehouse, user="bob")
    try:
        endpoint = vs.EndPoint(bob, TABLE, PARTITION)
        writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
        with endpoint.connect(create_partition=True) as conn:
            batch = conn.fetch_transaction_batch(3, writer)
            batch.begin_next_transaction()
            batch.write("1,committed")
            batch.commit()
            batch.begin_next_transaction()
            batch.write("2,flushed then refused")
            lake.revoke("bob", "write", TABLE)
            with pytest.raises(PermissionDeniedError):
                batch.commit()
            batch.abort()
            lake.grant("bob", "write", TABLE)
            batch.begin_next_transaction()
            batch.write("3,committed after")
            batch.commit()
            batch.close()
    finally:
        bob.close()
    assert _rows(table) == [(1, "committed"), (3, "committed after")]


def test_a_table_with_an_ordering_column_is_refused_without_leaving_transactions(
    lake: Any, layout: str
) -> None:
    from versioned.errors import NotSupportedError

    extra = table_args(layout, buckets=2)
    lake.create_table(
        TABLE,
        columns="id INT NOT NULL, msg STRING, ts BIGINT, continent STRING, country STRING",
        primary_key="id",
        partition_by="continent,country",
        ordering_column="ts",
        layout=layout,
        **extra,
    )
    conn, writer = _connect(lake)
    with conn, pytest.raises(NotSupportedError, match="ordering column"):
        conn.fetch_transaction_batch(2, writer)
    assert lake.engine_context.store.locks(TABLE) == []
    assert lake.engine_context.store.txn_snapshot().open_ids == frozenset()


def test_commits_racing_on_one_partition_are_planned_again_and_all_land(
    lake: Any, layout: str
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    table = _alerts(lake, layout)
    vs.EndPoint(lake, TABLE, PARTITION).connect(create_partition=True).close()

    def stream(first: int) -> None:
        conn, writer = _connect(lake)
        with conn, conn.fetch_transaction_batch(15, writer) as batch:
            for i in range(first, first + 15):
                batch.begin_next_transaction()
                batch.write(f"{i},racing {i}")
                batch.commit()

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(stream, [0, 100]))  # a commit that kept losing would raise here
    assert [r[0] for r in _rows(table)] == [*range(15), *range(100, 115)]
