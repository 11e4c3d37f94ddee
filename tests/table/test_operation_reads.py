"""One operation reads the table once and checks the permission once: `Table` resolves what it
needs (`MetaStore.resolve`: the table's record, the user's grants, the snapshot) and hands the
layout's engine one request; nothing on the way asks the catalog for the table again.

Counted are the catalog calls that read a table's row and check a privilege on it
(`MetaStore.resolve` and every call built on `StoreBase._on_table`: ``check``, ``table``,
``snapshot``, ``history``, ``partitions``, ``write_ids``, ...). The commit itself re-checks
the write in its own SQL transaction, with its compare-and-swap: it is counted apart, once.
A write to a table that maintains itself (``auto_compact``, on for new tables) then resolves
the table once more: its maintenance is an operation of its own, which plans on a fresh
snapshot (here it finds nothing due, so it commits nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner

from versioned.api.catalog import Catalog, connect
from versioned.catalog.store import MetaStore
from versioned.catalog.store_base import StoreBase
from versioned.cli.main import cli

ACID_WRITE_IDS = (
    "an acid write plans on the request's snapshot but reads that snapshot's write-id list "
    "apart (MetaStore.write_ids), besides allocating its write id on the table"
)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The table-reading catalog calls made while the test runs, in order (after setup:
    the list is cleared by the test where its operation starts)."""
    calls: list[str] = []

    def spy(cls: type, name: str, label: str) -> None:
        original = getattr(cls, name)

        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(label)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, counted)

    spy(MetaStore, "resolve", "resolve")
    spy(StoreBase, "_on_table", "read")
    spy(MetaStore, "check", "check")
    spy(MetaStore, "commit", "commit")
    yield calls


def _table(cat: Catalog, layout: str) -> Any:
    t = cat.create_table(
        "test.t",
        columns="k BIGINT, v STRING, p STRING",
        primary_key="k",
        partition_by="p",
        layout=layout,
    )
    cat.grant("bob", "write", "test.t")  # bob is no owner: his grants are looked up
    return t


def _rows(keys: list[int], value: str) -> pa.Table:
    return pa.table({"k": keys, "v": [value] * len(keys), "p": ["x"] * len(keys)})


@pytest.mark.notimpl(["acid"], reason=ACID_WRITE_IDS, raises=AssertionError)
def test_an_upsert_reads_the_table_and_checks_the_permission_once(
    cat: Catalog, spark: Any, layout: str, reads: list[str]
) -> None:
    _table(cat, layout)
    settings = cat.settings
    bob = connect(
        catalog=settings.catalog_url, warehouse=settings.warehouse, spark=spark, user="bob"
    )
    t = bob.table("test.t")
    t.upsert(_rows([1, 2], "a"))
    reads.clear()
    result = t.upsert(_rows([2, 3], "b"))
    assert reads == ["resolve", "commit", "resolve"]
    assert (result.inserted, result.updated) == (1, 1)
    assert t.info.current_seq == 2  # the record is read again on first use after the write
    bob.close()


@pytest.mark.notimpl(["acid"], reason=ACID_WRITE_IDS, raises=AssertionError)
def test_a_cli_upsert_reads_the_table_and_checks_the_permission_once(
    cat: Catalog, spark: Any, layout: str, reads: list[str], tmp_path: Path
) -> None:
    _table(cat, layout)
    feed = tmp_path / "feed.csv"
    feed.write_text("k,v,p\n1,a,x\n2,b,x\n")
    settings = cat.settings
    base = ["--warehouse", settings.warehouse, "--catalog", settings.catalog_url]
    reads.clear()
    result = CliRunner().invoke(cli, [*base, "--user", "bob", "upsert", "test.t", str(feed), "-q"])
    assert result.exit_code == 0, result.output
    assert reads == ["resolve", "commit", "resolve"]
    denied = CliRunner().invoke(cli, [*base, "--user", "eve", "upsert", "test.t", str(feed)])
    assert denied.exit_code == 77 and "grant write test.t eve" in denied.output


@pytest.mark.notimpl(["acid"], reason=ACID_WRITE_IDS, raises=AssertionError)
def test_a_delete_and_a_compaction_read_the_table_once_each(
    cat: Catalog, layout: str, reads: list[str]
) -> None:
    t = _table(cat, layout)
    t.upsert(_rows([1, 2, 3], "a"))
    t.upsert(_rows([3], "b"))
    reads.clear()
    assert t.delete("k = 1").deleted == 1
    assert reads == ["resolve", "commit", "resolve"]
    reads.clear()
    t.compact(dry_run=True)
    assert reads == ["resolve"]
