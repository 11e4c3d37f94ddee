"""`versioned export`, `versioned import` and `versioned collection show` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.collections.conftest import Source
from versioned.cli.main import cli


def _run(catalog: str, warehouse: str, *args: str, user: str = "alice") -> Any:
    base = ["--catalog", catalog, "--warehouse", warehouse, "--user", user]
    return CliRunner().invoke(cli, [*base, *args])


def test_cli_export_show_and_import(source: Source, spark: Any, tmp_path: Path) -> None:
    src = (source.catalog.settings.catalog_url, source.catalog.settings.warehouse)
    dest = tmp_path / "ab1"
    out = _run(
        *src, "export", "sales.orders", str(dest), "--partition", "store=a%2Fb,day=1", "-o", "json"
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["rows"] == 3 and json.loads(out.output)["partitions"] == 1

    shown = CliRunner().invoke(cli, ["collection", "show", str(dest)])
    assert shown.exit_code == 0, shown.output
    assert "sales.orders" in shown.output and "store=a%2Fb/day=1" in shown.output
    assert "format_version  1.0" in shown.output
    data = json.loads(
        CliRunner().invoke(cli, ["collection", "show", str(dest), "-o", "json"]).output
    )
    assert data["partitions"][0]["values"] == {"store": "a/b", "day": "1"}

    dst = (f"sqlite:///{tmp_path}/dst.db", str(tmp_path / "dst-wh"))
    out = _run(*dst, "import", str(dest), "--table", "copy.orders", "-o", "json", user="bob")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["created"] is True and json.loads(out.output)["rows"] == 3
    shown = _run(*dst, "show", "copy.orders", "-o", "json", user="bob")
    assert sorted(r["id"] for r in json.loads(shown.output)) == [0, 8, 16]

    again = _run(*dst, "import", str(dest), "--table", "copy.orders", user="bob")
    assert again.exit_code == 2
    assert "already has data in partition(s) (store='a/b', day='1')" in again.output
    assert "Traceback" not in again.output
    nobody = _run(*dst, "import", str(dest), "--table", "copy.orders", user="eve")
    assert nobody.exit_code == 77 and "eve may not write to copy.orders" in nobody.output


def test_cli_refusals_are_one_line_with_exit_codes(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    shown = CliRunner().invoke(cli, ["collection", "show", str(empty)])
    assert shown.exit_code == 2 and "has no _versioned_collection.json" in shown.output
    bad = _run(
        f"sqlite:///{tmp_path}/c.db",
        str(tmp_path / "wh"),
        "import",
        str(empty),
        "--partition",
        "oops",
    )
    assert bad.exit_code == 2 and "is not key=value" in bad.output
