"""Ways to open a change stream: a catalog's registration, `Table.change_stream`, and
batches of at most ``maxCommitsPerTrigger`` commits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.change_stream.streams import batch, create, run_to_memory
from versioned.api.catalog import Catalog


def test_after_a_catalog_registers_the_source_the_table_option_is_enough(
    spark: Any, cat: Catalog, tmp_path: Path
) -> None:
    t = create(cat, "versioned")
    t.upsert(batch([("I", 1, "a", 1.0, "x")]))
    cat.register_data_source()
    frame = spark.readStream.format("versioned").option("table", "cs.t").load()
    rows = run_to_memory(frame, tmp_path / "ck")
    assert [(r["id"], r["_change_type"]) for r in rows] == [(1, "insert")]


def test_table_change_stream_reads_from_a_version(cat: Catalog, tmp_path: Path) -> None:
    t = create(cat, "acid")
    t.upsert(batch([("I", 1, "a", 1.0, "x")]))
    second = t.upsert(batch([("D", 1, None, None, "x")])).version
    rows = run_to_memory(t.change_stream(starting_version=second), tmp_path / "ck")
    assert [(r["id"], r["_change_type"], r["_commit_version"]) for r in rows] == [
        (1, "delete", second)
    ]


def test_max_commits_per_trigger_bounds_each_micro_batch(
    spark: Any, cat: Catalog, tmp_path: Path
) -> None:
    t = create(cat, "versioned")
    for i in range(3):
        t.upsert(batch([("I", i, "a", 1.0, "x")]))
    batches: list[list[int]] = []

    def collect(frame: Any, _batch_id: int) -> None:
        batches.append(sorted(r["_commit_seq"] for r in frame.collect()))

    query = (
        t.change_stream(max_commits_per_trigger=2)
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    assert batches == [[1, 2], [3]]
