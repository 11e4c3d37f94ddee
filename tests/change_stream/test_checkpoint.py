"""A change stream resumes from its checkpoint: later runs get only later commits, once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

from tests.change_stream.streams import batch, change_reader, create, run_to_parquet
from versioned.api.catalog import Catalog


def _rows(spark: Any, paths: list[str]) -> list[tuple[Any, ...]]:
    if not paths:
        return []
    frame = spark.read.parquet(*paths)
    return [(r["_commit_seq"], r["id"], r["_change_type"]) for r in frame.collect()]


def _data_files(out: Path) -> set[str]:
    return {str(p) for p in out.glob("*.parquet")}


# Not marked `cluster`: a restart's checkpoint and offsets are the driver's; the executor
# tasks that read each commit's changes run on the cluster in test_types.py (both layouts).
def test_a_restarted_query_reads_only_the_commits_after_its_checkpoint(
    spark: Any, cat: Catalog, tmp_path: Path
) -> None:
    t = create(cat, "versioned")
    t.upsert(batch([("I", i, f"v{i}", float(i), "x") for i in (1, 2, 3)]))
    t.upsert(batch([("U", 1, "v1b", 1.0, "x")]))
    out, checkpoint = tmp_path / "out", tmp_path / "ck"
    frame = change_reader(spark, cat, "cs.t").load()

    run_to_parquet(frame, out, checkpoint)
    first_files = _data_files(out)
    first = _rows(spark, sorted(first_files))
    assert sorted(first) == [
        (1, 1, "insert"),
        (1, 2, "insert"),
        (1, 3, "insert"),
        (2, 1, "update_postimage"),
        (2, 1, "update_preimage"),
    ]

    t.upsert(batch([("D", 2, None, None, "x"), ("I", 4, "v4", 4.0, "y")]))
    t.upsert(batch([("U", 3, "v3b", 3.0, "y")]))
    run_to_parquet(change_reader(spark, cat, "cs.t").load(), out, checkpoint)
    new_files = _data_files(out) - first_files
    assert sorted(_rows(spark, sorted(new_files))) == [
        (3, 2, "delete"),
        (3, 4, "insert"),
        (4, 3, "update_postimage"),
        (4, 3, "update_preimage"),
    ]
    # The sink's own log agrees: every change once, none twice.
    everything = _rows(spark, [str(out)])
    assert max(Counter(everything).values()) == 1
    assert len(everything) == len(first) + 4

    # Nothing new: a third run adds nothing.
    run_to_parquet(change_reader(spark, cat, "cs.t").load(), out, checkpoint)
    assert len(_rows(spark, [str(out)])) == len(everything)

    # The checkpoint's offset is the table and the last commit covered.
    offsets = sorted(
        (p for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()),
        key=lambda p: int(p.name),
    )
    last = json.loads(offsets[-1].read_text().strip().splitlines()[-1])
    assert last == {"table_id": t.info.id, "seq": 4}


def test_a_checkpoint_of_a_dropped_table_is_not_applied_to_its_successor(
    spark: Any, cat: Catalog, tmp_path: Path
) -> None:
    t = create(cat, "versioned")
    t.upsert(batch([("I", 1, "a", 1.0, "x")]))
    out, checkpoint = tmp_path / "out", tmp_path / "ck"
    run_to_parquet(change_reader(spark, cat, "cs.t").load(), out, checkpoint)
    cat.drop_table("cs.t")
    again = create(cat, "versioned")
    again.upsert(batch([("I", 2, "b", 2.0, "x")]))
    with pytest.raises(StreamingQueryException, match="was dropped and created again"):
        run_to_parquet(change_reader(spark, cat, "cs.t").load(), out, checkpoint)
