"""A version-partition table's first load in bulk (`engine.version_partition.bulk_load`): what
it commits is what the general path commits (rows, Bloom file bytes, stats), it falls back to
the general path when the batch needs it, writes its dead letters once, and an aborted load
leaves nothing behind."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pybloom_live import BloomFilter

from tests.support.jvm_processes import JvmProcesses
from tests.support.test_warehouse import files_under, read_text
from tests.support.typed_rows import TYPED_COLUMNS, typed_batch
from versioned.api.catalog import Catalog, connect
from versioned.catalog.records import StreamMark
from versioned.errors import SchemaError, StreamBatchCommittedError
from versioned.keys.bloom import KeyBloomFilter
from versioned.keys.bloom_schemes import with_key_hash
from versioned.keys.encoding import encode_key
from versioned.layouts.version_partition.table_rules import BULK_LOAD_MIN_BYTES_PROPERTY
from versioned.options import WriteOptions

BULK = "in bulk"
NEVER = str(1 << 62)  # no batch is this large: the general path


def _table(cat: Catalog, name: str, *, bulk: bool = True, **kw: Any) -> Any:
    args: dict[str, Any] = dict(
        columns="id BIGINT, v STRING, p STRING",
        primary_key="id",
        partition_by="p",
        op_code_column="op",
    )
    args.update(kw)
    args["properties"] = {BULK_LOAD_MIN_BYTES_PROPERTY: "0" if bulk else NEVER}
    return cat.create_table(name, **args)


def _batch(rows: list[tuple[Any, ...]]) -> pa.Table:
    ops, ids, vs, ps = zip(*rows, strict=True)
    return pa.table(
        {"op": list(ops), "id": pa.array(ids, pa.int64()), "v": list(vs), "p": list(ps)}
    )


def _upsert(t: Any, batch: Any, **kw: Any) -> tuple[Any, list[str]]:
    said: list[str] = []
    result = t.upsert(batch, progress=said.append, **kw)
    return result, said


def _rows(t: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().collect())


def _blooms(t: Any) -> dict[tuple[str | None, ...], tuple[bytes, dict[str, Any], int]]:
    """Per partition: the Bloom file's bytes, stats and key count."""
    fileio = t.catalog.engine_context.fileio
    snapshot = t.snapshot()
    values = {pid: p.values for pid, p in snapshot.partitions.items()}
    return {
        values[f.partition_id]: (
            fileio.read_bytes(f"{t.info.location}/{f.path}"),
            f.stats,
            f.row_count,
        )
        for f in snapshot.files
        if f.kind == "bloom"
    }


def _left_behind(t: Any) -> set[str]:
    """Files under the table no catalog record lists (dead letters aside)."""
    listed = {f.path for f in t.catalog.engine_context.store.all_files(t.name)}
    stored = files_under(t.catalog, t.info.location)
    return {p for p in stored - listed if not p.startswith("_dead_letter/")}


def _listed_but_missing(t: Any) -> set[str]:
    stored = files_under(t.catalog, t.info.location)
    return {f.path for f in t.catalog.engine_context.store.all_files(t.name)} - stored


def _dead_letters(t: Any) -> list[dict[str, Any]]:
    letters = sorted(files_under(t.catalog, f"{t.info.location}/_dead_letter"))
    return [
        json.loads(line)
        for rel in letters
        if rel.endswith(".json")
        for line in read_text(t.catalog, f"{t.info.location}/_dead_letter/{rel}").split("\n")
        if line
    ]


@pytest.mark.cluster
@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_a_bulk_first_load_commits_what_the_general_path_commits(
    cat: Catalog, file_format: str
) -> None:
    tables = {
        bulk: cat.create_table(
            f"b.typed_{bulk}",
            columns=TYPED_COLUMNS,
            primary_key="id",
            partition_by="store",
            op_code_column="op",
            file_format=file_format,
            properties={BULK_LOAD_MIN_BYTES_PROPERTY: "0" if bulk else NEVER},
        )
        for bulk in (True, False)
    }
    first = typed_batch(list(range(400)), [], 1, null_store_every=13)
    loaded = {bulk: _upsert(t, first) for bulk, t in tables.items()}
    assert any(BULK in m for m in loaded[True][1])
    assert not any(BULK in m for m in loaded[False][1])
    counts = {b: (r.inserted, r.updated, r.rejected, r.partitions) for b, (r, _) in loaded.items()}
    assert counts[True] == counts[False] == (400, 0, 0, 5)
    assert _rows(tables[True]) == _rows(tables[False])
    bulk_blooms, general_blooms = _blooms(tables[True]), _blooms(tables[False])
    assert bulk_blooms == general_blooms  # the same file bytes, stats and key counts
    # pybloom-live reads the files the executors built and, hashing as format 2, holds every key
    for values, (data, _, count) in bulk_blooms.items():
        bloom = KeyBloomFilter.from_bytes(data).pybloom
        ids = [
            i
            for i, s in zip(first["id"].to_pylist(), first["store"].to_pylist(), strict=True)
            if s == values[0]
        ]
        assert len(ids) == count
        raw = with_key_hash(BloomFilter.fromfile(_pybloom_file(data)))
        assert all(encode_key((i,)).decode() in raw for i in ids)
        assert all(encode_key((i,)).decode() in bloom for i in ids)
    # later batches find the loaded keys the same way
    second = typed_batch(
        list(range(0, 460, 3)), ["D" if i % 2 else "U" for i in range(0, 460, 3)], 2
    )
    later = {b: t.upsert(second) for b, t in tables.items()}
    assert (later[True].inserted, later[True].updated, later[True].deleted) == (
        later[False].inserted,
        later[False].updated,
        later[False].deleted,
    )
    assert _rows(tables[True]) == _rows(tables[False])


def test_a_bulk_load_whose_keys_repeat_falls_back_and_keeps_the_last_change(cat: Catalog) -> None:
    t = _table(cat, "b.repeat")
    rows = [("I", i, f"v{i}", f"p{i % 3}") for i in range(50)]
    rows += [("U", 7, "moved", "p9"), ("U", 8, "again", "p2")]  # 7 moves, 8 stays
    result, said = _upsert(t, _batch(rows))
    assert any("a key repeats" in m for m in said)
    assert (result.inserted, result.superseded) == (50, 2)
    expected = {i: (i, f"v{i}", f"p{i % 3}") for i in range(50)}
    expected.update({7: (7, "moved", "p9"), 8: (8, "again", "p2")})
    assert _rows(t) == sorted(expected.values())
    assert len(t.history()) == 1
    assert _left_behind(t) == set()  # the bulk attempt's staged files are gone


def test_a_key_in_two_partitions_is_no_repeat_when_keys_are_unique_per_partition(
    cat: Catalog,
) -> None:
    t = _table(cat, "b.scoped", primary_key="p,id")
    result, said = _upsert(t, _batch([("I", 1, "a", "a"), ("I", 1, "b", "b"), ("I", 2, "c", "a")]))
    assert any(BULK in m for m in said) and not any("not loading" in m for m in said)
    assert result.inserted == 3
    assert _rows(t) == [(1, "a", "a"), (1, "b", "b"), (2, "c", "a")]


def test_a_bulk_load_with_deletes_goes_the_general_way(cat: Catalog) -> None:
    t = _table(cat, "b.deletes")
    result, said = _upsert(t, _batch([("I", 1, "a", "a"), ("I", 2, "b", "b"), ("D", 3, "x", "a")]))
    assert any("deletes keys" in m for m in said)
    assert (result.inserted, result.ignored_deletes) == (2, 1)
    assert _rows(t) == [(1, "a", "a"), (2, "b", "b")]
    assert _left_behind(t) == set()


@pytest.mark.cluster
def test_a_bulk_load_writes_its_dead_letters_once_and_the_valid_rows_land(
    cat: Catalog, tmp_path: Path
) -> None:
    t = _table(cat, "b.dead")
    feed = tmp_path / "feed.csv"
    feed.write_text("id,v,op,p\n1,one,I,a\n,nokey,I,a\n3,three,Z,b\n4,four,I,b\n")
    result, said = _upsert(t, str(feed))
    assert any(BULK in m for m in said) and not any("not loading" in m for m in said)
    assert (result.inserted, result.rejected) == (2, 2)
    assert _rows(t) == [(1, "one", "a"), (4, "four", "b")]
    letters = _dead_letters(t)
    assert sorted(d["_raw"] for d in letters) == [",nokey,I,a", "3,three,Z,b"]
    assert t.history()[-1].metrics["rejected"] == 2


def test_a_bulk_load_that_loses_its_commit_goes_the_general_way_and_writes_letters_once(
    cat: Catalog, tmp_path: Path
) -> None:
    t = _table(cat, "b.race")
    other = connect(warehouse=cat.settings.warehouse, spark=cat.spark, user="alice")
    feed = tmp_path / "feed.csv"
    feed.write_text("id,v,op,p\n1,ours,I,a\n,nokey,I,a\n2,ours,I,b\n")

    def race(message: str) -> None:
        said.append(message)
        if "keys in" in message and not raced:  # ours is staged: another writer commits
            raced.append(other.table("b.race").upsert(_batch([("I", 2, "theirs", "c")])))

    said: list[str] = []
    raced: list[Any] = []
    try:
        result = t.upsert(str(feed), progress=race)
    finally:
        other.close()
    assert any("not loading in bulk" in m for m in said)
    assert raced[0].version < result.version
    assert (result.inserted, result.updated, result.rejected) == (1, 1, 1)
    assert _rows(t) == [(1, "ours", "a"), (2, "ours", "b")]  # ours came last: 2 moved to b
    assert len(_dead_letters(t)) == 1
    assert _left_behind(t) == set()


@pytest.mark.parametrize("stage", ["keys in", "committing"])
def test_an_aborted_bulk_load_leaves_nothing_behind(cat: Catalog, stage: str) -> None:
    t = _table(cat, f"b.abort_{stage.split()[0]}")
    batch = _batch([("I", i, f"v{i}", f"p{i % 4}") for i in range(100)])

    class Stop(Exception):
        pass

    def stop(message: str) -> None:
        said.append(message)
        if stage in message:
            raise Stop

    said: list[str] = []
    with pytest.raises(Stop):
        t.upsert(batch, progress=stop)
    assert any(BULK in m for m in said)
    assert t.history() == []
    assert t.read().count() == 0
    root = Path(cat.settings.warehouse) / t.info.location
    assert [p for p in root.rglob("*") if p.is_file()] == []  # removed at once
    result, said = _upsert(t, batch)  # and the table takes the load again
    assert any(BULK in m for m in said)
    assert result.inserted == 100 and t.read().count() == 100


def test_a_small_first_batch_goes_the_general_way_and_the_property_is_checked(
    cat: Catalog,
) -> None:
    t = cat.create_table(
        "b.small", columns="id BIGINT, v STRING, p STRING", primary_key="id", partition_by="p"
    )
    _, said = _upsert(t, pa.table({"id": [1], "v": ["a"], "p": ["x"]}))
    assert not any(BULK in m for m in said)
    assert t.describe()[BULK_LOAD_MIN_BYTES_PROPERTY] == 16 * 1024 * 1024
    with pytest.raises(SchemaError, match=BULK_LOAD_MIN_BYTES_PROPERTY):
        cat.create_table(
            "b.bad2",
            columns="id BIGINT",
            primary_key="id",
            properties={BULK_LOAD_MIN_BYTES_PROPERTY: "lots"},
        )


def _pybloom_file(data: bytes) -> Any:
    """pybloom-live's own file: what follows versioned's header (`bloom`'s docstring)."""
    import io
    import struct

    return io.BytesIO(data[struct.calcsize("<4sHQQd") :])


@pytest.mark.slow
@pytest.mark.soak  # three worker processes, a JVM each: `make soak`, run by CI
def test_a_bulk_load_killed_midway_leaves_nothing_visible(
    spark: Any, tmp_path: Path, jvm_processes: JvmProcesses
) -> None:
    """SIGKILL the loading process while it writes, while it summarises the keys and as it
    commits: the table is empty or whole (never a part, never a listed file missing),
    vacuum finds every file the killed loads left, and the table takes the load again."""
    from tests.table.sales import batch, latest, make_table

    url = f"sqlite:///{tmp_path}/catalog.db"
    warehouse = str(tmp_path / "wh")
    cat = connect(catalog=url, warehouse=warehouse, spark=spark, user="alice")
    t = make_table(
        cat, "t.bulk", layout="versioned", properties={BULK_LOAD_MIN_BYTES_PROPERTY: "0"}
    )
    rows = [[i, float(i), "I", "abc"[i % 3]] for i in range(3000)]
    whole = sorted((i, float(i), "abc"[i % 3]) for i in range(3000))
    kills = [("writing the batch", 0.3), ("keys in", 0.05), ("committing", 0.2)]
    workers = jvm_processes.workers(
        len(kills), url, warehouse, "t.bulk", "versioned", txn_timeout_s=4
    )
    try:
        for worker, (stage, delay) in zip(workers, kills, strict=True):
            worker.send({"op": "upsert", "rows": rows})
            reached = ""
            while stage not in reached:
                line = worker.read_line(300)
                assert line is not None and line.startswith("P "), worker.stderr_tail()
                reached = line[2:]
            time.sleep(delay)
            worker.kill()
            assert latest(t) in ([], whole), f"killed after {reached!r}"
            assert _listed_but_missing(t) == set(), f"killed after {reached!r}"
    finally:
        for worker in workers:
            worker.close()
    deadline = time.monotonic() + 60
    while cat.engine_context.store.txn_snapshot().open_ids and time.monotonic() < deadline:
        time.sleep(0.5)
        cat.engine_context.store.reap_expired()
    t.vacuum(grace_hours=0)
    assert _left_behind(t) == set()
    if latest(t) == []:
        result, said = _upsert(t, batch([tuple(r) for r in rows]))  # type: ignore[misc]
        assert any(BULK in m for m in said) and result.inserted == 3000
    assert latest(t) == whole
    cat.close()


def test_key_tasks_read_whole_partitions_unless_one_outweighs_a_task() -> None:
    from versioned.layouts.version_partition.engine.staged_keys import _assign

    files = [(f"p{p}/f{t}", (f"p{p}",), 1000 + p) for p in range(20) for t in range(3)]
    tasks = _assign(files, 4)
    assert len(tasks) == 4
    assert sorted(p for t in tasks for p, _ in t) == sorted(p for p, _, _ in files)
    seen = [{v for _, v in t} for t in tasks]
    assert sum(len(s) for s in seen) == 20  # one filter piece per partition
    loads = [sum(1000 + int(v[0][1:]) for _, v in t) for t in tasks]
    assert max(loads) - min(loads) <= 3 * 1019  # within one partition of each other
    one_partition = [(f"f{i}", ("x",), 100) for i in range(6)]
    assert [len(t) for t in _assign(one_partition, 3)] == [2, 2, 2]


def test_a_bulk_load_records_its_stream_mark(cat: Catalog) -> None:
    """A stream sink's first micro-batch into an empty table may load in bulk: its mark is
    recorded in the same commit, so a replay of the micro-batch is refused, not applied
    twice."""
    t = _table(cat, "s.bulk_mark")
    mark = WriteOptions(stream_mark=StreamMark("etl", 0))
    result, said = _upsert(t, _batch([("I", 1, "a", "x"), ("I", 2, "b", "y")]), options=mark)
    assert any(BULK in m for m in said) and result.inserted == 2
    assert t.stream_progress() == {"etl": 0}
    with pytest.raises(StreamBatchCommittedError):
        t.upsert(_batch([("I", 3, "c", "x")]), options=mark)
    assert len(t.history()) == 1
