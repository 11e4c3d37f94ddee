"""`versioned compact` and `versioned vacuum` end to end (CliRunner, shared SparkSession)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.table.sales import batch, make_table
from versioned.api.catalog import connect
from versioned.cli.main import cli


@pytest.fixture
def setup(spark: Any, tmp_path: Path) -> Any:
    warehouse, url = str(tmp_path / "wh"), f"sqlite:///{tmp_path}/cat.db"
    cat = connect(catalog=url, warehouse=warehouse, spark=spark, user="alice")
    base = ["--warehouse", warehouse, "--catalog", url, "--user", "alice"]

    def run(*args: str) -> Any:
        return CliRunner().invoke(cli, [*base, *args])

    yield cat, run
    cat.close()


def test_scheduled_compaction_exits_0_with_nothing_to_do_then_compacts_past_thresholds(
    setup: Any,
) -> None:
    cat, run = setup
    t = make_table(cat, layout="versioned")
    other = make_table(cat, "t.other", layout="versioned")
    other.upsert(batch([(1, 1.0, "I", "a")]))
    for v in range(3):
        t.upsert(batch([(i, float(v), "I", "ab"[i % 2]) for i in range(v, 10)]))

    nothing = run("compact", "--all", "-o", "json")
    assert nothing.exit_code == 0, nothing.output
    assert json.loads(nothing.stdout) == []  # 3 versions: below the default of 10
    assert "nothing to compact" in nothing.stderr

    plan = run("compact", "--all", "--min-versions", "3", "--dry-run", "-o", "json")
    assert plan.exit_code == 0, plan.output
    planned = json.loads(plan.stdout)
    assert [(p["table"], p["partition"]) for p in planned] == [
        ("t.sales", "p=a"),
        ("t.sales", "p=b"),
    ]
    assert planned[0]["versions"] == 3 and planned[0]["why"] == "3 versions >= 3"
    assert len(t.history()) == 3  # the dry run wrote nothing

    done = run("compact", "--all", "--min-versions", "3", "-o", "json")
    assert done.exit_code == 0, done.output
    results = json.loads(done.stdout)
    assert [r["status"] for r in results] == ["compacted", "compacted"]
    assert "committed version" in done.stderr  # progress
    assert [c.operation for c in t.history()][-2:] == ["compact", "compact"]

    again = run("compact", "t.sales")
    assert again.exit_code == 0 and "(no rows)" in again.stdout


def test_compact_one_partition_and_usage_errors(setup: Any) -> None:
    cat, run = setup
    t = make_table(cat, layout="versioned")
    for v in range(2):
        t.upsert(batch([(i, float(v), "I", "ab"[i % 2]) for i in range(4)]))
    result = run("compact", "t.sales", "--partition", "p=b", "-q")
    assert result.exit_code == 0, result.output
    assert "p=b" in result.stdout and "p=a" not in result.stdout and result.stderr == ""
    assert run("compact").exit_code == 2
    assert run("compact", "t.sales", "--all").exit_code == 2
    bad = run("compact", "t.sales", "--partition", "q=1")
    assert bad.exit_code == 2 and "write it as p=..." in bad.output
    missing = run("compact", "t.sales", "--partition", "p=zzz")
    assert missing.exit_code == 3


def test_vacuum_dry_run_lists_then_vacuum_deletes(setup: Any) -> None:
    cat, run = setup
    t = make_table(cat, layout="versioned")
    t.upsert(batch([(1, 1.0, "I", "a")]))
    t.upsert(batch([(1, 2.0, "U", "a")]))
    first = t.history()[0].version
    t.compact()
    dry = run("vacuum", "t.sales", "--retain-hours", "0", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    planned = json.loads(dry.stdout)
    assert planned["retired_files"] == 5 and len(planned["paths"]) == 5
    result = run("vacuum", "t.sales", "--retain-hours", "0", "-o", "json")
    assert json.loads(result.stdout)["retired_files"] == 5
    gone = run("show", "t.sales", "--as-of", str(first))
    assert gone.exit_code == 3 and f"version {first} was vacuumed" in gone.output


def test_compact_names_a_partition_as_import_and_export_do_and_warns_on_the_old_syntax(
    setup: Any,
) -> None:
    cat, run = setup
    t = make_table(cat, layout="versioned", partition_by="amt,p")
    for _ in range(2):
        t.upsert(batch([(i, 1.0, "I", "ab"[i % 2]) for i in range(4)]))
    one = run("compact", "t.sales", "--partition", "amt=1.0,p=b", "-q", "-o", "csv")
    assert one.exit_code == 0, one.output
    assert "amt=1.0/p=b" in one.stdout and "p=a" not in one.stdout and one.stderr == ""
    old = run("compact", "t.sales", "--partition", "amt=1.0/p=a", "-q", "-o", "csv")
    assert old.exit_code == 0, old.output
    assert "amt=1.0/p=a" in old.stdout
    assert old.stderr.strip() == (
        "warning: partition 'amt=1.0/p=a': the a=1/b=2 syntax is deprecated; write amt=...,p=..."
    )
