"""A source table exported once for the package; helpers to compare catalogs and warehouses."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from versioned.api.catalog import Catalog, connect

COLUMNS = "id BIGINT, amt DOUBLE, note STRING, store STRING, day INT"
HOSTILE = ["a/b", None, "../../evil", "x"]


@dataclass
class Source:
    """``sales.orders`` in a SQLite catalog, with two versions and a full export."""

    catalog: Catalog
    first_version: int
    collection: Path
    base: Path

    def copy(self, dest: Path) -> Path:
        """A private copy of the exported collection (tests tamper with it)."""
        shutil.copytree(self.collection, dest, symlinks=True)
        return dest


def batch(rows: list[tuple[int, float, str | None, str | None, int]]) -> pa.Table:
    ids, amts, notes, stores, days = zip(*rows, strict=True)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "amt": pa.array(amts, pa.float64()),
            "note": pa.array(notes, pa.string()),
            "store": pa.array(stores, pa.string()),
            "day": pa.array(days, pa.int32()),
        }
    )


def rows(frame: Any) -> list[tuple[Any, ...]]:
    """Rows of a DataFrame in a fixed column order, sorted (None sorts first)."""
    got = [tuple(r) for r in frame.select("id", "amt", "note", "store", "day").collect()]
    return sorted(got, key=lambda r: tuple((v is not None, v) for v in r))


def state(catalog: Catalog) -> tuple[Any, ...]:
    """Everything an import could change: catalog records and the warehouse's files."""
    tables = {}
    for info in catalog.engine_context.store.tables():
        name = info.spec.name
        tables[str(name)] = (
            info.spec.to_dict(),
            info.current_seq,
            [(p.values, p.head_version) for p in catalog.engine_context.store.partitions(name)],
            [(c.version, c.operation) for c in catalog.engine_context.store.history(name)],
        )
    root = Path(catalog.settings.warehouse)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())
    return tables, files


@pytest.fixture(scope="package")
def source(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    base = tmp_path_factory.mktemp("source")
    cat = connect(
        catalog=f"sqlite:///{base}/catalog.db",
        warehouse=str(base / "warehouse"),
        spark=spark,
        user="alice",
    )
    table = cat.create_table(
        "sales.orders", columns=COLUMNS, primary_key="id", partition_by="store,day", sort_by="id"
    )
    first = table.upsert(
        batch([(i, float(i), f"n{i}", HOSTILE[i % 4], 1 + (i // 4) % 2) for i in range(24)])
    ).version
    # Superseded and deleted rows stay in the version files; export must copy live rows only.
    changes = batch([(0, 100.0, "updated", "a/b", 1), (5, 0.0, None, None, 2)])
    changes = changes.append_column("op", pa.array(["U", "D"]))
    table.upsert(changes, op_code_column="op")
    cat.export("sales.orders", str(base / "full"))
    yield Source(cat, first, base / "full", base)
    cat.close()


@pytest.fixture
def target(spark: Any, tmp_path: Path) -> Iterator[Catalog]:
    """An empty SQLite catalog with its own warehouse, as alice."""
    cat = connect(
        catalog=f"sqlite:///{tmp_path}/target.db",
        warehouse=str(tmp_path / "target-wh"),
        spark=spark,
        user="alice",
    )
    yield cat
    cat.close()
