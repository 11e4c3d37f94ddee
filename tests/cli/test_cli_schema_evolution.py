"""`versioned alter-table` and `versioned upsert --evolve` end to end (CliRunner, shared Spark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from versioned.cli.main import cli


@pytest.fixture
def run(spark: Any, tmp_path: Path) -> Any:
    base = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]

    def invoke(*args: str, user: str = "alice") -> Any:
        return CliRunner().invoke(cli, [*base, "--user", user, *args])

    created = invoke(
        "create-table",
        "shop.items",
        "--columns",
        "id INT, qty INT, p STRING",
        "--primary-key",
        "id",
        "--partition-by",
        "p",
        "--op-code-column",
        "op",
    )
    assert created.exit_code == 0, created.output
    return invoke


def _csv(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_alter_table_adds_and_widens_columns_as_one_alter_version(run: Any, tmp_path: Path) -> None:
    first = run("upsert", "shop.items", _csv(tmp_path / "a.csv", "op,id,qty,p\nI,1,5,x\n"), "-q")
    assert first.exit_code == 0, first.output
    done = run("alter-table", "shop.items", "--add-columns", "note STRING", "--widen", "qty BIGINT")
    assert done.exit_code == 0, done.output
    assert "added note STRING, widened qty BIGINT" in done.output
    described = json.loads(run("describe", "shop.items", "-o", "json").output)
    assert [(c["name"], c["type"]) for c in described["columns"]] == [
        ("id", "INT"),
        ("qty", "BIGINT"),
        ("p", "STRING"),
        ("note", "STRING"),
    ]
    history = json.loads(run("history", "shop.items", "-o", "json").output)
    assert [h["operation"] for h in history] == ["upsert", "alter"]
    feed = _csv(tmp_path / "b.csv", "op,id,qty,p,note\nI,2,5000000000,x,hi\n")
    assert run("upsert", "shop.items", feed, "-q").exit_code == 0
    shown = json.loads(run("show", "shop.items", "-o", "json").output)
    assert sorted((r["id"], r["qty"], r["note"]) for r in shown) == [
        (1, 5, None),
        (2, 5000000000, "hi"),
    ]
    old = json.loads(
        run("show", "shop.items", "--as-of", str(history[0]["version"]), "-o", "json").output
    )
    assert old == [{"id": 1, "qty": 5, "p": "x"}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--widen", "qty SMALLINT"), "cannot change qty from INT to SMALLINT"),
        (("--widen", "p VARCHAR(5)"), "partition column p"),
        (("--add-columns", "qty INT"), "cannot add qty"),
    ],
)
def test_refused_changes_exit_2_with_one_line_and_change_nothing(
    run: Any, args: tuple[str, ...], message: str
) -> None:
    result = run("alter-table", "shop.items", *args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    history = json.loads(run("history", "shop.items", "-o", "json").output)
    assert history == []


def test_alter_table_without_a_change_is_a_usage_error(run: Any) -> None:
    result = run("alter-table", "shop.items")
    assert result.exit_code == 2 and "--add-columns, --widen, --set or --unset" in result.output


def test_alter_table_sets_and_removes_the_maintenance_properties(run: Any) -> None:
    described = json.loads(run("describe", "shop.items", "-o", "json").output)
    assert described["auto_compact"] is True  # a new table maintains itself
    done = run("alter-table", "shop.items", "--set", "auto_compact=false")
    assert done.exit_code == 0, done.output
    assert "set auto_compact=false" in done.output
    described = json.loads(run("describe", "shop.items", "-o", "json").output)
    assert described["auto_compact"] is False
    assert described["properties"]["auto_compact"] == "false"
    bad = run("alter-table", "shop.items", "--set", "auto_compact.min_versions=many")
    assert bad.exit_code != 0
    assert "auto_compact.min_versions='many'" in bad.output and "whole number" in bad.output
    assert len(bad.output.strip().splitlines()) == 1, bad.output
    gone = run("alter-table", "shop.items", "--unset", "auto_compact")
    assert gone.exit_code == 0 and "removed auto_compact" in gone.output
    history = json.loads(run("history", "shop.items", "-o", "json").output)
    assert [h["operation"] for h in history] == ["alter", "alter"]
    assert run("alter-table", "shop.items", "--set", "oops").exit_code == 2


def test_altering_needs_write_permission(run: Any) -> None:
    denied = run("alter-table", "shop.items", "--add-columns", "note STRING", user="bob")
    assert denied.exit_code == 77, denied.output
    assert run("grant", "write", "shop.items", "bob").exit_code == 0
    allowed = run("alter-table", "shop.items", "--add-columns", "note STRING", user="bob")
    assert allowed.exit_code == 0, allowed.output


def test_help_says_dropping_and_renaming_are_not_supported(run: Any) -> None:
    text = " ".join(run("alter-table", "--help").output.split())
    assert "Dropping and renaming columns are not supported" in text
    assert "--add-columns" in text and "--widen" in text


def test_upsert_evolve_adds_the_feeds_new_columns_and_without_it_fails_with_exit_2(
    run: Any, tmp_path: Path
) -> None:
    feed = _csv(tmp_path / "a.csv", "op,id,qty,p,channel\nI,1,5,x,web\n")
    refused = run("upsert", "shop.items", feed, "-q")
    assert refused.exit_code == 2 and "unknown column(s) channel" in refused.output
    assert json.loads(run("history", "shop.items", "-o", "json").output) == []
    done = run("upsert", "shop.items", feed, "--evolve", "-q", "-o", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["inserted"] == 1
    shown = json.loads(run("show", "shop.items", "-o", "json").output)
    assert shown == [{"id": 1, "qty": 5, "p": "x", "channel": "web"}]
