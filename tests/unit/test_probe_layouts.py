"""Two probe layouts that make the layout contract see wrong answers (issue 47).

* ``hookless``: every capability and the version layout's engine, but no ability
  (`versioned.layouts.abilities`). Its tables upsert and read; every client that needs an
  ability refuses it with `NotSupportedError` naming the layout and the operation, or takes
  its documented fallback (an import upserts rows; partition facts count stored rows less
  entries and judge no compaction due).
* ``alias``: the version layout under another name. Every client must answer exactly as for
  a ``versioned`` table fed the same changes: reads, the change stream's rows, streamed
  transactions, partition facts, import by copy.

A caller that compares layout names, a default borrowed from the version layout or a client
that reaches past the abilities shows up here as a failure. The probes are registered for
each test only (the registry is the process's), so the other suites never see them; the
change rows are computed in this process (`plan_tasks` and `commit_changes`), as the change
stream's executors do, since Spark's Python workers would not know the probes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from versioned import mutation as vm
from versioned import streaming as vs
from versioned.api.catalog import Catalog
from versioned.api.metadata_rows import partitions_rows
from versioned.change_stream.change_rows import output_schema
from versioned.change_stream.commit_changes import commit_changes
from versioned.change_stream.commit_tasks import plan_tasks
from versioned.errors import NotSupportedError
from versioned.layouts.abilities import CanIngest, CanMutate
from versioned.layouts.base import register, unregister
from versioned.layouts.engine_protocol import TableEngine
from versioned.layouts.layout import StorageLayout
from versioned.layouts.version_partition.layout import LAYOUT as VERSION
from versioned.schema import TableSpec


class HooklessLayout(StorageLayout):
    """Every capability, the version layout's engine, no ability."""

    def engine(self) -> TableEngine:
        from versioned.layouts.version_partition.engine.table_engine import (
            VersionPartitionEngine,
        )

        return VersionPartitionEngine(self)

    def table_settings(self, spec: TableSpec) -> dict[str, Any]:
        return VERSION.table_settings(spec)


_FIELDS = {f.name: getattr(VERSION, f.name) for f in dataclasses.fields(VERSION) if f.init}
HOOKLESS = HooklessLayout(**{**_FIELDS, "name": "hookless", "description": "no ability"})
ALIAS = dataclasses.replace(VERSION, name="alias", description="the version layout, renamed")
COLUMNS = "id BIGINT, v STRING, p STRING"


@pytest.fixture
def probes() -> Iterator[None]:
    for probe in (HOOKLESS, ALIAS):
        register(probe)
    try:
        yield
    finally:
        for probe in (HOOKLESS, ALIAS):
            unregister(probe.name)


def _create(cat: Catalog, name: str, layout: str) -> Any:
    cat.create_table(name, columns=COLUMNS, primary_key="id", partition_by="p", layout=layout)
    return cat.table(name, need="write")


def _feed(table: Any) -> None:
    table.upsert(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "p": ["x", "x", "y"]}))
    table.upsert(pa.table({"id": [2, 4], "v": ["B", "d"], "p": ["x", "y"]}))
    table.delete("id = 3")


def _rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"], r["p"]) for r in table.read().collect())


def _change_rows(cat: Catalog, table: Any) -> list[tuple[Any, ...]]:
    """The table's change rows since its creation, each with the rank of its commit's
    version (versions are transaction ids, which two tables of one catalog do not share)."""
    store = cat.engine_context.store
    log = store.change_log(table.name, 0, store.head(table.name).seq)
    spec = table.info.spec
    rows = []
    for task in plan_tasks(log, spec.columns, cat.settings.warehouse):
        rows += commit_changes(task, output_schema(spec.columns)).to_pylist()
    rank = {v: i for i, v in enumerate(sorted({r["_commit_version"] for r in rows}))}
    return sorted(
        ((rank[r["_commit_version"]], r["_change_type"], r["id"], r["v"], r["p"]) for r in rows),
        key=repr,
    )


def _stream(cat: Catalog, name: str, records: list[str]) -> None:
    endpoint = vs.EndPoint(cat, name, partition_values=["z"])
    with endpoint.connect(create_partition=True, agent="probe") as conn:
        writer = vs.DelimitedInputWriter(["id", "v"], ",", endpoint=endpoint)
        with conn.fetch_transaction_batch(1, writer) as batch:
            batch.begin_next_transaction()
            batch.write_many(records)
            batch.commit()


def _facts(table: Any) -> list[dict[str, Any]]:
    """The partitions metadata table, without what depends on transaction ids and times."""
    varying = ("last_compaction", "head_version")
    return [{k: v for k, v in row.items() if k not in varying} for row in partitions_rows(table)]


def test_the_probes_are_what_they_claim() -> None:
    assert not isinstance(HOOKLESS, CanIngest) and not HOOKLESS.copies_imported_files
    assert isinstance(ALIAS, CanIngest) and ALIAS.copies_imported_files
    assert not isinstance(ALIAS, CanMutate)  # nor is the version layout


def test_a_layout_without_abilities_is_refused_by_every_client(
    probes: None, cat: Catalog, tmp_path: Path
) -> None:
    table = _create(cat, "db.h", "hookless")
    _feed(table)  # the engine is the version layout's: writes and reads work
    assert _rows(table) == [(1, "a", "x"), (2, "B", "x"), (4, "d", "y")]

    with pytest.raises(NotSupportedError) as stream:
        _stream(cat, "db.h", ["9,z"])
    assert (stream.value.layout, stream.value.operation) == ("hookless", "stream")
    with pytest.raises(NotSupportedError) as changes:
        _change_rows(cat, table)
    assert (changes.value.layout, changes.value.operation) == ("hookless", "changes")
    with pytest.raises(NotSupportedError) as mutate:
        vm.MutatorClient(cat, tables=["db.h"])
    assert (mutate.value.layout, mutate.value.operation) == ("hookless", "mutate")
    assert _rows(table) == [(1, "a", "x"), (2, "B", "x"), (4, "d", "y")]  # nothing written

    # the fallbacks: partition facts without a live-row count or a compaction plan ...
    facts = {row["partition"]: row for row in _facts(table)}
    assert {p: f["compaction_due"] for p, f in facts.items()} == {"p=x": None, "p=y": None}
    assert facts["p=x"]["stored_rows"] == 3  # ids 1, 2 and 2 again: no live-row estimate
    # ... and an import that upserts the collection's rows, files not copied
    cat.export("db.h", tmp_path / "out")
    imported = cat.import_(tmp_path / "out", table="db.h2")
    assert imported.rows == 3
    assert _rows(cat.table("db.h2")) == _rows(table)


def test_the_version_layout_renamed_answers_as_the_version_layout(
    probes: None, cat: Catalog, tmp_path: Path
) -> None:
    tables = {name: _create(cat, f"db.{name}", name) for name in ("versioned", "alias")}
    for name, table in tables.items():
        _feed(table)
        _stream(cat, f"db.{name}", ["7,s1", "8,s2"])
        _stream(cat, f"db.{name}", ["7,s3"])
    version, alias = tables["versioned"], tables["alias"]
    assert _rows(alias) == _rows(version)
    assert (7, "s3", "z") in _rows(alias)
    assert _change_rows(cat, alias) == _change_rows(cat, version)
    assert len(_change_rows(cat, alias)) >= 8
    assert _facts(alias) == _facts(version)
    for name in tables:
        cat.export(f"db.{name}", tmp_path / f"out-{name}")
    copies = {n: cat.import_(tmp_path / f"out-{n}", table=f"db.{n}_copy") for n in tables}
    assert copies["alias"].rows == copies["versioned"].rows == len(_rows(version))
    assert _rows(cat.table("db.alias_copy")) == _rows(cat.table("db.versioned_copy"))
