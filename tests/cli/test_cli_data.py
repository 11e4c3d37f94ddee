"""What the data commands tell: history, describe, changes, delete, grants, rendering."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from versioned.api.catalog import connect
from versioned.catalog.records import FileAdd, PartitionCommit
from versioned.cli.main import cli
from versioned.cli.render import render_record, render_rows
from versioned.names import TableName


@pytest.fixture
def run(tmp_path: Path):
    base = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]

    def invoke(*args: str, user: str = "alice"):
        return CliRunner().invoke(cli, [*base, "--user", user, *args])

    result = invoke(
        "create-table", "test.t", "--columns", "k BIGINT, v STRING, p STRING",
        "--primary-key", "k", "--partition-by", "p", "--op-code-column", "op",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return invoke


def _feed(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_history_is_in_version_order_and_describe_shows_the_highest_version(
    run, tmp_path: Path
) -> None:
    cat = connect(warehouse=str(tmp_path / "wh"), catalog=f"sqlite:///{tmp_path}/cat.db",
                  user="alice")  # fmt: skip
    name = TableName("test", "t")
    first, second = cat.engine_context.store.begin(), cat.engine_context.store.begin()
    for txn, value in ((second, "x"), (first, "y")):  # the later transaction commits first
        part = cat.engine_context.store.add_partition(name, [value])
        add = FileAdd(part.id, f"p={value}/version_id={txn}/part-0.parquet", "data", txn, 10, 1)
        cat.engine_context.store.commit(
            txn, name, operation="upsert",
            partitions=[PartitionCommit(part.id, new_head=txn, add=(add,))],
        )  # fmt: skip
    cat.close()
    rows = json.loads(run("history", "test.t", "-o", "json").output)
    assert [(r["version"], r["commit"]) for r in rows] == [(first, 2), (second, 1)]
    assert "ignored_deletes" in rows[0]
    info = json.loads(run("describe", "test.t", "-o", "json").output)
    assert info["current_version"] == second


def test_show_as_of_time_answers_a_time_it_cannot_use_in_one_line(run, tmp_path: Path) -> None:
    """The time-travel issue, item 2: no traceback, and the form suggested is accepted."""
    cat = connect(warehouse=str(tmp_path / "wh"), catalog=f"sqlite:///{tmp_path}/cat.db",
                  user="alice")  # fmt: skip
    store, name = cat.engine_context.store, TableName("test", "t")
    txn = store.begin()
    part = store.add_partition(name, ["x"])
    add = FileAdd(part.id, f"p=x/version_id={txn}/part-0.parquet", "data", txn, 10, 1)
    store.commit(txn, name, operation="upsert", partitions=[PartitionCommit(part.id, add=(add,))])
    cat.close()
    for text in ("0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"):
        refused = run("show", "test.t", "--as-of-time", text)
        assert refused.exit_code == 2 and "Traceback" not in refused.output, refused.output
        assert "is outside the years 1 to 9999 in UTC" in refused.output
    bad = run("show", "test.t", "--as-of-time", "yesterday")
    assert bad.exit_code == 2 and "is not an ISO-8601 time with a zone" in bad.output
    day = run("show", "test.t", "--as-of-time", "2024-05-01")
    assert day.exit_code == 2 and "e.g. 2024-05-01T00:00:00Z for UTC" in day.output
    suggested = run("show", "test.t", "--as-of-time", "2024-05-01T00:00:00Z")
    assert suggested.exit_code == 3, suggested.output  # read, and before the first commit
    assert "has no commit at or before 2024-05-01T00:00:00+00:00" in suggested.output
    assert len(suggested.output.strip().splitlines()) == 1


def test_changes_and_delete_by_predicate(spark: Any, run, tmp_path: Path) -> None:
    one = _feed(tmp_path, "1.csv", "k,v,p,op\n1,a,x,I\n2,b,x,I\n3,c,y,I\n")
    assert run("upsert", "test.t", one, "-q").exit_code == 0
    since = json.loads(run("history", "test.t", "-o", "json").output)[-1]["version"]
    two = _feed(tmp_path, "2.csv", "k,v,p,op\n2,B,x,U\n4,d,y,I\n")
    assert run("upsert", "test.t", two, "-q").exit_code == 0
    changed = json.loads(run("changes", "test.t", "--since", str(since), "-o", "json").output)
    assert sorted((r["_change"], r["k"], r["v"]) for r in changed) == [
        ("insert", 4, "d"),
        ("update", 2, "B"),
    ]

    denied = run("delete", "test.t", "--where", "k > 2", user="bob")
    assert denied.exit_code == 77 and "grant write" in denied.output
    dry_run = run("delete", "test.t", "--where", "p = 'y'", "--dry-run", "-o", "json")
    dry = json.loads(dry_run.output)
    assert dry["rows_to_delete"] == 2
    assert len(json.loads(run("history", "test.t", "-o", "json").output)) == 2
    done = json.loads(run("delete", "test.t", "--where", "p = 'y'", "-q", "-o", "json").output)
    assert done["deleted"] == 2 and done["version"] is not None
    left = json.loads(run("show", "test.t", "-o", "json").output)
    assert sorted(r["k"] for r in left) == [1, 2]
    nothing = run("delete", "test.t", "--where", "k > 100", "-q")
    assert nothing.exit_code == 0 and "nothing to apply" in nothing.output
    assert len(json.loads(run("history", "test.t", "-o", "json").output)) == 3
    typo = run("delete", "test.t", "--where", "kk = 1")
    assert typo.exit_code == 2 and "--where failed" in typo.output


def test_upsert_without_grant_asks_for_write(run, tmp_path: Path) -> None:
    feed = _feed(tmp_path, "f.csv", "k,v,p,op\n1,a,x,I\n")
    denied = run("upsert", "test.t", feed, user="bob")
    assert denied.exit_code == 77
    assert "grant write test.t bob" in denied.output and "grant read" not in denied.output


def test_revoking_a_grant_that_does_not_exist_says_so(run) -> None:
    missing = run("revoke", "read", "test.t", "bob")
    assert missing.exit_code == 3 and "holds no read grant" in missing.output
    assert run("grant", "write", "test.t", "bob").exit_code == 0
    assert run("revoke", "read", "test.t", "bob").exit_code == 3  # write is not read
    ok = run("revoke", "write", "test.t", "bob")
    assert ok.exit_code == 0 and "revoked write" in ok.output


def test_compact_dry_run_names_its_row_figure_an_estimate(run) -> None:
    plan = run("compact", "test.t", "--dry-run", "-o", "csv")
    assert plan.exit_code == 0, plan.output
    header = plan.stdout.splitlines()[0].split(",")
    assert "rows_estimate" in header and "rows" not in header


def test_values_with_newlines_and_tabs_stay_on_one_table_line() -> None:
    rows = [{"k": 1, "v": "two\nlines\tand\r\\"}, {"k": 2, "v": "x\u2028y"}]
    text = render_rows(rows, "table")
    assert len(text.splitlines()) == 4  # header, rule, two rows
    assert "two\\nlines\\tand\\r\\\\" in text and "x\\u2028y" in text
    assert len(render_record({"v": "a\nb"}, "table").splitlines()) == 1
    assert json.loads(render_rows(rows, "json"))[0]["v"] == "two\nlines\tand\r\\"


def test_an_upsert_whose_every_row_is_rejected_says_how_many_and_where(
    spark: Any, run, tmp_path: Path
) -> None:
    """Issue 27 item 11: it said "no rows in the input"."""
    feed = _feed(tmp_path, "bad.csv", "k,v,p,op\nx,a,p1,I\ny,b,p1,I\n")  # k is a BIGINT
    shown = run("upsert", "test.t", feed, "-q")
    assert shown.exit_code == 0, shown.output
    (line,) = shown.stdout.splitlines()
    assert line.startswith(f"nothing to apply (all 2 row(s) of {feed} were rejected; their ")
    # A version without files records them: __dead_letters and the history list them.
    assert re.search(r"\); version \d+ records them$", line)
    folder = Path(line.split("reasons are in ")[1].split(")")[0].removeprefix("file://"))
    reasons = [
        json.loads(x)["_reason"] for f in folder.rglob("*.json") for x in f.read_text().splitlines()
    ]
    assert sorted(reasons) == ["column k: 'x' is not a BIGINT", "column k: 'y' is not a BIGINT"]

    as_json = run("upsert", "test.t", feed, "-q", "-o", "json")
    record = json.loads(as_json.stdout)
    assert record["version"] is not None and record["rejected"] == 2
    assert record["dead_letter"].startswith("test.db/t/_dead_letter/")
    assert "all 2 row(s)" in as_json.stderr


def test_table_cells_are_cut_at_the_cell_width_and_csv_and_json_keep_them_whole() -> None:
    rows = [{"k": 1, "v": "x" * 60}, {"k": 2, "v": "short"}]
    table = render_rows(rows, "table", cell_width=40).splitlines()
    assert table[2].split("  ", 1)[1].strip() == "x" * 39 + "…"
    assert table[3].split() == ["2", "short"]
    assert "x" * 60 in render_rows(rows, "table")
    assert "x" * 60 in render_rows(rows, "csv") and "x" * 60 in render_rows(rows, "json")


def test_show_sorts_by_the_primary_key_and_cuts_wide_cells_unless_no_truncate(
    spark: Any, run, tmp_path: Path
) -> None:
    """Issue 27 item 15."""
    wide = "w" * 70
    feed = _feed(tmp_path, "f.csv", f"k,v,p,op\n3,c,b,I\n1,{wide},a,I\n2,b,b,I\n10,d,a,I\n")
    assert run("upsert", "test.t", feed, "-q").exit_code == 0
    shown = run("show", "test.t")
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()[2:]
    assert [line.split()[0] for line in lines] == ["1", "2", "3", "10"]  # by key, as numbers
    assert "w" * 39 + "…" in lines[0] and wide not in shown.stdout
    whole = run("show", "test.t", "--no-truncate")
    assert wide in whole.stdout
    assert [r["k"] for r in json.loads(run("show", "test.t", "-o", "json").stdout)] == [1, 2, 3, 10]


def test_show_as_of_time_and_changes_since_zero(spark: Any, run, tmp_path: Path) -> None:
    """Issue 27 item 14, on the command line."""
    assert (
        run("upsert", "test.t", _feed(tmp_path, "a.csv", "k,v,p,op\n1,a,x,I\n"), "-q").exit_code
        == 0
    )
    history = json.loads(run("history", "test.t", "-o", "json").stdout)
    first_time = history[0]["committed_at"]  # ISO-8601 UTC, to the second
    assert (
        run("upsert", "test.t", _feed(tmp_path, "b.csv", "k,v,p,op\n1,b,x,U\n"), "-q").exit_code
        == 0
    )
    later = run("show", "test.t", "--as-of-time", "2999-01-01T00:00:00Z", "-o", "json")
    assert [r["v"] for r in json.loads(later.stdout)] == ["b"]
    early = run("show", "test.t", "--as-of-time", "2000-01-01T00:00:00+02:00")
    assert early.exit_code == 3 and "has no commit at or before 1999-12-31T22:00:00" in early.stderr
    naive = run("show", "test.t", "--as-of-time", "2024-05-01T12:00:00")
    assert (
        naive.exit_code == 2 and "has no zone: add one, e.g. 2024-05-01T12:00:00Z" in naive.stderr
    )
    assert first_time.endswith("+00:00")
    everything = json.loads(run("changes", "test.t", "--since", "0", "-o", "json").stdout)
    assert [(r["_change"], r["k"], r["v"]) for r in everything] == [("insert", 1, "b")]
