"""The sales table of the maintenance tests: `(id, amt, op, p)` rows keyed by id, by p."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from tests.table.workers import COLUMNS, batch_table
from versioned.api.catalog import Catalog
from versioned.api.table import Table

Row = tuple[int, float | None, str, str | None]


def make_table(cat: Catalog, name: str = "t.sales", *, layout: str, **kw: Any) -> Table:
    """``id BIGINT, amt DOUBLE, op STRING, p STRING`` keyed by id, partitioned by p."""
    args: dict[str, Any] = dict(
        columns=COLUMNS, primary_key="id", partition_by="p", op_code_column="op", layout=layout
    )
    args.update(kw)
    return cat.create_table(name, **args)


def batch(rows: list[Row]) -> pa.Table:
    """A batch of ``(id, amt, op, p)`` rows."""
    return batch_table([list(r) for r in rows])


def latest(table: Table, as_of: int | None = None) -> list[tuple[Any, ...]]:
    """The table's latest rows as sorted ``(id, amt, p)`` tuples."""
    frame = table.read(as_of=as_of)
    return sorted(tuple(r) for r in frame.select("id", "amt", "p").collect())


def apply(model: dict[int, tuple[float | None, str | None]], rows: list[Row]) -> None:
    """Apply a batch to a plain-Python model of the table (id -> (amt, p))."""
    for key, amt, op, part in rows:
        if op == "D":
            model.pop(key, None)
        else:
            model[key] = (amt, part)


def model_rows(model: dict[int, tuple[float | None, str | None]]) -> list[tuple[Any, ...]]:
    """The model as sorted ``(id, amt, p)`` tuples, like `latest`."""
    return sorted((k, amt, p) for k, (amt, p) in model.items())
