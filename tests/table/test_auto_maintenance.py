"""The table's own maintenance after a write (table property ``auto_compact``), per layout.

What a user sees: a new table compacts the partitions a write pushed past its thresholds,
after the write committed and before the call returns; the table property turns it off and
sets the thresholds; ``describe`` and ``history`` show what ran; snapshots, time travel and
concurrent writers see what they would with a compaction run by hand. A kill during it is
in tests/table/test_crash.py.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.test_warehouse import catalog_for, warehouse_for
from tests.table.sales import Row, apply, batch, latest, make_table, model_rows
from versioned.api.catalog import Catalog, connect
from versioned.errors import SchemaError

# Past the thresholds at the second write to a partition, on tables of a few rows: two
# versions and no row floor for the version layout; Hive's initiator rules at one delta for
# the acid layout.
EAGER = {
    "auto_compact.min_rows": "0",
    "auto_compact.min_versions": "2",
    "compactor.delta.num.threshold": "1",
    "compactor.delta.pct.threshold": "0",
}
FIRST: list[Row] = [(i, float(i), "I", "ab"[i % 2]) for i in range(40)]
SECOND: list[Row] = [(i, 100.0 + i, "U", "ab"[i % 2]) for i in range(0, 40, 3)] + [
    (i, None, "D", "ab"[i % 2]) for i in range(1, 40, 5)
]


def _auto_compactions(t: Any) -> list[Any]:
    return [
        c for c in t.history() if c.operation == "compact" and c.metrics.get("trigger") == "auto"
    ]


def test_a_new_table_maintains_itself_and_says_so(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout)
    assert t.spec.properties["auto_compact"] == "true"
    described = t.describe()
    assert described["auto_compact"] is True
    assert described["auto_compact_thresholds"]["index_ratio"] == 0.005
    assert described["auto_compactions"] == 0
    assert described["last_auto_compaction"] is None
    # Below the row floor (10,000 rows by default) a few versions are left alone.
    for rows in (FIRST, SECOND):
        result = t.upsert(batch(rows))
        assert result.maintenance is not None and result.maintenance.partitions == ()
    assert _auto_compactions(t) == []


def test_a_write_past_the_thresholds_compacts_after_it_committed(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout, properties=EAGER)
    model: dict[int, Any] = {}
    first = t.upsert(batch(FIRST))
    apply(model, FIRST)
    after_first = model_rows(model)
    old_reader = t.read()  # resolved its snapshot before the next write and its compaction
    second = t.upsert(batch(SECOND))
    apply(model, SECOND)
    done = second.maintenance
    assert done is not None and done.compacted >= 1, done
    assert {p.status for p in done.partitions} == {"compacted"}
    history = t.history()
    upsert_at = next(i for i, c in enumerate(history) if c.version == second.version)
    auto = _auto_compactions(t)
    assert len(auto) == done.compacted
    assert all(history.index(c) > upsert_at for c in auto)  # committed after the write
    assert latest(t) == model_rows(model)
    # Spark SQL's view over the latest versions reads the same rows.
    assert sorted(tuple(r) for r in cat.sql("SELECT id, amt, p FROM t.sales").collect()) == (
        model_rows(model)
    )
    # Time travel across it: each write's version reads as the write left the table.
    assert latest(t, as_of=first.version) == after_first
    assert latest(t, as_of=second.version) == model_rows(model)
    assert sorted(tuple(r) for r in old_reader.select("id", "amt", "p").collect()) == after_first
    described = t.describe()
    assert described["auto_compactions"] == len(auto)
    last = max(auto, key=lambda c: c.seq)  # compactions of two partitions commit in any order
    assert described["last_auto_compaction"]["version"] == last.version
    # Nothing left past the thresholds: the next small write compacts only what it touches.
    third: list[Row] = [(1000, 1.0, "I", "a")]
    result = t.upsert(batch(third))
    apply(model, third)
    assert result.maintenance is not None
    assert {p.partition for p in result.maintenance.partitions} <= {"p=a"}
    assert latest(t) == model_rows(model)


def test_the_table_property_turns_it_off_and_on(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout, properties={**EAGER, "auto_compact": "false"})
    model: dict[int, Any] = {}
    for rows in (FIRST, SECOND):
        result = t.upsert(batch(rows))
        apply(model, rows)
        assert result.maintenance is None
    assert _auto_compactions(t) == []
    assert t.describe()["auto_compact"] is False
    commit = t.set_properties({"auto_compact": "true"})
    assert commit.operation == "alter"
    assert commit.metrics["set_properties"] == {"auto_compact": "true"}
    assert t.describe()["auto_compact"] is True
    third: list[Row] = [(7, 7.5, "U", "b"), (8, 8.5, "U", "a")]
    result = t.upsert(batch(third))
    apply(model, third)
    assert result.maintenance is not None and result.maintenance.compacted >= 1
    assert latest(t) == model_rows(model)
    # Removing the property turns it off (tables from before the property had none).
    t.set_properties({"auto_compact": None})
    assert "auto_compact" not in t.refresh().spec.properties
    assert t.upsert(batch([(9, 9.5, "U", "b")])).maintenance is None


def test_the_row_floor_keeps_small_partitions_as_they_are(cat: Catalog, layout: str) -> None:
    t = make_table(cat, layout=layout, properties={**EAGER, "auto_compact.min_rows": "1000"})
    for rows in (FIRST, SECOND, FIRST):
        result = t.upsert(batch(rows))
        assert result.maintenance is not None and result.maintenance.partitions == ()
    t.set_properties({"auto_compact.min_rows": "20"})  # 20 rows in each partition
    result = t.upsert(batch(SECOND))
    assert result.maintenance is not None and result.maintenance.compacted == 2


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("auto_compact", "maybe", "must be true or false"),
        ("auto_compact.min_versions", "two", "must be a whole number >= 0"),
        ("auto_compact.index_ratio", "-0.5", "must be a number >= 0"),
        ("auto_compact.min_rowz", "5", "unknown table property auto_compact.min_rowz"),
    ],
)
def test_bad_settings_are_refused_and_change_nothing(
    cat: Catalog, layout: str, name: str, value: str, message: str
) -> None:
    t = make_table(cat, layout=layout)
    with pytest.raises(SchemaError, match=message):
        make_table(cat, "t.refused", layout=layout, properties={name: value})
    assert "t.refused" not in {str(info.spec.name) for info in cat.tables()}
    commits = len(t.history())
    with pytest.raises(SchemaError, match=message):
        t.set_properties({name: value})
    assert len(t.history()) == commits
    assert name not in t.refresh().spec.properties or name == "auto_compact"
    assert t.refresh().spec.properties["auto_compact"] == "true"
    t.upsert(batch(FIRST[:2]))  # the table still takes writes, and maintains itself
    assert latest(t) == model_rows({i: (float(i), "ab"[i % 2]) for i in range(2)})


def test_concurrent_writers_each_maintaining_lose_nothing(
    spark: Any, tmp_path: Path, layout: str
) -> None:
    warehouse = warehouse_for(tmp_path)
    cats = [
        connect(catalog=catalog_for(tmp_path), warehouse=warehouse, spark=spark, user="alice")
        for _ in range(2)
    ]
    try:
        make_table(cats[0], layout=layout, properties=EAGER)
        tables = [c.table("t.sales") for c in cats]
        batches: list[list[list[Row]]] = [
            [
                [(w * 1000 + b * 10 + i, float(b), "I", "ab"[i % 2]) for i in range(6)]
                for b in range(4)
            ]
            for w in range(2)
        ]
        errors: list[BaseException] = []

        def write(w: int) -> None:
            try:
                for rows in batches[w]:
                    tables[w].upsert(batch(rows))
            except BaseException as error:  # reported below, with the other writer's
                errors.append(error)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        model: dict[int, Any] = {}
        for w in range(2):
            for rows in batches[w]:
                apply(model, rows)
        assert latest(tables[0]) == model_rows(model)
        assert _auto_compactions(tables[0]), "no write ran maintenance"
        tables[0].compact()  # a compaction by hand still finds a consistent table
        assert latest(tables[1].refresh()) == model_rows(model)
    finally:
        for c in cats:
            c.close()
