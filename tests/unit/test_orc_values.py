"""Values ORC would not give back are refused for ORC tables (issue 27 item 4), here in the
Spark-free paths: the checks themselves and the streaming client's encoding. Those paths
write with pyorc, whose files Java readers read in the hybrid calendar, so every day before
1582-10-15 is refused there (tests/mutation/test_mutations.py reads the kept ones back
through Spark)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from versioned.schema import TableSpec
from versioned.streaming import DelimitedInputWriter
from versioned.values.orc_values import orc_problems

UTC = dt.UTC


def test_days_before_1582_10_15_and_the_last_second_before_1970_are_named_and_nothing_else() -> (
    None
):
    days = pa.array(
        [dt.date(1582, 10, 4), dt.date(1582, 10, 5), dt.date(1582, 10, 14),
         dt.date(1582, 10, 15), None],
        pa.date32(),
    )  # fmt: skip
    reasons = orc_problems("d", "DATE", days)
    assert reasons is not None
    assert [r is not None for r in reasons.to_pylist()] == [True, True, True, False, False]
    assert reasons[0].as_py() == (
        "column d: '1582-10-04' is before 1582-10-15, where ORC's Java readers use the Julian "
        "calendar: versioned's Spark-free writers cannot store it so that they read it back as "
        "written (an upsert can)"
    )
    assert reasons[1].as_py() == (
        "column d: '1582-10-05' is a day ORC's readers skip (1582-10-05..14): it would read "
        "back as 1582-10-15"
    )
    times = pa.array(
        [
            dt.datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=UTC),
            dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),  # a whole second: exact
            dt.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            dt.datetime(1970, 1, 1, tzinfo=UTC),
            dt.datetime(1582, 10, 10, 12, tzinfo=UTC),
            dt.datetime(1582, 10, 15, tzinfo=UTC),
            dt.datetime(1000, 1, 1, tzinfo=UTC),
        ],
        pa.timestamp("us", tz="UTC"),
    )
    flagged = orc_problems("t", "TIMESTAMP", times)
    assert flagged is not None
    assert [r is not None for r in flagged.to_pylist()] == [
        False,
        False,
        True,
        True,
        False,
        True,
        False,
        True,
    ]
    assert "before 1582-10-15" in flagged[7].as_py()
    assert (
        "last second before 1970, which ORC's readers read one second later" in flagged[2].as_py()
    )
    assert orc_problems("s", "STRING", pa.array(["x"])) is None


def test_the_streaming_client_dead_letters_them_for_orc_tables_only() -> None:
    columns = "id BIGINT NOT NULL, d DATE, t TIMESTAMP"
    orc = TableSpec.build(
        "s.o", columns=columns, primary_key="id", layout="acid", file_format="orc"
    )
    parquet = TableSpec.build("s.p", columns=columns, primary_key="id")
    records = ["1,1582-10-10,2024-01-01 00:00:00", "2,2024-01-01,1969-12-31 23:59:59.5",
               "3,1582-10-15,1969-12-31 23:59:59", "4,1582-10-04,2024-01-01 00:00:00"]  # fmt: skip
    encoded = DelimitedInputWriter(["id", "d", "t"], spec=orc, dead_letter=True).encode(records)
    assert encoded.rows.column("id").to_pylist() == [3]
    assert [(r.index, r.reason.split(": ")[0]) for r in encoded.rejected] == [
        (0, "column d"),
        (1, "column t"),
        (3, "column d"),
    ]
    assert "before 1582-10-15" in encoded.rejected[2].reason
    kept = DelimitedInputWriter(["id", "d", "t"], spec=parquet, dead_letter=True).encode(records)
    assert kept.rows.column("id").to_pylist() == [1, 2, 3, 4] and kept.rejected == ()
