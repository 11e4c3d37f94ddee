"""The CLI end to end on a real SQLite catalog and a real warehouse directory."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from versioned.cli import tables
from versioned.cli.main import cli

SELL_COLUMNS = (
    "sell_id BIGINT, acct_id BIGINT, change_ts STRING, create_ts STRING, payment_type_id STRING,"
    " status_id STRING, total_amt DOUBLE, batch INT, store_id STRING, create_date STRING"
)


@pytest.fixture
def run(tmp_path: Path):
    base = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]

    def invoke(*args: str, user: str = "alice", input: str | None = None):
        return CliRunner().invoke(cli, [*base, "--user", user, *args], input=input)

    return invoke


def _create_sell(run) -> None:
    result = run(
        "create-table",
        "test.sell",
        "--columns",
        SELL_COLUMNS,
        "--primary-key",
        "sell_id",
        "--partition-by",
        "store_id,create_date",
        "--op-code-column",
        "op_code",
    )
    assert result.exit_code == 0, result.output
    assert "created test.sell" in result.output


def test_create_table_then_describe_as_json(run):
    _create_sell(run)
    result = run("describe", "test.sell", "--output", "json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["name"] == "test.sell"
    assert info["primary_key"] == ["sell_id"]
    assert info["partition_by"] == ["store_id", "create_date"]
    assert info["op_code_column"] == "op_code"
    assert info["layout"] == "versioned" and info["file_format"] == "parquet"
    assert info["owner"] == "alice"
    assert [c["name"] for c in info["columns"]][:3] == ["sell_id", "acct_id", "change_ts"]
    assert {c["name"]: c["type"] for c in info["columns"]}["total_amt"] == "DOUBLE"
    assert info["current_version"] is None


def test_describe_as_table_marks_key_and_partition_columns(run):
    _create_sell(run)
    result = run("describe", "test.sell")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("sell_id"))
    assert "primary key" in line
    assert "partition" in next(x for x in result.output.splitlines() if x.startswith("store_id"))


def test_describe_prints_times_in_utc_in_every_format_whatever_the_time_zone(run, monkeypatch):
    """As `history`, `partitions` and the metadata tables do (README: ISO-8601 in UTC in
    every output format), so that a time reads the same on every machine."""
    import time as clock

    monkeypatch.setenv("TZ", "Asia/Kolkata")  # +05:30 all year: no daylight-saving guess
    clock.tzset()
    try:
        _create_sell(run)
        shown = run("describe", "test.sell").output
        line = next(x for x in shown.splitlines() if x.startswith("created_at"))
        as_json = json.loads(run("describe", "test.sell", "--output", "json").output)
        as_csv = run("describe", "test.sell", "--output", "csv").output
        (created,) = csv.DictReader(io.StringIO(as_csv))
        assert line.split()[1] == as_json["created_at"] == created["created_at"]
        assert as_json["created_at"].endswith("+00:00")
    finally:
        monkeypatch.undo()
        clock.tzset()


def test_list_tables_in_every_format(run):
    _create_sell(run)
    assert "test.sell" in run("list-tables").output
    csv_out = run("list-tables", "-o", "csv").output.splitlines()
    assert csv_out[0] == "table,layout,format,owner,primary_key,partition_by"
    assert csv_out[1].startswith("test.sell,versioned,parquet,alice,sell_id,")
    assert (
        json.loads(run("--output", "json", "list-tables", "test").output)[0]["table"] == "test.sell"
    )
    unknown = run("list-tables", "other")
    assert unknown.exit_code == 3 and "no database 'other'" in unknown.output


def test_user_errors_are_one_line_with_exit_code_and_no_traceback(run):
    result = run("create-table", "test.t", "--columns", "id BIGINTEGER", "--primary-key", "id")
    assert result.exit_code == 2
    assert "unknown column type 'BIGINTEGER'" in result.output
    assert "Traceback" not in result.output
    missing = run("describe", "test.nope")
    assert missing.exit_code == 3 and "list-tables" in missing.output
    bad_name = run("describe", "../etc.passwd")
    assert bad_name.exit_code == 2 and "invalid" in bad_name.output


def test_duplicate_table_is_refused(run):
    _create_sell(run)
    again = run("create-table", "test.sell", "--columns", "id INT", "--primary-key", "id")
    assert again.exit_code == 2 and "exists" in again.output


def test_permissions_through_grant_and_revoke(run):
    _create_sell(run)
    denied = run("describe", "test.sell", user="mallory")
    assert denied.exit_code == 77 and "mallory" in denied.output
    assert run("list-tables", "-o", "json", user="mallory").output.strip() == "[]"
    assert run("grant", "read", "test.sell", "mallory", user="mallory").exit_code == 77
    assert run("grant", "read", "test.sell", "mallory").exit_code == 0
    assert run("describe", "test.sell", user="mallory").exit_code == 0
    listing = json.loads(run("grants", "test.sell", "-o", "json").output)
    assert listing == [
        {"principal": "mallory", "privilege": "read", "on": "test.sell", "granted_by": "alice"}
    ]
    assert run("drop-table", "test.sell", "--yes", user="mallory").exit_code == 77
    assert run("revoke", "read", "test.sell", "mallory").exit_code == 0
    assert run("describe", "test.sell", user="mallory").exit_code == 77


def test_drop_table_removes_catalog_entry_and_files(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    _create_sell(run)
    table_dir = tmp_path / "wh" / "test.db" / "sell"
    table_dir.mkdir(parents=True, exist_ok=True)
    (table_dir / "part-0.parquet").write_bytes(b"x")
    with monkeypatch.context() as terminal:
        terminal.setattr(tables, "stdin_is_terminal", lambda: True)
        declined = run("drop-table", "test.sell", input="n\n")
    assert declined.exit_code == 1
    said = declined.stderr.splitlines()[-1]
    assert said == "Error: test.sell was not dropped (the answer was no)"
    assert declined.stdout == ""  # the question is on stderr
    assert run("describe", "test.sell").exit_code == 0
    assert run("drop-table", "test.sell", "--yes").exit_code == 0
    assert run("describe", "test.sell").exit_code == 3
    assert not table_dir.exists()


def test_drop_table_without_yes_and_without_a_terminal_says_to_pass_yes(run):
    _create_sell(run)
    refused = run("drop-table", "test.sell", input="")  # a script: stdin is no terminal
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        "Error: drop-table asks before it drops test.sell, and stdin is not a terminal: "
        "pass --yes to drop it without asking"
    ]
    assert refused.stdout == ""
    assert run("describe", "test.sell").exit_code == 0


def test_help_teaches_configuration_and_examples(run):
    top = run("--help").output
    assert "VERSIONED_CATALOG" in top and "create-table" in top
    assert "--partition-by" in run("create-table", "--help").output


def test_console_script_prints_one_line_on_error(tmp_path: Path):
    """The installed entry point (not CliRunner) shows no traceback for a user error."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "versioned.cli.main",
            "--warehouse",
            str(tmp_path),
            "describe",
            "nope.nope",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_partitions_lists_values_versions_and_rows(spark, run, tmp_path: Path):
    """The upsert runs on the shared session (the command finds it active)."""
    _create_sell(run)
    feed = tmp_path / "b.csv"
    feed.write_text(
        "sell_id,acct_id,store_id,create_date,total_amt,op_code\n1,1,a/b,2024-01-01,1.5,I\n"
        "2,1,7,2024-01-02,2.5,I\n3,1,7,2024-01-02,3.5,I\n"
    )
    # the feed lacks some columns: new keys get NULL there
    assert run("upsert", "test.sell", str(feed), "--partial", "-q").exit_code == 0
    rows = json.loads(run("partitions", "test.sell", "-o", "json").output)
    by_store = {r["store_id"]: r for r in rows}
    assert by_store["a/b"]["path"] == "store_id=a%2Fb/create_date=2024-01-01"
    assert (by_store["7"]["rows"], by_store["7"]["versions"], by_store["7"]["data_files"]) == (
        2,
        1,
        1,
    )
    assert by_store["7"]["head_version"] == by_store["a/b"]["head_version"]
