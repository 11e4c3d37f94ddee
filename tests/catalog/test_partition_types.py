"""A TIMESTAMP partition column is refused (issue 27 item 2): Spark writes and reads a
partition value as wall-clock text in each session's time zone, so a writer in New York and
a reader in UTC put one instant in two partitions. No Spark is needed to refuse it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.layout_profiles import LAYOUTS
from versioned.api.catalog import connect
from versioned.cli.main import cli
from versioned.errors import SchemaError


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_timestamp_partition_column_is_refused_with_what_to_do(
    tmp_path: Path, layout: str
) -> None:
    cat = connect(warehouse=str(tmp_path / "wh"), catalog=f"sqlite:///{tmp_path}/c.db", user="a")
    try:
        with pytest.raises(SchemaError, match="partition column ts is a TIMESTAMP") as caught:
            cat.create_table(
                "k.t", columns="id BIGINT, ts TIMESTAMP, v STRING", primary_key="id,ts",
                partition_by="ts", layout=layout,
            )  # fmt: skip
        assert "partition by a DATE or STRING column derived from ts in UTC" in str(caught.value)
        assert cat.tables() == []
        made = cat.create_table(  # a DATE partition (and a TIMESTAMP data column) is fine
            "k.d", columns="id BIGINT, ts TIMESTAMP, day DATE", primary_key="id",
            partition_by="day", layout=layout,
        )  # fmt: skip
        assert made.spec.partition_by == ("day",)
    finally:
        cat.close()


def test_create_table_refuses_it_in_one_line_with_exit_2(tmp_path: Path) -> None:
    base = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/c.db"]
    result = CliRunner().invoke(
        cli,
        [*base, "create-table", "k.t", "--columns", "id BIGINT, ts TIMESTAMP",
         "--primary-key", "id", "--partition-by", "ts"],
    )  # fmt: skip
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: partition column ts is a TIMESTAMP")
