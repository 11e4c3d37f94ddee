"""What a commit counts: changes replaced inside their batch are `superseded`, changes older
than the stored state are `stale`, and the history keeps both apart."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from versioned.api.catalog import Catalog


def _table(cat: Catalog, layout: str, *, ordering: bool) -> Any:
    return cat.create_table(
        "t.events",
        columns="id BIGINT, v STRING, op STRING, ts BIGINT",
        primary_key="id",
        op_code_column="op",
        ordering_column="ts" if ordering else None,
        layout=layout,
    )


def _batch(rows: list[tuple[int, str, str, int]]) -> pa.Table:
    ids, vs, ops, ts = zip(*rows, strict=True)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array(vs, pa.string()),
            "op": list(ops),
            "ts": pa.array(ts, pa.int64()),
        }
    )


def _counts(result: Any) -> tuple[int, int, int]:
    return result.inserted + result.updated, result.stale, result.superseded


def test_changes_replaced_in_their_batch_are_superseded_not_stale(
    cat: Catalog, layout: str
) -> None:
    t = _table(cat, layout, ordering=True)
    first = t.upsert(_batch([(1, "a", "I", 10), (2, "b", "I", 10)]))
    assert _counts(first) == (2, 0, 0)
    second = t.upsert(
        _batch(
            [
                (1, "older than stored", "U", 5),  # stale: the stored row has ts 10
                (2, "x", "U", 30),
                (2, "y", "U", 20),  # superseded by ts 30 (the ordering value decides)
                (3, "p", "I", 1),
                (3, "q", "U", 2),
                (3, "r", "U", 3),  # the last of three: two superseded
            ]
        )
    )
    assert _counts(second) == (2, 1, 3)
    assert sorted((r["id"], r["v"]) for r in t.read().collect()) == [(1, "a"), (2, "x"), (3, "r")]
    metrics = [(c.metrics["stale"], c.metrics["superseded"]) for c in t.history()]
    assert metrics == [(0, 0), (1, 3)]


def test_without_an_ordering_column_nothing_is_stale_and_input_order_supersedes(
    cat: Catalog,
    layout: str,
) -> None:
    t = _table(cat, layout, ordering=False)
    t.upsert(_batch([(1, "a", "I", 10)]))
    result = t.upsert(_batch([(1, "b", "U", 5), (1, "c", "U", 1), (2, "d", "I", 0)]))
    assert _counts(result) == (2, 0, 1)
    assert sorted((r["id"], r["v"]) for r in t.read().collect()) == [(1, "c"), (2, "d")]
