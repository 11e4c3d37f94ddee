"""What the CLI prints: its own lines only, times as ISO-8601 UTC, and commit counts that tell
superseded changes from stale ones (the commands in-process, through click's CliRunner).

The real console script's output is checked where the installed wheel runs, .ci/wheel-smoke.sh
(`make wheel-smoke`, in CI): Spark's start-up stays off stderr and out of the working
directory, `upsert` prints only its progress and `sql` only its answer, and `--verbose` at
log level INFO shows Spark's own lines while stdout still carries only the answer.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from versioned.api.catalog import connect
from versioned.catalog.records import FileAdd, PartitionCommit
from versioned.cli.main import cli
from versioned.names import TableName

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
ISO_UTC_MICROSECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")


@pytest.fixture
def base(tmp_path: Path) -> list[str]:
    """Global options for a fresh catalog holding test.t (created without Spark)."""
    args = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]
    created = CliRunner().invoke(
        cli,
        [*args, "--user", "alice", "create-table", "test.t", "--columns",
         "k BIGINT, v STRING, p STRING", "--primary-key", "k", "--partition-by", "p",
         "--op-code-column", "op"],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    return args


def _cli(base: list[str], *args: str) -> str:
    result = CliRunner().invoke(cli, [*base, "--user", "alice", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_describe_history_and_partitions_show_times_as_iso_8601_utc(
    base: list[str], tmp_path: Path
) -> None:
    cat = connect(warehouse=base[1], catalog=base[3], user="alice")
    name = TableName("test", "t")
    txn = cat.engine_context.store.begin()
    part = cat.engine_context.store.add_partition(name, ["x"])
    add = FileAdd(part.id, f"p=x/version_id={txn}/part-0.parquet", "data", txn, 10, 1)
    cat.engine_context.store.commit(
        txn,
        name,
        operation="upsert",
        partitions=[PartitionCommit(part.id, new_head=txn, add=(add,))],
        metrics={"inserted": 1, "stale": 1, "superseded": 2, "rejected": 0},
    )
    (commit,) = cat.engine_context.store.history(name)
    created_at = cat.table("test.t").info.created_at
    cat.close()

    def seconds(text: str) -> float:
        assert ISO_UTC.match(text), text
        return datetime.fromisoformat(text).timestamp()

    info = json.loads(_cli(base, "describe", "test.t", "-o", "json"))
    assert seconds(info["created_at"]) == math.floor(created_at)
    (row,) = json.loads(_cli(base, "history", "test.t", "-o", "json"))
    # history's commit times are to the microsecond, the precision of --as-of-time
    assert ISO_UTC_MICROSECONDS.match(row["committed_at"]), row["committed_at"]
    exact = datetime.fromtimestamp(commit.committed_at, UTC).isoformat(timespec="microseconds")
    assert row["committed_at"] == exact
    assert (row["stale"], row["superseded"]) == (1, 2)
    (partition,) = json.loads(_cli(base, "partitions", "test.t", "-o", "json"))
    assert seconds(partition["committed_at"]) == math.floor(commit.committed_at)

    for command in ("describe", "history", "partitions"):
        text = _cli(base, command, "test.t")
        assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00", text), text
        assert not re.search(r"\d{9,}\.\d", text), text  # no raw epoch seconds
    header = _cli(base, "history", "test.t").splitlines()[0].split()
    assert header.index("superseded") == header.index("stale") + 1


def test_an_unknown_log_level_is_a_one_line_configuration_error(base: list[str]) -> None:
    result = CliRunner().invoke(
        cli, [*base, "describe", "test.t"], env={"VERSIONED_LOG_LEVEL": "loud"}
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: VERSIONED_LOG_LEVEL='loud' is not a log level; use one of OFF, FATAL, ERROR, "
        "WARN, INFO, DEBUG, TRACE, ALL (or unset it for a quiet Spark)"
    ]


def test_the_spark_start_line_respects_a_commands_quiet_flag() -> None:
    """`versioned.cli.context` prints "starting Spark" through this hook (a real start is
    in .ci/wheel-smoke.sh, `make wheel-smoke`)."""
    from versioned.cli.context import _say_unless_quiet

    @click.command()
    @click.option("--quiet", "-q", is_flag=True)
    def command(quiet: bool) -> None:
        _say_unless_quiet("starting Spark (local[1])…")

    assert CliRunner().invoke(command, []).stderr == "starting Spark (local[1])…\n"
    assert CliRunner().invoke(command, ["-q"]).stderr == ""
