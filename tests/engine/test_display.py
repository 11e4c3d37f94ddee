"""A table stays displayable whatever dates it holds, through the CLI's `show` (in-process on
the shared session: the rendering that crashed is versioned's Python)."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pyarrow as pa
from click.testing import CliRunner, Result

from versioned.api.catalog import Catalog
from versioned.cli.main import cli


def console(warehouse: str, *args: str) -> Result:
    """Run the ``versioned`` command line as alice."""
    return CliRunner().invoke(cli, ["--warehouse", warehouse, "--user", "alice", *args])


def test_dates_beyond_python_print_as_spark_prints_them(cat: Catalog, tmp_path: Path) -> None:
    """Issue 10 item 1: a bare number in a CSV DATE column made partition +19788-01-01, after
    which ``show`` crashed (``year 19788 is out of range``). Now the CSV row is a dead
    letter, and a date Python cannot hold (typed, from Parquet or Arrow) still displays."""
    t = cat.create_table(
        "db.t",
        columns="k BIGINT, d DATE, v STRING, lsn BIGINT, at TIMESTAMP",
        primary_key="k",
        partition_by="d",
        ordering_column="lsn",
        op_code_column="op",
    )
    feed = tmp_path / "f.csv"
    feed.write_text("k,d,v,lsn,op,at\n2,19788,x,2,I,\n")
    assert t.upsert(str(feed)).rejected == 1
    assert cat.engine_context.store.partitions(t.name) == []

    far = (date(9999, 12, 31) - date(1970, 1, 1)).days + 3_600_000  # about year 19855
    typed = pa.table(
        {
            "k": pa.array([1, 3], pa.int64()),
            "d": pa.array([far, 0], pa.date32()),
            "v": ["far", "epoch"],
            "lsn": pa.array([1, 1], pa.int64()),
            "at": pa.array([253_402_300_800_000_000 + 1, 0], pa.timestamp("us", tz="UTC")),
            "op": ["I", "I"],
        }
    )
    assert t.upsert(typed).inserted == 2
    shown = console(cat.settings.warehouse, "show", "db.t", "--output", "csv")
    assert shown.exit_code == 0, shown.output
    header, *body = shown.stdout.strip().splitlines()
    assert header == "k,d,v,lsn,at"
    far_row, epoch_row = sorted(body)
    assert re.fullmatch(r"1,\+19\d{3}-\d\d-\d\d,far,1,\+10000-01-01 00:00:00.000001", far_row)
    assert epoch_row == "3,1970-01-01,epoch,1,1970-01-01 00:00:00"
