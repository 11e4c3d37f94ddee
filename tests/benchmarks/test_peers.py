"""The peers benchmark without Spark: a group whose jars are missing is skipped (or fails under
VERSIONED_REQUIRE_JARS=1), the engines' answers are checked against each other, each peer's
MERGE statement, and the side-by-side table from a tiny document."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from benchmarks import peers, peers_report
from benchmarks.continuous_data import QUERIES, Workload
from benchmarks.harness.jars import MissingJarsError
from benchmarks.peer_engines import KINDS, SparkPeer, column_names

DELTA = next(g for g in peers.GROUPS if g.name == "delta")


def _missing(name: str) -> str:
    raise MissingJarsError(f"the {name!r} jars are not in .jars/{name}: run `make jars`")


def test_a_group_without_its_jars_is_skipped_saying_what_to_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(peers.REQUIRE_JARS, raising=False)
    monkeypatch.setattr(peers, "spark_jars", _missing)

    why = peers.python_of(DELTA)

    assert isinstance(why, str)
    assert why.startswith("skipped: ") and "run `make jars`" in why


def test_a_group_without_its_jars_fails_when_jars_are_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(peers.REQUIRE_JARS, "1")
    monkeypatch.setattr(peers, "spark_jars", _missing)

    with pytest.raises(MissingJarsError, match="make jars"):
        peers.python_of(DELTA)


def test_our_group_needs_no_jars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peers, "spark_jars", _missing)

    assert isinstance(peers.python_of(peers.GROUPS[0]), Path)


def _workload() -> Workload:
    return Workload(
        name="synthetic",
        label="N = 10",
        columns="id BIGINT, a BIGINT, b BIGINT, s STRING, amt DOUBLE, p INT",
        key=("id",),
        partition="p",
        bucket_by="id",
        queries=QUERIES,
        base="base.parquet",
        batches=("b1.parquet",),
        rows=10,
        live_rows=10,
    )


def test_a_merge_matches_on_partition_and_key_and_sets_every_other_column() -> None:
    peer = SparkPeer(KINDS["delta_dv"], spark=None, workload=_workload(), root=Path("/w"))  # type: ignore[arg-type]
    peer.names = column_names(peer.workload.columns)

    sql = peer.merge_sql("batch")

    assert peer.ident == "delta.`/w/delta_dv`"
    assert "ON t.p = s.p AND t.id = s.id" in sql
    assert "WHEN MATCHED AND s.op = 'D' THEN DELETE" in sql
    assert "UPDATE SET a = s.a, b = s.b, s = s.s, amt = s.amt " in sql
    assert "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT (id, a, b, s, amt, p)" in sql


def test_tpch_columns_with_decimals_split_into_names() -> None:
    names = column_names("l_orderkey BIGINT, l_quantity DECIMAL(15,2), l_shipdate DATE")

    assert names == ["l_orderkey", "l_quantity", "l_shipdate"]


def _timing(seconds: float) -> dict[str, Any]:
    return {"seconds": seconds, "cpu_s": seconds, "others_cpu_s": 0.0}


def _upsert(first: float, later: float, answer: list[list[Any]]) -> dict[str, Any]:
    return {
        "load": _timing(10.0),
        "batches": [_timing(first), _timing(later), _timing(later)],
        "first_s": first,
        "first_cpu_s": first,
        "median_s": later,
        "median_cpu_s": later,
        "answer": answer,
        "spark": "4.2.1",
    }


def _read(ratio: float, answer: list[list[Any]]) -> dict[str, Any]:
    return {"ratio": ratio, "answer": answer, "times": {}}


def _continuous(ours: float, theirs: float, answer: list[list[Any]]) -> dict[str, Any]:
    steps = [
        {
            "batch": k,
            "upserts": {"version": _timing(ours), "delta_dv": _timing(theirs)},
            "reads": {
                "version": {"narrow": _read(1.0, answer), "full": _read(1.1, answer)},
                "delta_dv": {"narrow": _read(2.0, answer), "full": _read(0.9, answer)},
            },
        }
        for k in (1, 2)
    ]
    tables = {"version": {"layout": "versioned"}, "delta_dv": {"title": "Delta, DV"}}
    return {
        "label": "N = 10",
        "rows": 10,
        "queries": {"narrow": "", "full": ""},
        "tables": tables,
        "steps": steps,
    }


def _doc(**entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "config": {"rows": 10, "upsert_batches": 3},
        "entries": {k.replace("__", "/"): v for k, v in entries.items()},
        "hudi": peers.HUDI,
    }


def test_check_names_an_engine_whose_answer_differs() -> None:
    same = _doc(
        upsert__delta__versioned=_upsert(2.0, 1.0, [[10, 5.0]]),
        upsert__delta__delta_dv=_upsert(3.0, 2.0, [[10, 5.0]]),
        continuous__delta=_continuous(1.0, 2.0, [[10, 5.0]]),
        continuous__iceberg=_continuous(1.0, 2.0, [[10, 5.0]]),
    )
    differs = _doc(
        upsert__delta__versioned=_upsert(2.0, 1.0, [[10, 5.0]]),
        upsert__delta__delta_dv=_upsert(3.0, 2.0, [[11, 5.0]]),
        continuous__delta=_continuous(1.0, 2.0, [[10, 5.0]]),
        continuous__iceberg=_continuous(1.0, 2.0, [[9, 5.0]]),
    )

    assert peers.check(same) == []
    problems = peers.check(differs)
    assert any("upsert/delta/delta_dv" in p for p in problems)
    assert any(p.startswith("continuous/iceberg version full after batch 1") for p in problems)


def test_side_by_side_gives_ratios_to_versioned_and_marks_where_a_peer_wins() -> None:
    doc = _doc(
        upsert__delta__versioned=_upsert(2.0, 1.0, [[10]]),
        upsert__delta__delta_dv=_upsert(4.0, 0.5, [[10]]),
        continuous__delta=_continuous(1.0, 3.0, [[10]]),
    )

    lines = peers_report.side_by_side(doc)

    dv = next(line for line in lines if line.startswith("| Delta MERGE, deletion vectors"))
    cells = [c.strip() for c in dv.strip("|").split("|")]
    assert cells[1:4] == ["1.00x", "2.00x", "**0.50x faster**"]  # load, first, median
    assert cells[4] == "3.00x"  # cumulative cost over versioned's
    assert cells[5] == "2.00x / 2.00x"  # its narrow read: slower than versioned's 1.00x
    assert cells[6] == "**0.90x / 0.90x better**"  # its full read beats versioned's 1.10x
    assert lines[2].startswith("| versioned (4.2.1) | ref. |")
    assert any(line.startswith("| Hudi MOR upsert | not runnable here") for line in lines)


def test_sliced_workload_keeps_the_first_batches_and_forgets_its_live_rows() -> None:
    workload = _workload()

    assert peers.sliced(workload, 5) is workload
    three = peers.sliced(Workload(**{**workload.__dict__, "batches": ("1", "2", "3", "4")}), 3)
    assert (three.batches, three.live_rows) == (("1", "2", "3"), 0)


def test_the_plan_runs_each_engine_of_the_upsert_phase_in_a_process_of_its_own() -> None:
    args = peers.parser().parse_args(["--groups", "main", "delta", "--phases", "upsert", "tpch"])
    data = {"synthetic": _workload(), "tpch": _workload()}

    todo = peers.plan(args, data)

    names = [(t["phase"], t["group"].name, t["runs"][0].get("engine")) for t in todo]
    assert names == [
        ("upsert", "main", "versioned"),
        ("upsert", "main", "delta_rs"),
        ("upsert", "main", "plain"),
        ("upsert", "delta", "versioned"),
        ("upsert", "delta", "delta_cow"),
        ("upsert", "delta", "delta_dv"),
        ("tpch", "main", None),
        ("tpch", "delta", None),
    ]
    smoke = peers.plan(argparse.Namespace(**{**vars(args), "one_process_per_group": True}), data)
    assert [(t["group"].name, len(t["runs"])) for t in smoke] == [("main", 4), ("delta", 4)]
