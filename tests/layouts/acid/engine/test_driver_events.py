"""A small write's ACID events are written by the driver (pyorc), a large one by Spark's ORC
writer; both write the same files, events and ROW__IDs (`engine.acid.driver_events`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyarrow.orc as paorc
import pytest

from tests.support.typed_rows import TYPED_COLUMNS, typed_batch
from versioned.errors import SchemaError
from versioned.layouts.acid.orc_files import read_bucket
from versioned.layouts.acid.table_rules import DRIVER_WRITE_PROPERTY

COLUMNS = TYPED_COLUMNS
UTC = dt.UTC


def _table(cat: Any, name: str, driver_max_events: int | None) -> Any:
    properties = {} if driver_max_events is None else {DRIVER_WRITE_PROPERTY: driver_max_events}
    return cat.create_table(
        name,
        columns=COLUMNS,
        primary_key="id",
        partition_by="store",
        layout="acid",
        bucket_by="id",
        buckets=4,
        properties={k: str(v) for k, v in properties.items()},
    )


def _batch(ids: list[int], ops: list[str], salt: int) -> pa.Table:
    return typed_batch(ids, ops, salt)


def _events(cat: Any, table: Any) -> dict[str, list[dict[str, Any]]]:
    """The events of every committed bucket file, by path."""
    out = {}
    for f in table.snapshot().files:
        if f.kind in ("delta", "delete_delta", "base"):
            got = read_bucket(
                cat.engine_context.fileio,
                f"{table.info.location}/{f.path}",
                table.spec.data_columns,
            )
            out[f.path] = got.events.to_pylist()
    return out


def test_the_driver_and_spark_write_the_same_events_and_rows(cat: Any) -> None:
    spark_written = _table(cat, "w.spark", 0)
    driver_written = _table(cat, "w.driver", None)
    first = _batch(list(range(1, 301)), ["I"] * 300, 1)
    updates = list(range(1, 301, 3))
    deletes = [i for i in range(2, 301, 10) if i not in updates]
    inserts = list(range(301, 341))
    second = _batch(
        updates + deletes + inserts,
        ["U"] * len(updates) + ["D"] * len(deletes) + ["I"] * len(inserts),
        2,
    )
    for table in (spark_written, driver_written):
        table.upsert(first, op_code_column="op")
        result = table.upsert(second, op_code_column="op")
        assert (result.updated, result.deleted, result.inserted) == (
            len(updates),
            len(deletes),
            len(inserts),
        )
    by_spark, by_driver = _events(cat, spark_written), _events(cat, driver_written)
    assert sorted(by_spark) == sorted(by_driver)
    assert any("delete_delta_0000002_0000002_0000" in p for p in by_driver)
    for path, events in by_spark.items():
        assert events == by_driver[path], path
    columns = [*spark_written.spec.column_names]
    assert sorted(map(tuple, spark_written.read(with_row_id=True).collect())) == sorted(
        map(tuple, driver_written.read(with_row_id=True).collect())
    )
    assert spark_written.read().select(*columns).count() == 300 - len(deletes) + len(inserts)


def test_driver_written_files_carry_hives_acid_metadata(cat: Any) -> None:
    table = _table(cat, "w.meta", None)
    table.upsert(_batch(list(range(1, 50)), ["I"] * 49, 1), op_code_column="op")
    files = [f for f in table.snapshot().files if f.kind == "delta"]
    assert files
    for f in files:
        got = read_bucket(cat.engine_context.fileio, f"{table.info.location}/{f.path}")
        assert got.acid_version == "2"
        assert got.stats is not None and got.stats.inserts == f.row_count
        assert got.key_index[-1].row_id == f.row_count - 1


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_the_driver_write_property_must_be_a_whole_number(cat: Any, value: str) -> None:
    with pytest.raises(SchemaError, match=DRIVER_WRITE_PROPERTY):
        cat.create_table(
            "w.bad",
            columns="id BIGINT NOT NULL, v STRING",
            primary_key="id",
            layout="acid",
            properties={DRIVER_WRITE_PROPERTY: value},
        )


def test_describe_shows_how_many_events_the_driver_writes(cat: Any) -> None:
    table = _table(cat, "w.describe", 1000)
    assert cat.describe(table.name)[DRIVER_WRITE_PROPERTY] == 1000


def test_days_before_the_gregorian_calendar_are_written_by_spark_and_read_back_exactly(
    cat: Any,
) -> None:
    table = _table(cat, "w.julian", None)
    old = _batch([1, 2], ["I", "I"], 1)
    old = old.set_column(
        old.schema.get_field_index("day"), "day", pa.array([dt.date(1, 1, 1), dt.date(1582, 10, 4)])
    )
    old = old.set_column(
        old.schema.get_field_index("seen"),
        "seen",
        pa.array(
            [dt.datetime(1000, 6, 1, 12, tzinfo=UTC), dt.datetime(2024, 1, 1, tzinfo=UTC)],
            pa.timestamp("us", tz="UTC"),
        ),
    )
    table.upsert(old, op_code_column="op")
    got = {r["id"]: (r["day"], r["seen"]) for r in table.read().toArrow().to_pylist()}
    assert got == {
        1: (dt.date(1, 1, 1), dt.datetime(1000, 6, 1, 12, tzinfo=UTC)),
        2: (dt.date(1582, 10, 4), dt.datetime(2024, 1, 1, tzinfo=UTC)),
    }
    later = _batch([3], ["I"], 2)  # modern values: the driver writes them
    table.upsert(later, op_code_column="op")
    files = [f for f in table.snapshot().files if f.kind == "delta"]
    metadata = {}
    for f in files:  # pyarrow reads the footer only (it cannot read year 1000 as ns)
        with cat.engine_context.fileio.open_input(f"{table.info.location}/{f.path}") as handle:
            metadata[f.version] = paorc.ORCFile(handle).metadata.get(b"hive.acid.version")
    # both carry Hive's metadata: Spark's file gets it appended (layouts/acid/orc_footer.py)
    assert sorted(metadata.items()) == [(min(metadata), b"2"), (max(metadata), b"2")]
