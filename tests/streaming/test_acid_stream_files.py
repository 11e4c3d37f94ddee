"""What a streaming batch leaves on an acid table's storage, read as Hive's reader reads it
(tests/layouts/acid/engine/hive_walk.py, honouring ``_flush_length`` side files): one
``delta_FIRST_LAST`` per batch with one file per bucket, each commit a readable prefix whose
length the side file and the catalog both record, replaced keys as per-transaction delete
deltas, and complete files with key filters once the batch closes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as paorc

from tests.layouts.acid.engine.hive_walk import walk
from versioned import streaming as vs
from versioned.layouts.acid.flush_length import parse_flush_lengths
from versioned.layouts.acid.snapshot_dirs import STREAM_OPEN, valid_write_id_list


def _table(cat: Any, name: str) -> Any:
    return cat.create_table(
        name,
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key="continent,country,id",
        partition_by="continent,country",
        layout="acid",
        bucket_by="id",
        buckets=2,
    )


def _hive_rows(cat: Any, table: Any) -> list[tuple[Any, ...]]:
    snapshot = table.snapshot()
    ids = valid_write_id_list(cat.engine_context.store.write_ids(table.name, snapshot.seq))
    table_dir = Path(
        cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
    )
    return sorted((r["id"], r["msg"]) for r in walk(table_dir, table.spec, ids))


def _rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted((r.id, r.msg) for r in table.read().collect())


def test_a_batch_grows_one_delta_that_hive_reads_at_every_commit(cat: Any) -> None:
    table = _table(cat, "testing.alerts")
    table.upsert(
        pa.table(
            {"id": pa.array([100], pa.int32()), "msg": ["stored"], "continent": ["Asia"]}
        ).append_column("country", pa.array(["India"]))
    )
    endpoint = vs.EndPoint(cat, "testing.alerts", ["Asia", "India"])
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    folder = Path(cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://"))
    part = folder / "continent=Asia" / "country=India"
    with endpoint.connect() as conn:
        batch = conn.fetch_transaction_batch(3, writer)
        low, high = batch.write_ids[0], batch.write_ids[-1]
        delta = part / f"delta_{low:07d}_{high:07d}"

        batch.begin_next_transaction()
        batch.write_many([f"{i},first {i}" for i in range(1, 7)])
        batch.commit()
        files = {f.path.rsplit("/", 1)[1]: f for f in table.snapshot().files if "/delta_" in f.path}
        buckets = sorted(n for n in files if n.startswith("bucket_"))
        assert buckets == ["bucket_00000", "bucket_00001"]
        for name in buckets:
            recorded = files[name]
            assert recorded.stats[STREAM_OPEN] is True
            lengths = parse_flush_lengths((delta / f"{name}_flush_length").read_bytes())
            assert lengths == (recorded.size_bytes,)
            prefix = (delta / name).read_bytes()[: recorded.size_bytes]
            assert paorc.ORCFile(pa.BufferReader(prefix)).nrows == recorded.row_count
        assert (
            _hive_rows(cat, table)
            == _rows(table)
            == [
                *[(i, f"first {i}") for i in range(1, 7)],
                (100, "stored"),
            ]
        )

        batch.begin_next_transaction()
        batch.write_many(["2,second", "100,replaced"])
        batch.commit()
        deletes = part / f"delete_delta_{low:07d}_{high:07d}"
        names = sorted(p.name for p in deletes.glob("bucket_*"))
        assert names and all(n.endswith("_1") for n in names), names  # transaction 1 of 0..2
        lengths = parse_flush_lengths((delta / "bucket_00000_flush_length").read_bytes())
        assert len(lengths) in (1, 2) and list(lengths) == sorted(lengths)

        batch.begin_next_transaction()
        batch.write("3,aborted")
        batch.abort()
        firsts = [(i, f"first {i}") for i in range(3, 7)]
        expected = sorted([(1, "first 1"), (2, "second"), *firsts, (100, "replaced")])
        assert _hive_rows(cat, table) == _rows(table) == expected
        batch.close()

    assert not list(delta.glob("*_flush_length"))
    closed = {f.path.rsplit("/", 1)[1]: f for f in table.snapshot().files if "/delta_" in f.path}
    for name in ("bucket_00000", "bucket_00001"):
        assert STREAM_OPEN not in closed[name].stats
        assert closed[name].size_bytes == (delta / name).stat().st_size
    assert {"_key_bloom_00000", "_key_bloom_00001"} <= set(closed)
    assert _hive_rows(cat, table) == _rows(table) == expected


def test_new_keys_read_no_stored_data_and_each_bloom_filter_once(cat: Any) -> None:
    from versioned.storage.filesystem import FileIO

    table = _table(cat, "testing.events")
    stored = pa.table(
        {
            "id": pa.array(range(0, 2_000, 2), pa.int32()),  # even ids
            "msg": ["stored"] * 1_000,
            "continent": ["Asia"] * 1_000,
            "country": ["India"] * 1_000,
        }
    )
    table.upsert(stored)
    endpoint = vs.EndPoint(cat, "testing.events", ["Asia", "India"])
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    FileIO.reset_opened_files()
    with endpoint.connect() as conn:
        for batch_no in range(2):
            with conn.fetch_transaction_batch(2, writer) as batch:
                for txn in range(2):
                    base = 1 + 200 * (2 * batch_no + txn)  # odd ids within the stored range
                    batch.begin_next_transaction()
                    batch.write_many([f"{i},new" for i in range(base, base + 100, 2)])
                    batch.commit()
    opened = list(FileIO.opened_files)
    stored_files = [p for p in opened if "/bucket_" in p and "delta_0000001_0000001" in p]
    assert stored_files == []  # no stored data file was read
    blooms = [p for p in opened if "_key_bloom_" in p and "delta_0000001_0000001" in p]
    assert sorted(blooms) == sorted(set(blooms)) and len(blooms) == 2  # each read once
    assert table.read().count() == 1_200
