"""`make demo`: the end-to-end scenario runs and leaves the state its text announces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from versioned.api.catalog import connect


def test_demo_plays_end_to_end(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from versioned.demo import run

    run(tmp_path / "demo")
    out = capsys.readouterr().out
    # The malformed CSV rows are dead letters with their reasons; the rest of the batch landed.
    assert "column sell_id: 'not-a-number' is not a BIGINT" in out
    assert "unknown op code 'X'" in out
    cat = connect(warehouse=str(tmp_path / "demo" / "warehouse"), spark=spark, user="demo")
    try:
        t = cat.table("test.sell")
        ids = {r["sell_id"] for r in t.read().select("sell_id").collect()}
        assert ids & set(range(1, 9)) == {1, 3, 4, 5, 6}  # 2, 7, 8 deleted; 6 re-inserted
        assert {31, 32, 33, 40} <= ids
        history = t.history()
        assert [c.operation for c in history] == ["upsert"] * 4  # four batches, four versions
        assert cat.sql("SELECT count(*) AS n FROM test.sell").collect()[0]["n"] == len(ids)
        # `versioned ui` on the demo's warehouse, as the README shows it
        from tests.ui.demo_page import check_demo_page

        check_demo_page(cat)
    finally:
        cat.close()
