"""Missing columns: the batch fails before anything is written, unless it is a partial update,
whose missing columns keep each key's stored values (issue 10, item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.test_warehouse import files_under, read_text
from versioned.api.catalog import Catalog
from versioned.cli.main import cli
from versioned.errors import SchemaError

COLUMNS = "store STRING, id INT, name STRING, qty INT NOT NULL, note STRING"


def csv(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def rows(cat: Catalog, name: str = "shop.items") -> dict[int, tuple[Any, ...]]:
    return {r["id"]: (r["name"], r["qty"], r["note"]) for r in cat.table(name).read().collect()}


@pytest.fixture
def items(cat: Catalog, tmp_path: Path, layout: str) -> Any:
    # every partition column is in the key: the stored rows are read from those partitions only
    t = cat.create_table(
        "shop.items", columns=COLUMNS, primary_key="store,id", partition_by="store",
        op_code_column="op", layout=layout,
    )  # fmt: skip
    t.upsert(
        csv(tmp_path / "full.csv", "op,store,id,name,qty,note\nI,a,1,one,1,n1\nI,a,2,two,2,n2\n")
    )
    return t


def test_missing_columns_fail_the_batch_before_anything_is_written(
    items: Any, tmp_path: Path
) -> None:
    before = len(items.history())
    with pytest.raises(SchemaError) as caught:
        items.upsert(csv(tmp_path / "p.csv", "op,store,id,qty\nU,a,1,50\n"))
    message = str(caught.value)
    assert "missing column(s) name, note" in message and "--partial" in message
    assert len(items.history()) == before


def test_partial_update_keeps_stored_values_and_new_keys_get_null(
    cat: Catalog, items: Any, tmp_path: Path
) -> None:
    path = csv(tmp_path / "p.csv", "op,store,id,qty\nU,a,1,50\nI,a,3,7\nD,a,2,\n")
    result = items.upsert(path, partial=True)
    assert rows(cat) == {1: ("one", 50, "n1"), 3: (None, 7, None)}
    assert (result.updated, result.deleted, result.rejected) == (1, 1, 0)


def test_partial_update_of_a_new_key_without_a_not_null_value_is_dead_lettered(
    cat: Catalog, items: Any, tmp_path: Path
) -> None:
    path = csv(tmp_path / "p.csv", "op,store,id,name\nU,a,1,uno\nI,a,9,nine\n")
    result = items.upsert(path, partial=True)
    assert result.rejected == 1
    assert rows(cat) == {1: ("uno", 1, "n1"), 2: ("two", 2, "n2")}
    dead = "shop.db/items/_dead_letter"
    texts = [read_text(cat, f"{dead}/{p}") for p in files_under(cat, dead) if p.endswith(".json")]
    (text,) = [t for t in texts if t]
    letter = json.loads(text)
    assert json.loads(letter["_raw"])["id"] == 9
    assert letter["_reason"].startswith("column qty is NOT NULL but null")


def test_a_kept_column_takes_the_value_of_the_same_batchs_earlier_change(
    cat: Catalog, items: Any, tmp_path: Path
) -> None:
    full = csv(
        tmp_path / "1.csv", "op,store,id,name,qty,note\nU,a,1,renamed,5,fresh\nI,a,4,f,4,n4\n"
    )
    partial = csv(tmp_path / "2.csv", "op,store,id,qty\nU,a,1,6\nU,a,4,40\n")
    items.upsert([full, partial], partial=True)
    assert rows(cat) == {
        1: ("renamed", 6, "fresh"),
        2: ("two", 2, "n2"),
        4: ("f", 40, "n4"),
    }


def test_cli_partial_flag(cat: Catalog, items: Any, tmp_path: Path) -> None:
    settings = cat.settings
    base = ["--warehouse", str(settings.warehouse), "--catalog", settings.catalog_url]
    path = csv(tmp_path / "p.csv", "op,store,id,note\nU,a,2,changed\n")
    refused = CliRunner().invoke(cli, [*base, "--user", "alice", "upsert", "shop.items", path])
    assert refused.exit_code == 2 and "--partial" in refused.output
    done = CliRunner().invoke(
        cli, [*base, "--user", "alice", "upsert", "shop.items", path, "--partial", "-q"]
    )
    assert done.exit_code == 0, done.output
    assert rows(cat)[2] == ("two", 2, "changed")
