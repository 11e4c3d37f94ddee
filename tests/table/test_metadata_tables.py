"""Metadata tables (``db.t__history``, ``__partitions``...), per layout and per catalog.

What a user sees: the rows of each metadata table are what the operations that made them
did (compared with the operations' own results, the table's history and snapshot, and a
model of the rows); SQL reads the same rows through ``Catalog.sql`` and through the views
`Catalog.register_views` registers; a user without read permission sees neither the table
nor its metadata; a table cannot take a metadata table's name.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.support.test_warehouse import warehouse_for
from tests.table.sales import Row, apply, batch, latest, make_table, model_rows
from versioned.api.catalog import Catalog, connect
from versioned.api.catalog_overview import catalog_overview
from versioned.api.metadata_tables import KINDS
from versioned.catalog.records import StreamMark
from versioned.errors import InvalidNameError, PermissionDeniedError
from versioned.ui.health import health_marks

FIRST: list[Row] = [(i, float(i), "I", "ab"[i % 2]) for i in range(30)]
BAD: Row = (99, 1.0, "X", "a")  # an unknown op code: a dead letter
SECOND: list[Row] = [(i, 100.0 + i, "U", "ab"[i % 2]) for i in range(0, 30, 3)] + [
    (i, None, "D", "ab"[i % 2]) for i in range(1, 30, 7)
]


@pytest.fixture
def both(spark: Any, tmp_path: Path, catalog_url: str) -> Iterator[tuple[Catalog, Catalog]]:
    """alice (who creates the table) and bob (no grant), on one catalog and warehouse."""
    wh = warehouse_for(tmp_path)
    alice = connect(catalog=catalog_url, warehouse=wh, spark=spark, user="alice")
    bob = connect(catalog=catalog_url, warehouse=wh, spark=spark, user="bob")
    yield alice, bob
    alice.close()
    bob.close()


def _sql(cat: Catalog, query: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in cat.sql(query).collect()]


def test_metadata_tables_show_what_the_operations_did(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    cat, _ = both
    t = make_table(cat, layout=layout, properties={"auto_compact": "false"})
    model: dict[int, Any] = {}
    first = t.upsert(batch([*FIRST, BAD]))
    apply(model, FIRST)
    second = t.upsert(batch(SECOND))
    apply(model, SECOND)
    assert first.rejected == 1

    history = t.metadata("history").to_pylist()
    commits = sorted(t.history(), key=lambda c: c.seq)
    assert [h["commit"] for h in history] == [c.seq for c in commits]
    assert [h["operation"] for h in history] == [c.operation for c in commits]
    by_version = {h["version"]: h for h in history}
    for result in (first, second):
        row = by_version[result.version]
        assert (row["inserted"], row["updated"], row["deleted"], row["rejected"]) == (
            result.inserted,
            result.updated,
            result.deleted,
            result.rejected,
        )
        assert row["seconds"] is not None and row["seconds"] >= 0
        assert row["files_written"] == result.files_written

    letters = t.metadata("dead_letters").to_pylist()
    assert len(letters) == 1
    assert letters[0]["version"] == first.version
    assert "X" in letters[0]["raw"] and letters[0]["reason"]

    # Before a compaction: the second write's entries retire rows; the policy says so.
    before = {p["partition"]: p for p in t.metadata("partitions").to_pylist()}
    assert set(before) == {"p=a", "p=b"}
    assert sum(p["entries"] for p in before.values()) > 0
    assert all(p["read_amplification"] > 1 for p in before.values())

    t.compact()
    snapshot = t.snapshot()
    files = t.metadata("files").to_pylist()
    assert sorted(f["path"] for f in files) == sorted(f.path for f in snapshot.files)
    assert sum(f["bytes"] for f in files) == sum(f.size_bytes for f in snapshot.files)

    snapshots = t.metadata("snapshots").to_pylist()
    assert [s["commit"] for s in snapshots] == [c.seq for c in t.history()]
    assert snapshots[-1]["live_files"] == len(snapshot.files)
    assert snapshots[-1]["live_bytes"] == sum(f.size_bytes for f in snapshot.files)
    assert snapshots[0]["parent_commit"] is None
    assert all(s["parent_commit"] == p["commit"] for p, s in itertools.pairwise(snapshots))

    after = {p["partition"]: p for p in t.metadata("partitions").to_pylist()}
    live = model_rows(model)
    for part, row in after.items():
        assert row["live_rows_estimate"] == sum(1 for r in live if f"p={r[2]}" == part)
        assert row["entries"] == 0 and row["read_amplification"] == 1.0
        assert row["last_compaction"] is not None
        assert row["compaction_due"] is None
        assert row["values"] == [("p", part[2:])]

    # SQL reads the same rows.
    assert _sql(cat, "SELECT commit, operation FROM t.sales__history ORDER BY commit") == [
        (c.seq, c.operation) for c in sorted(t.history(), key=lambda c: c.seq)
    ]
    assert _sql(cat, "SELECT sum(live_rows_estimate) FROM t.sales__partitions") == [(len(live),)]
    assert _sql(cat, "SELECT count(*) FROM t.sales__files") == [(len(files),)]
    assert _sql(cat, "SELECT reason FROM t.sales__dead_letters") == [(letters[0]["reason"],)]


def test_a_write_whose_every_row_is_rejected_lists_its_dead_letters(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    """Its dead letters are in ``__dead_letters``, and counted by the history (what the
    page's "dead letters rising" mark sums), like those of a write with rows to apply."""
    cat, _ = both
    t = make_table(cat, layout=layout)
    first = t.upsert(batch(FIRST))
    files = sorted(f.path for f in t.snapshot().files)
    null_key: Row = (None, 2.0, "I", "b")  # type: ignore[assignment]
    result = t.upsert(batch([BAD, null_key]))
    assert (result.inserted, result.rejected, result.all_rejected) == (0, 2, True)

    letters = t.metadata("dead_letters").to_pylist()
    assert len(letters) == 2 and {r["version"] for r in letters} == {result.version}
    assert result.version is not None and result.version > first.version  # type: ignore[operator]
    assert all(r["reason"] for r in letters)
    history = t.metadata("history").to_pylist()
    assert (history[-1]["version"], history[-1]["rejected"]) == (result.version, 2)
    assert (history[-1]["inserted"], history[-1]["files_written"]) == (0, 0)
    now = datetime.now(UTC)
    assert [m.kind for m in health_marks(history, [], [], now)] == ["dead_letters"]
    assert _sql(cat, "SELECT count(*) FROM t.sales__dead_letters") == [(2,)]
    # A record of the rejection only: no file, no row changed.
    assert sorted(f.path for f in t.snapshot().files) == files
    assert len(latest(t)) == len(FIRST)


def _stored_partitions(cat: Catalog, name: str) -> list[dict[str, Any]] | None:
    """The table's partition rows as its commits summarised them (None: not current)."""
    (facts,) = [f for f in catalog_overview(cat) if str(f.info.spec.name) == name]
    return facts.partitions


def _computed_partitions(t: Any) -> list[dict[str, Any]]:
    rows = t.metadata("partitions").to_pylist()
    return [{k: v for k, v in r.items() if k not in ("values", "last_compaction")} for r in rows]


def test_each_commit_stores_what_partitions_would_compute(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    cat, bob = both
    t = make_table(cat, layout=layout, properties={"auto_compact": "false"})
    t.upsert(batch([*FIRST, BAD]))
    assert _stored_partitions(cat, "t.sales") == _computed_partitions(t)
    t.upsert(batch(SECOND))
    stored = _stored_partitions(cat, "t.sales")
    assert stored == _computed_partitions(t)
    assert stored and all(p["entries"] > 0 for p in stored)
    t.compact()
    assert _stored_partitions(cat, "t.sales") == _computed_partitions(t)

    # New properties may move the policy: the summaries stop counting until a write.
    t.set_properties({"team": "billing"})
    assert _stored_partitions(cat, "t.sales") is None
    t.upsert(batch([(i, 7.0, "U", "ab"[i % 2]) for i in range(4)]))
    assert _stored_partitions(cat, "t.sales") == _computed_partitions(t)
    assert catalog_overview(bob) == []


def _live_per_partition(t: Any) -> dict[str, int]:
    counts = collections.Counter(f"p={r.p}" for r in t.read().select("p").collect())
    return {p: counts.get(p, 0) for p in ("p=a", "p=b")}


def _estimates(cat: Catalog, t: Any) -> dict[str, int]:
    """Each partition's live-row estimate, checked against its stored summary."""
    computed = _computed_partitions(t)
    assert _stored_partitions(cat, str(t.name)) == computed
    return {p["partition"]: p["live_rows_estimate"] for p in computed}


def test_the_live_row_estimate_follows_keys_that_move_and_come_back(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    """Issue: partitions holding rows showed 0 live rows once keys had moved away and
    back, been written again after they moved, deleted and inserted again, or compacted."""
    cat, _ = both
    t = make_table(cat, layout=layout, properties={"auto_compact": "false"})
    moving = range(0, 20, 2)  # ten keys of partition a
    steps: list[list[Row]] = [
        [(i, 1.0, "I", "ab"[i % 2]) for i in range(40)],
        [(i, 2.0, "U", "b") for i in moving],  # they move to b
        [(i, 3.0, "U", "b") for i in moving],  # and are written there again
        [(i, 4.0, "U", "b") for i in moving],
        [(i, 5.0, "U", "a") for i in moving],  # and come back
        [(i, None, "D", "b") for i in range(1, 11, 2)],  # five keys of b deleted...
        [(i, 6.0, "I", "b") for i in range(1, 11, 2)],  # ...and inserted again
        "compact",  # type: ignore[list-item]
        [(i, 7.0, "U", "b") for i in moving],  # after a compaction: they move again...
        [(i, 8.0, "U", "b") for i in moving],  # ...and are written there again
    ]
    for number, step in enumerate(steps):
        if step == "compact":
            t.compact()
        else:
            t.upsert(batch(step))
        live = _live_per_partition(t)
        assert _estimates(cat, t) == live, f"after step {number}"
    assert sum(live.values()) == 40


def test_the_live_row_estimate_leaves_out_tombstones(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    cat, _ = both
    t = make_table(
        cat,
        layout=layout,
        columns="id BIGINT, amt DOUBLE, op STRING, p STRING, ts BIGINT",
        ordering_column="ts",
        properties={"auto_compact": "false"},
    )

    def upsert(rows: list[Row], ts: int) -> None:
        t.upsert(batch(rows).append_column("ts", pa.array([ts] * len(rows), pa.int64())))

    upsert([(i, 1.0, "I", "ab"[i % 2]) for i in range(40)], 1)
    # Ten stored keys deleted, and five keys the table never had (tombstones only).
    upsert([(i, None, "D", "a") for i in [*range(0, 20, 2), *range(100, 110, 2)]], 2)
    assert _estimates(cat, t) == _live_per_partition(t) == {"p=a": 10, "p=b": 20}
    t.compact()  # the tombstones stay (retention) beside the rows
    assert _estimates(cat, t) == _live_per_partition(t) == {"p=a": 10, "p=b": 20}


def test_open_transactions_locks_and_stream_writers(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    cat, _ = both
    t = make_table(cat, layout=layout)
    t.upsert(batch(FIRST))
    store = cat.engine_context.store
    assert t.metadata("transactions").num_rows == 0
    assert t.metadata("locks").num_rows == 0
    txn = store.begin(timeout_s=300)
    lock = store.lock(txn, t.name, "shared_write", partition=["a"])
    store.record_stream_batch(t.name, StreamMark("pump-1", 7))
    txns = t.metadata("transactions").to_pylist()
    assert [(r["txn_id"], r["state"], r["locks"], r["expired"]) for r in txns] == [
        (txn, "open", 1, False)
    ]
    locks = t.metadata("locks").to_pylist()
    assert [(r["lock_id"], r["txn_id"], r["partition"], r["mode"]) for r in locks] == [
        (lock.id, txn, "p=a", "shared_write")
    ]
    assert _sql(cat, "SELECT txn_id, locks FROM t.sales__transactions") == [(txn, 1)]
    progress = t.metadata("stream_progress").to_pylist()
    assert [(r["writer_id"], r["batch_id"], r["commit"]) for r in progress] == [("pump-1", 7, None)]
    store.abort(txn, "test over")
    assert t.metadata("transactions").num_rows == 0
    assert _sql(cat, "SELECT count(*) FROM t.sales__locks") == [(0,)]


def test_a_user_who_may_not_read_sees_no_metadata(
    both: tuple[Catalog, Catalog], layout: str
) -> None:
    alice, bob = both
    t = make_table(alice, layout=layout)
    t.upsert(batch(FIRST))
    for kind in KINDS:
        with pytest.raises(PermissionDeniedError):
            bob.table("t.sales").metadata(kind)
    with pytest.raises(PermissionDeniedError):
        bob.sql("SELECT * FROM t.sales__history")
    alice.grant("bob", "read", on="t.sales")
    assert _sql(bob, "SELECT count(*) FROM t.sales__history") == [(len(t.history()),)]


def test_metadata_names_are_reserved_and_views_register(
    both: tuple[Catalog, Catalog], layout: str, spark: Any
) -> None:
    cat, _ = both
    with pytest.raises(InvalidNameError, match="reserved"):
        make_table(cat, "t.sales__history", layout=layout)
    make_table(cat, "t.sales__historic", layout=layout)  # not a metadata kind: a table
    t = make_table(cat, layout=layout)
    t.upsert(batch(FIRST))
    registered = cat.register_views(spark, metadata=True)
    assert {"t.sales", "t.sales__history", "t.sales__partitions"} <= set(registered)
    assert "t.sales__historic__history" in registered
    rows = spark.sql("SELECT operation FROM t.sales__history").collect()
    assert [r.operation for r in rows] == [c.operation for c in t.history()]
