"""The benchmarks' harness without Spark: medians, repeats, stamps, results documents, the
runner behind ``python -m benchmarks``, and that every scenario it lists still imports (the
benchmarks reach into versioned's internals; a module that moves breaks them here first)."""

from __future__ import annotations

import datetime
import importlib
import io
import json
import math
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import benchmarks.__main__ as cli
from benchmarks.harness import record, runner, timing
from benchmarks.harness.markdown import table
from benchmarks.harness.results import ResultsFile
from benchmarks.scenarios import HELPERS, SCENARIOS, SIZES, Scenario

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
JAVA_VERSION = record.java_version


@pytest.fixture(autouse=True)
def _no_java(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine record asks ``java -version``; this tier starts no JVM."""
    monkeypatch.setattr(record, "java_version", lambda: "openjdk 17")


def test_median_of_odd_and_even_counts_and_nan_of_nothing() -> None:
    assert timing.median([3.0, 1.0, 2.0]) == 2.0
    assert timing.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert math.isnan(timing.median([]))


def test_medians_take_wall_and_cpu_apart() -> None:
    timings = [{"seconds": s, "cpu_s": c} for s, c in ((1.0, 9.0), (3.0, 7.0), (2.0, 8.0))]

    assert timing.medians(timings) == {"seconds": 2.0, "cpu_s": 8.0}


def test_rotated_and_alternating_orders_of_a_round() -> None:
    names = ["a", "b", "c"]

    assert [timing.rotated(names, k) for k in range(4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]
    assert timing.alternating(names, 0) == ["c", "b", "a"]
    assert timing.alternating(names, 1) == names
    assert timing.rotated([], 3) == []


def test_checkpoints_keep_the_points_reached_and_the_last_step() -> None:
    assert timing.checkpoints((1, 5, 10), 10) == [1, 5, 10]
    assert timing.checkpoints((1, 5, 10), 3) == [1, 3]
    assert timing.checkpoints((1, 5, 10), 1) == [1]


def test_repeat_calls_the_warm_up_untimed_then_times_each_call() -> None:
    calls: list[int] = []

    timings = timing.repeat(calls.append, 3, warm_up=2)

    assert calls == [-1, -2, 0, 1, 2]
    assert len(timings) == 3
    assert all(set(t) == {"seconds", "cpu_s", "others_cpu_s"} for t in timings)


def test_interleave_times_every_variant_each_round_in_the_order_asked() -> None:
    calls: list[str] = []

    def variant(name: str) -> Any:
        def run() -> str:
            calls.append(name)
            return f"{name}{len(calls)}"

        return run

    done = timing.interleave({n: variant(n) for n in "ab"}, 2, order="alternate", warm_up_rounds=1)

    assert calls == ["b", "a", "a", "b", "b", "a"]  # the warm-up round first, untimed
    assert {n: len(t) for n, t in done.timings.items()} == {"a": 2, "b": 2}
    assert done.answers == {"a": "a6", "b": "b5"}


def test_warm_up_of_no_rows_runs_nothing(tmp_path: Path) -> None:
    ran: list[bool] = []

    timing.warm_up(0, tmp_path, lambda: ran.append(True))
    timing.warm_up(10, tmp_path / "w", lambda: ran.append(True))

    assert ran == [True]


def test_stamp_names_the_commit_and_the_date() -> None:
    stamp = record.stamp()

    assert re.fullmatch(r"[0-9a-f]{40}|unknown", stamp["commit"])
    assert isinstance(stamp["dirty"], bool)
    date = datetime.datetime.fromisoformat(stamp["date"])
    assert date.utcoffset() == datetime.timedelta(0)


def test_stamp_without_git_says_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record, "_run", lambda *command: None)

    assert record.git_commit() == {"commit": "unknown", "dirty": False}
    assert JAVA_VERSION() == "unknown"


def test_machine_names_cores_memory_cpu_and_versions() -> None:
    machine = record.machine()

    assert machine["cores"] >= 1
    assert machine["memory_gb"] > 0
    for key in ("cpu", "os", "python", "java", "pyspark", "pyarrow", "deltalake"):
        assert isinstance(machine[key], str)
    assert machine["java"] == "openjdk 17"
    assert "spark_master" not in machine  # no session: nothing of Spark's own


def test_machine_with_a_session_names_its_version_master_and_driver_memory() -> None:
    conf = {"spark.driver.memory": "3g"}
    context = types.SimpleNamespace(
        master="local[2]", getConf=lambda: types.SimpleNamespace(get=conf.get)
    )
    spark = types.SimpleNamespace(version="4.0.0", sparkContext=context)

    machine = record.machine(spark)

    assert (machine["spark"], machine["spark_master"], machine["driver_memory"]) == (
        "4.0.0",
        "local[2]",
        "3g",
    )


def test_results_file_keeps_runs_of_other_sizes_and_stamps_the_new_one(tmp_path: Path) -> None:
    earlier = {"machine": {}, "runs": [{"rows": 10, "t": 1}, {"rows": 1, "t": 2}]}
    (tmp_path / "bench.json").write_text(json.dumps(earlier))
    results = ResultsFile(tmp_path, "bench")

    doc = results.add({"rows": 10, "t": 3}, batch_rows=5)

    assert [(r["rows"], r["t"]) for r in doc["runs"]] == [(1, 2), (10, 3)]
    assert doc["runs"][1]["stamp"] == doc["stamp"]
    assert set(doc["stamp"]) == {"commit", "dirty", "date"}
    assert list(doc) == ["machine", "batch_rows", "runs", "stamp"]
    assert json.loads((tmp_path / "bench.json").read_text()) == doc


def test_markdown_table_lines_and_alignment() -> None:
    assert table(("name", "s"), "lr", [("a", 1.5)]) == [
        "| name | s |",
        "|---|---:|",
        "| a | 1.5 |",
    ]
    with pytest.raises(ValueError, match="2 columns"):
        table(("name", "s"), "l")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_listed_scenario_imports_and_parses_its_arguments_at_every_size(
    scenario: Scenario,
) -> None:
    module = importlib.import_module(scenario.module)

    assert callable(module.main)
    for size in SIZES:
        if scenario.has(size):
            plan = runner.Plan([scenario], size, Path("out"), Path("logs"), Path("work"))
            module.parser().parse_args(list(runner.arguments(scenario, plan)))


def test_every_module_of_benchmarks_is_a_scenario_or_a_listed_helper() -> None:
    modules = {p.stem for p in BENCHMARKS.glob("*.py")} - {"__init__", "__main__"}
    modules |= {p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").exists()}

    assert modules == {s.name for s in SCENARIOS} | set(HELPERS)


def test_every_bench_make_target_runs_a_listed_scenario() -> None:
    makefile = (ROOT / "Makefile").read_text()
    names = {s.name for s in SCENARIOS}
    direct = re.findall(r"-m benchmarks\.(?!harness\.)(\w+)", makefile)  # not `make jars`
    via_cli = re.findall(r"-m benchmarks run ([\w ]+?)(?: --|$)", makefile, re.MULTILINE)

    assert direct or via_cli
    assert set(direct) <= names
    assert {n for names_ in via_cli for n in names_.split()} <= names | {"all"}
    assert {s.make for s in SCENARIOS if s.make} <= set(
        re.findall(r"^(bench[\w-]*):", makefile, re.MULTILINE)
    )


def test_list_names_every_scenario_and_every_helper() -> None:
    text = cli.list_scenarios()

    for name in [s.name for s in SCENARIOS] + list(HELPERS):
        assert re.search(rf"^  {name} ", text, re.MULTILINE)


def _fake_scenarios(monkeypatch: pytest.MonkeyPatch) -> list[Scenario]:
    """Three Spark-free scenarios: one passes, one raises, one has no 10M size."""
    seen: list[list[str]] = []

    def passes(argv: list[str]) -> None:
        seen.append(argv)
        print("measured")

    def raises(argv: list[str]) -> None:
        raise AssertionError("engines disagree")

    for name, main in (("fake_ok", passes), ("fake_broken", raises), ("fake_small", passes)):
        module = types.ModuleType(f"benchmarks.{name}")
        module.main = main  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
    full = {"1M": ("--rows", "1"), "10M": ("--rows", "10")}
    return [
        Scenario("fake_ok", "passes", ("--rows", "2"), full, spark=False, writes="x"),
        Scenario("fake_broken", "raises", ("--rows", "2"), full, spark=False),
        Scenario("fake_small", "smoke only", ("--rows", "2"), {"1M": ()}, spark=False),
    ]


def test_run_prints_a_line_per_scenario_and_the_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scenarios = _fake_scenarios(monkeypatch)
    console = io.StringIO()
    plan = runner.Plan(scenarios, "10M", tmp_path / "out", tmp_path / "logs")

    outcomes = runner.run(plan, console)

    assert [(o.name, o.status) for o in outcomes] == [
        ("fake_ok", "passed"),
        ("fake_broken", "FAILED"),
        ("fake_small", "skipped"),
    ]
    assert outcomes[0].argv == ("--rows", "10", "--out", str(tmp_path / "out"))
    assert outcomes[1].error == "AssertionError: engines disagree"
    lines = console.getvalue().splitlines()
    assert lines[0].startswith("fake_ok") and lines[0].endswith("passed")
    assert "AssertionError: engines disagree" in lines[1]
    assert any("Traceback" in line for line in lines)  # the failed scenario's log, shown
    assert lines[-1].startswith("total") and "1 passed, 1 failed, 1 skipped" in lines[-1]
    assert "measured" in (tmp_path / "logs" / "fake_ok.log").read_text()
    recorded = json.loads((tmp_path / "logs" / "run.json").read_text())
    assert [s["status"] for s in recorded["scenarios"]] == ["passed", "FAILED", "skipped"]
    assert set(recorded["stamp"]) == {"commit", "dirty", "date"}


def test_the_command_line_exits_non_zero_when_a_scenario_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = {s.name: s for s in _fake_scenarios(monkeypatch)}
    monkeypatch.setattr(cli, "by_name", lambda: scenarios)

    assert cli.main(["run", "fake_ok", "--out", str(tmp_path / "a")]) == 0
    assert cli.main(["run", "all", "--out", str(tmp_path / "b")]) == 1
    assert cli.main(["run", "fake_ok", "--out", str(tmp_path / "c"), "--", "--repeat", "5"]) == 0
    out = capsys.readouterr().out
    assert "--rows 2 --out" in (tmp_path / "c" / "logs" / "fake_ok.log").read_text()
    assert "--repeat 5" in (tmp_path / "c" / "logs" / "fake_ok.log").read_text()
    assert "fake_broken" in out


def test_the_command_line_refuses_unknown_scenarios_and_missing_sizes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = {s.name: s for s in _fake_scenarios(monkeypatch)}
    monkeypatch.setattr(cli, "by_name", lambda: scenarios)

    assert cli.main(["run", "nope"]) == 2
    assert cli.main(["run", "fake_small", "--size", "10M"]) == 2
    assert cli.main(["run", "all", "--", "--repeat", "5"]) == 2
    errors = capsys.readouterr().err
    assert "unknown scenario nope" in errors
    assert "fake_small has no 10M size" in errors
    assert "go to one scenario" in errors


def test_the_two_halves_hold_every_scenario_once_in_order_and_take_about_equal_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks.scenarios import halves

    first, second = halves(SCENARIOS)
    assert sorted(s.name for s in first + second) == sorted(s.name for s in SCENARIOS)
    order = [s.name for s in SCENARIOS]
    for half in (first, second):
        assert [s.name for s in half] == [n for n in order if n in {s.name for s in half}]
    loads = sorted(sum(s.smoke_s for s in half) for half in (first, second))
    assert loads[1] - loads[0] <= max(s.smoke_s for s in SCENARIOS) / 4
    # --half seed follows the run's seed, as the tests' rotations do
    for seed, expected in (("6", first), ("7", second)):
        monkeypatch.setenv("VERSIONED_TEST_SEED", seed)
        plan = cli._plan(cli._parser().parse_args(["run", "all", "--half", "seed"]), [])
        assert [s.name for s in plan.scenarios] == [s.name for s in expected]
    with pytest.raises(cli.UsageError, match="--half splits"):
        cli._plan(cli._parser().parse_args(["run", "upsert", "--half", "0"]), [])
