"""The first load of a table (a snapshot of the source): what lands is the same whether the
snapshot repeats a key or not.

The version layout keeps a first load's rows as they come when no key repeats (checked on the
driver) and deduplicates only a first load that does repeat one; either way the table holds one
row per key, the last (or highest-ordered) change, and later batches find every loaded key.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from versioned.api.catalog import Catalog


def _table(cat: Catalog, layout: str, *, ordering: bool = False, scope: str = "table") -> Any:
    return cat.create_table(
        f"f.load_{'o' if ordering else 'n'}_{scope}",
        columns="id BIGINT, v STRING, p STRING, ts BIGINT",
        primary_key="p,id" if scope == "partition" else "id",
        partition_by="p",
        op_code_column="op",
        ordering_column="ts" if ordering else None,
        layout=layout,
    )


def _batch(rows: list[tuple[str, int, str, str, int]]) -> pa.Table:
    ops, ids, vs, ps, ts = zip(*rows, strict=True)
    return pa.table(
        {
            "op": list(ops),
            "id": pa.array(ids, pa.int64()),
            "v": list(vs),
            "p": list(ps),
            "ts": pa.array(ts, pa.int64()),
        }
    )


def _rows(t: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().select("id", "v", "p").collect())


def test_a_first_load_of_unique_keys_lands_whole_and_later_batches_find_every_key(
    cat: Catalog, layout: str
) -> None:
    t = _table(cat, layout)
    loaded = [("I", i, f"v{i}", f"p{i % 3}", 1) for i in range(60)]
    first = t.upsert(_batch([*loaded, ("D", 1000, "gone", "p0", 1)]))
    assert (first.inserted, first.superseded, first.ignored_deletes) == (60, 0, 1)
    second = t.upsert(_batch([("U", i, "new", f"p{i % 3}", 2) for i in range(0, 60, 7)]))
    assert (second.inserted, second.updated) == (0, 9)
    expected = sorted((i, "new" if i % 7 == 0 else f"v{i}", f"p{i % 3}") for i in range(60))
    assert _rows(t) == expected


def test_a_first_load_that_repeats_a_key_keeps_its_last_change(cat: Catalog, layout: str) -> None:
    t = _table(cat, layout)
    result = t.upsert(
        _batch(
            [
                ("I", 1, "old", "a", 1),
                ("I", 2, "two", "a", 1),
                ("U", 1, "moved", "b", 1),  # last in input: wins, in its own partition
                ("I", 3, "three", "a", 1),
                ("D", 3, "x", "a", 1),
            ]
        )
    )
    assert (result.superseded, result.inserted) == (2, 2)
    assert _rows(t) == [(1, "moved", "b"), (2, "two", "a")]
    t.upsert(_batch([("U", 1, "again", "b", 2)]))
    assert _rows(t) == [(1, "again", "b"), (2, "two", "a")]


def test_a_first_load_keeps_the_highest_ordered_change_of_a_key(cat: Catalog, layout: str) -> None:
    t = _table(cat, layout, ordering=True)
    t.upsert(_batch([("U", 1, "newest", "a", 9), ("U", 1, "older", "a", 3), ("I", 2, "b", "a", 1)]))
    assert _rows(t) == [(1, "newest", "a"), (2, "b", "a")]


def test_a_partition_scoped_key_may_repeat_across_partitions_in_a_first_load(
    cat: Catalog, layout: str
) -> None:
    t = _table(cat, layout, scope="partition")
    t.upsert(_batch([("I", 1, "in a", "a", 1), ("I", 1, "in b", "b", 1), ("I", 1, "a2", "a", 1)]))
    assert _rows(t) == [(1, "a2", "a"), (1, "in b", "b")]
