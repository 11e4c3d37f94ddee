"""The continuous benchmark without Spark: its change batches (the mix of the issue, keys that
exist or not), the maintenance it reads off a commit, and its report from a tiny document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from benchmarks import continuous_data, continuous_report, continuous_tpch
from benchmarks.continuous_engines import maintenance
from versioned.results import CompactionResult, PartitionCompaction


def test_a_batch_is_80_percent_updates_15_inserts_and_5_deletes() -> None:
    assert continuous_data.batch_mix(10_000) == {"U": 8_000, "I": 1_500, "D": 500}
    assert continuous_data.batch_mix(20) == {"U": 16, "I": 3, "D": 1}


def test_batches_update_and_delete_live_keys_and_insert_new_ones(tmp_path: Path) -> None:
    workload = continuous_data.generate(2_000, tmp_path, 3, partitions=4)

    base = pq.read_table(workload.base)
    assert pq.ParquetFile(workload.base).metadata.num_row_groups == 1
    live = set(base.column("id").to_pylist())
    for path in workload.batches:
        batch = pq.read_table(path)
        ops = batch.column("op").to_pylist()
        ids = batch.column("id").to_pylist()
        assert (ops.count("U"), ops.count("I"), ops.count("D")) == (16, 3, 1)
        assert len(set(ids)) == len(ids)
        assert all((key in live) == (op != "I") for key, op in zip(ids, ops, strict=True))
        partitions = continuous_data.partition_of(np.array(ids), 4)
        assert batch.column("p").to_pylist() == partitions.tolist()
        live |= {k for k, op in zip(ids, ops, strict=True) if op == "I"}
        live -= {k for k, op in zip(ids, ops, strict=True) if op == "D"}
    assert workload.live_rows == len(live) == 2_000 + 3 * 2
    assert set(base.column("p").to_pylist()) == {0, 1, 2, 3}


def test_the_same_seed_writes_the_same_batches(tmp_path: Path) -> None:
    first = continuous_data.generate(500, tmp_path / "a", 2, partitions=4)
    second = continuous_data.generate(500, tmp_path / "b", 2, partitions=4)

    for a, b in zip(first.batches, second.batches, strict=True):
        assert pq.read_table(a).equals(pq.read_table(b))


@pytest.mark.skipif(continuous_tpch.tpchgen() is None, reason="tpchgen-cli is not installed")
def test_tpch_refreshes_delete_whole_orders_and_insert_new_ones(tmp_path: Path) -> None:
    workload = continuous_tpch.generate(0.001, tmp_path, 2)

    base = pq.read_table(workload.base)
    assert base.schema.field("l_shipdate").type == "date32[day]"
    lines = {
        (o, n)
        for o, n in zip(
            base.column("l_orderkey").to_pylist(),
            base.column("l_linenumber").to_pylist(),
            strict=True,
        )
    }
    for path in workload.batches:
        batch = pq.read_table(path)
        orders, numbers = batch.column("l_orderkey"), batch.column("l_linenumber")
        keys = list(zip(orders.to_pylist(), numbers.to_pylist(), strict=True))
        ops = batch.column("op").to_pylist()
        assert ops.count("U") == round(base.num_rows * continuous_tpch.UPDATE_SHARE)
        assert all((key in lines) == (op != "I") for key, op in zip(keys, ops, strict=True))
        gone = {o for (o, _), op in zip(keys, ops, strict=True) if op == "D"}
        deleted = {k for k, op in zip(keys, ops, strict=True) if op == "D"}
        assert {k for k in lines if k[0] in gone} == deleted  # every line of those orders
        years = pc.year(batch.column("l_shipdate")).cast("int32")
        assert years.equals(batch.column("l_shipyear"))
        lines |= {k for k, op in zip(keys, ops, strict=True) if op == "I"}
        lines -= {k for k, op in zip(keys, ops, strict=True) if op == "D"}
    assert workload.live_rows == len(lines)


def test_maintenance_reads_what_a_compaction_did() -> None:
    result = CompactionResult(
        "bench.t",
        False,
        (
            PartitionCompaction("p=1", "compacted", rows=10, files_added=2, files_removed=5),
            PartitionCompaction("p=2", "conflict"),
        ),
        seconds=1.5,
    )

    assert maintenance(None) is None
    assert maintenance(result) == {
        "compacted": 1,
        "partitions": 2,
        "seconds": 1.5,
        "rows": 10,
        "files_removed": 5,
        "files_added": 2,
    }


def _step(k: int, merge: float, upsert: float, ratio: float, ran: Any) -> dict[str, Any]:
    timing = {"cpu_s": 0.0, "others_cpu_s": 0.0}
    reads = {q: {"ratio": ratio, "times": {"table": [], "plain": []}} for q in ("narrow", "full")}
    return {
        "batch": k,
        "rows": 20,
        "merge": {"seconds": merge, **timing},
        "upserts": {
            "version": {"seconds": upsert, **timing, "maintenance": ran, "commits": {}},
        },
        "reads": {"version": reads},
    }


def test_the_report_holds_each_batch_and_the_targets_met_or_missed(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    ran = {"compacted": 3, "partitions": 4, "seconds": 0.25}
    run = {
        "workload": "synthetic",
        "label": "N = 2,000",
        "rows": 2_000,
        "batch_rows": [20, 20],
        "live_rows": 2_006,
        "repeat": 1,
        "queries": {"narrow": "", "full": ""},
        "tables": {
            "version": {
                "layout": "versioned",
                "auto_compact": True,
                "plain": "parquet",
                "table": "bench.v",
            }
        },
        "load": {"delta": {"seconds": 1.0}, "version": {"seconds": 2.0}},
        "steps": [_step(1, 1.0, 0.5, 1.2, None), _step(2, 1.0, 2.0, 1.7, ran)],
    }

    continuous_report.render({"machine": {}, "runs": [run]}, tmp_path)

    text = (tmp_path / "continuous.md").read_text()
    assert "| 2 | 2.00 | 1.00 | 1.25x | 1.70x | 1.70x | 3/4 partitions compacted, 0.25 s |" in text
    assert "**1.25x** (misses <= 1x)" in text  # cost: 2.5 s of upserts, 2.0 s of MERGE
    assert "**1.45x** (misses <= 1.3x)" in text  # median read ratio
    assert "**1.70x** (misses <= 1.6x)" in text  # worst
    assert (tmp_path / "continuous.png").stat().st_size > 0
    assert continuous_report.summary(run, "version")["queries"]["full"]["median"] == 1.45
