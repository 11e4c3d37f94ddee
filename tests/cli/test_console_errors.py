"""User errors through the installed `versioned` script: one line, the README's exit codes,
no Spark started when none is needed, and nothing left in the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.jvm_processes import JVM_NOTICE
from versioned.cli.main import cli

SCRIPT = str(Path(sys.executable).parent / "versioned")


@pytest.fixture
def setup(tmp_path: Path):
    base = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]
    runner = CliRunner()
    created = runner.invoke(
        cli,
        [*base, "--user", "alice", "create-table", "test.t", "--columns",
         "k BIGINT, v STRING, p STRING", "--primary-key", "k", "--partition-by", "p",
         "--op-code-column", "op"],
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return base, cwd


def _run(base: list[str], cwd: Path, *args: str, user: str = "alice", no_spark: bool = False):
    env = dict(os.environ)
    if no_spark:
        env["SPARK_HOME"] = str(cwd / "no-spark-here")  # starting Spark would fail
    return subprocess.run(
        [SCRIPT, *base, "--user", user, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def _one_error_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith(JVM_NOTICE)]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    return lines[0]


@pytest.mark.parametrize(
    ("name", "content", "args", "code", "message"),
    [
        ("bad.parquet", "not parquet\n", [], 2, "not a Parquet file"),
        ("missing.csv", None, [], 2, "does not exist"),
        ("hdr.csv", "k,zz,p,op\n1,a,x,I\n", [], 2, "unknown column(s) zz"),
    ],
)
def test_bad_input_is_one_line_without_starting_spark(
    setup, name: str, content: str | None, args: list[str], code: int, message: str
) -> None:
    base, cwd = setup
    feed = cwd.parent / name
    if content is not None:
        feed.write_text(content)
    proc = _run(base, cwd, "upsert", "test.t", str(feed), *args, no_spark=True)
    assert proc.returncode == code, proc.stderr
    assert message in _one_error_line(proc.stderr)
    assert list(cwd.iterdir()) == []


def test_missing_version_and_used_export_folder_fail_without_starting_spark(setup) -> None:
    base, cwd = setup
    proc = _run(base, cwd, "show", "test.t", "--as-of", "99", no_spark=True)
    assert proc.returncode == 3
    assert "has no version 99" in _one_error_line(proc.stderr)
    used = cwd.parent / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    proc = _run(base, cwd, "export", "test.t", str(used), no_spark=True)
    assert proc.returncode == 1
    assert "is not empty" in _one_error_line(proc.stderr)
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize(
    "content", ["", "k,v,p,op\n", "k,v,p,op\n\n\n", None], ids=["empty", "header", "blank", "dir"]
)
def test_empty_input_commits_nothing_and_says_so(setup, content: str | None) -> None:
    base, cwd = setup
    feed = cwd.parent / "feed"
    if content is None:
        feed.mkdir()
        args = [str(feed), "--format", "csv"]
    else:
        feed = feed.with_suffix(".csv")
        feed.write_text(content)
        args = [str(feed)]
    proc = _run(base, cwd, "upsert", "test.t", *args, no_spark=True)
    assert proc.returncode == 0, proc.stderr
    assert "nothing to apply" in proc.stdout
    history = _run(base, cwd, "history", "test.t", "-o", "json", no_spark=True)
    assert history.returncode == 0 and history.stdout.strip() == "[]"


def test_an_unreachable_catalog_at_start_is_one_line_and_exit_75(tmp_path: Path) -> None:
    """What a catalog lost midway exits with (retryable); no waiting with the wait at 0."""
    env = {**os.environ, "VERSIONED_CATALOG_OUTAGE_S": "0"}
    proc = subprocess.run(
        [SCRIPT, "--catalog", "postgresql+psycopg://u@127.0.0.1:1/x", "list-tables"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 75, proc.stderr
    assert "could not be reached" in _one_error_line(proc.stderr)
    assert proc.stdout == ""


def test_the_no_spark_marker_does_stop_spark(setup) -> None:
    """Guards the tests above: with the marker, a command that needs Spark cannot run."""
    base, cwd = setup
    proc = _run(base, cwd, "sql", "SELECT 1", no_spark=True)
    assert proc.returncode != 0


@pytest.mark.parametrize(
    ("args", "user", "code", "message"),
    [
        (["sql", "SELEC 1"], "alice", 2, "SQL syntax error"),
        (["show", "test.t", "--where", "k =="], "alice", 2, "--where failed"),
        (["sql", "SELECT * FROM test.t"], "bob", 77, "bob may not read test.t"),
        (["sql", "INSERT INTO test.t VALUES (1, 'a', 'p')"], "alice", 2, "read-only queries"),
    ],
    ids=["sql-typo", "where-typo", "no-grant", "insert"],
)
def test_spark_errors_are_one_line_with_the_readme_exit_code(
    spark: Any, setup, args: list[str], user: str, code: int, message: str
) -> None:
    """In-process on the shared session: the error's rendering is versioned's. That the real
    script's own JVM leaves stderr and the working directory clean is
    .ci/wheel-smoke.sh's (`make wheel-smoke`)."""
    base, _ = setup
    result = CliRunner().invoke(cli, [*base, "--user", user, *args])
    assert result.exit_code == code, result.output
    assert message in _one_error_line(result.stderr)
    assert result.stdout == ""
