"""`VersionIngestSink`: each committed transaction of a batch is one version of the endpoint's
partition, laid out as `Table.upsert` lays out the same rows, so every reader works unchanged.

The sink is driven here as a `TransactionBatch` drives it, with real catalog transactions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.support.lake_rows import lake_rows
from versioned.errors import CommitConflictError, NotSupportedError
from versioned.layouts.ingest import PreparedCommit, SinkContext
from versioned.layouts.version_partition.ingest_sink import VersionIngestSink
from versioned.storage.filesystem import FileIO

NAME = "testing.alerts"
ASIA = ("Asia", "India")


def _table(cat: Any, *, primary_key: str = "continent,country,id", **extra: Any) -> Any:
    return cat.create_table(
        NAME,
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key=primary_key,
        partition_by="continent,country",
        layout="versioned",
        **extra,
    )


class _Batch:
    """Drives a sink as a transaction batch does: its own catalog transactions."""

    def __init__(self, cat: Any, n: int = 3, values: tuple[str, ...] = ASIA) -> None:
        self.cat = cat
        self.table = cat.engine_context.store.table(cat.table(NAME).name)
        partition = cat.engine_context.store.add_partition(self.table.spec.name, values)
        self.txns = cat.engine_context.store.open_transactions(n)
        self.sink = VersionIngestSink(
            SinkContext(
                cat.engine_context.store,
                cat.engine_context.fileio,
                self.table,
                partition,
                tuple(self.txns),
                tuple(self.txns),
            )
        )

    def write(self, txn: int, *records: tuple[int, str]) -> None:
        ids, msgs = zip(*records, strict=True)
        rows = pa.table({"id": pa.array(ids, pa.int32()), "msg": pa.array(msgs, pa.string())})
        self.sink.write(txn, txn, rows)

    def commit_prepared(self, txn: int, prepared: PreparedCommit) -> None:
        self.cat.engine_context.store.commit(
            txn,
            self.table.spec.name,
            operation="stream",
            partitions=prepared.changes,
            metrics=prepared.metrics,
            expected_seq=prepared.expected_seq,
            version=prepared.version,
            unless_since=prepared.unless_since,
        )
        self.sink.committed(txn)

    def commit(self, txn: int) -> PreparedCommit:
        prepared = self.sink.prepare_commit(txn, txn)
        self.commit_prepared(txn, prepared)
        return prepared

    def abort(self, txn: int) -> None:
        self.cat.engine_context.store.abort(txn)
        self.sink.abort(txn)


def _rows(cat: Any, as_of: int | None = None) -> list[tuple[Any, ...]]:
    """(id, msg, continent, country) of the live rows, read without Spark."""
    rows = lake_rows(cat.table(NAME), as_of)
    return sorted((r["id"], r["msg"], r["continent"], r["country"]) for r in rows)


def _upsert(cat: Any, *rows: tuple[int, str, str, str]) -> int:
    ids, msgs, continents, countries = zip(*rows, strict=True)
    batch = pa.table(
        {
            "id": pa.array(ids, pa.int32()),
            "msg": msgs,
            "continent": continents,
            "country": countries,
        }
    )
    version = cat.table(NAME).upsert(batch).version
    assert version is not None
    return int(version)


def _table_files(cat: Any) -> set[str]:
    root = Path(cat.settings.warehouse) / cat.table(NAME).info.location
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_rows_show_only_after_commit_and_each_commit_is_a_version(lake: Any) -> None:
    _table(lake)
    batch = _Batch(lake)
    first, second, _ = batch.txns
    batch.write(first, (1, "a"), (2, "b"))
    assert _table_files(lake) == set()  # nothing reaches storage before prepare_commit
    prepared = batch.sink.prepare_commit(first, first)
    assert _rows(lake) == []  # written, not committed: invisible
    batch.commit_prepared(first, prepared)
    assert _rows(lake) == [(1, "a", *ASIA), (2, "b", *ASIA)]
    batch.write(second, (3, "c"))
    batch.commit(second)
    history = lake.table(NAME).history()
    assert [(c.version, c.operation) for c in history] == [(first, "stream"), (second, "stream")]
    assert _rows(lake, as_of=first) == [(1, "a", *ASIA), (2, "b", *ASIA)]
    assert [r[0] for r in _rows(lake)] == [1, 2, 3]
    kinds = {(f.kind, f.version) for f in lake.table(NAME).snapshot().files}
    assert kinds == {("data", first), ("bloom", first), ("data", second), ("bloom", second)}


def test_a_streamed_key_replaces_its_row_without_reading_old_data(cat: Any, tmp_path: Path) -> None:
    """Stored by an upsert or by an earlier commit, the latest version wins; only Bloom
    filters of older versions are read (the old data files are moved away meanwhile), and
    the connection's filters stay in memory between commits."""
    _table(cat)
    _upsert(cat, (1, "old", *ASIA), (9, "other partition", "Europe", "France"))
    root = Path(cat.settings.warehouse) / cat.table(NAME).info.location
    old_data = [f.path for f in cat.table(NAME).snapshot().files if f.kind == "data"]
    hidden = tmp_path / "hidden"
    for i, rel in enumerate(old_data):
        hidden.mkdir(exist_ok=True)
        (root / rel).rename(hidden / str(i))
    batch = _Batch(cat)
    first, second, _ = batch.txns
    FileIO.reset_opened_files()
    batch.write(first, (1, "new"), (2, "b"))
    metrics = batch.commit(first).metrics
    batch.write(second, (2, "newer"))
    opened_second = len(FileIO.opened_files)
    batch.commit(second)
    assert len(FileIO.opened_files) == opened_second  # no filter read again
    opened = list(FileIO.opened_files)
    for i, rel in enumerate(old_data):
        (hidden / str(i)).rename(root / rel)
    assert not any(p.endswith(tuple(old_data)) for p in opened)
    assert any("_bloom-" in p for p in opened)
    assert (metrics["inserted"], metrics["updated"]) == (1, 1)
    assert _rows(cat) == [
        (1, "new", *ASIA),
        (2, "newer", *ASIA),
        (9, "other partition", "Europe", "France"),
    ]


def test_the_last_record_of_a_key_in_a_transaction_wins(lake: Any) -> None:
    _table(lake)
    batch = _Batch(lake)
    txn = batch.txns[0]
    batch.write(txn, (1, "a"), (2, "b"), (1, "c"))
    batch.write(txn, (2, "d"))
    metrics = batch.commit(txn).metrics
    assert metrics["superseded"] == 2 and metrics["inserted"] == 2
    assert _rows(lake) == [(1, "c", *ASIA), (2, "d", *ASIA)]


def test_an_aborted_transaction_never_shows_and_leaves_no_file(lake: Any) -> None:
    _table(lake)
    batch = _Batch(lake)
    before, prepared, after = batch.txns
    batch.write(before, (1, "aborted before prepare"))
    batch.abort(before)
    batch.write(prepared, (2, "aborted after prepare"))
    batch.sink.prepare_commit(prepared, prepared)
    assert any(f"version_id={prepared}" in p for p in _table_files(lake))
    batch.abort(prepared)
    assert not any(f"version_id={prepared}" in p for p in _table_files(lake))
    batch.write(after, (3, "kept"))
    batch.commit(after)
    assert _rows(lake) == [(3, "kept", *ASIA)]


def test_compaction_and_vacuum_keep_the_streamed_rows(cat: Any) -> None:
    _table(cat)
    _upsert(cat, (1, "upserted", *ASIA), (5, "france", "Europe", "France"))
    batch = _Batch(cat)
    for i, txn in enumerate(batch.txns):
        batch.write(txn, (1, f"v{i}"), (10 + i, "event"))
        batch.commit(txn)
    expected = _rows(cat)
    assert expected == [
        (1, "v2", *ASIA),
        (5, "france", "Europe", "France"),
        (10, "event", *ASIA),
        (11, "event", *ASIA),
        (12, "event", *ASIA),
    ]
    table = cat.table(NAME)
    table.compact()
    asia = [f for f in table.snapshot().files if f.kind == "data" and "Asia" in f.path]
    assert len({f.version for f in asia}) == 1
    table.vacuum(retain_hours=0, grace_hours=0)
    assert _rows(cat) == expected


def test_a_key_unique_table_wide_moves_to_the_streamed_partition(cat: Any) -> None:
    """With a key outside the partition columns, the key's row in another partition is
    retired in the same commit (an ``M`` entry there), as upsert does."""
    _table(cat, primary_key="id")
    _upsert(cat, (1, "in france", "Europe", "France"), (2, "stays", "Europe", "France"))
    batch = _Batch(cat)
    txn = batch.txns[0]
    batch.write(txn, (1, "moved to india"), (3, "new"))
    prepared = batch.commit(txn)
    assert len(prepared.others) == 1 and prepared.expected_seq is not None
    assert _rows(cat) == [
        (1, "moved to india", *ASIA),
        (2, "stays", "Europe", "France"),
        (3, "new", *ASIA),
    ]


def test_a_version_planned_before_another_commit_is_planned_again(lake: Any) -> None:
    """A batch with a lower transaction id commits into the partition between this one's
    prepare and commit: the commit conflicts, and preparing again sees the new version."""
    _table(lake)
    earlier = _Batch(lake, n=1)
    later = _Batch(lake, n=1)
    (low,), (high,) = earlier.txns, later.txns
    later.write(high, (1, "later"))
    stale = later.sink.prepare_commit(high, high)
    earlier.write(low, (1, "earlier"))
    earlier.commit(low)
    with pytest.raises(CommitConflictError):
        later.commit_prepared(high, stale)
    later.commit(high)
    assert _rows(lake) == [(1, "later", *ASIA)]


FRANCE = ("Europe", "France")


def test_a_commit_to_another_partition_that_holds_none_of_the_keys_is_no_conflict(
    lake: Any,
) -> None:
    """Issue 27 item 6: with a key unique table-wide, any commit to the table since a version
    was planned made it conflict (four stream writers of one table kept losing races). Now
    the commit checks what committed since: the other partitions' new Bloom filters (only
    those are read, while the catalog holds the table) hold none of its keys, so it lands."""
    _table(lake, primary_key="id")
    india, france = _Batch(lake, n=1), _Batch(lake, n=1, values=FRANCE)
    (txn,) = india.txns
    india.write(txn, *[(i, f"india {i}") for i in range(2, 100, 2)])
    prepared = india.sink.prepare_commit(txn, txn)
    # odd keys: within the range of India's (so France's filter must be read), none of them
    france.write(france.txns[0], *[(i, f"france {i}") for i in range(1, 100, 2)])
    france.commit(france.txns[0])
    FileIO.reset_opened_files()
    india.commit_prepared(txn, prepared)  # planned before France's commit
    opened = [p for p in FileIO.opened_files if not p.endswith(".db")]
    (france_bloom,) = [
        f.path
        for f in lake.table(NAME).snapshot().files
        if f.kind == "bloom" and f.version == france.txns[0]
    ]
    assert len(opened) == 1 and opened[0].endswith(france_bloom)
    assert [r[0] for r in _rows(lake)] == list(range(1, 100))


def test_a_commit_elsewhere_that_may_hold_one_of_the_keys_conflicts(lake: Any) -> None:
    """The commit that won holds one of the prepared version's keys: committing the version
    as planned would leave that key live twice, so it conflicts and is planned again (and
    then retires the key's row there)."""
    _table(lake, primary_key="id")
    india, france = _Batch(lake, n=1), _Batch(lake, n=1, values=FRANCE)
    (txn,) = india.txns
    india.write(txn, (1, "india"), (2, "india"))
    stale = india.sink.prepare_commit(txn, txn)
    france.write(france.txns[0], (2, "france"), (3, "france"))
    france.commit(france.txns[0])
    with pytest.raises(CommitConflictError, match="1 of its keys may have been written"):
        india.commit_prepared(txn, stale)
    assert lake.table(NAME).history()[-1].version == france.txns[0]  # nothing of India's
    again = india.sink.prepare_commit(txn, txn)
    assert [a.path for a in again.change.add] != [a.path for a in stale.change.add]
    assert len(again.others) == 1  # an M entry for key 2 in France
    india.commit_prepared(txn, again)
    assert _rows(lake) == [(1, "india", *ASIA), (2, "india", *ASIA), (3, "france", *FRANCE)]


def test_a_transaction_below_the_partition_head_commits_as_a_fresh_version(lake: Any) -> None:
    """Versions of a partition grow: once a higher version committed there (a batch opened
    later, a compaction), a lower transaction's rows get a fresh version above it."""
    _table(lake)
    earlier = _Batch(lake, n=1)
    later = _Batch(lake, n=1)
    later.write(later.txns[0], (1, "later"), (2, "replaced"))
    later.commit(later.txns[0])
    earlier.write(earlier.txns[0], (2, "committed after"))
    prepared = earlier.commit(earlier.txns[0])
    assert prepared.version is not None and prepared.version > later.txns[0]
    assert prepared.change.new_head == prepared.version
    assert _rows(lake) == [(1, "later", *ASIA), (2, "committed after", *ASIA)]
    history = lake.table(NAME).history()
    assert [(c.txn_id, c.version) for c in history][-1] == (earlier.txns[0], prepared.version)


def test_a_table_with_an_ordering_column_is_refused_at_sink_creation(lake: Any) -> None:
    lake.create_table(
        NAME,
        columns="id INT NOT NULL, msg STRING, ts BIGINT",
        primary_key="id",
        ordering_column="ts",
        layout="versioned",
    )
    with pytest.raises(NotSupportedError, match="ordering column"):
        _Batch(lake, values=())
